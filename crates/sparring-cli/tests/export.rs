//! `sparring export` end to end, and the compatibility test: the files load
//! in `datasets`, render with a chat template shipped in `trl`, and pass a
//! checker of OpenAI's documented rules (`tests/compat/check_exports.py`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::Value;
use sparring_types::Row;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sparring() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sparring"));
    c.current_dir(workspace());
    c
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write_rows(dir: &Path, name: &str, rows: &[Row]) -> PathBuf {
    let path = dir.join(name);
    let text: String = rows
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Each line of a training file with its trace (`row_id`, `task_id`,
/// `reward` …): from the line, or from the `<file>.index.jsonl` sidecar
/// the OpenAI formats write.
fn traced(path: &Path) -> Vec<(Value, Value)> {
    let ls = lines(path);
    let index = sparring_io::export::index_path(path);
    if !index.exists() {
        return ls.into_iter().map(|l| (l.clone(), l)).collect();
    }
    let entries = lines(&index);
    assert_eq!(
        entries.len(),
        ls.len(),
        "{}: one index entry per line",
        index.display()
    );
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(e["line"], i + 1, "{e}");
    }
    ls.into_iter().zip(entries).collect()
}

fn export(args: &[&str]) -> Output {
    sparring().arg("export").args(args).output().unwrap()
}

#[test]
fn every_format_keeps_row_id_task_id_and_reward() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_rows(
        dir.path(),
        "rows.jsonl",
        &sparring_testkit::export_fixture(),
    );
    let out = dir.path().join("all");
    let o = export(&[
        rows.to_str().unwrap(),
        "--format",
        "all",
        "-o",
        out.to_str().unwrap(),
        "--holdout-fraction",
        "0",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["exports"].as_array().unwrap().len(), 8);
    for format in [
        "openai-sft",
        "openai-dpo",
        "trl-sft",
        "trl-dpo",
        "trl-reward",
        "trl-kto",
        "trl-grpo",
    ] {
        let file = out.join(format).join("train-00000-of-00001.jsonl");
        let ls = traced(&file);
        assert!(!ls.is_empty(), "{format} is empty");
        let openai = format.starts_with("openai");
        assert_eq!(
            sparring_io::export::index_path(&file).exists(),
            openai,
            "{format}: a sidecar for the OpenAI formats only"
        );
        for (line, trace) in &ls {
            for key in ["row_id", "task_id", "reward"] {
                assert!(
                    trace.get(key).is_some(),
                    "{format} line lacks {key}: {trace}"
                );
                // OpenAI lines hold only the keys OpenAI documents.
                assert_eq!(line.get(key).is_none(), openai, "{format}: {line}");
            }
        }
    }
    // `--inline-trace` puts the trace back on the OpenAI lines.
    let inline = dir.path().join("inline.jsonl");
    let inlined = export(&[
        rows.to_str().unwrap(),
        "-f",
        "openai-dpo",
        "-o",
        inline.to_str().unwrap(),
        "--inline-trace",
    ]);
    assert!(inlined.status.success(), "{}", stderr(&inlined));
    assert!(!sparring_io::export::index_path(&inline).exists());
    for l in lines(&inline) {
        for key in ["row_id", "task_id", "reward", "rejected_row_id", "margin"] {
            assert!(l.get(key).is_some(), "{key}: {l}");
        }
    }
    assert!(out.join("data/train-00000-of-00001.parquet").exists());
    // Nothing held out: no holdout file (datasets refuses an empty split).
    assert!(!out.join("data/holdout-00000-of-00001.parquet").exists());
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(card.starts_with("---\nconfigs:\n"), "{card}");
    assert!(!card.contains("split: holdout"), "{card}");
    assert!(
        card.contains("`trl-dpo/train-00000-of-00001.jsonl`"),
        "{card}"
    );
    // The cuts on the fixture: one SFT row per task with a pass.
    let sft = traced(&out.join("openai-sft/train-00000-of-00001.jsonl"));
    let tasks: Vec<&str> = sft
        .iter()
        .map(|(_, t)| t["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(tasks.len(), 3, "{tasks:?}");
    // OpenAI: arguments are strings, weights on assistant messages only.
    for (l, _) in &sft {
        for m in l["messages"].as_array().unwrap() {
            assert_eq!(m.get("weight").is_some(), m["role"] == "assistant", "{m}");
            for c in m
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                assert!(c["function"]["arguments"].is_string());
            }
        }
    }
    // TRL: arguments are objects.
    let trl = lines(&out.join("trl-sft/train-00000-of-00001.jsonl"));
    let args: Vec<&Value> = trl
        .iter()
        .flat_map(|l| l["messages"].as_array().unwrap())
        .flat_map(|m| {
            m.get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .map(|c| &c["function"]["arguments"])
        .collect();
    assert!(!args.is_empty() && args.iter().all(|a| a.is_object()));
    // GRPO keeps only the group in the band, with its reward-function columns.
    let grpo = lines(&out.join("trl-grpo/train-00000-of-00001.jsonl"));
    let tasks: Vec<&str> = grpo
        .iter()
        .map(|l| l["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(tasks, vec!["t_refund", "t_status"]);
    assert_eq!(grpo[0]["world_seed"], "7", "a 64-bit seed is a string");
    assert!(grpo[0]["situation"].is_string());
    assert_eq!(
        grpo[0]["prompt"].as_array().unwrap().len(),
        2,
        "system + ask"
    );
    // The report names the exclusions.
    let err = stderr(&o);
    assert!(err.contains("[pass_rate_above_band]"), "{err}");
    assert!(err.contains("[not_picked]"), "{err}");
}

#[test]
fn last_exchange_mask_splits_prompt_and_completion() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_rows(
        dir.path(),
        "rows.jsonl",
        &sparring_testkit::export_fixture(),
    );
    let trl = dir.path().join("sft.jsonl");
    let o = export(&[
        rows.to_str().unwrap(),
        "-f",
        "trl-sft",
        "-o",
        trl.to_str().unwrap(),
        "--mask",
        "last-exchange",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let refund = lines(&trl)
        .into_iter()
        .find(|l| l["task_id"] == "t_refund")
        .unwrap();
    let prompt = refund["prompt"].as_array().unwrap();
    assert_eq!(prompt.last().unwrap()["content"], "yes please");
    assert!(refund["completion"][0]["tool_calls"].is_array());
    assert!(refund.get("messages").is_none());
    let openai = dir.path().join("openai.jsonl");
    let o = export(&[
        rows.to_str().unwrap(),
        "-f",
        "openai-sft",
        "-o",
        openai.to_str().unwrap(),
        "--mask",
        "last-exchange",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (refund, _) = traced(&openai)
        .into_iter()
        .find(|(_, t)| t["task_id"] == "t_refund")
        .unwrap();
    let weights: Vec<i64> = refund["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m.get("weight").and_then(Value::as_i64))
        .collect();
    assert_eq!(weights, vec![0, 0, 0, 1, 1]);
}

#[test]
fn missing_tool_schemas_warn_and_tools_and_system_prompt_supply_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut fixture = sparring_testkit::export_fixture();
    for r in &mut fixture {
        r.tools.clear();
        r.messages.remove(0); // no system message
    }
    let rows = write_rows(dir.path(), "rows.jsonl", &fixture);
    let out = dir.path().join("sft.jsonl");
    let o = export(&[
        rows.to_str().unwrap(),
        "-f",
        "trl-sft",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: 3 exported rows call tools but carry no tool schemas"),
        "{}",
        stderr(&o)
    );

    let spec = workspace().join("examples/support-desk/spec.yaml");
    let o = export(&[
        rows.to_str().unwrap(),
        "-f",
        "trl-sft",
        "-o",
        out.to_str().unwrap(),
        "--tools",
        spec.to_str().unwrap(),
        "--system-prompt",
        "Be brief.",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    for l in lines(&out) {
        assert_eq!(l["messages"][0]["content"], "Be brief.");
        assert!(!l["tools"].as_array().unwrap().is_empty());
    }
}

#[test]
fn holdout_tasks_and_near_copies_never_reach_training() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = sparring_testkit::export_fixture();
    let (held, train): (Vec<Row>, Vec<Row>) =
        fixture.into_iter().partition(|r| r.task_id == "t_refund");
    let rows = write_rows(dir.path(), "rows.jsonl", &train);
    let holdout = write_rows(dir.path(), "holdout.jsonl", &held[..1]);
    let traces = dir.path().join("traces.jsonl");
    std::fs::write(
        &traces,
        serde_json::json!({"messages": [{"role": "user", "content": "Where is order #W1001? It has been a week."},
                                        {"role": "assistant", "content": "Order #W1001 shipped on Monday and should arrive tomorrow."}]})
        .to_string() + "\n",
    )
    .unwrap();
    let out = dir.path().join("ds");
    let o = export(&[
        rows.to_str().unwrap(),
        "-f",
        "all",
        "-o",
        out.to_str().unwrap(),
        "--holdout",
        holdout.to_str().unwrap(),
        "--traces",
        traces.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = &report["decontaminate"];
    let dropped: Vec<&str> = d["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["row_id"].as_str().unwrap())
        .collect();
    assert!(dropped.contains(&"r_status_0"), "{d}");
    assert!(
        !dropped.contains(&"r_status_1"),
        "a shared ask alone (2 of 5 8-grams) stays: {d}"
    );
    assert_eq!(
        d["by_reason"]["ngram_overlap"].as_u64().unwrap() as usize,
        dropped.len()
    );
    assert!(out.join("openai-sft/train-00000-of-00001.jsonl").exists());
    // r_status_0 was one of t_status's 4 rollouts: the GRPO cut leaves the
    // rest of the group out whole, and says so.
    let grpo = report["exports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["format"] == "trl-grpo")
        .unwrap();
    assert_eq!(
        grpo["cut"]["excluded"]["group_decontaminated"]["count"], 1,
        "{grpo}"
    );
    let grpo_file = out.join("trl-grpo/train-00000-of-00001.jsonl");
    if grpo_file.exists() {
        for l in lines(&grpo_file) {
            assert_ne!(l["task_id"], "t_status", "{l}");
        }
    }
    for format in [
        "openai-sft",
        "openai-dpo",
        "trl-dpo",
        "trl-reward",
        "trl-kto",
        "trl-grpo",
    ] {
        // A cut that kept nothing leaves no file.
        let file = out.join(format).join("train-00000-of-00001.jsonl");
        if !file.exists() {
            continue;
        }
        for (_, t) in traced(&file) {
            assert_ne!(t["task_id"], "t_refund", "{format}");
            assert_ne!(t["row_id"], "r_status_0", "{format}");
        }
    }
    // The held-out rows are the Parquet holdout split.
    let e = report["exports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["format"] == "parquet")
        .unwrap();
    assert_eq!(e["written"], d["rows_out"].as_u64().unwrap() + 1);
}

#[test]
fn dataset_folder_holdout_tasks_never_reach_its_training_files() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_rows(
        dir.path(),
        "rows.jsonl",
        &sparring_testkit::export_fixture(),
    );
    let out = dir.path().join("ds");
    let o = export(&[
        rows.to_str().unwrap(),
        "-f",
        "all",
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let exports = report["exports"].as_array().unwrap();
    let parquet = exports.iter().find(|e| e["format"] == "parquet").unwrap();
    let held: Vec<&str> = parquet["holdout_tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    // Four tasks and the default share 0.1: at least one task is held out.
    assert!(!held.is_empty(), "{parquet}");
    assert!(out.join("data/holdout-00000-of-00001.parquet").exists());
    let held_rows = sparring_testkit::export_fixture()
        .iter()
        .filter(|r| held.contains(&r.task_id.as_str()))
        .count();
    let mut files = 0;
    for e in exports.iter().filter(|e| e["format"] != "parquet") {
        let excluded = &e["cut"]["excluded"]["holdout_task"];
        assert_eq!(excluded["count"], held_rows, "{e}");
        assert_eq!(e["cut"]["rows_in"], 10, "{e}");
        for f in e["files"].as_array().unwrap() {
            let f = Path::new(f.as_str().unwrap());
            if f.to_string_lossy().ends_with(".index.jsonl") {
                continue;
            }
            files += 1;
            for (_, t) in traced(f) {
                let task = t["task_id"].as_str().unwrap();
                assert!(!held.contains(&task), "{}: {task}", e["format"]);
            }
        }
    }
    assert!(files >= 5, "{files}");
    // Exporting again with nothing held out removes the stale holdout file.
    let o = export(&[
        rows.to_str().unwrap(),
        "-f",
        "parquet",
        "-o",
        out.to_str().unwrap(),
        "--holdout-fraction",
        "0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!out.join("data/holdout-00000-of-00001.parquet").exists());
}

#[test]
fn select_writes_the_kept_rows_of_each_cut() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_rows(
        dir.path(),
        "rows.jsonl",
        &sparring_testkit::export_fixture(),
    );
    let select = |cut: &str, extra: &[&str]| {
        let out = dir.path().join(format!("{cut}.jsonl"));
        let o = sparring()
            .args(["select", rows.to_str().unwrap(), "--cut", cut, "-o"])
            .arg(&out)
            .arg("--json")
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{cut}: {}", stderr(&o));
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        (lines(&out), report, stderr(&o))
    };
    // SFT: one passing row per task with a pass.
    let (sft, report, err) = select("sft", &[]);
    let mut tasks: Vec<&str> = sft.iter().map(|l| l["task_id"].as_str().unwrap()).collect();
    tasks.sort_unstable();
    assert_eq!(tasks, ["t_easy", "t_refund", "t_status"]);
    assert!(sft.iter().all(|l| l["reward"] == 1.0));
    assert_eq!(report["cut"]["rows_in"], 10);
    assert!(err.contains("[not_picked]"), "{err}");
    // GRPO: whole groups inside the band, never split.
    let (grpo, _, _) = select("grpo", &[]);
    assert_eq!(grpo.len(), 7, "t_status (4) and t_refund (3)");
    // DPO: only rows of kept pairs, each pair within one task and margin.
    let (dpo, report, _) = select("dpo", &[]);
    let pairs = report["pairs"].as_array().unwrap();
    assert!(!pairs.is_empty());
    let by_id = |id: &Value| dpo.iter().find(|l| l["row_id"] == *id).unwrap().clone();
    for p in pairs {
        let (c, r) = (by_id(&p["chosen"]), by_id(&p["rejected"]));
        assert_eq!(c["task_id"], r["task_id"]);
        assert!(c["reward"].as_f64().unwrap() - r["reward"].as_f64().unwrap() >= 0.5);
    }
    // Graded: every row with a reward.
    let (graded, _, _) = select("graded", &[]);
    assert_eq!(graded.len(), 9);
    // The output is a rows file: `sparring report` reads it.
    let o = sparring()
        .args(["report", "--json"])
        .arg(dir.path().join("graded.jsonl"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // Held-out tasks never reach a cut.
    let holdout = write_rows(
        dir.path(),
        "held.jsonl",
        &sparring_testkit::export_fixture()[4..7],
    );
    let (sft, _, _) = select("sft", &["--holdout", holdout.to_str().unwrap()]);
    assert!(sft.iter().all(|l| l["task_id"] != "t_refund"), "{sft:?}");
    // A bad cut name is a one-line usage error.
    let o = sparring()
        .args(["select", rows.to_str().unwrap(), "--cut", "ppo", "-o"])
        .arg(dir.path().join("x.jsonl"))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("unknown --cut `ppo`"), "{err}");
}

#[test]
fn bad_input_is_a_one_line_error_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_rows(
        dir.path(),
        "rows.jsonl",
        &sparring_testkit::export_fixture(),
    );
    let out = dir.path().join("x.jsonl");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["-f", "csv"], "unknown format `csv`"),
        (
            vec!["-f", "trl-sft", "--margin", "2"],
            "--margin must be within 0..=1",
        ),
        (
            vec!["-f", "trl-sft", "--mask", "odd"],
            "unknown --mask `odd`",
        ),
        (
            vec![
                "-f",
                "trl-sft",
                "--min-pass-rate",
                "0.9",
                "--max-pass-rate",
                "0.1",
            ],
            "is above --max-pass-rate",
        ),
        (
            vec!["-f", "trl-sft", "--holdout", "/nonexistent/h.jsonl"],
            "cannot read `/nonexistent/h.jsonl`",
        ),
    ];
    for (args, needle) in cases {
        let mut all = vec![rows.to_str().unwrap(), "-o", out.to_str().unwrap()];
        all.extend(args);
        let o = export(&all);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{needle}: {err}"
        );
    }
}

/// The Python interpreter of the compatibility environment: `SPARRING_COMPAT_PYTHON`,
/// else `target/compat-venv` (made by `.ci/run`, or here when missing).
fn compat_python() -> Result<PathBuf, String> {
    if let Ok(p) = std::env::var("SPARRING_COMPAT_PYTHON") {
        return Ok(PathBuf::from(p));
    }
    let venv = workspace().join("target/compat-venv");
    let python = venv.join("bin/python");
    let ready = |p: &Path| {
        Command::new(p)
            .args(["-c", "import datasets, transformers, tokenizers, importlib.util as u; assert u.find_spec('trl')"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if ready(&python) {
        return Ok(python);
    }
    let reqs = workspace().join("tests/compat");
    let steps: Vec<Vec<String>> = vec![
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
            reqs.join("requirements.txt").display().to_string(),
        ],
        vec![
            python.display().to_string(),
            "-m".into(),
            "pip".into(),
            "install".into(),
            "-q".into(),
            "--disable-pip-version-check".into(),
            "--no-deps".into(),
            "-r".into(),
            reqs.join("requirements-nodeps.txt").display().to_string(),
        ],
    ];
    for step in steps {
        let o = Command::new(&step[0])
            .args(&step[1..])
            .output()
            .map_err(|e| format!("{}: {e}", step[0]))?;
        if !o.status.success() {
            return Err(format!(
                "`{}` failed: {}",
                step.join(" "),
                String::from_utf8_lossy(&o.stderr)
            ));
        }
    }
    if ready(&python) {
        Ok(python)
    } else {
        Err("the venv was built but does not import datasets/transformers/trl".into())
    }
}

#[test]
fn exports_load_in_datasets_and_render_with_trl_templates() {
    let python = match compat_python() {
        Ok(p) => p,
        Err(why) if std::env::var("SPARRING_COMPAT_OPTIONAL").as_deref() == Ok("1") => {
            eprintln!(
                "SKIPPED export compatibility test (SPARRING_COMPAT_OPTIONAL=1): cannot build the Python environment: {why}"
            );
            return;
        }
        Err(why) => panic!(
            "cannot build the Python environment for the export compatibility test: {why}\nhint: set SPARRING_COMPAT_OPTIONAL=1 to skip it where PyPI is unreachable"
        ),
    };
    let dir = tempfile::tempdir().unwrap();
    // World seeds at and above 2^63, which `load_dataset("json")` would
    // read as float64 if they were JSON numbers.
    let mut fixture = sparring_testkit::export_fixture();
    for (i, r) in fixture.iter_mut().enumerate() {
        r.situation.world_seed = [1_421_204_402_630_784_427, u64::MAX, 1 << 63, 7][i % 4];
    }
    let rows = write_rows(dir.path(), "rows.jsonl", &fixture);
    let out = dir.path().join("ds");
    let o = export(&[
        rows.to_str().unwrap(),
        "-f",
        "all",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let split = dir.path().join("sft-last.jsonl");
    let o = export(&[
        rows.to_str().unwrap(),
        "-f",
        "trl-sft",
        "--mask",
        "last-exchange",
        "-o",
        split.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let script = workspace().join("tests/compat/check_exports.py");
    let o = Command::new(&python)
        .arg(&script)
        .arg(&out)
        .arg("--trl-sft")
        .arg(&split)
        .arg("--rows")
        .arg(&rows)
        .env("HF_DATASETS_OFFLINE", "1")
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HOME", dir.path().join("hf"))
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(o.status.success(), "compatibility check failed:\n{text}");
    assert!(text.contains("all export checks passed"), "{text}");

    // The same on a real run of the shipped example (whose deterministic
    // agent gives no preference pairs: empty cuts are allowed there).
    let run = dir.path().join("run");
    let o = sparring()
        .args([
            "simulate",
            "examples/support-desk/spec.yaml",
            "--agent",
            "python3 examples/support-desk/agent.py",
            "--grade",
            "--repeats",
            "2",
            "--quiet",
            "--out",
        ])
        .arg(&run)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let demo = dir.path().join("demo");
    let o = export(&[
        run.to_str().unwrap(),
        "-f",
        "all",
        "-o",
        demo.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = Command::new(&python)
        .arg(&script)
        .arg(&demo)
        .arg("--allow-empty")
        .env("HF_DATASETS_OFFLINE", "1")
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HOME", dir.path().join("hf"))
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(
        o.status.success(),
        "compatibility check on the example run failed:\n{text}"
    );
}

/// Writes the fixture rows to `$SPARRING_FIXTURE_OUT` (for the export
/// benchmark, `docs/benchmarks-export.md`).
#[test]
#[ignore = "a helper for the benchmark, not a test"]
fn write_fixture_rows() {
    let path = PathBuf::from(std::env::var("SPARRING_FIXTURE_OUT").unwrap());
    write_rows(
        path.parent().unwrap(),
        path.file_name().unwrap().to_str().unwrap(),
        &sparring_testkit::export_fixture(),
    );
}
