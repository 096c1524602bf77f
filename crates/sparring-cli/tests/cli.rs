//! The `sparring` binary end to end: bad input, the example run, misbehaving
//! agents, reports.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::float_cmp
)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sparring() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sparring"));
    c.current_dir(workspace());
    c.env("NO_PROGRESS", "1");
    c
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn example_spec() -> PathBuf {
    workspace().join("examples/support-desk/spec.yaml")
}

fn example_agent() -> String {
    format!(
        "python3 {}",
        workspace().join("examples/support-desk/agent.py").display()
    )
}

fn flaky(mode: &str, dir: &Path) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/flaky.py");
    format!(
        "python3 {} {mode} {}",
        script.display(),
        dir.join("marker").display()
    )
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A bad-input failure: exit 2, one line on stderr, naming what and where.
fn assert_usage_error(o: &Output, must_contain: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "exit code; stderr: {err}");
    let first = err.lines().next().unwrap_or("");
    assert!(first.starts_with("error: "), "{err}");
    for needle in must_contain {
        assert!(first.contains(needle), "`{needle}` not in: {first}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

/// `sparring simulate SPEC --agent true`: for specs that must fail before
/// the agent matters.
fn simulate_spec(spec: &Path) -> Output {
    sparring()
        .arg("simulate")
        .arg(spec)
        .args(["--agent", "true"])
        .output()
        .unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn read_rows(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("line is not JSON ({e}): {l}")))
        .collect()
}

fn row_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace().join("docs/row.schema.json")).unwrap(),
    )
    .unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

fn assert_valid_rows(rows: &[Value]) {
    let validator = row_validator();
    for (i, row) in rows.iter().enumerate() {
        let errors: Vec<String> = validator
            .iter_errors(row)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "row {i} breaks docs/row.schema.json: {errors:?}"
        );
    }
}

const TOOL: &str = r#"{"type": "function", "function": {"name": "get_order", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}}"#;

