//! The `sparring` binary end to end: bad input, the example run, misbehaving
//! agents, reports.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

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
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
        assert_usage_error(&o, &["s.yaml", "line ", "column ", "invalid YAML"]);
    }

    #[test]
    fn invalid_json_and_toml_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "s.json", "{\n  \"name\": \"x\",\n  oops\n}");
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
        assert_usage_error(&o, &["s.json", "line 3"]);
        let p = write(dir.path(), "s.toml", "name = \"x\"\nsystem_prompt = \n");
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
        assert_usage_error(&o, &["s.toml", "line 2"]);
    }

    #[test]
    fn tool_without_a_name() {
        let dir = tempfile::tempdir().unwrap();
        let tools = format!(
            r#"[{TOOL}, {{"type": "function", "function": {{"parameters": {{"type": "object"}}}}}}]"#
        );
        let p = write(dir.path(), "s.json", &spec_with_tools(&tools));
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
        assert_usage_error(
            &o,
            &["s.json", "`/tools/1/function/name`", "needs a `name`"],
        );
        let p = write(
            dir.path(),
            "m.yaml",
            "name: t\nsystem_prompt: p\ntools:\n  - description: no name\n    inputSchema: {type: object}\n",
        );
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
        assert_usage_error(&o, &["m.yaml", "`/tools/0/name`"]);
    }

    #[test]
    fn parameters_must_be_an_object_schema() {
        let dir = tempfile::tempdir().unwrap();
        let tools = r#"[{"type": "function", "function": {"name": "a", "parameters": {"type": "string"}}}]"#;
        let p = write(dir.path(), "s.json", &spec_with_tools(tools));
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
        assert_usage_error(
            &o,
            &["`/tools/0/function/parameters/type`", "object schema"],
        );
        let tools = r#"[{"type": "function", "function": {"name": "a", "parameters": [1]}}]"#;
        let p = write(dir.path(), "s.json", &spec_with_tools(tools));
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
        assert_usage_error(&o, &["`/tools/0/function/parameters`", "must be an object"]);
    }

    #[test]
    fn two_tools_with_one_name() {
        let dir = tempfile::tempdir().unwrap();
        let tools =
            format!(r#"[{TOOL}, {{"name": "get_order", "inputSchema": {{"type": "object"}}}}]"#);
        let p = write(dir.path(), "s.json", &spec_with_tools(&tools));
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
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
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
        assert_usage_error(
            &o,
            &["`/seed`", "unknown key `seed`", "did you mean `seeds`"],
        );
        let p = write(
            dir.path(),
            "s.yaml",
            &format!("name: t\nsystem_prompt: p\ntools: [{TOOL}]\noptions: {{budgte: 3}}\n"),
        );
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
        assert_usage_error(&o, &["`/options/budgte`", "did you mean `budget`"]);
        let tools =
            r#"[{"type": "function", "function": {"name": "a", "paramters": {"type": "object"}}}]"#;
        let p = write(dir.path(), "s.json", &spec_with_tools(tools));
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
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
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
        assert_usage_error(&o, &["tools.json", "`/1/name`"]);
        let p = write(
            dir.path(),
            "s2.yaml",
            "name: t\nsystem_prompt: {file: nope.md}\ntools: {file: tools.json}\n",
        );
        let o = sparring()
            .arg("simulate")
            .arg(&p)
            .args(["--agent", "true"])
            .output()
            .unwrap();
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
