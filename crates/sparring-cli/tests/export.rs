//! `sparring export` end to end, and the compatibility test: the files load
//! in `datasets`, render with a chat template shipped in `trl`, and pass a
//! checker of OpenAI's documented rules (`tests/compat/check_exports.py`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{
    Run, assert_stderr_has, entry, read_rows, sparring, stderr, stdout_json, strs, texts, workspace,
};
use serde_json::Value;
use sparring::types::Row;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn write_rows(dir: &Path, name: &str, rows: &[Row]) -> PathBuf {
    let path = dir.join(name);
    let text: String = rows
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// Each line of a training file with its trace (`row_id`, `task_id`,
/// `reward` …): from the line, or from the `<file>.index.jsonl` sidecar
/// the OpenAI formats write.
fn traced(path: &Path) -> Vec<(Value, Value)> {
    let ls = read_rows(path);
    let index = sparring::io::export::index_path(path);
    if !index.exists() {
        return ls.into_iter().map(|l| (l.clone(), l)).collect();
    }
    let entries = read_rows(&index);
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

/// A bad-input failure: exit 2 and one line, `error: …` naming `needle`.
fn assert_one_line_error(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains(needle),
        "{needle}: {err}"
    );
}

fn export(args: &[&str]) -> Output {
    sparring().arg("export").args(args).run()
}

/// The export fixture as `rows.jsonl` in `dir`.
fn fixture_rows(dir: &Path) -> PathBuf {
    write_rows(dir, "rows.jsonl", &sparring_testkit::export_fixture())
}

/// `sparring export ROWS --format FORMAT -o OUT` with `extra` after, which
/// must succeed.
fn export_ok(rows: &Path, format: &str, out: &Path, extra: &[&str]) -> Output {
    sparring()
        .arg("export")
        .arg(rows)
        .args(["--format", format, "-o"])
        .arg(out)
        .args(extra)
        .run_ok()
}

#[test]
fn every_format_keeps_row_id_task_id_and_reward() {
    let dir = tempfile::tempdir().unwrap();
    let rows = fixture_rows(dir.path());
    let out = dir.path().join("all");
    let o = export_ok(&rows, "all", &out, &["--holdout-fraction", "0", "--json"]);
    let report = stdout_json(&o);
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
            sparring::io::export::index_path(&file).exists(),
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
    export_ok(&rows, "openai-dpo", &inline, &["--inline-trace"]);
    assert!(!sparring::io::export::index_path(&inline).exists());
    for l in read_rows(&inline) {
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
    let trl = read_rows(&out.join("trl-sft/train-00000-of-00001.jsonl"));
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
    let grpo = read_rows(&out.join("trl-grpo/train-00000-of-00001.jsonl"));
    assert_eq!(texts(&grpo, "task_id"), ["t_refund", "t_status"]);
    assert_eq!(grpo[0]["world_seed"], "7", "a 64-bit seed is a string");
    assert!(grpo[0]["situation"].is_string());
    assert_eq!(
        grpo[0]["prompt"].as_array().unwrap().len(),
        2,
        "system + ask"
    );
    // The report names the exclusions.
    assert_stderr_has(&o, "[pass_rate_above_band]");
    assert_stderr_has(&o, "[not_picked]");
}

#[test]
fn last_exchange_mask_splits_prompt_and_completion() {
    let dir = tempfile::tempdir().unwrap();
    let rows = fixture_rows(dir.path());
    let trl = dir.path().join("sft.jsonl");
    export_ok(&rows, "trl-sft", &trl, &["--mask", "last-exchange"]);
    let refund = read_rows(&trl)
        .into_iter()
        .find(|l| l["task_id"] == "t_refund")
        .unwrap();
    let prompt = refund["prompt"].as_array().unwrap();
    assert_eq!(prompt.last().unwrap()["content"], "yes please");
    assert!(refund["completion"][0]["tool_calls"].is_array());
    assert!(refund.get("messages").is_none());
    let openai = dir.path().join("openai.jsonl");
    export_ok(&rows, "openai-sft", &openai, &["--mask", "last-exchange"]);
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
        r.tools = sparring::types::Tools::default();
        r.messages.remove(0); // no system message
    }
    let rows = write_rows(dir.path(), "rows.jsonl", &fixture);
    let out = dir.path().join("sft.jsonl");
    let o = export_ok(&rows, "trl-sft", &out, &[]);
    assert_stderr_has(
        &o,
        "warning: 3 exported rows call tools but carry no tool schemas",
    );

    let spec = workspace().join("examples/support-desk/spec.yaml");
    let o = export_ok(
        &rows,
        "trl-sft",
        &out,
        &[
            "--tools",
            spec.to_str().unwrap(),
            "--system-prompt",
            "Be brief.",
        ],
    );
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    for l in read_rows(&out) {
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
    let o = export_ok(
        &rows,
        "all",
        &out,
        &[
            "--holdout",
            holdout.to_str().unwrap(),
            "--traces",
            traces.to_str().unwrap(),
            "--json",
        ],
    );
    let report = stdout_json(&o);
    let d = &report["decontaminate"];
    let dropped = texts(d["dropped"].as_array().unwrap(), "row_id");
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
    let grpo = entry(&report["exports"], "format", "trl-grpo");
    assert_eq!(
        grpo["cut"]["excluded"]["group_decontaminated"]["count"], 1,
        "{grpo}"
    );
    let grpo_file = out.join("trl-grpo/train-00000-of-00001.jsonl");
    if grpo_file.exists() {
        for l in read_rows(&grpo_file) {
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
    let e = entry(&report["exports"], "format", "parquet");
    assert_eq!(e["written"], d["rows_out"].as_u64().unwrap() + 1);
    // A run directory is its rows.jsonl, for --holdout and --traces alike
    // (before: "is a directory").
    let run = dir.path().join("held-run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::copy(&holdout, run.join("rows.jsonl")).unwrap();
    let again = export_ok(
        &rows,
        "all",
        &dir.path().join("ds2"),
        &[
            "--holdout",
            run.to_str().unwrap(),
            "--traces",
            traces.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(
        stdout_json(&again)["decontaminate"]["dropped"],
        d["dropped"]
    );
}

#[test]
fn dataset_folder_holdout_tasks_never_reach_its_training_files() {
    let dir = tempfile::tempdir().unwrap();
    let rows = fixture_rows(dir.path());
    let out = dir.path().join("ds");
    let o = export_ok(&rows, "all", &out, &["--json"]);
    let report = stdout_json(&o);
    let exports = report["exports"].as_array().unwrap();
    let parquet = entry(&report["exports"], "format", "parquet");
    let held = strs(&parquet["holdout_tasks"]);
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
    export_ok(&rows, "parquet", &out, &["--holdout-fraction", "0"]);
    assert!(!out.join("data/holdout-00000-of-00001.parquet").exists());
}

#[test]
fn select_writes_the_kept_rows_of_each_cut() {
    let dir = tempfile::tempdir().unwrap();
    let rows = fixture_rows(dir.path());
    let select = |cut: &str, extra: &[&str]| {
        let out = dir.path().join(format!("{cut}.jsonl"));
        let o = sparring()
            .args(["select", rows.to_str().unwrap(), "--cut", cut, "-o"])
            .arg(&out)
            .arg("--json")
            .args(extra)
            .run();
        assert!(o.status.success(), "{cut}: {}", stderr(&o));
        let report = stdout_json(&o);
        (read_rows(&out), report, stderr(&o))
    };
    // SFT: one passing row per task with a pass.
    let (sft, report, err) = select("sft", &[]);
    let mut tasks = texts(&sft, "task_id");
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
    sparring()
        .args(["report", "--json"])
        .arg(dir.path().join("graded.jsonl"))
        .run_ok();
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
        .run();
    assert_one_line_error(&o, "unknown --cut `ppo`");
}

#[test]
fn bad_input_is_a_one_line_error_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let rows = fixture_rows(dir.path());
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
        assert_one_line_error(&export(&all), needle);
    }
}

/// What the compatibility environment must import, and the pip steps that
/// install it (as `.ci/run` does).
const COMPAT_READY: &str = "import datasets, transformers, tokenizers, openai, anthropic, jsonschema, importlib.util as u; assert u.find_spec('trl')";
/// What the training test needs on top: torch and accelerate.
const TRAIN_READY: &str = "import torch, accelerate, trl.trainer";

/// The Python interpreter of the compatibility environment: `SPARRING_COMPAT_PYTHON`,
/// else `target/compat-venv` (made by `.ci/run`, or here when missing), able
/// to run `ready`; with `train`, torch is installed too.
fn compat_env(train: bool) -> Result<PathBuf, String> {
    if let Ok(p) = std::env::var("SPARRING_COMPAT_PYTHON") {
        return Ok(PathBuf::from(p));
    }
    let venv = workspace().join("target/compat-venv");
    let python = venv.join("bin/python");
    let ready = |p: &Path| {
        let code = if train {
            format!("{COMPAT_READY}; {TRAIN_READY}")
        } else {
            COMPAT_READY.to_owned()
        };
        Command::new(p)
            .args(["-c", &code])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if ready(&python) {
        return Ok(python);
    }
    let reqs = workspace().join("tests/compat");
    let pip = |args: &[&str], file: &str| -> Vec<String> {
        let mut step: Vec<String> = vec![
            python.display().to_string(),
            "-m".into(),
            "pip".into(),
            "install".into(),
            "-q".into(),
            "--disable-pip-version-check".into(),
        ];
        step.extend(args.iter().map(|a| (*a).to_owned()));
        step.push("-r".into());
        step.push(reqs.join(file).display().to_string());
        step
    };
    let mut steps: Vec<Vec<String>> = vec![
        vec![
            "python3".into(),
            "-m".into(),
            "venv".into(),
            venv.display().to_string(),
        ],
        pip(&[], "requirements.txt"),
        pip(&["--no-deps"], "requirements-nodeps.txt"),
    ];
    if train {
        steps.push(pip(&[], "requirements-train.txt"));
    }
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
        Err("the venv was built but does not import what the test needs".into())
    }
}

/// The compatibility environment, or `None` (with a message) when it cannot
/// be built and `SPARRING_COMPAT_OPTIONAL=1` allows skipping.
fn compat_or_skip(train: bool, test: &str) -> Option<PathBuf> {
    match compat_env(train) {
        Ok(p) => Some(p),
        Err(why) if std::env::var("SPARRING_COMPAT_OPTIONAL").as_deref() == Ok("1") => {
            eprintln!(
                "SKIPPED {test} (SPARRING_COMPAT_OPTIONAL=1): cannot build the Python environment: {why}"
            );
            None
        }
        Err(why) => panic!(
            "cannot build the Python environment for {test}: {why}\nhint: set SPARRING_COMPAT_OPTIONAL=1 to skip it where PyPI is unreachable"
        ),
    }
}

/// Runs a script of `tests/compat` offline; its output, and whether it passed.
fn run_script(
    python: &Path,
    script: &str,
    args: &[&std::ffi::OsStr],
    home: &Path,
) -> (bool, String) {
    let o = Command::new(python)
        .arg(workspace().join("tests/compat").join(script))
        .args(args)
        .env("HF_DATASETS_OFFLINE", "1")
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HOME", home)
        .env("TRANSFORMERS_VERBOSITY", "error")
        .run();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    (o.status.success(), text)
}

/// The export fixture with world seeds at and above 2^63, which
/// `load_dataset("json")` would read as float64 if they were JSON numbers.
fn fixture_with_big_seeds() -> Vec<Row> {
    let mut fixture = sparring_testkit::export_fixture();
    for (i, r) in fixture.iter_mut().enumerate() {
        r.situation.world_seed = [1_421_204_402_630_784_427, u64::MAX, 1 << 63][i % 3];
    }
    fixture
}

/// The fixture (with seeds at and above 2^63) exported `--format all` to
/// `DIR/ds`, and as trl-sft `--mask last-exchange` to `DIR/sft-last.jsonl`;
/// gives the rows file, the folder and the file.
fn export_fixture_everywhere(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let rows = write_rows(dir, "rows.jsonl", &fixture_with_big_seeds());
    let out = dir.join("ds");
    export_ok(&rows, "all", &out, &[]);
    let split = dir.join("sft-last.jsonl");
    export_ok(&rows, "trl-sft", &split, &["--mask", "last-exchange"]);
    (rows, out, split)
}

#[test]
fn exports_load_in_datasets_and_render_with_trl_templates() {
    let Some(python) = compat_or_skip(false, "the export compatibility test") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (rows, out, split) = export_fixture_everywhere(dir.path());
    let home = dir.path().join("hf");
    let (ok, text) = run_script(
        &python,
        "check_exports.py",
        &[
            out.as_os_str(),
            "--trl-sft".as_ref(),
            split.as_os_str(),
            "--rows".as_ref(),
            rows.as_os_str(),
        ],
        &home,
    );
    assert!(ok, "compatibility check failed:\n{text}");
    assert!(text.contains("all export checks passed"), "{text}");
    assert!(
        text.contains("load_dataset returns every world_seed exactly"),
        "{text}"
    );

    // The same on a real run of the shipped example (whose deterministic
    // agent gives no preference pairs: empty cuts are allowed there).
    let run = dir.path().join("run");
    sparring()
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
        .run_ok();
    let demo = dir.path().join("demo");
    export_ok(&run, "all", &demo, &[]);
    let (ok, text) = run_script(
        &python,
        "check_exports.py",
        &[demo.as_os_str(), "--allow-empty".as_ref()],
        &home,
    );
    assert!(ok, "compatibility check on the example run failed:\n{text}");
}

/// TRL's own trainers take one step on every TRL export (a tiny random
/// model on CPU, nothing downloaded): SFT with `assistant_only_loss=True`
/// labels agent tokens only, and the GRPO reward function gets every
/// `world_seed` exactly (`tests/compat/train_trl.py`).
#[test]
fn trl_trainers_take_a_step_on_every_trl_export() {
    let Some(python) = compat_or_skip(true, "the TRL training test") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (rows, out, split) = export_fixture_everywhere(dir.path());
    let (ok, text) = run_script(
        &python,
        "train_trl.py",
        &[
            out.as_os_str(),
            "--trl-sft".as_ref(),
            split.as_os_str(),
            "--rows".as_ref(),
            rows.as_os_str(),
        ],
        &dir.path().join("hf"),
    );
    assert!(ok, "a trainer failed:\n{text}");
    for trainer in [
        "SFTTrainer",
        "DPOTrainer",
        "KTOTrainer",
        "RewardTrainer",
        "GRPOTrainer",
    ] {
        assert!(text.contains(trainer), "{trainer} did not run:\n{text}");
    }
    assert!(text.contains("all trainers took a step"), "{text}");
}

/// Captured request bodies, one `{"case", "target", "body", …}` line each.
fn case(name: &str, target: &str, body: &Value, extra: &[(&str, Value)]) -> String {
    let mut line = serde_json::json!({"case": name, "target": target, "body": body});
    for (k, v) in extra {
        line[*k] = v.clone();
    }
    line.to_string() + "\n"
}

/// What sparring sends (captured by the fake server from real runs, and
/// what it would send OpenAI itself) checked against the `openai` and
/// `anthropic` packages' request types and OpenAI's OpenAPI schema
/// (`tests/compat/check_conformance.py`), offline.
#[test]
fn request_bodies_conform_to_the_openai_and_anthropic_definitions() {
    use sparring::llm::{BackendOptions, BackendSpec, Limiter, OpenAiAgent, RetryPolicy, Sampling};
    use sparring::types::{AgentRequest, Message};
    use sparring_testkit::fake_llm::{FakeLlm, FakeOptions};

    let Some(python) = compat_or_skip(false, "the request conformance test") else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    // The agent looks an order up, then asks; the person answers: bodies
    // carry tool calls, tool results and several turns.
    let server = runtime
        .block_on(FakeLlm::with(FakeOptions {
            record: true,
            agent_text: Some("Could you confirm your email address?".to_owned()),
            ..FakeOptions::default()
        }))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key = "sk-conformance-test";
    let openai_spec = format!("openai:fake-model@{}#key=TEST_KEY", server.base_url());
    let anthropic_spec = format!("anthropic:claude-fake@{}", server.base_url());
    let runs: Vec<(&str, &str, Vec<&str>)> = vec![
        (
            "openai, every sampling option",
            &openai_spec,
            vec![
                "--temperature",
                "0.4",
                "--top-p",
                "0.9",
                "--max-tokens",
                "200",
                "--logprobs",
                "--top-logprobs",
                "2",
                "--sampling-seed",
                "5",
            ],
        ),
        ("openai, defaults", &openai_spec, vec![]),
        (
            "anthropic, temperature and max_tokens",
            &anthropic_spec,
            vec!["--temperature", "0.5", "--max-tokens", "300"],
        ),
        ("anthropic, defaults", &anthropic_spec, vec![]),
    ];
    let (mut openai_cases, mut anthropic_cases) = (String::new(), String::new());
    let mut conversations: Vec<Vec<Message>> = Vec::new();
    let mut tools: Vec<Value> = Vec::new();
    for (i, (name, agent, extra)) in runs.iter().enumerate() {
        let before = server.requests().len();
        let out = dir.path().join(format!("run{i}"));
        let o = sparring()
            .args([
                "simulate",
                "examples/support-desk/spec.yaml",
                "--agent",
                agent,
            ])
            .args([
                "--budget",
                "3",
                "--max-turns",
                "3",
                "--patience",
                "endless",
                "--quiet",
            ])
            .args(extra)
            .arg("--out")
            .arg(&out)
            .env("TEST_KEY", key)
            .env("ANTHROPIC_API_KEY", key)
            .env_remove("OPENAI_BASE_URL")
            .run();
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let sent = server.requests();
        assert!(sent.len() > before, "{name}: no request");
        for r in &sent[before..] {
            if r.path.ends_with("/messages") {
                let allow: Vec<&str> = ["temperature", "top_p"]
                    .into_iter()
                    .filter(|k| r.body.get(*k).is_some())
                    .collect();
                anthropic_cases.push_str(&case(
                    name,
                    "compatible",
                    &r.body,
                    &[("allow_undeclared", serde_json::json!(allow))],
                ));
            } else {
                openai_cases.push_str(&case(name, "compatible", &r.body, &[]));
            }
        }
        if i == 0 {
            let text = std::fs::read_to_string(out.join("rows.jsonl")).unwrap();
            for line in text.lines() {
                let row: Row = serde_json::from_str(line).unwrap();
                tools = row.tools.to_vec();
                conversations.push(row.messages);
            }
        }
    }
    // What the agent would send OpenAI itself for the same conversations,
    // at every point an agent request was made: never sent, so the test
    // stays offline.
    let BackendSpec::Model(endpoint) = BackendSpec::parse("openai:gpt-5").unwrap() else {
        panic!("not a model spec")
    };
    let resolved = endpoint
        .resolve(&|n| (n == "OPENAI_API_KEY").then(|| key.to_owned()))
        .unwrap();
    let tools = std::sync::Arc::new(tools);
    for (seed, allow) in [(None, vec![]), (Some(3), vec!["seed"])] {
        let sampling = Sampling {
            temperature: Some(0.4),
            top_p: Some(0.9),
            max_tokens: Some(200),
            logprobs: true,
            top_logprobs: Some(2),
            seed,
        };
        let agent = OpenAiAgent::new(
            resolved.clone(),
            BackendOptions {
                sampling,
                timeout: std::time::Duration::from_secs(5),
                retry: RetryPolicy::with_retries(0),
                limiter: Limiter::new(1, None),
            },
        )
        .unwrap();
        for messages in &conversations {
            for end in (1..messages.len())
                .filter(|&j| messages[j].role == sparring::types::Role::Assistant)
            {
                let body = agent.request_body(&AgentRequest {
                    id: format!("conformance-{end}"),
                    messages: messages[..end].to_vec(),
                    tools: std::sync::Arc::clone(&tools),
                });
                assert!(body.get("max_tokens").is_none(), "{body}");
                openai_cases.push_str(&case(
                    "openai itself",
                    "openai",
                    &body,
                    &[("allow_deprecated", serde_json::json!(allow))],
                ));
            }
        }
    }
    let openai_file = dir.path().join("openai.jsonl");
    let anthropic_file = dir.path().join("anthropic.jsonl");
    std::fs::write(&openai_file, &openai_cases).unwrap();
    std::fs::write(&anthropic_file, &anthropic_cases).unwrap();
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "--openai".as_ref(),
        openai_file.as_os_str(),
        "--anthropic".as_ref(),
        anthropic_file.as_os_str(),
    ];
    // OpenAI's request schema, cut out of its OpenAPI document
    // (tests/compat/openai-openapi/README.md); `$SPARRING_OPENAI_OPENAPI`
    // points at a newer cut.
    let schema = std::env::var_os("SPARRING_OPENAI_OPENAPI").map_or_else(
        || workspace().join("tests/compat/openai-openapi/chat-completions-request.json"),
        PathBuf::from,
    );
    assert!(schema.exists(), "no OpenAPI schema at {}", schema.display());
    args.extend(["--openapi".as_ref(), schema.as_os_str()]);
    let (ok, text) = run_script(
        &python,
        "check_conformance.py",
        &args,
        &dir.path().join("hf"),
    );
    assert!(ok, "conformance check failed:\n{text}");
    assert!(text.contains("all conformance checks passed"), "{text}");
    eprintln!("{text}");
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
