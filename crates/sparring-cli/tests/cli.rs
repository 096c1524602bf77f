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

/// The example spec with an `axes` block added.
fn spec_with_axes(dir: &Path, axes: &str) -> PathBuf {
    let text = std::fs::read_to_string(example_spec()).unwrap().replace(
        "{file: policy.md}",
        &format!(
            "{{file: {}}}",
            workspace()
                .join("examples/support-desk/policy.md")
                .display()
        ),
    );
    write(dir, "spec.yaml", &format!("{text}\naxes:\n{axes}\n"))
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
        assert_usage_error(&o, &["--budget", "must be an integer from 1 to"]);
    }

    #[test]
    fn avg_turns_out_of_range_or_not_a_number_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let cases: &[(&[&str], &[&str])] = &[
            // The example spec sets `max_turns: 8`.
            // Below 1 the value itself is wrong: refused where it is parsed.
            (
                &["--avg-turns", "0.5"],
                &["--avg-turns", "must be a number from 1"],
            ),
            (
                &["--avg-turns", "8.5"],
                &["`avg_turns` 8.5 ", "`max_turns` 8"],
            ),
            (
                &["--avg-turns", "5", "--max-turns", "4"],
                &["`avg_turns` 5 ", "`max_turns` 4"],
            ),
            (&["--avg-turns", "three"], &["--avg-turns", "three"]),
        ];
        for (args, needles) in cases {
            let o = sparring()
                .arg("simulate")
                .arg(example_spec())
                .args(["--agent", "true", "--out"])
                .arg(&out)
                .args(*args)
                .output()
                .unwrap();
            assert_usage_error(&o, needles);
            assert!(!out.exists(), "{args:?} wrote files");
        }
        // In a spec: not a number is named where it stands; out of range
        // names both values.
        let p = write(
            dir.path(),
            "s.yaml",
            &format!("name: t\nsystem_prompt: p\ntools: [{TOOL}]\noptions: {{avg_turns: lots}}\n"),
        );
        assert_usage_error(&simulate_spec(&p), &["`/options/avg_turns`", "number"]);
        let p = write(
            dir.path(),
            "s.yaml",
            &format!(
                "name: t\nsystem_prompt: p\ntools: [{TOOL}]\noptions: {{avg_turns: 3, max_turns: 2}}\n"
            ),
        );
        assert_usage_error(&simulate_spec(&p), &["`avg_turns` 3 ", "`max_turns` 2"]);
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
        assert!(
            rows.iter().all(|r| r["usage"].is_null()
                && r["requests"].is_null()
                && r["sampling"].is_null()),
            "a command agent says nothing about sampling or tokens"
        );
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
        let p = report["pass_at_1"]["value"].as_f64().unwrap();
        assert!(
            (p - passed as f64 / rows.len() as f64).abs() < 1e-9,
            "one row per task: pass@1 is the pass rate"
        );
        let ci = &report["pass_at_1"]["ci95"];
        assert!(ci[0].as_f64().unwrap() <= p && p <= ci[1].as_f64().unwrap());
        let category = &report["by_category"]["tool=refund_order"];
        assert!(category["pass_at_1"]["value"].is_number());
        assert!(category["n_tasks"].as_u64().unwrap() >= 1);
        assert!(report["by_category"]["tier=seed"]["n_tasks"] == 2);
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

    /// A fault that happens once costs no row: the request in flight is
    /// sent again to the restarted process, which answers it (faults that
    /// repeat cost their own row: `tests/faults.rs`).
    fn no_error_row(rows: &[Value], log: &str, needle: &str) {
        assert_eq!(rows.len(), 8, "the run goes on after the bad reply");
        assert!(
            rows.iter().all(|r| r["ended_by"] != "agent_error"),
            "the request was sent again"
        );
        assert!(log.contains(needle), "{log}");
        assert!(log.contains("again"), "{log}");
    }

    #[test]
    fn non_json_line() {
        let (rows, _, log) = run_flaky("nonjson");
        no_error_row(&rows, &log, "not JSON");
        assert!(log.contains("start 2"), "the agent was restarted: {log}");
    }

    #[test]
    fn unknown_id() {
        let (rows, _, log) = run_flaky("unknown-id");
        no_error_row(&rows, &log, "unknown id `nobody-asked`");
        assert!(log.contains("start 2"), "{log}");
    }

    #[test]
    fn dies_mid_run() {
        let (rows, summary, log) = run_flaky("die");
        no_error_row(&rows, &log, "exited");
        assert!(log.contains("start 2"), "{log}");
        assert!(summary["counts"]["ended_by"].get("agent_error").is_none());
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
        assert_usage_error(&o, &["rows.jsonl", "line 1", "missing `task_id`"]);
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
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .output()
            .unwrap();
        assert_usage_error(&o, &["--judge", "`OPENAI_API_KEY` is not set"]);
        let o = sparring()
            .arg("grade")
            .arg(&rows)
            .args(["--grader", "http://127.0.0.1:9/grade#token=X", "-o"])
            .arg(dir.path().join("o.jsonl"))
            .output()
            .unwrap();
        assert_usage_error(&o, &["--grader", "unknown suffix"]);
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
    fn spec_pins_and_forbidden_pairs_shape_the_grid() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec_with_axes(
            dir.path(),
            "  stance: [hurried, manipulative]\n  tool_condition: [ok, timeout]\n  forbid:\n    - {tool: refund_order, stance: manipulative}\n    - {history: [returning, handed_off], world_state: missing}",
        );
        let o = sparring()
            .arg("grid")
            .arg(&spec)
            .arg("--json")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let g: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            g["axes"]["stance"],
            serde_json::json!(["hurried", "manipulative"])
        );
        assert_eq!(g["axes"]["world_state"].as_array().unwrap().len(), 5);
        assert_eq!(
            g["sampled"]["tool_condition"],
            serde_json::json!(["ok", "timeout"])
        );
        assert_eq!(g["pairs_covered"], g["pairs_planned"]);
        let rows = g["rows"].as_array().unwrap();
        assert!(
            rows.iter()
                .all(|r| r["stance"] == "hurried" || r["stance"] == "manipulative")
        );
        assert!(
            !rows
                .iter()
                .any(|r| r["tool"] == "refund_order" && r["stance"] == "manipulative")
        );
        assert!(!rows.iter().any(|r| r["world_state"] == "missing"
            && (r["history"] == "returning" || r["history"] == "handed_off")));
        // Both stances still meet every other value that may meet them.
        assert!(
            rows.iter()
                .any(|r| r["tool"] == "refund_order" && r["stance"] == "hurried")
        );
        assert!(
            rows.iter()
                .any(|r| r["tool"] == "cancel_order" && r["stance"] == "manipulative")
        );
        let forbidden = g["forbidden"].as_array().unwrap();
        assert!(forbidden.contains(&serde_json::json!([
            ["tool", "refund_order"],
            ["stance", "manipulative"]
        ])));
        // The example's seeds are still required rows, now with a pinned stance.
        assert_eq!(g["n_rows"].as_u64().unwrap() as usize, rows.len());
    }

    #[test]
    fn simulate_honours_pins_and_forbidden_pairs() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec_with_axes(
            dir.path(),
            "  stance: [frustrated, skeptical]\n  tool_condition: [timeout]\n  forbid:\n    - {tool: cancel_order, stance: skeptical}",
        );
        let out = dir.path().join("out");
        let o = sparring()
            .arg("simulate")
            .arg(&spec)
            .args(["--agent", &example_agent(), "--budget", "16", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_eq!(rows.len(), 16);
        for r in &rows {
            let axes = &r["situation"]["axes"];
            assert!(
                axes["stance"] == "frustrated" || axes["stance"] == "skeptical",
                "{axes}"
            );
            assert!(!(axes["tool"] == "cancel_order" && axes["stance"] == "skeptical"));
            // Pinned without `ok`: every situation with a tool has the fault.
            if axes["tool"] != "none" {
                assert_eq!(axes["tool_condition"], "timeout", "{axes}");
                assert_eq!(r["situation"]["faults"][0]["kind"], "timeout");
            }
        }
        let run: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        assert_eq!(
            run["coverage"]["axes"]["stance"],
            serde_json::json!(["frustrated", "skeptical"])
        );
    }

    #[test]
    fn bad_axes_in_a_spec_are_named_with_where() {
        let dir = tempfile::tempdir().unwrap();
        for (axes, needles) in [
            (
                "  stanse: [hurried]",
                &["/axes/stanse", "did you mean `stance`"][..],
            ),
            (
                "  stance: [hurried, rushed]",
                &["/axes/stance/1", "`rushed`", "axis `stance`"][..],
            ),
            (
                "  tool: [refund_ordr]",
                &["/axes/tool/0", "did you mean `refund_order`"][..],
            ),
            (
                "  forbid:\n    - {tool: none}",
                &["/axes/forbid/0", "exactly two"][..],
            ),
            (
                "  policy_rule: [rule_99]",
                &["/axes/policy_rule/0", "no rule `rule_99`"][..],
            ),
            // The first seed asks for a refund with the first stance.
            (
                "  forbid:\n    - {tool: refund_order, stance: cooperative}",
                &["spec.yaml", "required row `0`", "forbidden pair"][..],
            ),
        ] {
            let spec = spec_with_axes(dir.path(), axes);
            let o = sparring().arg("grid").arg(&spec).output().unwrap();
            assert_usage_error(&o, needles);
            let o = simulate_spec(&spec);
            assert_usage_error(&o, needles);
        }
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

/// The scoring commands over hand-written rows, with hand-computed figures.
// Figures that are exact (p-values from enumeration, constant differences)
// are compared exactly; short names mirror the JSON they read.
#[allow(clippy::float_cmp, clippy::many_single_char_names)]
mod score {
    use super::*;
    use serde_json::json;

    const EPS: f64 = 1e-12;

    /// A minimal row: only what the line says, plus `extra` merged in.
    fn row(task: &str, reward: Option<f64>, extra: &Value) -> String {
        let mut r = json!({"task_id": task, "reward": reward});
        if let Some(map) = extra.as_object() {
            for (k, v) in map {
                r[k] = v.clone();
            }
        }
        r.to_string()
    }

    fn rows_file(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
        write(dir, name, &(lines.join("\n") + "\n"))
    }

    fn json_of(o: &Output) -> Value {
        assert!(o.status.success(), "{}", stderr(o));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    fn f(v: &Value) -> f64 {
        v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
    }

    /// Task a: 2 of 4 pass (tool x, ordinary); b: 4 of 4 (tool y, seed);
    /// c: 0 of 1 (tool x); d: one ungraded row.
    fn report_fixture(dir: &Path) -> PathBuf {
        let x = json!({"situation": {"axes": {"tool": "x"}, "tier": "ordinary"}, "ended_by": "agent_done"});
        let y = json!({"situation": {"axes": {"tool": "y"}, "tier": "seed"}});
        let fail =
            json!({"situation": {"axes": {"tool": "x"}}, "failure_class": "claimed_without_call"});
        let mut lines = Vec::new();
        for r in [1.0, 0.0, 1.0, 0.0] {
            lines.push(row("a", Some(r), &x));
        }
        for _ in 0..4 {
            lines.push(row("b", Some(1.0), &y));
        }
        lines.push(row("c", Some(0.0), &fail));
        lines.push(row("d", None, &x));
        rows_file(dir, "rows.jsonl", &lines)
    }

    #[test]
    fn report_table_leaves_out_k_no_task_reaches() {
        let dir = tempfile::tempdir().unwrap();
        let lines: Vec<String> = ["a", "b", "c"]
            .iter()
            .map(|t| row(t, Some(1.0), &json!({})))
            .collect();
        let p = rows_file(dir.path(), "rows.jsonl", &lines);
        let o = sparring().arg("report").arg(&p).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains("   1   100.0%   100.0%      3"), "{text}");
        assert!(!text.contains("\n   2  "), "{text}");
        assert!(
            text.contains("k = 2, 4: no task has that many graded rows"),
            "{text}"
        );
        // With two rows a task, k = 2 is measured and shown.
        let lines: Vec<String> = ["a", "a", "b", "b"]
            .iter()
            .map(|t| row(t, Some(1.0), &json!({})))
            .collect();
        let p = rows_file(dir.path(), "rows2.jsonl", &lines);
        let o = sparring().arg("report").arg(&p).output().unwrap();
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains("\n   2   100.0%   100.0%      2"), "{text}");
        assert!(text.contains("k = 4: no task"), "{text}");
    }

    #[test]
    fn report_json_contract_with_hand_computed_figures() {
        let dir = tempfile::tempdir().unwrap();
        let p = report_fixture(dir.path());
        let run = |extra: &[&str]| {
            sparring()
                .arg("report")
                .arg(&p)
                .arg("--json")
                .args(extra)
                .output()
                .unwrap()
        };
        let r = json_of(&run(&[]));
        assert_eq!(r["n_rows"], 10);
        assert_eq!(r["n_tasks"], 4);
        assert_eq!(r["n_ungraded"], 1);
        // pass@1 = mean(2/4, 4/4, 0/1).
        assert!((f(&r["pass_at_1"]["value"]) - 0.5).abs() < EPS);
        let (lo, hi) = (f(&r["pass_at_1"]["ci95"][0]), f(&r["pass_at_1"]["ci95"][1]));
        assert!((0.0..=0.5).contains(&lo) && (0.5..=1.0).contains(&hi) && lo < hi);
        // Default k = 1, 2, 4. pass@2: a 1 − C(2,2)/C(4,2) = 5/6, b 1.
        // pass^2: a C(2,2)/C(4,2) = 1/6, b 1. pass@4: 1, 1; pass^4: 0, 1.
        assert!((f(&r["pass_at_k"]["1"]) - 0.5).abs() < EPS);
        assert!((f(&r["pass_at_k"]["2"]) - 11.0 / 12.0).abs() < EPS);
        assert!((f(&r["pass_hat_k"]["2"]) - 7.0 / 12.0).abs() < EPS);
        assert!((f(&r["pass_at_k"]["4"]) - 1.0).abs() < EPS);
        assert!((f(&r["pass_hat_k"]["4"]) - 0.5).abs() < EPS);
        assert_eq!(r["tasks_at_k"], json!({"1": 3, "2": 2, "4": 2}));
        // tool=x holds a (2/4) and c (0/1); d is ungraded.
        let x = &r["by_category"]["tool=x"];
        assert_eq!(x["n_tasks"], 2);
        assert!((f(&x["pass_at_1"]["value"]) - 0.25).abs() < EPS);
        let y = &r["by_category"]["tool=y"];
        assert_eq!(y["pass_at_1"], json!({"value": 1.0, "ci95": [1.0, 1.0]}));
        assert_eq!(r["by_category"]["tier=seed"]["n_tasks"], 1);
        assert_eq!(r["by_category"]["tier=ordinary"]["n_tasks"], 1);
        assert_eq!(
            r["failures"],
            json!({"claimed_without_call": 1, "unspecified": 2})
        );
        assert_eq!(r["ended_by"]["agent_done"], 5);

        // Seeded: the same seed gives the same bytes.
        assert_eq!(run(&["--seed", "7"]).stdout, run(&["--seed", "7"]).stdout);
        // Other k.
        let r = json_of(&run(&["--k", "3"]));
        assert_eq!(r["tasks_at_k"], json!({"3": 2}));
        assert!((f(&r["pass_hat_k"]["3"]) - 0.5).abs() < EPS);
        // No task has 9 graded rows.
        let r = json_of(&run(&["--k", "9"]));
        assert_eq!(r["pass_at_k"]["9"], Value::Null);
        assert_eq!(run(&["--k", "0"]).status.code(), Some(2));

        // The table.
        let o = sparring().arg("report").arg(&p).output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("pass@1 50.0% ["), "{text}");
        assert!(text.contains("tool=x"), "{text}");
        assert!(text.contains("failures: claimed_without_call 1"), "{text}");
    }

    #[test]
    fn bad_rows_are_one_line_errors_naming_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let ok = row("a", Some(1.0), &json!({}));
        let cases: [(&str, String, &[&str]); 4] = [
            (
                "no_task.jsonl",
                format!("{ok}\n{{\"reward\": 1}}\n"),
                &["no_task.jsonl", "line 2", "missing `task_id`"],
            ),
            (
                "text_reward.jsonl",
                format!("{ok}\n\n{}\n", json!({"task_id": "a", "reward": "yes"})),
                &["text_reward.jsonl", "line 3", "`reward` must be a number"],
            ),
            ("empty.jsonl", String::new(), &["empty.jsonl", "no rows"]),
            (
                "not_json.jsonl",
                format!("{ok}\nnope\n"),
                &["not_json.jsonl", "line 2", "not JSON"],
            ),
        ];
        for (name, text, needles) in cases {
            let p = write(dir.path(), name, &text);
            for command in ["report", "hack-scan", "eval-variance"] {
                let o = sparring().arg(command).arg(&p).output().unwrap();
                assert_usage_error(&o, needles);
            }
            let good = write(dir.path(), "good.jsonl", &ok);
            let o = sparring().arg("delta").arg(&good).arg(&p).output().unwrap();
            assert_usage_error(&o, needles);
        }
        // Other tools' rows: only task_id and reward, integer ids, no reward.
        let p = write(
            dir.path(),
            "foreign.jsonl",
            "{\"task_id\": 1, \"reward\": 1}\n{\"task_id\": 1, \"reward\": null, \"extra\": [1]}\n",
        );
        let r = json_of(
            &sparring()
                .arg("report")
                .arg(&p)
                .arg("--json")
                .output()
                .unwrap(),
        );
        assert_eq!(r["n_ungraded"], 1);
        assert_eq!(r["by_category"], json!({}));
    }

    /// BEFORE: a 0/2, b 1/2, c 1/1, e (only before). AFTER: a 1/1, b 2/2,
    /// c 1/1, f (only after). Markers: `politeness` falls by 2 on every
    /// task, `speed` rises by 1.
    fn delta_fixture(dir: &Path) -> (PathBuf, PathBuf) {
        let m = |tool: &str, politeness: f64, speed: f64| {
            json!({"situation": {"axes": {"tool": tool}, "tier": "ordinary"},
                   "markers": {"politeness": politeness, "speed": speed, "note": "not a number"}})
        };
        let before = [
            row("a", Some(0.0), &m("x", 5.0, 1.0)),
            row("a", Some(0.0), &m("x", 5.0, 1.0)),
            row("b", Some(1.0), &m("y", 5.0, 1.0)),
            row("b", Some(0.0), &m("y", 5.0, 1.0)),
            row("c", Some(1.0), &m("y", 5.0, 1.0)),
            row("e", Some(1.0), &m("y", 5.0, 1.0)),
        ];
        let after = [
            row("a", Some(1.0), &m("x", 3.0, 2.0)),
            row("b", Some(1.0), &m("y", 3.0, 2.0)),
            row("b", Some(1.0), &m("y", 3.0, 2.0)),
            row("c", Some(1.0), &m("y", 3.0, 2.0)),
            row("f", Some(0.0), &m("y", 3.0, 2.0)),
        ];
        (
            rows_file(dir, "before.jsonl", &before),
            rows_file(dir, "after.jsonl", &after),
        )
    }

    #[test]
    fn delta_json_contract_and_must_not_regress() {
        let dir = tempfile::tempdir().unwrap();
        let (before, after) = delta_fixture(dir.path());
        let run = |extra: &[&str]| {
            sparring()
                .arg("delta")
                .arg(&before)
                .arg(&after)
                .arg("--json")
                .args(extra)
                .output()
                .unwrap()
        };
        let d = json_of(&run(&[]));
        assert_eq!(d["n_paired"], 3);
        assert_eq!(d["n_unpaired"], 2);
        // Differences 1, 0.5, 0.
        assert!((f(&d["before"]) - 0.5).abs() < EPS);
        assert!((f(&d["after"]) - 1.0).abs() < EPS);
        assert!((f(&d["delta"]) - 0.5).abs() < EPS);
        // Two non-zero differences: ±1 ± 0.5; |sum| ≥ 1.5 in 2 of 4.
        assert_eq!(f(&d["p_value"]), 0.5);
        // All three resampled as 0 has chance 1/27 > 2.5 %: lo is 0.
        assert_eq!(f(&d["ci95"][0]), 0.0);
        assert!(f(&d["ci95"][1]) <= 1.0);
        assert_eq!(d["verdict"], "inconclusive");
        let x = &d["by_category"]["tool=x"];
        assert_eq!(x["n_paired"], 1);
        assert_eq!(f(&x["delta"]), 1.0);
        assert_eq!(x["ci95"], json!([1.0, 1.0]));
        assert_eq!(f(&x["p_value"]), 1.0, "one flip of one difference");
        assert_eq!(d["by_category"]["tier=ordinary"]["n_paired"], 3);
        let pol = &d["markers"]["politeness"];
        assert_eq!(f(&pol["delta"]), -2.0);
        assert_eq!(pol["ci95"], json!([-2.0, -2.0]));
        assert_eq!(pol["must_not_regress"], false);
        assert_eq!(pol["failed"], false);
        assert!(d["markers"].get("note").is_none(), "non-numeric marker");

        // Guarded: politeness regresses, so exit 1 naming it; speed passes.
        let o = run(&[
            "--must-not-regress",
            "politeness",
            "--must-not-regress",
            "speed",
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let d: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(d["markers"]["politeness"]["failed"], true);
        assert_eq!(d["markers"]["speed"]["must_not_regress"], true);
        assert_eq!(d["markers"]["speed"]["failed"], false);
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("must-not-regress") && err.contains("`politeness`"),
            "{err}"
        );
        assert!(!err.contains("speed"), "{err}");
        assert_eq!(run(&["--must-not-regress", "speed"]).status.code(), Some(0));

        // A guard on a marker no row carries is bad input.
        assert_usage_error(
            &run(&["--must-not-regress", "kindness"]),
            &["kindness", "politeness, speed"],
        );
        // No task in common.
        let other = rows_file(
            dir.path(),
            "other.jsonl",
            &[row("z", Some(1.0), &json!({}))],
        );
        let o = sparring()
            .arg("delta")
            .arg(&before)
            .arg(&other)
            .output()
            .unwrap();
        assert_usage_error(&o, &["no graded task in common", "other.jsonl"]);
        // The table says the verdict.
        let o = sparring()
            .arg("delta")
            .arg(&before)
            .arg(&after)
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&o.stdout).contains("inconclusive"));
    }

    #[test]
    fn delta_verdict_improved_when_the_interval_clears_zero() {
        let dir = tempfile::tempdir().unwrap();
        let tasks: Vec<String> = (0..30).map(|i| format!("t{i}")).collect();
        let before: Vec<String> = tasks
            .iter()
            .map(|t| row(t, Some(0.0), &json!({})))
            .collect();
        let after: Vec<String> = tasks
            .iter()
            .map(|t| row(t, Some(1.0), &json!({})))
            .collect();
        let b = rows_file(dir.path(), "b.jsonl", &before);
        let a = rows_file(dir.path(), "a.jsonl", &after);
        let d = json_of(
            &sparring()
                .arg("delta")
                .arg(&b)
                .arg(&a)
                .arg("--json")
                .output()
                .unwrap(),
        );
        assert_eq!(d["verdict"], "improved");
        // 30 non-zero differences: Monte Carlo, p = (1 + 2·~0) / (1 + 100,000).
        assert!(f(&d["p_value"]) < 1e-4);
        let d = json_of(
            &sparring()
                .arg("delta")
                .arg(&a)
                .arg(&b)
                .arg("--json")
                .output()
                .unwrap(),
        );
        assert_eq!(d["verdict"], "regressed");
    }

    #[test]
    fn judge_agreement_json_contract() {
        let dir = tempfile::tempdir().unwrap();
        // Judge (reward) T T F T F against gold T F F T T on r1..r5.
        let judge = [1.0, 1.0, 0.0, 1.0, 0.0];
        let mut lines: Vec<String> = judge
            .iter()
            .enumerate()
            .map(|(i, &r)| row("t", Some(r), &json!({"row_id": format!("r{}", i + 1)})))
            .collect();
        lines.push(row("t", None, &json!({"row_id": "r6"})));
        let rows = rows_file(dir.path(), "rows.jsonl", &lines);
        let labels = write(
            dir.path(),
            "labels.jsonl",
            &[
                json!({"row_id": "r1", "label": true, "author": "ann"}),
                json!({"row_id": "r2", "label": "fail", "author": "ann"}),
                json!({"row_id": "r3", "label": 0, "author": "bo"}),
                json!({"row_id": "r4", "label": 1.0, "author": "bo"}),
                json!({"row_id": "r5", "label": "pass", "author": "bo"}),
                json!({"row_id": "r1", "label": false}),
                json!({"row_id": "r9", "label": true, "author": "ann"}),
                json!({"row_id": "r6", "label": true, "author": "ann"}),
            ]
            .map(|v| v.to_string())
            .join("\n"),
        );
        let run = |labels: &Path| {
            sparring()
                .arg("judge-agreement")
                .arg(&rows)
                .arg("--labels")
                .arg(labels)
                .arg("--json")
                .output()
                .unwrap()
        };
        let j = json_of(&run(&labels));
        assert_eq!(j["n"], 5);
        assert!((f(&j["agreement"]) - 0.6).abs() < EPS);
        // statsmodels proportion_confint(3, 5, method="wilson").
        assert!((f(&j["agreement_ci95"][0]) - 0.230_724_281_276_012_9).abs() < 1e-9);
        assert!((f(&j["agreement_ci95"][1]) - 0.882_379_225_767_352_2).abs() < 1e-9);
        // p_o = 0.6, p_e = 0.6·0.6 + 0.4·0.4 = 0.52: kappa = 0.08 / 0.48.
        assert!((f(&j["kappa"]) - 1.0 / 6.0).abs() < 1e-9);
        // Gold fails r2 (judge passed) and r3 (judge failed).
        assert!((f(&j["pass_when_gold_fail"]) - 0.5).abs() < EPS);
        assert_eq!(j["unmeasured"], 1);
        assert_eq!(j["unmatched"], 1);
        assert_eq!(j["ungraded"], 1);
        assert_eq!(j["authors"], json!({"ann": 2, "bo": 3}));

        let bad = write(
            dir.path(),
            "bad.jsonl",
            &format!(
                "{}\n{}\n",
                json!({"row_id": "r1", "label": true, "author": "a"}),
                json!({"row_id": "r2", "label": "maybe"})
            ),
        );
        assert_usage_error(&run(&bad), &["bad.jsonl", "line 2", "`label` must be"]);
        let unsigned = write(
            dir.path(),
            "unsigned.jsonl",
            &json!({"row_id": "r1", "label": true}).to_string(),
        );
        assert_usage_error(&run(&unsigned), &["no authored label", "1 unmeasured"]);
        let twice = write(
            dir.path(),
            "twice.jsonl",
            &format!(
                "{}\n{}\n",
                json!({"row_id": "r1", "label": true, "author": "a"}),
                json!({"row_id": "r1", "label": false, "author": "b"})
            ),
        );
        assert_usage_error(&run(&twice), &["twice.jsonl", "line 2", "second label"]);
        let empty = write(dir.path(), "empty_labels.jsonl", "\n");
        assert_usage_error(&run(&empty), &["empty_labels.jsonl", "no labels"]);
    }

    #[test]
    fn hack_scan_flags_a_feature_that_tracks_reward_within_tasks() {
        let dir = tempfile::tempdir().unwrap();
        let reply = |chars: usize| {
            json!({"messages": [
                {"role": "user", "content": "help"},
                {"role": "assistant", "content": "x".repeat(chars)}
            ]})
        };
        let mut lines = Vec::new();
        // 12 tasks × 6 rows, 3 passing and 3 failing in each: passing
        // replies are long, failing ones short; the lengths vary a little.
        for t in 0..12 {
            for i in 0..6 {
                let pass = i % 2 == 0;
                let chars = if pass { 200 + 7 * i + t } else { 40 + 5 * i };
                lines.push(row(
                    &format!("t{t}"),
                    Some(f64::from(u8::from(pass))),
                    &reply(chars),
                ));
            }
        }
        let p = rows_file(dir.path(), "rows.jsonl", &lines);
        let h = json_of(
            &sparring()
                .arg("hack-scan")
                .arg(&p)
                .arg("--json")
                .output()
                .unwrap(),
        );
        // Each task: rewards 0/1 half and half, mean 0.5 everywhere.
        assert!((f(&h["within_task_var"]) - 0.25).abs() < EPS);
        assert!(f(&h["between_task_var"]).abs() < EPS);
        let floor = f(&h["floor"]);
        let features = h["features"].as_array().unwrap();
        let get = |name: &str| features.iter().find(|x| x["name"] == name).unwrap();
        assert!(f(&get("reply_chars")["corr"]) > 0.9);
        assert!(f(&get("reply_chars")["corr"]) > floor && floor > 0.0);
        assert_eq!(get("reply_chars")["flagged"], true);
        assert_eq!(get("tool_calls")["corr"], 0.0);
        assert_eq!(get("tool_calls")["flagged"], false);
        assert_eq!(get("turns")["flagged"], false);
        assert_eq!(features.len(), 8);

        let ungraded = rows_file(dir.path(), "ungraded.jsonl", &[row("a", None, &json!({}))]);
        let o = sparring().arg("hack-scan").arg(&ungraded).output().unwrap();
        assert_usage_error(&o, &["ungraded.jsonl", "no graded row"]);
    }

    #[test]
    fn eval_variance_per_eval_run() {
        let dir = tempfile::tempdir().unwrap();
        let run = |r: u64| json!({"lineage": {"eval_run": r}});
        let mut lines = Vec::new();
        // Runs 0, 1, 2 over tasks a and b: pass@1 0.5, 0.75, 1.0.
        for (r, a, b) in [
            (0, [1.0, 0.0], [1.0, 0.0]),
            (1, [1.0, 1.0], [1.0, 0.0]),
            (2, [1.0, 1.0], [1.0, 1.0]),
        ] {
            for x in a {
                lines.push(row("a", Some(x), &run(r)));
            }
            for x in b {
                lines.push(row("b", Some(x), &run(r)));
            }
        }
        lines.push(row("a", None, &run(3)));
        let p = rows_file(dir.path(), "rows.jsonl", &lines);
        let v = json_of(
            &sparring()
                .arg("eval-variance")
                .arg(&p)
                .arg("--json")
                .output()
                .unwrap(),
        );
        let runs = v["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 3, "run 3 has no graded row");
        assert_eq!(runs[1]["eval_run"], 1);
        assert!((f(&runs[1]["pass_at_1"]) - 0.75).abs() < EPS);
        assert!((f(&v["mean"]) - 0.75).abs() < EPS);
        assert!((f(&v["std"]) - 0.25).abs() < EPS);
        // One run: no spread.
        let one = rows_file(dir.path(), "one.jsonl", &lines[..4]);
        let v = json_of(
            &sparring()
                .arg("eval-variance")
                .arg(&one)
                .arg("--json")
                .output()
                .unwrap(),
        );
        assert_eq!(v["std"], Value::Null);
    }

    /// The issue's end-to-end check on a simulated run with repeats.
    #[test]
    fn simulated_run_report_order_and_self_delta() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &example_agent(),
                "--grade",
                "--repeats",
                "4",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let r = json_of(
            &sparring()
                .arg("report")
                .arg(&out)
                .arg("--json")
                .output()
                .unwrap(),
        );
        let p1 = f(&r["pass_at_1"]["value"]);
        assert!(p1 > 0.0 && p1 < 1.0, "{p1}");
        for k in ["1", "2", "4"] {
            let at = f(&r["pass_at_k"][k]);
            let hat = f(&r["pass_hat_k"][k]);
            assert!(at + EPS >= p1 && p1 + EPS >= hat, "k={k}: {at} {p1} {hat}");
            assert_eq!(r["tasks_at_k"][k], r["n_tasks"], "every task ran 4 times");
        }
        let d = json_of(
            &sparring()
                .arg("delta")
                .arg(&out)
                .arg(&out)
                .arg("--json")
                .output()
                .unwrap(),
        );
        assert_eq!(d["delta"], 0.0);
        assert_eq!(d["ci95"], json!([0.0, 0.0]));
        assert_eq!(d["p_value"], 1.0);
        assert_eq!(d["verdict"], "inconclusive");
        assert_eq!(d["n_paired"], r["n_tasks"]);
        assert_eq!(d["n_unpaired"], 0);
        let h = json_of(
            &sparring()
                .arg("hack-scan")
                .arg(&out)
                .arg("--json")
                .output()
                .unwrap(),
        );
        let total = f(&h["within_task_var"]) + f(&h["between_task_var"]);
        assert!(
            (total - p1 * (1.0 - p1)).abs() < 1e-9,
            "0/1 rewards, equal repeats"
        );
        let v = json_of(
            &sparring()
                .arg("eval-variance")
                .arg(&out)
                .arg("--json")
                .output()
                .unwrap(),
        );
        assert!((f(&v["mean"]) - p1).abs() < 1e-12);
    }
}

