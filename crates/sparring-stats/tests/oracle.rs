//! Oracle test: the same figures computed by SciPy, NumPy, scikit-learn and
//! statsmodels (`tests/oracle/stats_oracle.py` at the repository root) on
//! deterministically generated cases. Exact figures must agree to 1e-9;
//! bootstrap bounds and Monte Carlo p-values, which depend on each side's
//! random draws, to 0.02.
//!
//! The Python packages are pinned in `tests/oracle/requirements.txt`; the
//! test installs them itself into `target/oracle-venv` (made once, reused),
//! so `cargo test --workspace` needs nothing but `python3` with `venv` and a
//! package index. `SPARRING_ORACLE_PYTHON` names another interpreter that has
//! them. When the environment cannot be built the test fails with the
//! reason, unless `SPARRING_ORACLE_OPTIONAL=1` is set, in which case it
//! prints why and passes.

// These tests compare floats exactly on purpose: the values are exact.
#![allow(clippy::float_cmp)]
// Helpers outside `#[test]` functions fail the test the same way.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use sparring_stats::{
    BootstrapOptions, PairedOptions, StatsRng, bootstrap_mean, cohen_kappa, eval_variance,
    judge_agreement, mean_pass_at_k, mean_pass_hat_k, paired_delta, pass_at_k, pass_hat_k,
    quantile, variance_split, wilson_interval, within_task_correlation,
};

const EXACT: f64 = 1e-9;
const RANDOM: f64 = 0.02;
const OPTIONAL_VAR: &str = "SPARRING_ORACLE_OPTIONAL";
const PYTHON_VAR: &str = "SPARRING_ORACLE_PYTHON";
/// What the oracle's interpreter must import.
const READY: &str = "import numpy, scipy, sklearn, statsmodels";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The oracle's interpreter: `SPARRING_ORACLE_PYTHON`, else
/// `target/oracle-venv`, built here on first use with the pinned packages.
/// Built once per test process (the tests of this file share it).
fn oracle_python() -> Result<PathBuf, String> {
    static PYTHON: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    PYTHON.get_or_init(build_oracle_python).clone()
}

