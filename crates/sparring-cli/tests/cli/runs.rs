//! Counts, stop reasons, modes, pinned re-runs and replays from the command line.

use super::*;
use std::collections::{BTreeMap, BTreeSet};

fn simulate(out: &Path, extra: &[&str]) -> Output {
    simulate_cmd(example_spec(), &example_agent(), out)
        .arg("--quiet")
        .args(extra)
        .run_ok()
}

/// A re-run into `out` of the tasks pinned by `tasks` (a run directory or
/// its rows file).
fn rerun(tasks: &Path, out: &Path, extra: &[&str]) -> Output {
    simulate(
        out,
        &[&["--tasks", tasks.to_str().unwrap()], extra].concat(),
    )
}

/// Rows by row id without the timing fields.
fn untimed(out: &Path) -> BTreeMap<String, Value> {
    read_rows(&out.join("rows.jsonl"))
        .into_iter()
        .map(|mut r| {
            r.as_object_mut().unwrap().remove("timings");
            (r["row_id"].as_str().unwrap().to_owned(), r)
        })
        .collect()
}

fn tasks(rows: &[Value]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in rows {
        *m.entry(r["task_id"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    m
}

#[test]
fn pinned_reruns_pair_every_task_and_repeat_identically() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    simulate(
        &base,
        &[
            "--situations",
            "6",
            "--repeats",
            "2",
            "--grade",
            "--seed",
            "5",
            "--concurrency",
            "8",
        ],
    );
    let base_rows = read_rows(&base.join("rows.jsonl"));
    let base_tasks = tasks(&base_rows);
    let base_run = run_json(&base)["run_id"].as_str().unwrap().to_owned();

    // Two re-runs of the same tasks with the same agent: an A/B with no
    // change must show no difference. Different concurrency, same rows.
    let run_a = dir.path().join("a");
    let run_b = dir.path().join("b");
    rerun(&base, &run_a, &["--grade", "--concurrency", "1"]);
    rerun(
        &base.join("rows.jsonl"),
        &run_b,
        &["--grade", "--concurrency", "16"],
    );
    let (rows_a, rows_b) = (untimed(&run_a), untimed(&run_b));
    assert!(!rows_a.is_empty());
    assert_eq!(rows_a, rows_b, "identical rows apart from timing");
    let rows = valid_rows(&run_a);
    let pinned = tasks(&rows);
    assert_eq!(
        pinned.keys().collect::<Vec<_>>(),
        base_tasks.keys().collect::<Vec<_>>(),
        "every task of the base run, and nothing new"
    );
    assert!(pinned.values().all(|n| *n == 2), "k inherited: {pinned:?}");
    assert!(
        rows.iter()
            .all(|r| r["lineage"]["replayed_from_run"] == base_run.as_str())
    );
    let sum = run_json(&run_a);
    assert_eq!(sum["stopped_because"], "tasks_done");
    assert_eq!(sum["search"]["pinned"]["from_run"], base_run.as_str());
    assert_eq!(sum["options"]["seed"], 5, "the pinned run's seed");

    // The comparison pairs every task (none dropped).
    let o = sparring()
        .args(["delta", "--json"])
        .arg(&base)
        .arg(&run_a)
        .run_ok();
    let delta = stdout_json(&o);
    assert_eq!(delta["n_unpaired"], 0, "{delta}");
    assert_eq!(delta["n_paired"], base_tasks.len(), "{delta}");

    // This call's --repeats wins over the pinned k.
    let run_c = dir.path().join("c");
    rerun(&base, &run_c, &["--repeats", "1", "--mode", "rl"]);
    let rows = read_rows(&run_c.join("rows.jsonl"));
    assert!(tasks(&rows).values().all(|n| *n == 1));
    // The mode's k (8) never applies to a pinned run.
    let run_m = dir.path().join("m");
    rerun(&base, &run_m, &["--mode", "eval"]);
    assert!(
        tasks(&read_rows(&run_m.join("rows.jsonl")))
            .values()
            .all(|n| *n == 2)
    );
}

#[test]
fn runs_replay_with_lineage_and_eval_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    simulate(&out, &["--runs", "3", "--budget", "5", "--grade"]);
    let rows = valid_rows(&out);
    assert_eq!(rows.len(), 15, "budget per run");
    let s = run_json(&out);
    let run_id = s["run_id"].as_str().unwrap();
    let mut per_run: BTreeMap<u64, BTreeSet<String>> = BTreeMap::new();
    for r in &rows {
        let e = r["lineage"]["eval_run"].as_u64().unwrap();
        per_run
            .entry(e)
            .or_default()
            .insert(r["task_id"].as_str().unwrap().to_owned());
        let expected = if e == 0 { Value::Null } else { run_id.into() };
        assert_eq!(r["lineage"]["replayed_from_run"], expected);
    }
    assert_eq!(per_run.keys().copied().collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(per_run[&0], per_run[&2]);
    let eval_runs = s["search"]["eval_runs"].as_array().unwrap();
    assert_eq!(eval_runs.len(), 3);
    assert!(eval_runs.iter().all(|r| r["rows"] == 5));
    assert_eq!(s["search"]["budget_per_run"], 5);
    let o = sparring()
        .args(["eval-variance", "--json"])
        .arg(&out)
        .run_ok();
    let v = stdout_json(&o);
    assert_eq!(v["runs"].as_array().unwrap().len(), 3);
    assert!(
        v["std"].as_f64().unwrap().abs() < 1e-12,
        "a deterministic agent has a zero re-run band: {v}"
    );
}

#[test]
fn modes_resolve_into_run_json_and_aliases_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    simulate(&out, &["--mode", "rl", "--budget", "6", "--grade"]);
    let s = run_json(&out);
    assert_eq!(s["options"]["mode"], "rl");
    assert_eq!(s["options"]["repeats"], 8);
    assert_eq!(s["options"]["repeat_policy"], "successive");
    assert_eq!(s["options"]["phrasings"], 1);
    assert_eq!(s["stopped_because"], "budget_spent");

    let out = dir.path().join("alias");
    simulate(
        &out,
        &[
            "--rollouts-per-request",
            "2",
            "--situations",
            "2",
            "--budget",
            "100",
        ],
    );
    let s = run_json(&out);
    assert_eq!(s["options"]["repeats"], 2);
    assert_eq!(s["stopped_because"], "situations_exhausted");
    assert_eq!(s["coverage"]["situations_run"], 2);
    assert_eq!(
        s["counts"]["rows"], 4,
        "N × n × k, the rest of the budget unspent"
    );

    let spec = write(
        dir.path(),
        "spec.json",
        &format!(
            r#"{{"name": "t", "policy": "Never share an order with someone else.", "tools": [{TOOL}], "options": {{"rollouts_per_request": 3, "unique": true, "situations": 4}}}}"#
        ),
    );
    let out = dir.path().join("spec");
    simulate_cmd(&spec, &example_agent(), &out)
        .arg("--quiet")
        .run_ok();
    let s = run_json(&out);
    assert_eq!(s["options"]["repeats"], 3);
    assert_eq!(s["options"]["unique_situations"], true);
    assert_eq!(s["counts"]["rows"], 12);
    let rows = read_rows(&out.join("rows.jsonl"));
    assert_eq!(
        rows[0]["messages"][0]["content"], "Never share an order with someone else.",
        "`policy` is the system prompt"
    );
}

#[test]
fn bad_run_options_name_the_closest_value() {
    let dir = tempfile::tempdir().unwrap();
    let spec = example_spec();
    for (args, needles) in [
        (vec!["--mode", "evl"], vec!["--mode", "did you mean `eval`"]),
        (
            vec!["--repeat-policy", "sucessive"],
            vec!["--repeat-policy", "did you mean `successive`"],
        ),
        (
            vec!["--patience", "shrt"],
            vec!["--patience", "did you mean `short`"],
        ),
        (vec!["--unique"], vec!["unique_situations", "budget"]),
        (vec!["--runs", "0"], vec!["--runs"]),
        (vec!["--time-budget", "0"], vec!["--time-budget"]),
        (
            vec!["--tasks", "/nonexistent/run"],
            vec!["--tasks", "/nonexistent/run"],
        ),
    ] {
        let o = simulate_cmd(&spec, "true", dir.path().join("x"))
            .args(&args)
            .run();
        assert_usage_error(&o, &needles);
    }
    // A misspelled flag: clap names the closest.
    let o = simulate_spec_with(&spec, &["--repeat-polcy", "fixed"]);
    assert_exit(&o, 2);
    assert_stderr_has(&o, "--repeat-policy");
    // And in the spec.
    let bad = write(
        dir.path(),
        "bad.json",
        &format!(
            r#"{{"name": "t", "system_prompt": "p", "tools": [{TOOL}], "options": {{"mod": "rl"}}}}"#
        ),
    );
    assert_usage_error(
        &simulate_spec(&bad),
        &["/options/mod", "did you mean `mode`"],
    );
}