fn spec_with_tools(tools: &str) -> String {
    format!(r#"{{"name": "t", "system_prompt": "p", "tools": {tools}}}"#)
}

mod spec_errors {
    use super::*;

    #[test]
    fn missing_spec_file() {
        let o = sparring()
            .args(["simulate", "no/such/spec.yaml", "--agent", "true"])
            .output()
            .unwrap();
        assert_usage_error(&o, &["no/such/spec.yaml", "no such file"]);
    }

    #[test]
    fn invalid_yaml_names_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "s.yaml",
            "name: x\nsystem_prompt: [unclosed\ntools: []\n",
        );
        let o = simulate_spec(&p);
        assert_usage_error(&o, &["s.yaml", "line ", "column ", "invalid YAML"]);
    }

    #[test]
    fn invalid_json_and_toml_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "s.json", "{\n  \"name\": \"x\",\n  oops\n}");
        let o = simulate_spec(&p);
        assert_usage_error(&o, &["s.json", "line 3"]);
        let p = write(dir.path(), "s.toml", "name = \"x\"\nsystem_prompt = \n");
        let o = simulate_spec(&p);
        assert_usage_error(&o, &["s.toml", "line 2"]);
    }

    #[test]
    fn tool_without_a_name() {
        let dir = tempfile::tempdir().unwrap();
        let tools = format!(
            r#"[{TOOL}, {{"type": "function", "function": {{"parameters": {{"type": "object"}}}}}}]"#
        );
        let p = write(dir.path(), "s.json", &spec_with_tools(&tools));
        let o = simulate_spec(&p);
        assert_usage_error(
            &o,
            &["s.json", "`/tools/1/function/name`", "needs a `name`"],
        );
        let p = write(
            dir.path(),
            "m.yaml",
            "name: t\nsystem_prompt: p\ntools:\n  - description: no name\n    inputSchema: {type: object}\n",
        );
        let o = simulate_spec(&p);
        assert_usage_error(&o, &["m.yaml", "`/tools/0/name`"]);
    }

    #[test]
    fn parameters_must_be_an_object_schema() {
        let dir = tempfile::tempdir().unwrap();
        let tools = r#"[{"type": "function", "function": {"name": "a", "parameters": {"type": "string"}}}]"#;
        let p = write(dir.path(), "s.json", &spec_with_tools(tools));
        let o = simulate_spec(&p);
        assert_usage_error(
            &o,
            &["`/tools/0/function/parameters/type`", "object schema"],
        );
        let tools = r#"[{"type": "function", "function": {"name": "a", "parameters": [1]}}]"#;
        let p = write(dir.path(), "s.json", &spec_with_tools(tools));
        let o = simulate_spec(&p);
        assert_usage_error(&o, &["`/tools/0/function/parameters`", "must be an object"]);
    }

    #[test]
    fn two_tools_with_one_name() {
        let dir = tempfile::tempdir().unwrap();
        let tools =
            format!(r#"[{TOOL}, {{"name": "get_order", "inputSchema": {{"type": "object"}}}}]"#);
        let p = write(dir.path(), "s.json", &spec_with_tools(&tools));
        let o = simulate_spec(&p);
        assert_usage_error(&o, &["`/tools/1`", "two tools are named `get_order`"]);
    }

    #[test]
    fn unknown_keys_anywhere() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "s.yaml",
            &format!("name: t\nsystem_prompt: p\ntools: [{TOOL}]\nseed: [hi]\n"),
        );
        let o = simulate_spec(&p);
        assert_usage_error(
            &o,
            &["`/seed`", "unknown key `seed`", "did you mean `seeds`"],
        );
        let p = write(
            dir.path(),
            "s.yaml",
            &format!("name: t\nsystem_prompt: p\ntools: [{TOOL}]\noptions: {{budgte: 3}}\n"),
        );
        let o = simulate_spec(&p);
        assert_usage_error(&o, &["`/options/budgte`", "did you mean `budget`"]);
        let tools =
            r#"[{"type": "function", "function": {"name": "a", "paramters": {"type": "object"}}}]"#;
        let p = write(dir.path(), "s.json", &spec_with_tools(tools));
        let o = simulate_spec(&p);
        assert_usage_error(
            &o,
            &["`/tools/0/function/paramters`", "did you mean `parameters`"],
        );
    }

    #[test]
    fn errors_in_a_tools_file_name_that_file() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "tools.json",
            &format!("[{TOOL}, {{\"name\": 3}}]"),
        );
        write(dir.path(), "policy.md", "Be kind.");
        let p = write(
            dir.path(),
            "s.yaml",
            "name: t\nsystem_prompt: {file: policy.md}\ntools: {file: tools.json}\n",
        );
        let o = simulate_spec(&p);
        assert_usage_error(&o, &["tools.json", "`/1/name`"]);
        let p = write(
            dir.path(),
            "s2.yaml",
            "name: t\nsystem_prompt: {file: nope.md}\ntools: {file: tools.json}\n",
        );
        let o = simulate_spec(&p);
        assert_usage_error(&o, &["nope.md", "no such file"]);
    }

    #[test]
    fn agent_command_not_found_exits_before_any_row() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args(["--agent", "definitely-not-a-command-xyz --flag"])
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert_usage_error(&o, &["definitely-not-a-command-xyz", "not found"]);
        assert!(!out.join("rows.jsonl").exists());
    }

    #[test]
    fn no_agent_at_all() {
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .output()
            .unwrap();
        assert_usage_error(&o, &["no agent", "--agent"]);
    }

    #[test]
    fn zero_budget_is_refused() {
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args(["--agent", "true", "--budget", "0"])
            .output()
            .unwrap();
        assert_usage_error(&o, &["--budget must be at least 1"]);
    }
}

mod example {
    use super::*;