fn build_oracle_python() -> Result<PathBuf, String> {
    if let Ok(p) = std::env::var(PYTHON_VAR) {
        return Ok(PathBuf::from(p));
    }
    let venv = workspace().join("target/oracle-venv");
    let python = venv.join("bin/python");
    let ready = |p: &Path| {
        Command::new(p)
            .args(["-c", READY])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if ready(&python) {
        return Ok(python);
    }
    let reqs = workspace().join("tests/oracle/requirements.txt");
    let steps: [Vec<String>; 2] = [
        vec![
            "python3".into(),
            "-m".into(),
            "venv".into(),
            venv.display().to_string(),
        ],
        vec![
            python.display().to_string(),
            "-m".into(),
            "pip".into(),
            "install".into(),
            "-q".into(),
            "--disable-pip-version-check".into(),
            "-r".into(),
            reqs.display().to_string(),
        ],
    ];
    for step in steps {
        let o = Command::new(&step[0])
            .args(&step[1..])
            .output()
            .map_err(|e| format!("cannot run `{}`: {e}", step[0]))?;
        if !o.status.success() {
            return Err(format!(
                "`{}` failed: {}",
                step.join(" "),
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
    }
    if ready(&python) {
        Ok(python)
    } else {
        Err(format!("{} was built but cannot `{READY}`", venv.display()))
    }
}

/// Deterministic case generator.
struct Gen(StatsRng);

impl Gen {
    fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.0.uniform_index(hi - lo + 1)
    }
    fn unit(&mut self) -> f64 {
        self.0.unit_f64()
    }
    fn coin(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// Per-task pass@1 from `n` samples with success chance drawn per task.
    fn rates(&mut self, tasks: usize, n: u64) -> Vec<f64> {
        (0..tasks)
            .map(|_| {
                let p = self.unit();
                let c = (0..n).filter(|_| self.coin(p)).count();
                c as f64 / n as f64
            })
            .collect()
    }
    fn uniform(&mut self, len: usize) -> Vec<f64> {
        (0..len).map(|_| self.unit()).collect()
    }
    fn labels(&mut self, len: usize, p: f64) -> Vec<bool> {
        (0..len).map(|_| self.coin(p)).collect()
    }
}

/// Rows per task.
type Groups = Vec<Vec<f64>>;

#[derive(Default)]
struct Cases {
    pass_k: Vec<(u64, u64, u64)>,
    mean_pass_k: Vec<(Vec<(u64, u64)>, u64)>,
    quantile: Vec<(Vec<f64>, f64)>,
    bootstrap: Vec<(Vec<f64>, u64)>,
    paired: Vec<(Vec<f64>, Vec<f64>, u64, bool)>,
    wilson: Vec<(u64, u64)>,
    kappa: Vec<(Vec<bool>, Vec<bool>)>,
    judge: Vec<(Vec<bool>, Vec<bool>)>,
    variance: Vec<Groups>,
    corr: Vec<(Groups, Groups)>,
    eval_variance: Vec<Vec<f64>>,
}

fn build_cases() -> Cases {
    let mut g = Gen(StatsRng::new(20_260_101));
    let mut c = Cases::default();

    for _ in 0..60 {
        let n = g.int(1, 30);
        let (cc, k) = (g.int(0, n), g.int(1, n));
        c.pass_k.push((n, cc, k));
    }
    for &n in &[100u64, 1_000, 10_000] {
        for _ in 0..6 {
            let (cc, k) = (g.int(0, n), g.int(1, n.min(300)));
            c.pass_k.push((n, cc, k));
        }
    }
    c.pass_k.extend([
        (10_000, 1, 1),
        (10_000, 1, 2),
        (10_000, 9_999, 2),
        (10_000, 5_000, 5_000),
        (10_000, 3, 9_990),
    ]);

    for k in [1, 2, 4, 8] {
        let tasks = (0..50)
            .map(|_| {
                let n = g.int(1, 10);
                (n, g.int(0, n))
            })
            .collect();
        c.mean_pass_k.push((tasks, k));
    }

    for &q in &[0.0, 0.025, 0.1, 0.5, 0.9, 0.975, 1.0] {
        let len = g.int(1, 40) as usize;
        c.quantile.push((g.uniform(len), q));
    }

    c.bootstrap.push((g.rates(300, 4), 1)); // counts sampler
    c.bootstrap.push((g.uniform(200), 2)); // index sampler
    c.bootstrap.push((
        g.labels(1_000, 0.3)
            .iter()
            .map(|&b| f64::from(u8::from(b)))
            .collect(),
        3,
    ));
    let mixed = (0..500)
        .map(|_| {
            let n = g.int(1, 10);
            g.int(0, n) as f64 / n as f64
        })
        .collect();
    c.bootstrap.push((mixed, 4));
    c.bootstrap.push((g.uniform(12), 5));

    // Paired: small cases are exact (at most 16 pairs, so SciPy can
    // enumerate all 2^n swaps); pass rates in quarters keep sums exact.
    for (tasks, seed) in [(12usize, 10u64), (16, 11), (9, 12)] {
        let before = g.rates(tasks, 4);
        let after: Vec<f64> = before
            .iter()
            .map(|&b| {
                let step = g.int(1, 2) as f64 * 0.25;
                match g.int(0, 3) {
                    0 => b,
                    1 => (b - step).max(0.0),
                    _ => (b + step).min(1.0),
                }
            })
            .collect();
        c.paired.push((before, after, seed, true));
    }
    c.paired.push((g.uniform(10), g.uniform(10), 13, true));
    let before = g.rates(300, 8);
    let after: Vec<f64> = before
        .iter()
        .map(|&b| {
            if g.coin(0.55) {
                (b + 0.125).min(1.0)
            } else {
                (b - 0.125).max(0.0)
            }
        })
        .collect();
    c.paired.push((before, after, 14, false));
    c.paired.push((
        g.uniform(60),
        g.uniform(60).iter().map(|x| x + 0.05).collect(),
        15,
        false,
    ));

    for (x, n) in [
        (0, 1),
        (1, 1),
        (0, 20),
        (20, 20),
        (1, 20),
        (19, 20),
        (8, 10),
        (37, 50),
        (5_000, 10_000),
        (9_999, 10_000),
    ] {
        c.wilson.push((x, n));
    }
    for _ in 0..6 {
        let n = g.int(20, 200);
        c.wilson.push((g.int(0, n), n));
    }

    for &(pa, flip) in &[(0.5, 0.1), (0.2, 0.3), (0.9, 0.05), (0.5, 0.5), (0.7, 0.0)] {
        let len = g.int(10, 300) as usize;
        let a = g.labels(len, pa);
        let b: Vec<bool> = a
            .iter()
            .map(|&x| if g.coin(flip) { !x } else { x })
            .collect();
        c.kappa.push((a.clone(), b.clone()));
        c.judge.push((a, b));
    }
    c.kappa.push((vec![true; 7], vec![true; 7]));
    c.kappa
        .push((vec![false; 5], vec![true, false, false, false, false]));
    c.judge
        .push((vec![true, false, true], vec![true, true, true]));

    for _ in 0..4 {
        let tasks = g.int(1, 40);
        let groups = (0..tasks)
            .map(|_| {
                let len = g.int(0, 9) as usize;
                let p = g.unit();
                if g.coin(0.5) {
                    (0..len).map(|_| f64::from(u8::from(g.coin(p)))).collect()
                } else {
                    g.uniform(len)
                }
            })
            .collect::<Vec<Vec<f64>>>();
        let groups = if groups.iter().all(Vec::is_empty) {
            vec![vec![0.5, 1.0]]
        } else {
            groups
        };
        c.variance.push(groups);
    }

    for _ in 0..4 {
        let tasks = g.int(5, 40);
        let mut feature = Vec::new();
        let mut reward = Vec::new();
        for _ in 0..tasks {
            let len = g.int(1, 8) as usize;
            let r: Vec<f64> = (0..len).map(|_| f64::from(u8::from(g.coin(0.5)))).collect();
            feature.push(r.iter().map(|x| 3.0 * x + 10.0 * g.unit()).collect());
            reward.push(r);
        }
        c.corr.push((feature, reward));
    }

    c.eval_variance = vec![vec![0.42], vec![0.5, 0.75], g.rates(5, 40), g.uniform(9)];
    c
}

fn to_json(c: &Cases) -> Value {
    json!({
        "pass_k": c.pass_k.iter().map(|&(n, cc, k)| json!({"n": n, "c": cc, "k": k})).collect::<Vec<_>>(),
        "mean_pass_k": c.mean_pass_k.iter().map(|(t, k)| json!({"tasks": t, "k": k})).collect::<Vec<_>>(),
        "quantile": c.quantile.iter().map(|(v, q)| json!({"values": v, "q": q})).collect::<Vec<_>>(),
        "bootstrap": c.bootstrap.iter().map(|(v, s)| json!({"values": v, "seed": s})).collect::<Vec<_>>(),
        "paired": c.paired.iter().map(|(b, a, s, e)| json!({"before": b, "after": a, "seed": s, "exact": e})).collect::<Vec<_>>(),
        "wilson": c.wilson.iter().map(|&(x, n)| json!({"x": x, "n": n})).collect::<Vec<_>>(),
        "kappa": c.kappa.iter().map(|(a, b)| json!({"a": a, "b": b})).collect::<Vec<_>>(),
        "judge": c.judge.iter().map(|(j, g)| json!({"judge": j, "gold": g})).collect::<Vec<_>>(),
        "variance": c.variance.iter().map(|g| json!({"groups": g})).collect::<Vec<_>>(),
        "corr": c.corr.iter().map(|(f, r)| json!({"feature": f, "reward": r})).collect::<Vec<_>>(),
        "eval_variance": c.eval_variance.iter().map(|v| json!({"values": v})).collect::<Vec<_>>(),
    })
}

/// Runs the oracle; `None` when Python or its packages are missing and the
/// test is optional.
fn run_oracle(input: &Value) -> Option<Value> {
    let missing = |why: String| -> Option<Value> {
        if std::env::var(OPTIONAL_VAR).as_deref() == Ok("1") {
            eprintln!("skipping the stats oracle test: {why}\n{OPTIONAL_VAR}=1 is set");
            None
        } else {
            panic!(
                "the stats oracle test needs python3 with scipy, scikit-learn and statsmodels: {why}\n\
                 hint: set {PYTHON_VAR} to an interpreter that has them, or {OPTIONAL_VAR}=1 to skip this test"
            );
        }
    };
    let python = match oracle_python() {
        Ok(p) => p,
        Err(why) => return missing(why),
    };
    let script = workspace().join("tests/oracle/stats_oracle.py");
    let dir = std::env::temp_dir().join(format!(
        "sparring-stats-oracle-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join("cases.json");
    std::fs::write(&path, serde_json::to_vec(input).unwrap()).unwrap();
    let output = Command::new(&python).arg(&script).arg(&path).output();
    let _ = std::fs::remove_dir_all(&dir);
    match output {
        Err(err) => missing(format!("cannot run `{}`: {err}", python.display())),
        Ok(out) if out.status.code() == Some(3) => {
            // The script's first line names the missing module; its hint
            // repeats ours.
            let stderr = String::from_utf8_lossy(&out.stderr);
            missing(
                stderr
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("error: ")
                    .to_owned(),
            )
        }
        Ok(out) if !out.status.success() => {
            panic!(
                "{} failed:\n{}",
                script.display(),
                String::from_utf8_lossy(&out.stderr)
            )
        }
        Ok(out) => Some(serde_json::from_slice(&out.stdout).expect("oracle output is JSON")),
    }
}

/// Collects mismatches so that one run reports all of them.
#[derive(Default)]
struct Check {
    failures: Vec<String>,
    compared: usize,
}

impl Check {
    fn close(&mut self, what: &str, ours: f64, theirs: &Value, tol: f64) {
        self.compared += 1;
        match theirs.as_f64() {
            Some(t) if (ours - t).abs() <= tol => {}
            _ => self.failures.push(format!(
                "{what}: ours {ours}, oracle {theirs} (tolerance {tol})"
            )),
        }
    }
    fn opt(&mut self, what: &str, ours: Option<f64>, theirs: &Value, tol: f64) {
        if let Some(v) = ours {
            self.close(what, v, theirs, tol);
        } else {
            self.compared += 1;
            if !theirs.is_null() {
                self.failures
                    .push(format!("{what}: ours None, oracle {theirs}"));
            }
        }
    }
    /// [`Check::close`] for several figures of one case, each named as the
    /// oracle's field it is compared with (`variance 2 within`).
    fn fields(&mut self, case: &str, oracle: &Value, figures: &[(&str, f64)], tol: f64) {
        for &(field, ours) in figures {
            self.close(&format!("{case} {field}"), ours, &oracle[field], tol);
        }
    }
    fn eq(&mut self, what: &str, ours: u64, theirs: &Value) {
        self.compared += 1;
        if theirs.as_u64() != Some(ours) {
            self.failures
                .push(format!("{what}: ours {ours}, oracle {theirs}"));
        }
    }
}

#[test]
fn figures_match_scipy_sklearn_statsmodels() {
    let cases = build_cases();
    let Some(oracle) = run_oracle(&to_json(&cases)) else {
        return;
    };
    let mut check = Check::default();

    for (i, &(n, c, k)) in cases.pass_k.iter().enumerate() {
        let o = &oracle["pass_k"][i];
        check.close(
            &format!("pass@k n={n} c={c} k={k}"),
            pass_at_k(n, c, k).unwrap(),
            &o["pass_at_k"],
            EXACT,
        );
        check.close(
            &format!("pass^k n={n} c={c} k={k}"),
            pass_hat_k(n, c, k).unwrap(),
            &o["pass_hat_k"],
            EXACT,
        );
    }
    for (i, (tasks, k)) in cases.mean_pass_k.iter().enumerate() {
        let o = &oracle["mean_pass_k"][i];
        let at = mean_pass_at_k(tasks, *k).unwrap();
        let hat = mean_pass_hat_k(tasks, *k).unwrap();
        check.eq(
            &format!("mean pass@k tasks k={k}"),
            at.n_tasks as u64,
            &o["n_tasks"],
        );
        check.opt(
            &format!("mean pass@k k={k}"),
            at.value,
            &o["pass_at_k"],
            EXACT,
        );
        check.opt(
            &format!("mean pass^k k={k}"),
            hat.value,
            &o["pass_hat_k"],
            EXACT,
        );
    }
    for (i, (values, q)) in cases.quantile.iter().enumerate() {
        check.close(
            &format!("quantile {i} q={q}"),
            quantile(values, *q).unwrap(),
            &oracle["quantile"][i],
            EXACT,
        );
    }
    for (i, (values, seed)) in cases.bootstrap.iter().enumerate() {
        let o = &oracle["bootstrap"][i];
        let ci = bootstrap_mean(values, &BootstrapOptions::with_seed(*seed)).unwrap();
        let case = format!("bootstrap {i}");
        check.fields(&case, o, &[("estimate", ci.estimate)], EXACT);
        check.fields(&case, o, &[("lo", ci.lo), ("hi", ci.hi)], RANDOM);
    }
    for (i, (before, after, seed, exact)) in cases.paired.iter().enumerate() {
        let o = &oracle["paired"][i];
        let d = paired_delta(before, after, &PairedOptions::with_seed(*seed)).unwrap();
        let case = format!("paired {i}");
        check.fields(&case, o, &[("delta", d.delta.estimate)], EXACT);
        check.fields(&case, o, &[("lo", d.delta.lo), ("hi", d.delta.hi)], RANDOM);
        let tol = if *exact { EXACT } else { RANDOM };
        check.close(
            &format!("paired {i} p ({:?})", d.test.method),
            d.test.p_value,
            &o["p_value"],
            tol,
        );
    }
    for (i, &(x, n)) in cases.wilson.iter().enumerate() {
        let o = &oracle["wilson"][i];
        let ci = wilson_interval(x, n, 0.95).unwrap();
        check.fields(
            &format!("wilson {x}/{n}"),
            o,
            &[("lo", ci.lo), ("hi", ci.hi)],
            EXACT,
        );
    }
    for (i, (a, b)) in cases.kappa.iter().enumerate() {
        check.opt(
            &format!("kappa {i}"),
            cohen_kappa(a, b).unwrap(),
            &oracle["kappa"][i],
            EXACT,
        );
    }
    for (i, (judge, gold)) in cases.judge.iter().enumerate() {
        let o = &oracle["judge"][i];
        let s = judge_agreement(judge, gold).unwrap();
        check.eq(&format!("judge {i} n"), s.n as u64, &o["n"]);
        check.fields(
            &format!("judge {i}"),
            o,
            &[("agreement", s.agreement)],
            EXACT,
        );
        check.fields(
            &format!("judge {i} ci"),
            &o["ci"],
            &[("lo", s.agreement_ci95.0), ("hi", s.agreement_ci95.1)],
            EXACT,
        );
        check.opt(&format!("judge {i} kappa"), s.kappa, &o["kappa"], EXACT);
        check.opt(
            &format!("judge {i} pass_when_gold_fail"),
            s.pass_when_gold_fail,
            &o["pass_when_gold_fail"],
            EXACT,
        );
    }
    for (i, groups) in cases.variance.iter().enumerate() {
        let o = &oracle["variance"][i];
        let s = variance_split(groups).unwrap();
        check.fields(
            &format!("variance {i}"),
            o,
            &[
                ("within", s.within_task),
                ("between", s.between_task),
                ("total", s.total),
            ],
            EXACT,
        );
    }
    for (i, (feature, reward)) in cases.corr.iter().enumerate() {
        let ours = within_task_correlation(feature, reward).unwrap();
        check.close(&format!("corr {i}"), ours, &oracle["corr"][i], EXACT);
    }
    for (i, values) in cases.eval_variance.iter().enumerate() {
        let o = &oracle["eval_variance"][i];
        let v = eval_variance(values).unwrap();
        check.fields(&format!("eval_variance {i}"), o, &[("mean", v.mean)], EXACT);
        check.opt(&format!("eval_variance {i} std"), v.std, &o["std"], EXACT);
    }

    eprintln!("compared {} figures with the oracle", check.compared);
    assert!(
        check.failures.is_empty(),
        "{} of {} figures differ from the oracle:\n{}",
        check.failures.len(),
        check.compared,
        check.failures.join("\n")
    );
}