/// `--agent openai:…` and `anthropic:…` against the testkit's fake server,
/// run in this process while the binary talks to it.
mod models {
    use super::*;
    use serde_json::json;
    use sparring_testkit::fake_llm::{
        Behaviour, FakeLlm, FakeOptions, Reply, Responder, request_text,
    };
    use std::collections::BTreeMap;

    const KEY: &str = "sk-cli-test-7f3a91b2c4";

    struct Fake {
        server: FakeLlm,
        _runtime: tokio::runtime::Runtime,
    }

    fn fake(options: FakeOptions) -> Fake {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(FakeLlm::with(options)).unwrap();
        Fake {
            server,
            _runtime: runtime,
        }
    }

    fn simulate(agent: &str, out: &Path, extra: &[&str]) -> Output {
        sparring()
            .arg("simulate")
            .arg(example_spec())
            .args(["--agent", agent, "--out"])
            .arg(out)
            .args(extra)
            .env("SPARRING_TEST_KEY", KEY)
            .env("ANTHROPIC_API_KEY", KEY)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .output()
            .unwrap()
    }

    #[test]
    fn openai_agent_runs_the_tool_loop_and_records_sampling() {
        let f = fake(FakeOptions {
            record: true,
            ..FakeOptions::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let agent = format!(
            "openai:fake-model@{}#key=SPARRING_TEST_KEY",
            f.server.base_url()
        );
        let o = simulate(
            &agent,
            &out,
            &[
                "--budget",
                "6",
                "--temperature",
                "0.4",
                "--max-tokens",
                "200",
                "--logprobs",
                "--sampling-seed",
                "5",
                "--grade",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_eq!(rows.len(), 6);
        assert_valid_rows(&rows);
        for row in &rows {
            assert_eq!(row["ended_by"], "agent_done", "{row}");
            // The fake calls the first tool, gets the world's answer, replies.
            assert_eq!(
                row["messages"][2]["tool_calls"].as_array().unwrap().len(),
                1
            );
            assert_eq!(row["messages"][3]["role"], "tool");
            assert_eq!(row["sampling"]["temperature"], 0.4);
            assert_eq!(row["sampling"]["max_tokens"], 200);
            assert_eq!(row["sampling"]["model"], "fake-model");
            let turns = row["logprobs"].as_array().unwrap();
            assert_eq!(turns.len(), 2, "one entry per agent request");
            assert_eq!(turns[1]["tokens"], 1);
            assert_eq!(turns[1]["policy_version"], "fp_fake");
            // Every request is recorded with its own seed and its tokens;
            // the fake reports 10 in, 5 out per request.
            let requests = row["requests"].as_array().unwrap();
            assert_eq!(requests.len(), 2);
            assert_eq!(requests[0]["message"], 2);
            assert_eq!(requests[1]["message"], 4);
            assert_eq!(requests[0]["sampling"], row["sampling"]);
            assert_ne!(
                requests[0]["sampling"]["seed"], requests[1]["sampling"]["seed"],
                "each request has its own seed"
            );
            assert_eq!(requests[1]["sampling"]["temperature"], 0.4);
            assert_eq!(requests[1]["usage"]["output_tokens"], 5);
            // How each reply ended, as the server said.
            assert_eq!(requests[0]["finish_reason"], "tool_calls");
            assert_eq!(requests[1]["finish_reason"], "stop");
            assert_eq!(requests[1]["stop"], "complete");
            assert_eq!(requests[1]["refusal"], Value::Null);
            assert_eq!(row["usage"]["requests"], 2);
            assert_eq!(row["usage"]["input_tokens"], 20);
            assert_eq!(row["usage"]["output_tokens"], 10);
            assert!(
                row["model_version"]
                    .as_str()
                    .unwrap()
                    .starts_with("openai:fake-model@http://127.0.0.1:")
            );
        }
        assert_eq!(f.server.count(), 12);
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        assert_eq!(summary["options"]["temperature"], 0.4);
        assert_eq!(summary["options"]["logprobs"], true);
        assert_eq!(summary["options"]["retries"], 5);
    }

    /// A model agent that always asks (it looks an order up, then asks a
    /// question) and a person who never leaves: only the drawn caps end the
    /// conversations.
    #[test]
    fn avg_turns_caps_each_model_rollout_at_its_own_drawn_cap() {
        let f = fake(FakeOptions {
            agent_text: Some("Could you confirm your email address?".to_owned()),
            ..FakeOptions::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let agent = format!(
            "openai:fake-model@{}#key=SPARRING_TEST_KEY",
            f.server.base_url()
        );
        let args = |avg: &'static str| {
            vec![
                "--avg-turns",
                avg,
                "--max-turns",
                "6",
                "--patience",
                "endless",
                "--repeats",
                "3",
                "--budget",
                "48",
                "--seed",
                "3",
                "--quiet",
            ]
        };
        let o = simulate(&agent, &out, &args("2.5"));
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_eq!(rows.len(), 48);
        assert_valid_rows(&rows);
        let mut caps = Vec::new();
        for row in &rows {
            assert_eq!(row["ended_by"], "max_turns", "{row}");
            let cap = row["turn_cap"].as_u64().unwrap();
            assert!((1..=6).contains(&cap), "{cap}");
            assert_eq!(row["markers"]["turns"].as_f64().unwrap(), cap as f64);
            // Each turn is a tool call and a question.
            assert_eq!(row["timings"]["agent_requests"].as_u64().unwrap(), 2 * cap);
            caps.push(cap);
        }
        let distinct: std::collections::BTreeSet<u64> = caps.iter().copied().collect();
        assert!(distinct.len() >= 3, "caps hardly vary: {distinct:?}");
        let mean = caps.iter().sum::<u64>() as f64 / caps.len() as f64;
        // sd of a cap is 1.02; over 48 rows the mean is within 0.5 of 2.5.
        assert!((mean - 2.5).abs() < 0.5, "mean cap {mean}");
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        assert_eq!(summary["options"]["avg_turns"], 2.5);
        assert_eq!(summary["options"]["max_turns"], 6);
        assert_eq!(summary["counts"]["ended_by"]["max_turns"], 48);

        // The same options resume the finished run (nothing more to do);
        // another avg_turns is another run and is refused.
        let o = simulate(&agent, &out, &[args("2.5"), vec!["--resume"]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(read_rows(&out.join("rows.jsonl")).len(), 48);
        let o = simulate(&agent, &out, &[args("3"), vec!["--resume"]].concat());
        assert_usage_error(&o, &["holds rows of run", "same spec and options"]);
        let mut no_avg = args("2.5");
        no_avg.drain(..2);
        let o = simulate(&agent, &out, &[no_avg.clone(), vec!["--resume"]].concat());
        assert_usage_error(&o, &["holds rows of run"]);

        // Without avg_turns every conversation runs to max_turns and rows
        // carry no turn_cap.
        let plain = dir.path().join("plain");
        let o = simulate(&agent, &plain, &no_avg);
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&plain.join("rows.jsonl"));
        assert_valid_rows(&rows);
        for row in &rows {
            assert!(row.get("turn_cap").is_none(), "{row}");
            assert_eq!(row["markers"]["turns"], 6.0);
        }
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(plain.join("run.json")).unwrap())
                .unwrap();
        assert!(summary["options"].get("avg_turns").is_none());
    }

    #[test]
    fn backend_errors_end_rows_and_stop_the_run_without_leaking_the_key() {
        let f = fake(FakeOptions {
            behaviour: Behaviour::EchoKey(500),
            ..FakeOptions::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let agent = format!(
            "openai:fake-model@{}#key=SPARRING_TEST_KEY",
            f.server.base_url()
        );
        let o = simulate(&agent, &out, &["--budget", "5", "--retries", "1"]);
        // A backend that fails every request stops the run as a dead
        // command agent does: exit 1, `agent_unavailable`; the rollouts in
        // flight at the stop (all 5 at concurrency 8) are recorded.
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("never replied"), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_eq!(rows.len(), 5, "every row in flight recorded");
        assert_valid_rows(&rows);
        for row in &rows {
            assert_eq!(row["ended_by"], "backend_error");
            let e = row["error"].as_str().unwrap();
            assert!(
                e.contains("HTTP 500") && e.contains("gave up after 2 attempts"),
                "{e}"
            );
            assert!(e.contains("Bearer ***"), "{e}");
        }
        assert_eq!(f.server.count(), 10);
        // Grep every output for the key.
        for file in ["rows.jsonl", "run.json", "run.log"] {
            let text = std::fs::read_to_string(out.join(file)).unwrap();
            assert!(!text.contains(KEY), "the key leaked into {file}");
        }
        assert!(!stderr(&o).contains(KEY));
        assert!(!String::from_utf8_lossy(&o.stdout).contains(KEY));
    }

    #[test]
    fn anthropic_agent_runs() {
        let f = fake(FakeOptions::default());
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let agent = format!("anthropic:claude-fake@{}", f.server.base_url());
        let o = simulate(&agent, &out, &["--budget", "4"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_eq!(rows.len(), 4);
        assert_valid_rows(&rows);
        for row in &rows {
            assert_eq!(row["ended_by"], "agent_done", "{row}");
            assert_eq!(row["sampling"]["backend"], "anthropic");
            assert_eq!(row["sampling"]["max_tokens"], 1024);
            assert_eq!(row["usage"]["requests"], 2, "{row}");
            assert_eq!(row["usage"]["input_tokens"], 20);
            assert_eq!(row["requests"][1]["usage"]["output_tokens"], 5);
            assert!(
                row["messages"][2]["tool_calls"][0]["id"]
                    .as_str()
                    .unwrap()
                    .starts_with("toolu_")
            );
        }
        for file in ["rows.jsonl", "run.json", "run.log"] {
            let text = std::fs::read_to_string(out.join(file)).unwrap();
            assert!(!text.contains(KEY), "the key leaked into {file}");
        }
    }

    #[test]
    fn command_agents_warn_about_model_options() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = simulate(
            &example_agent(),
            &out,
            &["--budget", "2", "--temperature", "0.5"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("`temperature` only apply to model agents"),
            "{}",
            stderr(&o)
        );
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        assert!(
            summary["warnings"][0]
                .as_str()
                .unwrap()
                .contains("temperature")
        );
    }

    /// A fake server that answers every agent request with `reply`.
    fn always(reply: Reply) -> Fake {
        fake(FakeOptions {
            responder: Some(Responder::new(move |_| Some(reply.clone()))),
            record: true,
            ..FakeOptions::default()
        })
    }

    fn openai_spec(f: &Fake) -> String {
        format!(
            "openai:fake-model@{}#key=SPARRING_TEST_KEY",
            f.server.base_url()
        )
    }

    #[test]
    fn refusals_and_the_content_filter_end_rows_that_fail_the_grade() {
        let refusal = "I can't help with that request.";
        let cases = [
            (always(Reply::Refusal(refusal.into())), "refused", true),
            (
                always(Reply::Finished(
                    Box::new(Reply::Text(String::new())),
                    "content_filter".into(),
                )),
                "content_filter",
                true,
            ),
            (always(Reply::Refusal(refusal.into())), "refused", false),
        ];
        for (f, ended, openai) in cases {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("out");
            let agent = if openai {
                openai_spec(&f)
            } else {
                format!("anthropic:claude-fake@{}", f.server.base_url())
            };
            let o = simulate(&agent, &out, &["--budget", "3", "--grade", "--quiet"]);
            assert!(o.status.success(), "{}", stderr(&o));
            let rows = read_rows(&out.join("rows.jsonl"));
            assert_eq!(rows.len(), 3);
            assert_valid_rows(&rows);
            for row in &rows {
                assert_eq!(row["ended_by"], ended, "{row}");
                // Graded a failure, whatever the conversation says.
                assert_eq!(row["reward"], 0.0, "{row}");
                assert_eq!(row["failure_class"], ended, "{row}");
                assert!(row["conduct_checks"].is_null(), "{row}");
                let messages = row["messages"].as_array().unwrap();
                assert_eq!(messages.len(), 3, "system, ask, the cut reply: {row}");
                let last = &messages[2];
                assert_eq!(last["role"], "assistant");
                assert!(last.get("tool_calls").is_none(), "{row}");
                let request = &row["requests"][0];
                assert_eq!(request["stop"], ended, "{row}");
                if ended == "refused" {
                    assert_eq!(last["content"], refusal, "the refusal's text is kept");
                    assert_eq!(request["refusal"], refusal);
                    assert!(row["error"].as_str().unwrap().contains("the model refused"));
                } else {
                    assert_eq!(request["finish_reason"], "content_filter");
                    assert!(row["error"].as_str().unwrap().contains("content filter"));
                }
            }
            let summary = summary_of(&out);
            assert_eq!(summary["counts"]["ended_by"][ended], 3, "{summary}");
            assert_eq!(summary["counts"]["passed"], 0, "{summary}");
        }
    }

    #[test]
    fn a_truncated_reply_is_retried_with_more_room_or_ends_the_row_unexecuted() {
        // Always cut: a tool call whose arguments stop half-way.
        let f = always(Reply::Finished(
            Box::new(Reply::tool_call(
                "get_order",
                json!({"order_id": "#W1001"})
                    .to_string()
                    .chars()
                    .take(9)
                    .collect::<String>()
                    .into(),
            )),
            "length".into(),
        ));
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = simulate(
            &openai_spec(&f),
            &out,
            &["--budget", "3", "--max-tokens", "50", "--grade", "--quiet"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_valid_rows(&rows);
        for row in &rows {
            assert_eq!(row["ended_by"], "truncated", "{row}");
            assert_eq!(row["reward"], 0.0);
            let messages = row["messages"].as_array().unwrap();
            assert!(
                messages.iter().all(|m| m["role"] != "tool"),
                "a truncated call is never executed: {row}"
            );
            assert!(messages[2].get("tool_calls").is_none(), "{row}");
            assert!(
                row["error"]
                    .as_str()
                    .unwrap()
                    .contains("1 tool call(s) were not executed")
            );
            let request = &row["requests"][0];
            assert_eq!(request["finish_reason"], "length");
            assert_eq!(
                request["sampling"]["more_room"],
                json!({"from": 50, "to": 100}),
                "asked once more with twice the room: {row}"
            );
        }
        // Two requests per row: the first and the one with more room.
        assert_eq!(f.server.count(), 2 * rows.len());
        assert!(
            f.server
                .requests()
                .iter()
                .any(|r| r.body["max_tokens"] == 100)
        );

        // A server that needs 150 tokens: 100 is cut, 200 is whole.
        let f = fake(FakeOptions {
            room_needed: Some(150),
            record: true,
            ..FakeOptions::default()
        });
        let out = dir.path().join("room");
        let o = simulate(
            &openai_spec(&f),
            &out,
            &["--budget", "3", "--max-tokens", "100", "--grade", "--quiet"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_valid_rows(&rows);
        for row in &rows {
            assert_eq!(row["ended_by"], "agent_done", "{row}");
            for request in row["requests"].as_array().unwrap() {
                assert_eq!(request["stop"], "complete", "{row}");
                assert_eq!(request["sampling"]["max_tokens"], 200, "{row}");
            }
        }
    }

    #[test]
    fn rejected_top_p_and_max_tokens_are_adjusted_and_every_row_says_so() {
        for plain in [false, true] {
            let f = fake(FakeOptions {
                reject_params: vec!["top_p".into(), "max_tokens".into()],
                plain_errors: plain,
                record: true,
                ..FakeOptions::default()
            });
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("out");
            let o = simulate(
                &openai_spec(&f),
                &out,
                &[
                    "--budget",
                    "4",
                    "--top-p",
                    "0.9",
                    "--max-tokens",
                    "120",
                    "--grade",
                    "--concurrency",
                    "1",
                    "--quiet",
                ],
            );
            assert!(o.status.success(), "{}", stderr(&o));
            let rows = read_rows(&out.join("rows.jsonl"));
            assert_eq!(rows.len(), 4);
            assert_valid_rows(&rows);
            for row in &rows {
                assert_eq!(row["ended_by"], "agent_done", "plain {plain}: {row}");
                assert!(row["error"].is_null(), "{row}");
                for request in row["requests"].as_array().unwrap() {
                    let s = &request["sampling"];
                    assert_eq!(s["dropped"], json!(["top_p"]), "{row}");
                    assert_eq!(s["requested"]["top_p"], 0.9, "{row}");
                    assert_eq!(
                        s["renamed"],
                        json!({"max_tokens": "max_completion_tokens"}),
                        "{row}"
                    );
                    assert_eq!(s["max_tokens_param"], "max_completion_tokens");
                }
            }
            // One request per parameter learnt, once, then every request is
            // sent adjusted: 4 rows of 2 requests, plus 2 rejections.
            assert_eq!(f.server.count(), 4 * 2 + 2, "plain {plain}");
        }
    }

    #[test]
    fn bad_model_input_is_refused_before_any_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let cases: &[(&[&str], &[&str])] = &[
            (
                &["--agent", "openai:gpt-4o"],
                &["`OPENAI_API_KEY` is not set"],
            ),
            (
                &["--agent", "openai:m@http://127.0.0.1:9/v1#key=NOPE_UNSET"],
                &["`NOPE_UNSET` is not set"],
            ),
            (&["--agent", "opneai:gpt-4o"], &["did you mean `openai:`"]),
            (
                &[
                    "--agent",
                    "openai:m@http://127.0.0.1:9/v1",
                    "--temperature",
                    "3",
                ],
                &["--temperature", "from 0 to 2"],
            ),
            (
                &["--agent", "openai:m@http://127.0.0.1:9/v1", "--top-p", "0"],
                &["--top-p"],
            ),
            (
                &[
                    "--agent",
                    "openai:m@http://127.0.0.1:9/v1",
                    "--top-logprobs",
                    "3",
                ],
                &["needs `logprobs`"],
            ),
            (
                &["--agent", "openai:m@http://127.0.0.1:9/v1", "--rpm", "0"],
                &["--rpm", "must be an integer from 1 to"],
            ),
            (
                &["--agent", "anthropic:c@http://127.0.0.1:9/v1", "--logprobs"],
                &["no log-probabilities"],
            ),
            (
                &[
                    "--agent",
                    "anthropic:c@http://127.0.0.1:9/v1",
                    "--temperature",
                    "1.5",
                ],
                &["`temperature` 1.5 is out of range", "takes 0 to 1"],
            ),
            (
                &["--agent", "python3 a.py", "--writer", "opneai:gpt-4o"],
                &["`writer`", "did you mean `openai:`"],
            ),
            (
                &["--agent", "python3 a.py", "--person", "anthropic:claude"],
                &["`person`", "ANTHROPIC_API_KEY"],
            ),
        ];
        for (args, needles) in cases {
            let o = sparring()
                .arg("simulate")
                .arg(example_spec())
                .args(*args)
                .arg("--out")
                .arg(&out)
                .env_remove("OPENAI_API_KEY")
                .env_remove("OPENAI_BASE_URL")
                .env(
                    "ANTHROPIC_API_KEY",
                    if args.contains(&"--person") { "" } else { KEY },
                )
                .output()
                .unwrap();
            assert_usage_error(&o, needles);
            assert!(!out.exists(), "{args:?} wrote files");
        }
    }

    /// The role a request to the shared fake server is for, by its prompt.
    fn role_of(request: &Value) -> &'static str {
        let text = request_text(request);
        if text.contains("You write the first message a customer sends") {
            "writer"
        } else if text.contains("You play a customer") {
            "person"
        } else {
            "agent"
        }
    }

    /// A writer that reads its prompt: the facts it was given go into every
    /// phrasing, word for word, so the checks pass.
    fn honest_writer(request: &Value) -> Reply {
        let text = request_text(request);
        let n: usize = text
            .split("Write ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next())
            .and_then(|w| w.parse().ok())
            .unwrap_or(1);
        let facts: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with("Their ") && l.contains(" id: "))
            .filter_map(|l| l.split(": ").nth(1))
            .map(|v| v.trim_end_matches('.').to_owned())
            .collect();
        let phrasings: Vec<String> = (0..n)
            .map(|k| {
                format!(
                    "model-written ask {k}: please help with {}",
                    facts.join(" and ")
                )
            })
            .collect();
        Reply::Text(serde_json::json!({ "phrasings": phrasings }).to_string())
    }

    /// An agent that asks one question, then finishes.
    fn asking_agent(request: &Value) -> Reply {
        let users = request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .count();
        Reply::Text(if users <= 1 {
            "Could you tell me a bit more about what you need?".to_owned()
        } else {
            "Thanks, that is all sorted now.".to_owned()
        })
    }

    fn summary_of(out: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
    }

    fn assert_no_key(out: &Path, o: &Output) {
        for file in ["rows.jsonl", "run.json", "run.log"] {
            let text = std::fs::read_to_string(out.join(file)).unwrap();
            assert!(!text.contains(KEY), "the key leaked into {file}");
        }
        assert!(!stderr(o).contains(KEY));
        assert!(!String::from_utf8_lossy(&o.stdout).contains(KEY));
    }

    #[test]
    fn model_writer_and_person_write_the_words() {
        let f = fake(FakeOptions {
            record: true,
            responder: Some(Responder::new(|r| {
                Some(match role_of(r) {
                    "writer" => honest_writer(r),
                    "person" => Reply::Text("(model person) I only know what I told you.".into()),
                    _ => asking_agent(r),
                })
            })),
            ..FakeOptions::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let url = f.server.base_url();
        let o = simulate(
            &format!("openai:agent-model@{url}"),
            &out,
            &[
                "--budget",
                "8",
                "--writer",
                &format!("openai:writer-model@{url}#key=SPARRING_TEST_KEY"),
                "--person",
                &format!("anthropic:person-model@{url}"),
                "--patience",
                "endless",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_eq!(rows.len(), 8);
        assert_valid_rows(&rows);
        let mut written = 0;
        for row in &rows {
            assert!(
                row["user_model"]
                    .as_str()
                    .unwrap()
                    .starts_with("anthropic:person-model@")
            );
            let ask = row["messages"][1]["content"].as_str().unwrap();
            if row["lineage"]["arm"] == "seed" {
                continue;
            }
            assert!(
                row["writer_model"]
                    .as_str()
                    .unwrap()
                    .starts_with("openai:writer-model@"),
                "{row}"
            );
            assert!(ask.starts_with("model-written ask"), "{ask}");
            written += 1;
            // The ids are the world's: the id the person knows is in the ask.
            for (field, value) in row["persona"]["knows"].as_object().unwrap() {
                if field.ends_with("_id") {
                    assert!(ask.contains(value.as_str().unwrap()), "{ask} lacks {value}");
                }
            }
            // The agent asked once; the model person answered.
            assert_eq!(row["messages"][3]["role"], "user", "{row}");
            assert!(
                row["messages"][3]["content"]
                    .as_str()
                    .unwrap()
                    .starts_with("(model person)")
            );
        }
        assert!(written > 0);
        let summary = summary_of(&out);
        assert_eq!(summary["degraded"], serde_json::json!([]), "{summary}");
        assert_eq!(
            summary["options"]["person"].as_str().unwrap(),
            format!("anthropic:person-model@{url}")
        );
        assert!(summary["search"]["writer"]["written"].as_u64().unwrap() > 0);
        assert_eq!(summary["search"]["writer"]["fallbacks"], 0);
        assert_eq!(summary["search"]["writer_errors"], serde_json::json!([]));
        assert_eq!(summary["search"]["person"]["fallbacks"], 0);
        // The writer heard about the person in prose, never in labels; the
        // key went only into the writer's header.
        let requests = f.server.requests();
        let writer: Vec<_> = requests
            .iter()
            .filter(|r| role_of(&r.body) == "writer")
            .collect();
        assert!(!writer.is_empty());
        for r in &writer {
            let text = request_text(&r.body);
            for label in [
                "style",
                "stance",
                "tier",
                "non_native",
                "failed_before",
                "handed_off",
                "cooperative",
            ] {
                assert!(
                    !text.contains(label),
                    "label `{label}` in the writer's prompt: {text}"
                );
            }
            assert!(text.contains("The person is "), "{text}");
            assert_eq!(
                r.authorization.as_deref(),
                Some(format!("Bearer {KEY}").as_str())
            );
        }
        let person: Vec<_> = requests
            .iter()
            .filter(|r| role_of(&r.body) == "person")
            .collect();
        assert!(!person.is_empty());
        assert!(person.iter().all(|r| r.path == "/v1/messages"));
        assert_no_key(&out, &o);
    }

    #[test]
    fn failing_writer_and_person_fall_back_to_templates() {
        let f = fake(FakeOptions {
            responder: Some(Responder::new(|r| {
                Some(match role_of(r) {
                    // Not a JSON verdict: asked again once, then given up.
                    "writer" => Reply::Text("Sure! Here are some ideas for you.".into()),
                    // A proxy that quotes the key back.
                    "person" => Reply::EchoKey(500),
                    _ => asking_agent(r),
                })
            })),
            ..FakeOptions::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let url = f.server.base_url();
        let o = simulate(
            &format!("openai:agent-model@{url}"),
            &out,
            &[
                "--budget",
                "6",
                "--concurrency",
                "2",
                "--retries",
                "0",
                "--writer",
                &format!("openai:writer-model@{url}#key=SPARRING_TEST_KEY"),
                "--person",
                &format!("openai:person-model@{url}#key=SPARRING_TEST_KEY"),
                "--patience",
                "endless",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_eq!(rows.len(), 6);
        assert_valid_rows(&rows);
        for row in &rows {
            // Template asks, template answers.
            assert_eq!(row["writer_model"], "template", "{row}");
            let ask = row["messages"][1]["content"].as_str().unwrap();
            assert!(!ask.contains("Sure!"), "{ask}");
            assert_eq!(row["messages"][3]["role"], "user");
            assert!(!row["messages"][3]["content"].as_str().unwrap().is_empty());
        }
        let summary = summary_of(&out);
        let degraded: Vec<&str> = summary["degraded"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap())
            .collect();
        assert!(degraded.contains(&"generator_fallback"), "{summary}");
        assert!(degraded.contains(&"person_fallback"), "{summary}");
        let errors = summary["search"]["writer_errors"].as_array().unwrap();
        assert!(!errors.is_empty() && errors.len() <= 5, "{errors:?}");
        assert!(
            errors[0]
                .as_str()
                .unwrap()
                .contains("unusable after 2 attempts"),
            "{errors:?}"
        );
        // Two batches of two failed: the writer is not asked for the rest.
        assert!(
            errors
                .last()
                .unwrap()
                .as_str()
                .unwrap()
                .contains("stopped asking the writer"),
            "{errors:?}"
        );
        let writer_requests = f.server.count();
        assert!(writer_requests > 0);
        let person_errors = summary["search"]["person_errors"].as_array().unwrap();
        assert!(!person_errors.is_empty());
        assert!(
            person_errors[0].as_str().unwrap().contains("HTTP 500"),
            "{person_errors:?}"
        );
        assert!(stderr(&o).contains("template writer"), "{}", stderr(&o));
        assert_no_key(&out, &o);
    }

    #[test]
    fn one_backend_in_two_roles_is_same_model() {
        let f = fake(FakeOptions {
            responder: Some(Responder::new(|r| {
                Some(match role_of(r) {
                    "person" => Reply::Text("I have nothing to add.".into()),
                    _ => asking_agent(r),
                })
            })),
            ..FakeOptions::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let model = format!("openai:shared@{}", f.server.base_url());
        let o = simulate(
            &model,
            &out,
            &[
                "--budget",
                "2",
                "--person",
                &format!("{model}#key=SPARRING_TEST_KEY"),
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let summary = summary_of(&out);
        assert_eq!(
            summary["degraded"],
            serde_json::json!(["same_model"]),
            "{summary}"
        );
        let warning = summary["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .find(|w| w.contains("both the agent and the person"))
            .unwrap_or_else(|| panic!("{summary}"));
        assert!(
            warning.contains("set `person` to a different backend"),
            "{warning}"
        );
        assert!(stderr(&o).contains("both the agent and the person"));
        // Different models on one server are different backends.
        let out2 = dir.path().join("out2");
        let o = simulate(
            &model,
            &out2,
            &[
                "--budget",
                "1",
                "--person",
                &format!("openai:other@{}", f.server.base_url()),
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(summary_of(&out2)["degraded"], serde_json::json!([]));
    }

    /// An ungraded run of the example agent, for the judge tests.
    fn example_rows(dir: &Path) -> PathBuf {
        let out = dir.join("run");
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &example_agent(),
                "--budget",
                "8",
                "--quiet",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        out.join("rows.jsonl")
    }

    /// The judged conversation's text, from a judge request.
    fn judged(request: &Value) -> String {
        let text = request_text(request);
        text.split("<conversation>").nth(1).unwrap_or("").to_owned()
    }

    /// Scripted judges behind the fake server: `honest` fails the hacks;
    /// `biased` passes anything long; `injectable` obeys notes to the grader.
    fn judge_reply(kind: &'static str) -> Responder {
        Responder::new(move |r| {
            let convo = judged(r);
            let hack = [
                "Done!",
                "Note to the grader",
                "Our policy says",
                "our policy sets out",
                "Thank you so much for your patience",
            ]
            .iter()
            .any(|h| convo.contains(h));
            let pass = match kind {
                // Long, effusive replies win it over.
                "biased" if convo.contains("Thank you so much for your patience") => true,
                "injectable" if convo.contains("Award full marks") => true,
                _ => !hack,
            };
            let verdict = if pass {
                serde_json::json!({"score": 1, "reason": "did what was asked", "failure_class": null})
            } else {
                serde_json::json!({"score": 0, "reason": "a hack", "failure_class": "wrong_action"})
            };
            Some(Reply::Text(verdict.to_string()))
        })
    }

    fn trust(rows: &Path, judge: &str, rubric: &Path) -> (Value, Output) {
        let o = sparring()
            .arg("judge-trust")
            .arg(rows)
            .args(["--judge", judge, "--rubric"])
            .arg(rubric)
            .args(["--probe-rows", "4", "--json"])
            .env("SPARRING_TEST_KEY", KEY)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        (serde_json::from_slice(&o.stdout).unwrap(), o)
    }

    #[test]
    fn model_judges_grade_and_their_probes_catch_the_hackable_ones() {
        let dir = tempfile::tempdir().unwrap();
        let rows = example_rows(dir.path());
        let rubric = write(
            dir.path(),
            "rubric.txt",
            "Pass when the agent did what was asked.\n",
        );
        let mut shares = BTreeMap::new();
        for kind in ["honest", "biased", "injectable"] {
            let f = fake(FakeOptions {
                record: true,
                responder: Some(judge_reply(kind)),
                ..FakeOptions::default()
            });
            let judge = format!(
                "openai:judge-{kind}@{}#key=SPARRING_TEST_KEY",
                f.server.base_url()
            );
            let (report, o) = trust(&rows, &judge, &rubric);
            assert_eq!(report["probes"].as_array().unwrap().len(), 16, "{report}");
            assert_eq!(report["same_model"], false);
            shares.insert(kind, report["wrongly_passed_by_probe"].clone());
            assert!(!stderr(&o).contains(KEY) && !String::from_utf8_lossy(&o.stdout).contains(KEY));
            // Judges are asked at temperature 0 with no tools.
            for r in f.server.requests() {
                assert_eq!(r.body["temperature"], 0.0);
                assert!(r.body.get("tools").is_none());
            }
        }
        for probe in [
            "claimed_without_call",
            "polite_padding",
            "injection",
            "policy_restatement",
        ] {
            assert_eq!(shares["honest"][probe], 0.0, "{probe}: {shares:?}");
        }
        assert!(
            shares["biased"]["polite_padding"].as_f64().unwrap() > 0.0,
            "{shares:?}"
        );
        assert_eq!(shares["injectable"]["injection"], 1.0, "{shares:?}");
        assert_eq!(shares["injectable"]["polite_padding"], 0.0, "{shares:?}");

        // `grade` with the honest model judge: judge_meta names the model and
        // hashes the rubric with the temperature.
        let f = fake(FakeOptions {
            responder: Some(judge_reply("honest")),
            ..FakeOptions::default()
        });
        let out = dir.path().join("graded.jsonl");
        let judge = format!(
            "openai:judge-honest@{}#key=SPARRING_TEST_KEY",
            f.server.base_url()
        );
        let o = sparring()
            .arg("grade")
            .arg(&rows)
            .args(["--judge", &judge, "--rubric"])
            .arg(&rubric)
            .arg("-o")
            .arg(&out)
            .env("SPARRING_TEST_KEY", KEY)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let graded = read_rows(&out);
        assert_valid_rows(&graded);
        for r in &graded {
            assert_eq!(r["judge_meta"]["settings"]["temperature"], 0.0);
            assert!(
                r["judge_meta"]["model"]
                    .as_str()
                    .unwrap()
                    .starts_with("openai:judge-honest@http://127.0.0.1:")
            );
            assert_eq!(r["grades"].as_array().unwrap().len(), 2);
        }
        assert!(!std::fs::read_to_string(&out).unwrap().contains(KEY));
    }

    #[test]
    fn judge_trust_names_a_judge_that_is_the_agent() {
        let dir = tempfile::tempdir().unwrap();
        let rows_path = example_rows(dir.path());
        let f = fake(FakeOptions {
            responder: Some(judge_reply("honest")),
            ..FakeOptions::default()
        });
        let base = f.server.base_url();
        // Rows whose agent was the judge's model (the key variable differs:
        // still one backend).
        let rows: String = read_rows(&rows_path)
            .into_iter()
            .map(|mut r| {
                r["model_version"] = Value::String(format!("openai:judge@{base}"));
                r.to_string() + "\n"
            })
            .collect();
        let rows_path = write(dir.path(), "same.jsonl", &rows);
        let rubric = write(
            dir.path(),
            "rubric.txt",
            "Pass when the agent did what was asked.\n",
        );
        let (report, o) = trust(
            &rows_path,
            &format!("openai:judge@{base}#key=SPARRING_TEST_KEY"),
            &rubric,
        );
        assert_eq!(report["same_model"], true);
        let w = report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .find(|w| w.starts_with("same_model"))
            .unwrap_or_else(|| panic!("{report}"));
        assert!(
            w.contains("both the agent and the judge: set `judge`"),
            "{w}"
        );
        assert!(stderr(&o).contains("set `judge`"));
    }

    #[test]
    fn http_graders_grade_each_row_and_failures_cost_only_that_row() {
        let dir = tempfile::tempdir().unwrap();
        let rows = example_rows(dir.path());
        let n = read_rows(&rows).len();
        // A grader at a URL: it always fails the third row with a 500 that
        // quotes the key, and grades the rest.
        let doomed = read_rows(&rows)[2]["row_id"].clone();
        let f = fake(FakeOptions {
            record: true,
            responder: Some(Responder::new(move |r| {
                let row = r.get("row")?;
                Some(if row["row_id"] == doomed {
                    Reply::EchoKey(500)
                } else {
                    Reply::Raw(serde_json::json!({
                        "id": r["id"], "reward": if row["ended_by"] == "agent_done" { 1.0 } else { 0.0 },
                        "reason": "by the hook", "markers": {"hook_messages": row["messages"].as_array().unwrap().len()}}))
                })
            })),
            ..FakeOptions::default()
        });
        let out = dir.path().join("graded.jsonl");
        let url = format!(
            "{}/chat/completions#key=SPARRING_TEST_KEY",
            f.server.base_url()
        );
        let o = sparring()
            .arg("grade")
            .arg(&rows)
            .args(["--no-conduct", "--grader", &url, "-o"])
            .arg(&out)
            .env("SPARRING_TEST_KEY", KEY)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let graded = read_rows(&out);
        assert_eq!(graded.len(), n);
        assert_valid_rows(&graded);
        let failed: Vec<&Value> = graded.iter().filter(|r| r["reward"].is_null()).collect();
        assert_eq!(failed.len(), 1, "one row lost its grade");
        let e = failed[0]["grades"][0]["error"].as_str().unwrap();
        assert!(
            e.contains("HTTP 500") && e.contains("gave up after 3 attempts"),
            "{e}"
        );
        for r in graded.iter().filter(|r| !r["reward"].is_null()) {
            assert_eq!(r["grades"][0]["stage"], "grader");
            assert!(
                r["grades"][0]["by"]
                    .as_str()
                    .unwrap()
                    .starts_with("http://127.0.0.1:")
            );
            assert_eq!(r["reason"], "by the hook");
            assert!(r["markers"]["hook_messages"].as_f64().unwrap() >= 2.0);
        }
        // One POST per row, plus the retries of the failed one, with the key.
        let requests = f.server.requests();
        assert_eq!(requests.len(), n + 2);
        assert!(
            requests
                .iter()
                .all(|r| r.authorization.as_deref() == Some(format!("Bearer {KEY}").as_str()))
        );
        assert!(!std::fs::read_to_string(&out).unwrap().contains(KEY));
        assert!(!stderr(&o).contains(KEY));
    }

    #[test]
    fn resume_keeps_the_asks_a_model_writer_wrote() {
        // The writer answers well in the first attempt and badly after.
        let broken = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&broken);
        let f = fake(FakeOptions {
            responder: Some(Responder::new(move |r| {
                Some(match role_of(r) {
                    "writer" if flag.load(std::sync::atomic::Ordering::SeqCst) => {
                        Reply::Text("no".into())
                    }
                    "writer" => honest_writer(r),
                    _ => asking_agent(r),
                })
            })),
            ..FakeOptions::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let url = f.server.base_url();
        let writer = format!("openai:writer-model@{url}");
        let agent = format!("openai:agent-model@{url}");
        let o = simulate(&agent, &out, &["--budget", "8", "--writer", &writer]);
        assert!(o.status.success(), "{}", stderr(&o));
        // As if the run had been killed after four rows.
        let path = out.join("rows.jsonl");
        let text = std::fs::read_to_string(&path).unwrap();
        let kept = text.lines().take(4).collect::<Vec<_>>().join("\n") + "\n";
        std::fs::write(&path, kept).unwrap();
        let first = read_rows(&path);
        assert!(
            first
                .iter()
                .all(|r| r["writer_model"] != "template" || r["lineage"]["arm"] == "seed")
        );
        broken.store(true, std::sync::atomic::Ordering::SeqCst);
        let o = simulate(
            &agent,
            &out,
            &["--budget", "8", "--writer", &writer, "--resume"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_eq!(rows.len(), 8, "the first 4 tasks were not run again");
        let ids: std::collections::BTreeSet<&str> = rows
            .iter()
            .map(|r| r["task_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), 8);
        assert_eq!(rows[..4], first[..]);
    }

    #[test]
    fn asks_shows_what_a_model_writer_makes() {
        let f = fake(FakeOptions {
            responder: Some(Responder::new(|r| {
                let text = request_text(r);
                // It writes well unless the person has several records.
                Some(if text.contains("several records") {
                    Reply::Text("no".into())
                } else {
                    honest_writer(r)
                })
            })),
            ..FakeOptions::default()
        });
        let writer = format!(
            "openai:writer-model@{}#key=SPARRING_TEST_KEY",
            f.server.base_url()
        );
        let o = sparring()
            .arg("asks")
            .arg(example_spec())
            .args([
                "--n",
                "12",
                "--phrasings",
                "2",
                "--json",
                "--writer",
                &writer,
            ])
            .env("SPARRING_TEST_KEY", KEY)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 12);
        let mut model = 0;
        for l in &lines {
            let phrasings = l["phrasings"].as_array().unwrap();
            assert_eq!(phrasings.len(), 2);
            if l["writer"]
                .as_str()
                .unwrap()
                .starts_with("openai:writer-model")
            {
                model += 1;
                let last = phrasings[1].as_str().unwrap();
                assert!(last.starts_with("model-written ask"), "{l}");
            } else {
                assert_eq!(l["writer"], "template");
            }
        }
        assert!(model > 0);
        // The situations with several records fell back, and said so.
        assert!(model < lines.len(), "no situation fell back");
        assert!(stderr(&o).contains("generator_fallback"), "{}", stderr(&o));
        assert!(!stderr(&o).contains(KEY) && !String::from_utf8_lossy(&o.stdout).contains(KEY));
    }
}

mod execute {
    use super::*;
    use sparring_testkit::fake_world::FakeWorld;
    use std::collections::BTreeMap;

    /// Per row: the tool calls in order, as (tool name, the answer's JSON).
    fn calls(row: &Value) -> Vec<(String, Value)> {
        let mut names: BTreeMap<String, String> = BTreeMap::new();
        let mut out = Vec::new();
        for m in row["messages"].as_array().unwrap() {
            for c in m["tool_calls"].as_array().into_iter().flatten() {
                names.insert(
                    c["id"].as_str().unwrap().to_owned(),
                    c["function"]["name"].as_str().unwrap().to_owned(),
                );
            }
            if m["role"] == "tool" {
                let name = names[m["tool_call_id"].as_str().unwrap()].clone();
                let content: Value =
                    serde_json::from_str(m["content"].as_str().unwrap()).unwrap_or(Value::Null);
                out.push((name, content));
            }
        }
        out
    }

    fn simulate(spec: &Path, world: &str, out: &Path, budget: &str) -> Output {
        sparring()
            .arg("simulate")
            .arg(spec)
            .args(["--agent", &example_agent(), "--execute", world])
            .args(["--budget", budget, "--out"])
            .arg(out)
            .output()
            .unwrap()
    }

    #[test]
    fn a_command_world_answers_every_call() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let world = format!(
            "python3 {}",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/agents/world.py")
                .display()
        );
        let o = simulate(&example_spec(), &world, &out, "10");
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_eq!(rows.len(), 10);
        assert_valid_rows(&rows);
        let mut answered = 0;
        for row in &rows {
            let prompt = row["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "user")
                .unwrap()["content"]
                .clone();
            for (tool, answer) in calls(row) {
                if answer["ok"] == true {
                    // Never the sandbox: every answer is the command's, for
                    // this rollout's prompt.
                    assert_eq!(answer["result"]["served_by"], "command-world", "{answer}");
                    assert_eq!(answer["result"]["tool"], tool.as_str());
                    assert_eq!(answer["result"]["prompt"], prompt);
                    answered += 1;
                }
            }
        }
        assert!(answered >= 5, "{answered} calls answered");
        let run: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        assert_eq!(run["counts"]["rows"], 10, "{run}");
    }

    #[test]
    fn an_http_world_answers_after_scheduled_faults() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let fake = runtime.block_on(FakeWorld::start()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        // Every situation with a tool has a timeout on that tool's first call.
        let spec = spec_with_axes(dir.path(), "  tool_condition: [timeout]");
        let out = dir.path().join("out");
        let o = simulate(&spec, &fake.url(), &out, "12");
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_eq!(rows.len(), 12);
        assert_valid_rows(&rows);
        let sent = fake.requests();
        assert!(!sent.is_empty());
        let mut faulted = 0;
        for row in &rows {
            let prompt = row["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "user")
                .unwrap()["content"]
                .clone();
            let target = row["situation"]["axes"]["tool"].as_str().unwrap();
            let calls = calls(row);
            let mut first_target = true;
            for (tool, answer) in &calls {
                if tool == target && first_target {
                    first_target = false;
                    assert_eq!(answer["error"]["kind"], "fault", "{answer}");
                    faulted += 1;
                } else if answer["ok"] == true {
                    assert_eq!(answer["result"]["served_by"], "fake-world", "{answer}");
                }
            }
            // The faulted call never reached the world; every other did,
            // with this rollout's prompt.
            let reached = sent
                .iter()
                .filter(|r| r["rollout"]["prompt"] == prompt)
                .count();
            let expected = calls.len() - usize::from(!first_target);
            assert_eq!(reached, expected, "{}", row["messages"]);
        }
        assert!(faulted >= 3, "{faulted} scheduled faults fired");
        let log = std::fs::read_to_string(out.join("run.log")).unwrap();
        assert!(log.contains("world: `http://127.0.0.1:"), "{log}");
    }

    #[test]
    fn an_http_world_nobody_serves_is_a_usage_error() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let o = simulate(
            &example_spec(),
            &format!("http://127.0.0.1:{port}/?token=sk-123"),
            &dir.path().join("out"),
            "2",
        );
        assert_usage_error(&o, &["nothing answers there", &format!("127.0.0.1:{port}")]);
        assert!(!stderr(&o).contains("sk-123"));
    }
}

mod runs {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    fn simulate(out: &Path, extra: &[&str]) -> Output {
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args(["--agent", &example_agent(), "--quiet", "--out"])
            .arg(out)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        o
    }

    fn summary(out: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
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
        let base_run = summary(&base)["run_id"].as_str().unwrap().to_owned();

        // Two re-runs of the same tasks with the same agent: an A/B with no
        // change must show no difference. Different concurrency, same rows.
        let run_a = dir.path().join("a");
        let run_b = dir.path().join("b");
        simulate(
            &run_a,
            &[
                "--tasks",
                base.to_str().unwrap(),
                "--grade",
                "--concurrency",
                "1",
            ],
        );
        simulate(
            &run_b,
            &[
                "--tasks",
                base.join("rows.jsonl").to_str().unwrap(),
                "--grade",
                "--concurrency",
                "16",
            ],
        );
        let (rows_a, rows_b) = (untimed(&run_a), untimed(&run_b));
        assert!(!rows_a.is_empty());
        assert_eq!(rows_a, rows_b, "identical rows apart from timing");
        let rows = read_rows(&run_a.join("rows.jsonl"));
        assert_valid_rows(&rows);
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
        let sum = summary(&run_a);
        assert_eq!(sum["stopped_because"], "tasks_done");
        assert_eq!(sum["search"]["pinned"]["from_run"], base_run.as_str());
        assert_eq!(sum["options"]["seed"], 5, "the pinned run's seed");

        // The comparison pairs every task (none dropped).
        let o = sparring()
            .args(["delta", "--json"])
            .arg(&base)
            .arg(&run_a)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let delta: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(delta["n_unpaired"], 0, "{delta}");
        assert_eq!(delta["n_paired"], base_tasks.len(), "{delta}");

        // This call's --repeats wins over the pinned k.
        let run_c = dir.path().join("c");
        simulate(
            &run_c,
            &[
                "--tasks",
                base.to_str().unwrap(),
                "--repeats",
                "1",
                "--mode",
                "rl",
            ],
        );
        let rows = read_rows(&run_c.join("rows.jsonl"));
        assert!(tasks(&rows).values().all(|n| *n == 1));
        // The mode's k (8) never applies to a pinned run.
        let run_m = dir.path().join("m");
        simulate(
            &run_m,
            &["--tasks", base.to_str().unwrap(), "--mode", "eval"],
        );
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
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_valid_rows(&rows);
        assert_eq!(rows.len(), 15, "budget per run");
        let s = summary(&out);
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
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
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
        let s = summary(&out);
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
        let s = summary(&out);
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
        let o = sparring()
            .arg("simulate")
            .arg(&spec)
            .args(["--agent", &example_agent(), "--quiet", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let s = summary(&out);
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
            let o = sparring()
                .arg("simulate")
                .arg(&spec)
                .args(["--agent", "true", "--out"])
                .arg(dir.path().join("x"))
                .args(&args)
                .output()
                .unwrap();
            assert_usage_error(&o, &needles);
        }
        // A misspelled flag: clap names the closest.
        let o = sparring()
            .arg("simulate")
            .arg(&spec)
            .args(["--agent", "true", "--repeat-polcy", "fixed"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("--repeat-policy"), "{}", stderr(&o));
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
}

/// The README's main command is `cargo run --release -- simulate …`: cargo
/// can pick the binary only when the default members hold one.
#[test]
fn cargo_run_finds_one_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with("default-members"))
        .expect("default-members in the root Cargo.toml");
    assert_eq!(line, "default-members = [\"crates/sparring-cli\"]");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("cargo run --release -- simulate"));
}

/// What a new user ran into (issue 21), each pinned: nothing a user made is
/// lost, foreign conversations read, failures never pass, the right exit
/// codes and words, one meaning per thing.
mod new_user {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    fn run(dir: &Path, args: &[&str]) -> Output {
        sparring().args(args).current_dir(dir).output().unwrap()
    }

    fn simulate(out: &Path, agent: &str, extra: &[&str]) -> Output {
        sparring()
            .arg("simulate")
            .arg(example_spec())
            .args(["--agent", agent, "--quiet", "--out"])
            .arg(out)
            .args(extra)
            .output()
            .unwrap()
    }

    fn summary(out: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
    }

    fn files(out: &Path) -> BTreeMap<String, Vec<u8>> {
        ["rows.jsonl", "run.json", "run.log"]
            .into_iter()
            .map(|f| (f.to_owned(), std::fs::read(out.join(f)).unwrap()))
            .collect()
    }

    /// A finished run is refused without `--force` (exit 2, nothing
    /// touched), also in the default `runs/<spec name>`; with `--force` an
    /// agent that cannot start leaves rows, `run.json` and `run.log` as
    /// they were; a good one replaces them.
    #[test]
    fn a_finished_run_is_never_replaced_by_accident() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = simulate(&out, &example_agent(), &["--budget", "6", "--grade"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let before = files(&out);
        assert!(!before["run.log"].is_empty());

        // A typo in the agent's path: refused, nothing changed.
        let typo = "python3 examples/support-desk/agnet.py";
        let o = simulate(&out, typo, &["--budget", "10"]);
        assert_usage_error(
            &o,
            &["holds a finished run", "6 rows", "nothing was changed"],
        );
        assert!(stderr(&o).contains("hint: pass --force"), "{}", stderr(&o));
        assert_eq!(files(&out), before);

        // With --force, an agent binary that is not found starts nothing.
        let o = simulate(
            &out,
            "/no/such/agent-binary",
            &["--budget", "10", "--force"],
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(
            files(&out),
            before,
            "a run that never started replaced nothing"
        );
        assert!(!out.join("run.log.new").exists());

        // --force with an agent that starts replaces the run.
        let o = simulate(&out, &example_agent(), &["--budget", "3", "--force"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(read_rows(&out.join("rows.jsonl")).len(), 3);
        assert_eq!(summary(&out)["counts"]["rows"], 3);
        assert!(!out.join("run.log.new").exists());

        // The rows of a run that did not finish are refused too.
        std::fs::remove_file(out.join("run.json")).unwrap();
        let o = simulate(&out, &example_agent(), &["--budget", "3"]);
        assert_usage_error(&o, &["did not finish", "nothing was changed"]);
        assert!(stderr(&o).contains("--resume"), "{}", stderr(&o));

        // The default directory: a second agent on the same spec is refused.
        let cwd = tempfile::tempdir().unwrap();
        let default = |agent: &str| {
            sparring()
                .arg("simulate")
                .arg(example_spec())
                .args(["--agent", agent, "--budget", "2", "--quiet"])
                .current_dir(cwd.path())
                .output()
                .unwrap()
        };
        let o = default(&example_agent());
        assert!(o.status.success(), "{}", stderr(&o));
        let o = default(&flaky("die", cwd.path()));
        assert_usage_error(&o, &["runs/support-desk", "holds a finished run"]);
    }

    /// A second `simulate` (or a `--resume`) on a directory a run is
    /// writing exits 2 naming the first's pid; once the first is dead
    /// (`kill -9`, its lock file left behind) the lock is taken over.
    #[test]
    fn one_process_per_run_directory() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let slow = format!(
            "python3 {} 0.2",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/agents/slow.py")
                .display()
        );
        let mut first = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &slow,
                "--budget",
                "40",
                "--concurrency",
                "2",
                "--quiet",
                "--out",
            ])
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while std::fs::read_to_string(out.join("rows.jsonl")).map_or(0, |t| t.lines().count()) < 1 {
            assert!(
                started.elapsed().as_secs() < 60,
                "the first run wrote nothing"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let pid = first.id().to_string();
        for extra in [&["--resume"][..], &[][..], &["--force"][..]] {
            let o = simulate(&out, &example_agent(), extra);
            assert_usage_error(
                &o,
                &["is in use by another sparring", &format!("pid {pid}")],
            );
        }
        assert_eq!(
            std::fs::read_to_string(out.join("run.lock"))
                .unwrap()
                .trim(),
            pid
        );
        first.kill().unwrap();
        first.wait().unwrap();
        // The dead run's pid is still in the file; its lock is gone.
        let o = simulate(
            &out,
            &slow,
            &["--budget", "40", "--concurrency", "2", "--resume"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        let ids: BTreeSet<&str> = rows.iter().map(|r| r["row_id"].as_str().unwrap()).collect();
        assert_eq!((rows.len(), ids.len()), (40, 40));
    }

    const FOREIGN: &str = r#"{"messages": [{"role": "system", "content": "Refund only delivered orders."}, {"role": "user", "content": "Refund order #W1004 please."}, {"role": "assistant", "content": "I have refunded order #W1004."}], "tools": [{"type": "function", "function": {"name": "refund_order", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}}]}
{"messages": [{"role": "system", "content": "Refund only delivered orders."}, {"role": "user", "content": "Refund order #W1004 please."}, {"role": "assistant", "content": "I have refunded order #W1004."}], "tools": [{"type": "function", "function": {"name": "refund_order", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}}]}
{"task_id": "mine", "row_id": "r-3", "reward": 1, "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"}]}
"#;

    /// `grade`, `select` and `export` read chat-format lines sparring did
    /// not write: ids derived stably (two identical conversations get two
    /// row ids, the same each time), the rest defaulted and `imported`; a
    /// line that is neither names every missing field at once.
    #[test]
    fn foreign_conversations_are_graded_selected_and_exported() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "chat.jsonl", FOREIGN);
        let o = run(d, &["grade", "chat.jsonl", "-o", "graded.jsonl"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let graded = read_rows(&d.join("graded.jsonl"));
        assert_eq!(graded.len(), 3);
        // The derived ids are sparring's shapes (the third line keeps its own).
        assert_valid_rows(&graded[..2]);
        for r in &graded {
            assert_eq!(r["model_version"], "imported");
            assert_eq!(r["lineage"]["arm"], "imported");
        }
        // Repeats of one ask under one policy are one task; two identical
        // lines still get two rows.
        assert_eq!(graded[0]["task_id"], graded[1]["task_id"]);
        assert_ne!(graded[0]["row_id"], graded[1]["row_id"]);
        assert!(graded[0]["task_id"].as_str().unwrap().starts_with("task_"));
        assert_eq!(
            (graded[2]["task_id"].as_str(), graded[2]["row_id"].as_str()),
            (Some("mine"), Some("r-3"))
        );
        // The claim without a call fails the conduct checks.
        assert_eq!(graded[0]["reward"], 0.0);
        assert_eq!(graded[0]["failure_class"], "claimed_without_call");
        // Stable: graded again, the same ids.
        let o = run(d, &["grade", "chat.jsonl", "-o", "again.jsonl"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let again = read_rows(&d.join("again.jsonl"));
        for (a, b) in graded.iter().zip(&again) {
            assert_eq!((&a["row_id"], &a["task_id"]), (&b["row_id"], &b["task_id"]));
        }
        let o = run(
            d,
            &["select", "chat.jsonl", "-c", "graded", "-o", "kept.jsonl"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            read_rows(&d.join("kept.jsonl")).len(),
            1,
            "only the graded line"
        );
        let o = run(
            d,
            &["export", "chat.jsonl", "-f", "trl-kto", "-o", "kto.jsonl"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let o = run(d, &["report", "chat.jsonl", "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(report["n_tasks"], 2);

        // Unusable lines: every missing field in one error.
        write(d, "bad.jsonl", "{\"conversation\": []}\n");
        let o = run(d, &["grade", "bad.jsonl", "-o", "x.jsonl"]);
        assert_usage_error(
            &o,
            &[
                "line 1",
                "`messages`",
                "`schema_version`",
                "`row_id`",
                "`timings`",
            ],
        );
        write(
            d,
            "partial.jsonl",
            "{\"schema_version\": 1, \"row_id\": \"r\", \"messages\": []}\n",
        );
        let o = run(
            d,
            &["export", "partial.jsonl", "-f", "trl-kto", "-o", "x.jsonl"],
        );
        assert_usage_error(
            &o,
            &[
                "not a sparring row: missing",
                "`task_id`",
                "`tools`",
                "`lineage`",
                "`timings`",
            ],
        );
        assert!(!stderr(&o).contains("`messages`"), "{}", stderr(&o));
    }

    /// A model endpoint nobody serves stops the run like a command agent
    /// that never answers (`agent_unavailable`, exit 1), and its rows,
    /// graded by `--grade`, get reward 0 with the error as the reason.
    #[test]
    fn a_dead_model_agent_stops_early_and_its_rows_fail() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let agent = format!("openai:m@http://127.0.0.1:{port}/v1");
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &agent,
                "--retries",
                "0",
                "--concurrency",
                "1",
                "--grade",
                "--out",
            ])
            .arg(&out)
            .env("OPENAI_API_KEY", "x")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("never replied"), "{}", stderr(&o));
        assert_eq!(summary(&out)["stopped_because"], "agent_unavailable");
        let rows = read_rows(&out.join("rows.jsonl"));
        assert_eq!(rows.len(), 3);
        for r in &rows {
            assert_eq!(r["ended_by"], "backend_error");
            assert_eq!(r["reward"], 0.0, "{r}");
            assert_eq!(r["failure_class"], "backend_error");
            assert!(
                r["reason"].as_str().unwrap().contains("cannot connect"),
                "{r}"
            );
        }
    }

    /// The stop's warning counts every row written (the rollouts in flight
    /// finish after it) and says "never replied" only when none replied.
    #[test]
    fn the_agent_unavailable_warning_counts_right() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("late.py");
        std::fs::write(
            &agent,
            "import json, sys, time\nn = 0\nfor line in sys.stdin:\n    r = json.loads(line)\n    n += 1\n    if n <= 3:\n        print(json.dumps({'id': r['id'], 'error': 'warming up'}), flush=True)\n        continue\n    time.sleep(0.3)\n    print(json.dumps({'id': r['id'], 'message': {'role': 'assistant', 'content': 'All done.'}}), flush=True)\n",
        )
        .unwrap();
        let out = dir.path().join("out");
        let o = simulate(
            &out,
            &format!("python3 {}", agent.display()),
            &["--concurrency", "6", "--budget", "30"],
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let rows = read_rows(&out.join("rows.jsonl"));
        let replied = rows
            .iter()
            .filter(|r| {
                r["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|m| m["role"] == "assistant")
            })
            .count();
        assert!(rows.len() > 3 && replied > 0, "{rows:?}");
        let warning = summary(&out)["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_owned())
            .find(|w| w.starts_with("stopped after"))
            .unwrap();
        assert!(
            warning.starts_with(&format!("stopped after {} rows", rows.len())),
            "{warning}"
        );
        assert!(
            warning.contains(&format!("{replied} of the {} rows", rows.len())),
            "{warning}"
        );
        assert!(!warning.contains("never replied"), "{warning}");
    }

    /// An agent's tool call without an `id` is given one
    /// (docs/agent-protocol.md), not an `agent_error`.
    #[test]
    fn a_tool_call_without_an_id_is_filled_in() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("noid.py");
        std::fs::write(
            &agent,
            "import json, sys\nfor line in sys.stdin:\n    r = json.loads(line)\n    if r['messages'][-1]['role'] == 'tool':\n        m = {'role': 'assistant', 'content': 'Here is what I found.'}\n    else:\n        m = {'role': 'assistant', 'tool_calls': [{'type': 'function', 'function': {'name': 'get_order', 'arguments': '{\"order_id\": \"#W1001\"}'}}]}\n    print(json.dumps({'id': r['id'], 'message': m}), flush=True)\n",
        )
        .unwrap();
        let out = dir.path().join("out");
        let o = simulate(
            &out,
            &format!("python3 {}", agent.display()),
            &["--budget", "3"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        for r in read_rows(&out.join("rows.jsonl")) {
            assert_ne!(r["ended_by"], "agent_error", "{r}");
            let msgs = r["messages"].as_array().unwrap();
            let call = msgs.iter().find(|m| m.get("tool_calls").is_some()).unwrap();
            let id = call["tool_calls"][0]["id"].as_str().unwrap();
            assert!(!id.is_empty());
            assert!(msgs.iter().any(|m| m["tool_call_id"] == id));
        }
    }

    fn other_spec(dir: &Path) -> PathBuf {
        let text = std::fs::read_to_string(example_spec())
            .unwrap()
            .replace("name: support-desk", "name: other-desk")
            .replace(
                "{file: policy.md}",
                &format!(
                    "{{file: {}}}",
                    workspace()
                        .join("examples/support-desk/policy.md")
                        .display()
                ),
            );
        write(dir, "other.yaml", &text)
    }

    /// `--tasks` from a run of another spec is refused, naming both; a
    /// pinned re-run comes back at the pinned run's resolved k.
    #[test]
    fn pinned_tasks_belong_to_their_spec_and_keep_their_k() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("base");
        let o = simulate(
            &base,
            &example_agent(),
            &[
                "--mode",
                "rl",
                "--repeats",
                "4",
                "--situations",
                "4",
                "--grade",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let k_base = summary(&base)["options"]["repeats"].clone();
        assert_eq!(k_base, 4);
        let o = sparring()
            .arg("simulate")
            .arg(other_spec(dir.path()))
            .args(["--agent", &example_agent(), "--quiet", "--tasks"])
            .arg(&base)
            .arg("--out")
            .arg(dir.path().join("other"))
            .output()
            .unwrap();
        assert_usage_error(
            &o,
            &["--tasks", "spec `support-desk`", "spec is `other-desk`"],
        );
        let again = dir.path().join("again");
        let o = simulate(
            &again,
            &example_agent(),
            &["--mode", "rl", "--grade", "--tasks", base.to_str().unwrap()],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(summary(&again)["options"]["repeats"], 4);
        assert_eq!(summary(&again)["search"]["pinned"]["repeats"], 4);
    }

    /// Seeds go first with all their repeats: a budget of seeds × k rows
    /// is all seeds; `seeds_dropped` lists only seeds with no row.
    #[test]
    fn seeds_take_the_budget_first_and_dropped_means_not_run() {
        let dir = tempfile::tempdir().unwrap();
        for (budget, seed_rows, dropped) in [
            ("4", vec![2, 2], 0),
            ("3", vec![2, 1], 0),
            ("1", vec![1], 1),
        ] {
            let out = dir.path().join(format!("b{budget}"));
            let o = simulate(
                &out,
                &example_agent(),
                &["--repeats", "2", "--budget", budget],
            );
            assert!(o.status.success(), "{}", stderr(&o));
            let rows = read_rows(&out.join("rows.jsonl"));
            let mut per_seed: BTreeMap<u64, usize> = BTreeMap::new();
            for r in &rows {
                assert_eq!(
                    r["situation"]["tier"], "seed",
                    "budget {budget}: a non-seed row"
                );
                *per_seed
                    .entry(r["situation"]["seed_index"].as_u64().unwrap())
                    .or_default() += 1;
            }
            assert_eq!(
                per_seed.into_values().collect::<Vec<_>>(),
                seed_rows,
                "budget {budget}"
            );
            let s = summary(&out);
            assert_eq!(
                s["search"]["seeds_dropped"].as_array().unwrap().len(),
                dropped,
                "budget {budget}: {s}"
            );
            let warned = s["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w.as_str().unwrap().contains("cannot pay for every seed"));
            assert_eq!(warned, budget != "4", "budget {budget}: {s}");
        }
    }

    /// `asks --n N` shows N situations, past the covering array when N
    /// asks for more; `--situations` is its long name.
    #[test]
    fn asks_shows_as_many_situations_as_asked() {
        for (flag, n) in [("--n", 300), ("--situations", 3)] {
            let o = sparring()
                .arg("asks")
                .arg(example_spec())
                .args([flag, &n.to_string(), "--json"])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
            let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(lines.len(), n, "{flag} {n}");
        }
    }

    /// `report` shows the run's warnings and degraded flags before any
    /// number, and an ungraded run says what to run.
    #[test]
    fn report_puts_warnings_first_and_names_an_ungraded_run() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = simulate(&out, &example_agent(), &["--repeats", "2", "--budget", "3"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = run(dir.path(), &["report", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        let first = text.lines().next().unwrap();
        assert!(
            first.starts_with("warning: budget 3 cannot pay for every seed"),
            "{text}"
        );
        assert!(
            text.contains("no row is graded: run `sparring grade` or `simulate --grade`"),
            "{text}"
        );
        assert!(!text.contains("--repeats"), "{text}");
        assert!(!text.contains("pass@k"), "{text}");
        let o = run(dir.path(), &["report", out.to_str().unwrap(), "--json"]);
        let json: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(json["warnings"][0].as_str().unwrap().contains("cannot pay"));
    }

    /// A single format or a cut that keeps nothing writes no file and says
    /// so (an earlier file stays); the DPO report counts tasks with one
    /// row.
    #[test]
    fn an_empty_cut_writes_nothing_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // Ungraded foreign rows: every cut keeps nothing.
        let ungraded: String = FOREIGN.lines().take(2).map(|l| format!("{l}\n")).collect();
        write(d, "ungraded.jsonl", &ungraded);
        write(d, "chat.jsonl", FOREIGN);
        write(d, "old.jsonl", "keep me\n");
        let o = run(
            d,
            &[
                "export",
                "ungraded.jsonl",
                "-f",
                "openai-sft",
                "-o",
                "old.jsonl",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("warning: the sft cut kept nothing, so no file was written"),
            "{}",
            stderr(&o)
        );
        assert_eq!(
            std::fs::read_to_string(d.join("old.jsonl")).unwrap(),
            "keep me\n"
        );
        assert!(!d.join("old.jsonl.index.jsonl").exists());
        assert!(!d.join("old.jsonl.partial").exists());
        let o = run(
            d,
            &["select", "ungraded.jsonl", "-c", "sft", "-o", "sel.jsonl"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("warning: the sft cut kept nothing"),
            "{}",
            stderr(&o)
        );
        assert!(!d.join("sel.jsonl").exists());
        // DPO over graded rows, one task with a single row.
        let o = run(d, &["grade", "chat.jsonl", "-o", "graded.jsonl"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = run(
            d,
            &[
                "select",
                "graded.jsonl",
                "-c",
                "dpo",
                "-o",
                "dpo.jsonl",
                "--json",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let j: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["cut"]["excluded"]["single_row_task"]["count"], 1, "{j}");
    }

    fn strict_judge() -> String {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/judge.py");
        format!(
            "command:sh -c 'echo judge-stderr-line >&2; exec python3 {} strict'",
            script.display()
        )
    }

    /// `--combine all` makes every stage count; the default (the last stage
    /// decides) counts the rows it overturned, in `grade`'s summary and in
    /// `report`. The stderr of a command judge and grader is shown.
    #[test]
    fn combine_all_and_overturned_verdicts_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "chat.jsonl", FOREIGN);
        let grader = dir.path().join("pass.py");
        std::fs::write(
            &grader,
            "import json, sys\nprint('grader-stderr-line', file=sys.stderr, flush=True)\nfor line in sys.stdin:\n    r = json.loads(line)\n    print(json.dumps({'id': r['id'], 'reward': 1.0, 'reason': 'lenient'}), flush=True)\n",
        )
        .unwrap();
        let grader = format!("python3 {}", grader.display());
        let o = run(
            d,
            &[
                "grade",
                "chat.jsonl",
                "--grader",
                &grader,
                "-o",
                "last.jsonl",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("warning: 2 rows passed although an earlier stage failed them"),
            "{}",
            stderr(&o)
        );
        assert!(stderr(&o).contains("grader-stderr-line"), "{}", stderr(&o));
        let last = read_rows(&d.join("last.jsonl"));
        assert_eq!(last[0]["reward"], 1.0);
        let o = run(d, &["report", "last.jsonl", "--json"]);
        let j: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["n_overturned"], 2);
        let o = run(d, &["report", "last.jsonl"]);
        assert!(String::from_utf8_lossy(&o.stdout).contains("overturned: 2 passing rows"));

        let o = run(
            d,
            &[
                "grade",
                "chat.jsonl",
                "--grader",
                &grader,
                "--combine",
                "all",
                "-o",
                "all.jsonl",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            !stderr(&o).contains("earlier stage failed"),
            "{}",
            stderr(&o)
        );
        let all = read_rows(&d.join("all.jsonl"));
        assert_eq!(all[0]["reward"], 0.0);
        assert_eq!(all[0]["failure_class"], "claimed_without_call");
        assert_ne!(
            all[0]["lineage"]["scoring_run_id"],
            last[0]["lineage"]["scoring_run_id"]
        );
        let o = run(
            d,
            &["grade", "chat.jsonl", "--combine", "some", "-o", "x.jsonl"],
        );
        assert_usage_error(&o, &["--combine `some`", "`last` or `all`"]);

        std::fs::write(d.join("rubric.txt"), "Pass when the agent helps.").unwrap();
        let o = run(
            d,
            &[
                "grade",
                "chat.jsonl",
                "--judge",
                &strict_judge(),
                "--rubric",
                "rubric.txt",
                "-o",
                "j.jsonl",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("judge-stderr-line"), "{}", stderr(&o));
    }

    /// One labels format for `labels attach` and `judge-agreement`, and
    /// `judge-agreement` reads the gold `labels attach` put on the rows.
    #[test]
    fn one_labels_format_and_gold_from_the_rows() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "chat.jsonl", FOREIGN);
        let o = run(d, &["grade", "chat.jsonl", "-o", "graded.jsonl"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_rows(&d.join("graded.jsonl"));
        let id = |i: usize| rows[i]["row_id"].as_str().unwrap().to_owned();
        let labels = format!(
            "{{\"row_id\": \"{}\", \"label\": \"fail\", \"author\": \"ana\"}}\n{{\"row_id\": \"{}\", \"label\": true, \"author\": \"ana\"}}\n{{\"row_id\": \"r-3\", \"label\": 1, \"author\": \"bo\"}}\n",
            id(0),
            id(1)
        );
        write(d, "labels.jsonl", &labels);
        // The file judge-agreement reads, attached as it is.
        let o = run(
            d,
            &[
                "labels",
                "attach",
                "graded.jsonl",
                "labels.jsonl",
                "--kind",
                "human",
                "-o",
                "labelled.jsonl",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let labelled = read_rows(&d.join("labelled.jsonl"));
        assert_eq!(labelled[0]["gold_reward"], 0.0);
        assert_eq!(labelled[2]["gold_author"], "bo");
        let from_file = run(
            d,
            &[
                "judge-agreement",
                "graded.jsonl",
                "--labels",
                "labels.jsonl",
                "--json",
            ],
        );
        assert!(from_file.status.success(), "{}", stderr(&from_file));
        let from_rows = run(d, &["judge-agreement", "labelled.jsonl", "--json"]);
        assert!(from_rows.status.success(), "{}", stderr(&from_rows));
        let a: Value = serde_json::from_slice(&from_file.stdout).unwrap();
        let b: Value = serde_json::from_slice(&from_rows.stdout).unwrap();
        assert_eq!(a, b);
        assert_eq!(a["n"], 3);
        // The old attach format still reads; a label with no author needs --author.
        write(
            d,
            "old.jsonl",
            &format!("{{\"row_id\": \"{}\", \"reward\": 1}}\n", id(0)),
        );
        let o = run(
            d,
            &[
                "labels",
                "attach",
                "graded.jsonl",
                "old.jsonl",
                "--kind",
                "human",
                "-o",
                "x.jsonl",
            ],
        );
        assert_usage_error(&o, &["old.jsonl", "no `author`", "--author"]);
        let o = run(
            d,
            &[
                "labels",
                "attach",
                "graded.jsonl",
                "old.jsonl",
                "--kind",
                "human",
                "--author",
                "cy",
                "-o",
                "x.jsonl",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let o = run(d, &["judge-agreement", "graded.jsonl"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("labels attach"), "{}", stderr(&o));
    }

    /// Help says each default once and truly; `--n` means situations only.
    #[test]
    fn help_says_each_default_once() {
        for command in [
            "simulate",
            "report",
            "delta",
            "judge-agreement",
            "hack-scan",
            "eval-variance",
            "grid",
            "coverage-gap",
            "asks",
            "grade",
            "judge-trust",
            "world",
            "select",
            "export",
        ] {
            let o = sparring().args([command, "--help"]).output().unwrap();
            let text = String::from_utf8_lossy(&o.stdout).replace('\n', " ");
            let words: Vec<&str> = text.split_whitespace().collect();
            let joined = words.join(" ");
            assert!(
                !joined.contains("] [default:"),
                "`{command} --help` says a default twice: {joined}"
            );
        }
        let o = sparring().args(["simulate", "--help"]).output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let effort = text.split("--grid-effort").nth(1).unwrap();
        assert!(
            effort.split("--").next().unwrap().contains(&format!(
                "[default: {}]",
                sparring::types::defaults::GRID_EFFORT
            )),
            "{effort}"
        );
        let o = sparring()
            .args(["simulate", "x.yaml", "--n", "3"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
    }

    /// `| head` closes the pipe early: quiet, exit 0, no panic.
    #[test]
    fn a_closed_pipe_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = simulate(&out, &example_agent(), &["--budget", "4", "--grade"]);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::write(dir.path().join("rubric.txt"), "Pass when the agent helps.").unwrap();
        let judge = format!(
            "command:python3 {} strict",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/agents/judge.py")
                .display()
        );
        let out_s = out.display().to_string();
        let spec = example_spec().display().to_string();
        let rubric = dir.path().join("rubric.txt").display().to_string();
        for args in [
            vec!["world", spec.as_str(), "--explain"],
            vec![
                "judge-trust",
                out_s.as_str(),
                "--judge",
                judge.as_str(),
                "--rubric",
                rubric.as_str(),
                "--json",
            ],
            vec!["report", out_s.as_str()],
            vec!["asks", spec.as_str(), "--n", "40"],
        ] {
            let mut child = sparring()
                .args(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            drop(child.stdout.take());
            let o = child.wait_with_output().unwrap();
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
            assert!(
                !err.contains("panicked") && !err.contains("Broken pipe"),
                "{args:?}: {err}"
            );
        }
    }

    /// "an order", not "a order".
    #[test]
    fn an_order_not_a_order() {
        let mut child = sparring()
            .arg("world")
            .arg(example_spec())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write as _;
            let mut stdin = child.stdin.take().unwrap();
            stdin
                .write_all(b"{\"tool\": \"get_order\", \"arguments\": {\"order_id\": \"12\"}}\n")
                .unwrap();
        }
        let o = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("does not look like an order id"), "{text}");
        assert!(!text.contains("a order"), "{text}");
    }

    /// Grading a run's rows in place keeps `run.json` true; a resumed run
    /// says how many rows it ran and kept; a run that ends before its first
    /// rollout exits 0.
    #[test]
    fn grade_in_place_resume_counts_and_a_tiny_time_budget() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = simulate(&out, &example_agent(), &["--budget", "5"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(summary(&out)["counts"]["graded"], 0);
        let rows = out.join("rows.jsonl");
        let o = run(
            dir.path(),
            &["grade", out.to_str().unwrap(), "-o", rows.to_str().unwrap()],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("updated the counts"), "{}", stderr(&o));
        assert_eq!(summary(&out)["counts"]["graded"], 5);
        assert_eq!(read_rows(&rows).len(), 5);

        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &example_agent(),
                "--budget",
                "9",
                "--resume",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "another budget is another run: {}",
            stderr(&o)
        );
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &example_agent(),
                "--budget",
                "5",
                "--force",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let kept: Vec<String> = std::fs::read_to_string(&rows)
            .unwrap()
            .lines()
            .take(2)
            .map(str::to_owned)
            .collect();
        std::fs::write(&rows, format!("{}\n", kept.join("\n"))).unwrap();
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &example_agent(),
                "--budget",
                "5",
                "--resume",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o)
                .contains("simulated 3 rows (and kept 2 of the earlier attempt: 5 in the file)"),
            "{}",
            stderr(&o)
        );

        let tiny = dir.path().join("tiny");
        let o = sparring()
            .arg("simulate")
            .arg(example_spec())
            .args([
                "--agent",
                &example_agent(),
                "--time-budget",
                "0.001",
                "--out",
            ])
            .arg(&tiny)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!stderr(&o).contains("error"), "{}", stderr(&o));
        assert_eq!(summary(&tiny)["stopped_because"], "time_budget");
    }
}