    #[test]
    fn support_desk_runs_graded_and_reports() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("demo");
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args(["--agent", &example_agent(), "--grade", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains("pass@1"), "{stdout}");
        assert!(stderr(&o).contains("simulated "), "{}", stderr(&o));

        let rows = read_rows(&out.join("rows.jsonl"));
        assert!(rows.len() >= 20, "{} rows", rows.len());
        assert_valid_rows(&rows);
        // Every row graded; the example agent's planted failure is caught,
        // and not every row fails.
        assert!(rows.iter().all(|r| r["reward"].is_number()));
        let failed: Vec<&Value> = rows.iter().filter(|r| r["reward"] == 0.0).collect();
        assert!(
            !failed.is_empty() && failed.len() < rows.len() / 2,
            "{} failed",
            failed.len()
        );
        assert!(
            failed
                .iter()
                .any(|r| r["failure_class"] == "claimed_without_call")
        );
        // Both seeds ran, word for word.
        let seeds: Vec<&str> = rows
            .iter()
            .filter(|r| r["situation"]["tier"] == "seed")
            .map(|r| r["messages"][1]["content"].as_str().unwrap())
            .collect();
        assert_eq!(seeds.len(), 2);
        assert!(seeds.contains(&"Where is my package? The order is #W1002."));
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        assert_eq!(summary["counts"]["rows"], rows.len());
        for key in [
            "stopped_because",
            "warnings",
            "degraded",
            "coverage",
            "options",
            "sparring_version",
        ] {
            assert!(summary.get(key).is_some(), "run.json lacks {key}");
        }
        assert_eq!(summary["options"]["grade"], true);
        assert_eq!(summary["options"]["max_turns"], 8, "spec options apply");

        // The report reads the run back, as a table and as JSON.
        let o = sparring()
            .arg("report")
            .arg(&out)
            .arg("--json")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(report["n_rows"], rows.len());
        let passed = rows.len() - failed.len();
        let p = report["pass_at_1"].as_f64().unwrap();
        assert!(
            (p - passed as f64 / rows.len() as f64).abs() < 1e-9,
            "one row per task: pass@1 is the pass rate"
        );
        assert!(report["by_tool"]["refund_order"]["pass_at_1"].is_number());
    }

    #[test]
    fn command_line_wins_over_spec_options_and_seed_is_reproducible() {
        let dir = tempfile::tempdir().unwrap();
        let run = |name: &str, concurrency: &str| {
            let out = dir.path().join(name);
            let o = sparring()
                .arg("simulate")
                .arg(example_spec())
                .args([
                    "--agent",
                    &example_agent(),
                    "--budget",
                    "7",
                    "--seed",
                    "5",
                    "--concurrency",
                    concurrency,
                    "--quiet",
                    "--out",
                ])
                .arg(&out)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
            let mut rows: Vec<Value> = read_rows(&out.join("rows.jsonl"));
            for r in &mut rows {
                r["timings"] = Value::Null;
            }
            rows.sort_by_key(|r| r["row_id"].as_str().unwrap().to_owned());
            rows
        };
        let a = run("a", "1");
        let b = run("b", "4");
        assert_eq!(a.len(), 7);
        assert!(a == b, "same seed, same rows at concurrency 1 and 4");
        assert!(
            a.iter().all(|r| r["reward"].is_null()),
            "ungraded without --grade"
        );
    }
}

mod agents {
    use super::*;

    fn run_flaky(mode: &str) -> (Vec<Value>, Value, String) {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &flaky(mode, dir.path()),
                "--budget",
                "8",
                "--concurrency",
                "1",
                "--grade",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{mode}: {}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_valid_rows(&rows);
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        let log = std::fs::read_to_string(out.join("run.log")).unwrap();
        (rows, summary, log)
    }

    fn one_error_row(rows: &[Value], needle: &str) {
        assert_eq!(rows.len(), 8, "the run goes on after the bad reply");
        let errors: Vec<&Value> = rows
            .iter()
            .filter(|r| r["ended_by"] == "agent_error")
            .collect();
        assert_eq!(
            errors.len(),
            1,
            "exactly the affected row is an agent_error"
        );
        let error = errors[0]["error"].as_str().unwrap();
        assert!(error.contains(needle), "{error}");
        assert_eq!(errors[0]["reward"], 0.0);
        assert_eq!(errors[0]["failure_class"], "agent_error");
        assert!(
            rows.iter()
                .filter(|r| r["ended_by"] != "agent_error")
                .all(|r| r["reward"] == 1.0)
        );
    }

    #[test]
    fn non_json_line() {
        let (rows, _, log) = run_flaky("nonjson");
        one_error_row(&rows, "not JSON");
        assert!(log.contains("start 2"), "the agent was restarted: {log}");
    }

    #[test]
    fn unknown_id() {
        let (rows, _, log) = run_flaky("unknown-id");
        one_error_row(&rows, "unknown id `nobody-asked`");
        assert!(log.contains("start 2"), "{log}");
    }

    #[test]
    fn dies_mid_run() {
        let (rows, summary, log) = run_flaky("die");
        one_error_row(&rows, "exited");
        assert!(log.contains("start 2"), "{log}");
        assert_eq!(summary["counts"]["ended_by"]["agent_error"], 1);
    }

    #[test]
    fn reported_error_stays_with_its_row() {
        let (rows, _, log) = run_flaky("error");
        one_error_row(&rows, "model overloaded");
        assert!(
            !log.contains("start 2"),
            "a reported error needs no restart: {log}"
        );
    }

    #[test]
    fn stderr_goes_to_the_log_not_stdout() {
        let (rows, _, log) = run_flaky("stderr");
        assert!(rows.iter().all(|r| r["ended_by"] != "agent_error"));
        assert!(log.contains("stderr: debug: thinking hard"), "{log}");
    }

    #[test]
    fn replies_out_of_order_are_matched_by_id() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/shuffle.py");
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &format!("python3 {}", script.display()),
                "--repeats",
                "4",
                "--concurrency",
                "16",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert!(rows.len() > 100, "{}", rows.len());
        assert_valid_rows(&rows);
        assert!(
            rows.iter().all(|r| r["ended_by"] == "agent_done"),
            "every reply reached its own row"
        );
        let log = std::fs::read_to_string(out.join("run.log")).unwrap();
        assert!(!log.contains("start 2"), "{log}");
    }

    #[test]
    fn an_agent_that_never_works_stops_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                "python3 -c 'import sys; sys.exit(1)'",
                "--concurrency",
                "1",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("never replied"), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_eq!(rows.len(), 3);
        assert_valid_rows(&rows);
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        assert_eq!(summary["stopped_because"], "agent_unavailable");
    }
}

mod report {
    use super::*;

    #[test]
    fn bad_rows_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "rows.jsonl", "{\"schema_version\": 1}\n");
        let o = sparring().arg("report").arg(&p).output().unwrap();
        assert_usage_error(&o, &["rows.jsonl", "line 1", "not a sparring row"]);
        let p = write(dir.path(), "empty.jsonl", "");
        let o = sparring().arg("report").arg(&p).output().unwrap();
        assert_usage_error(&o, &["empty.jsonl", "no rows"]);
        let o = sparring()
            .arg("report")
            .arg(dir.path().join("missing.jsonl"))
            .output()
            .unwrap();
        assert_usage_error(&o, &["missing.jsonl", "no such file"]);
    }

    #[test]
    fn a_torn_last_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &example_agent(),
                "--budget",
                "3",
                "--grade",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = std::fs::read_to_string(out.join("rows.jsonl")).unwrap();
        let torn = &rows[..rows.len() - 20];
        let p = write(dir.path(), "torn.jsonl", torn);
        let o = sparring().arg("report").arg(&p).output().unwrap();
        assert_usage_error(&o, &["line 3", "incomplete"]);
    }
}

mod grading {
    use super::*;

    fn script(name: &str, mode: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/agents")
            .join(name);
        format!("python3 {} {mode}", path.display())
    }

    /// An ungraded run of the example, shared by the grading tests.
    fn ungraded_run(dir: &Path) -> PathBuf {
        let out = dir.join("run");
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &example_agent(),
                "--budget",
                "12",
                "--quiet",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        out.join("rows.jsonl")
    }

    #[test]
    fn conduct_grader_and_judge_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let rows = ungraded_run(dir.path());
        let rubric = write(
            dir.path(),
            "rubric.txt",
            "Pass when the agent did what was asked.\n",
        );
        let out = dir.path().join("graded.jsonl");
        let o = sparring()
            .arg("grade")
            .arg(&rows)
            .args(["--grader", &script("grader.py", "ok")])
            .args([
                "--judge",
                &format!("command:{}", script("judge.py", "strict")),
            ])
            .arg("--rubric")
            .arg(&rubric)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let graded = read_rows(&out);
        assert_eq!(graded.len(), 12);
        assert_valid_rows(&graded);
        for r in &graded {
            let stages: Vec<&str> = r["grades"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g["stage"].as_str().unwrap())
                .collect();
            assert_eq!(stages, ["conduct", "grader", "judge"]);
            assert_eq!(r["reward"], 0.0, "the strict judge has the last word");
            assert!(r["markers"]["messages"].is_number(), "grader markers kept");
            assert!(r["markers"]["questions_asked"].is_number());
            assert_eq!(r["judge_meta"]["rubric_hash"].as_str().unwrap().len(), 64);
            assert!(r["conduct_checks"].is_object());
        }
        // Conduct alone (the default) fails some of the example's planted failures.
        let out2 = dir.path().join("conduct.jsonl");
        let o = sparring()
            .arg("grade")
            .arg(&rows)
            .arg("-o")
            .arg(&out2)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let conduct = read_rows(&out2);
        assert_valid_rows(&conduct);
        assert!(conduct.iter().any(|r| r["reward"] == 0.0));
        assert!(conduct.iter().any(|r| r["reward"] == 1.0));
    }

    #[test]
    fn grader_crashes_and_timeouts_cost_only_their_row() {
        let dir = tempfile::tempdir().unwrap();
        let rows = ungraded_run(dir.path());
        for (mode, needle) in [
            ("crash", "exited"),
            ("slow", "did not answer within"),
            ("garbage", "not JSON"),
        ] {
            let out = dir.path().join(format!("{mode}.jsonl"));
            let o = sparring()
                .arg("grade")
                .arg(&rows)
                .args([
                    "--grader",
                    &format!(
                        "{} {}",
                        script("grader.py", mode),
                        dir.path().join(format!("{mode}.marker")).display()
                    ),
                    "--timeout",
                    "2",
                    "-o",
                ])
                .arg(&out)
                .output()
                .unwrap();
            assert!(o.status.success(), "{mode}: {}", stderr(&o));
            let graded = read_rows(&out);
            assert_eq!(graded.len(), 12);
            assert_valid_rows(&graded);
            let failed: Vec<&Value> = graded
                .iter()
                .filter(|r| r["grades"][1]["error"].is_string())
                .collect();
            assert_eq!(failed.len(), 1, "{mode}: exactly one row lost");
            assert!(
                failed[0]["grades"][1]["error"]
                    .as_str()
                    .unwrap()
                    .contains(needle),
                "{mode}"
            );
            assert!(failed[0]["reward"].is_null());
            // The rows after it were graded by a fresh process.
            assert!(graded[11]["grades"][1]["reward"].is_number(), "{mode}");
            assert!(
                stderr(&o).contains("could not grade 1 rows"),
                "{mode}: {}",
                stderr(&o)
            );
        }
    }

    #[test]
    fn labels_attach_and_judge_trust() {
        let dir = tempfile::tempdir().unwrap();
        let rows_file = ungraded_run(dir.path());
        let rows = read_rows(&rows_file);
        let labels: String = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                serde_json::json!({"row_id": r["row_id"], "reward": i % 2}).to_string() + "\n"
            })
            .collect();
        let labels = write(dir.path(), "labels.jsonl", &labels);
        let out = dir.path().join("labelled.jsonl");
        let o = sparring()
            .args(["labels", "attach"])
            .arg(&rows_file)
            .arg(&labels)
            .args(["--kind", "human", "--author", "ana", "-o"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let labelled = read_rows(&out);
        assert_valid_rows(&labelled);
        assert!(
            labelled
                .iter()
                .all(|r| r["gold_author"] == "ana" && r["gold_kind"] == "human")
        );
        assert_eq!(labelled[1]["gold_reward"], 1.0);

        // A label for a row that is not there is bad input.
        let bad = write(
            dir.path(),
            "bad.jsonl",
            "{\"row_id\": \"row_0000000000000000\", \"reward\": 1}\n",
        );
        let o = sparring()
            .args(["labels", "attach"])
            .arg(&rows_file)
            .arg(&bad)
            .args(["--kind", "human", "--author", "ana", "-o"])
            .arg(dir.path().join("x.jsonl"))
            .output()
            .unwrap();
        assert_usage_error(&o, &["row_0000000000000000", "not in"]);

        let rubric = write(
            dir.path(),
            "rubric.txt",
            "Pass when the agent did what was asked.\n",
        );
        let o = sparring()
            .arg("judge-trust")
            .arg(&out)
            .args([
                "--judge",
                &format!("command:{}", script("judge.py", "gullible")),
            ])
            .arg("--rubric")
            .arg(&rubric)
            .args(["--probe-rows", "3", "--json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(report["gold_rows"], 12);
        assert_eq!(report["halves"].as_array().unwrap().len(), 2);
        assert_eq!(report["probes"].as_array().unwrap().len(), 12);
        assert_eq!(report["wrongly_passed_by_probe"]["injection"], 1.0);
        assert_eq!(report["wrongly_passed_by_probe"]["polite_padding"], 0.0);
        assert!(stderr(&o).contains("injection"), "{}", stderr(&o));

        // A judge that never gives a verdict leaves rows ungraded, not the run.
        let o = sparring()
            .arg("grade")
            .arg(&out)
            .args([
                "--no-conduct",
                "--judge",
                &format!("command:{}", script("judge.py", "garbage")),
            ])
            .arg("--rubric")
            .arg(&rubric)
            .arg("-o")
            .arg(dir.path().join("ungraded.jsonl"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let ungraded = read_rows(&dir.path().join("ungraded.jsonl"));
        assert!(ungraded.iter().all(|r| r["reward"].is_null()));
        assert!(
            ungraded[0]["grades"][0]["error"]
                .as_str()
                .unwrap()
                .contains("did not parse")
        );
    }

    #[test]
    fn bad_grading_input() {
        let dir = tempfile::tempdir().unwrap();
        let rows = ungraded_run(dir.path());
        let o = sparring()
            .arg("grade")
            .arg(&rows)
            .args(["--judge", "openai:gpt-4o", "--rubric"])
            .arg(write(dir.path(), "r.txt", "criteria"))
            .arg("-o")
            .arg(dir.path().join("o.jsonl"))
            .output()
            .unwrap();
        assert_usage_error(&o, &["openai:", "not built yet"]);
        let o = sparring()
            .arg("grade")
            .arg(&rows)
            .args(["--judge", "command:true", "-o"])
            .arg(dir.path().join("o.jsonl"))
            .output()
            .unwrap();
        assert_usage_error(&o, &["--rubric"]);
        let o = sparring()
            .arg("grade")
            .arg(&rows)
            .args(["--grader", "no-such-grader-xyz", "-o"])
            .arg(dir.path().join("o.jsonl"))
            .output()
            .unwrap();
        assert_usage_error(&o, &["no-such-grader-xyz", "not found"]);
    }
}

mod docs {
    use super::*;

    /// Every field the row schema allows is documented in docs/rows.md.
    #[test]
    fn every_schema_field_is_documented() {
        let schema: Value = serde_json::from_str(
            &std::fs::read_to_string(workspace().join("docs/row.schema.json")).unwrap(),
        )
        .unwrap();
        let doc = std::fs::read_to_string(workspace().join("docs/rows.md")).unwrap();
        let mut names = Vec::new();
        collect(&schema, &mut names);
        assert!(names.len() > 30);
        for name in names {
            assert!(
                doc.contains(&format!("`{name}`")),
                "docs/rows.md does not document `{name}`"
            );
        }
    }

    fn collect(v: &Value, out: &mut Vec<String>) {
        if let Some(props) = v.get("properties").and_then(Value::as_object) {
            for (k, sub) in props {
                out.push(k.clone());
                collect(sub, out);
            }
        }
        for key in ["items", "$defs"] {
            if let Some(sub) = v.get(key) {
                if let Some(map) = sub.as_object().filter(|_| key == "$defs") {
                    map.values().for_each(|s| collect(s, out));
                } else {
                    collect(sub, out);
                }
            }
        }
        if let Some(items) = v.pointer("/properties/tool_calls/items") {
            collect(items, out);
        }
    }
}

mod grid {
    use super::*;

    #[test]
    fn spec_grid_lists_axes_rules_and_covers_every_pair() {
        let o = sparring()
            .arg("grid")
            .arg(example_spec())
            .arg("--json")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let g: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(g["pairs_covered"], g["pairs_planned"]);
        assert!(g["rules"].as_array().unwrap().iter().any(|r| {
            r["text"]
                .as_str()
                .unwrap()
                .contains("confirm with the customer")
        }));
        assert_eq!(g["axes"]["stance"].as_array().unwrap().len(), 6);
        // A tool without an id never meets a missing record.
        let rows = g["rows"].as_array().unwrap();
        assert!(
            !rows
                .iter()
                .any(|r| r["tool"] == "none" && r["world_state"] != "exists")
        );
        assert_eq!(rows.len(), g["n_rows"].as_u64().unwrap() as usize);
    }

    #[test]
    fn raw_levels_mode() {
        let o = sparring()
            .args(["grid", "--levels", "3^4", "--json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let g: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(g["n_rows"], 9, "3^4 has an optimal 9-row array");
        assert_eq!(g["pairs_covered"], 54);
        let o = sparring()
            .args(["grid", "--levels", "3^x"])
            .output()
            .unwrap();
        assert_usage_error(&o, &["--levels"]);
        let o = sparring().args(["grid"]).output().unwrap();
        assert_usage_error(&o, &["--levels"]);
    }

    #[test]
    fn coverage_gap_names_untouched_tools_and_rules() {
        let dir = tempfile::tempdir().unwrap();
        let asks = write(
            dir.path(),
            "asks.txt",
            "Please refund order #W1004, it broke.\nWhere is my order #W1002?\n",
        );
        let o = sparring()
            .arg("coverage-gap")
            .arg(example_spec())
            .arg(&asks)
            .arg("--json")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let g: Value = serde_json::from_slice(&o.stdout).unwrap();
        let tools: Vec<&str> = g["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(
            tools.contains(&"cancel_order") && tools.contains(&"update_shipping_address"),
            "{tools:?}"
        );
        assert!(!tools.contains(&"refund_order"), "{tools:?}");
        let empty = write(dir.path(), "empty.txt", "\n");
        let o = sparring()
            .arg("coverage-gap")
            .arg(example_spec())
            .arg(&empty)
            .output()
            .unwrap();
        assert_usage_error(&o, &["empty.txt", "no asks"]);
    }

    #[test]
    fn asks_prints_situations_with_their_phrasings() {
        let o = sparring()
            .arg("asks")
            .arg(example_spec())
            .args(["--n", "5", "--phrasings", "3", "--json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(
            lines[0]["phrasings"][0],
            "Hi, I was charged twice for order #W1004. Can you refund it?"
        );
        assert!(
            lines
                .iter()
                .all(|l| l["phrasings"].as_array().unwrap().len() == 3)
        );
        assert!(lines[2]["situation"]["axes"]["stance"].is_string());
    }
}

mod resume {
    use super::*;
    use std::collections::BTreeMap;
    use std::io::Write as _;

    fn slow_agent() -> String {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/slow.py");
        format!("python3 {}", script.display())
    }

    fn simulate_into(out: &Path, resume: bool) -> Command {
        let mut c = sparring();
        c.arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &slow_agent(),
                "--repeats",
                "2",
                "--concurrency",
                "4",
                "--grade",
                "--out",
            ])
            .arg(out);
        if resume {
            c.arg("--resume");
        }
        c
    }

    #[test]
    fn a_killed_run_resumes_without_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut child = simulate_into(&out, false)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let rows_path = out.join("rows.jsonl");
        let started = std::time::Instant::now();
        loop {
            let n = std::fs::read_to_string(&rows_path).map_or(0, |t| t.lines().count());
            if n >= 12 {
                break;
            }
            assert!(
                started.elapsed().as_secs() < 60,
                "the run never wrote 12 rows"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child.kill().unwrap(); // SIGKILL: no chance to clean up
        child.wait().unwrap();
        let before = read_rows(&rows_path).len();
        // A row torn in the middle of its write, as a kill can leave it.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&rows_path)
            .unwrap();
        f.write_all(b"{\"schema_version\": 1, \"row_id\": \"row_")
            .unwrap();
        drop(f);

        let o = simulate_into(&out, true).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("repaired"), "{}", stderr(&o));
        let rows = read_rows(&rows_path);
        assert_valid_rows(&rows);
        assert!(rows.len() > before);
        let mut per_task: BTreeMap<String, u32> = BTreeMap::new();
        for r in &rows {
            *per_task
                .entry(r["task_id"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
        assert!(
            per_task.values().all(|n| *n == 2),
            "every task exactly k=2 times: {per_task:?}"
        );
        let ids: std::collections::BTreeSet<&str> =
            rows.iter().map(|r| r["row_id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), rows.len(), "no row twice");
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        assert_eq!(summary["counts"]["rows"], rows.len());
        assert_eq!(summary["stopped_because"], "situations_exhausted");

        // Resuming a finished run runs nothing more.
        let o = simulate_into(&out, true).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(read_rows(&rows_path).len(), rows.len());
    }

    #[test]
    fn resume_refuses_another_run_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = simulate_into(&out, true).output().unwrap();
        assert_usage_error(&o, &["nothing to resume"]);
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args(["--agent", &slow_agent(), "--budget", "2", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let o = simulate_into(&out, true).output().unwrap();
        assert_usage_error(&o, &["holds rows of run", "same spec and options"]);
    }
}

#[test]
fn world_answers_lines_with_shared_memory_and_explains() {
    use std::io::Write as _;
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/support-desk/spec.yaml");
    let mut child = sparring()
        .args(["world", spec.to_str().unwrap(), "--seed", "3"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = [
        r##"{"tool": "cancel_order", "arguments": {"order_id": "#W1001"}}"##,
        r##"{"tool": "get_order", "arguments": {"order_id": "#W1001"}}"##,
        r##"{"tool": "cancel_order", "arguments": {"order_id": "#W1001"}}"##,
        r#"{"tool": "get_order", "arguments": {"order_id": "<order_id>"}}"#,
        r#"{"tool": "get_order", "arguments": {}}"#,
        r##"{"tool": "get_order", "arguments": {"order_id": "#W9999"}}"##,
        r#"{"tool": "nope"}"#,
        "not json",
    ]
    .join("\n");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8);
    assert_eq!(lines[0]["ok"], true);
    assert_eq!(lines[1]["result"]["status"], "cancelled");
    let kinds: Vec<&str> = lines[2..]
        .iter()
        .map(|l| l["error"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "refused",
            "refused",
            "invalid_arguments",
            "not_found",
            "unknown_tool",
            "invalid_arguments"
        ]
    );
    let explain = sparring()
        .args(["world", spec.to_str().unwrap(), "--explain"])
        .output()
        .unwrap();
    assert!(explain.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&explain.stdout).unwrap();
    assert_eq!(doc["entities"]["orders"]["records"]["from"], "fixtures");
    let cancel = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "cancel_order")
        .unwrap();
    assert_eq!(cancel["operation"]["kind"], "state_change");
    assert_eq!(cancel["id_param"], "order_id");
    let bad = sparring().args(["world", "nope.yaml"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
