//! The `sparring` binary end to end: bad input, the example run, misbehaving
//! agents, reports.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::float_cmp
)]

#[path = "../common/mod.rs"]
mod common;

use common::{
    Run, agent_script, assert_exit, assert_stderr_has, entry, example_agent, example_spec,
    json_lines, read_rows, run_json, simulate_cmd, sparring, stderr, stdout_json, strs, texts,
    warning, warns, workspace,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `sparring simulate` of the example spec with its shipped agent into `out`,
/// with `args`.
fn simulate_example(out: impl AsRef<Path>, args: &[&str]) -> Command {
    let mut c = simulate_cmd(example_spec(), &example_agent(), out);
    c.args(args);
    c
}

fn flaky(mode: &str, dir: &Path) -> String {
    format!(
        "python3 {} {mode} {}",
        agent_script("flaky.py").display(),
        dir.join("marker").display()
    )
}

/// Runs `sparring` with `args`, which must succeed, and parses its stdout.
fn json_out(args: &[&std::ffi::OsStr]) -> Value {
    stdout_json(&sparring().args(args).run_ok())
}

/// `sparring grade ROWS -o OUT`, for the caller to add arguments to and
/// run.
fn grade_cmd(rows: &Path, out: &Path) -> Command {
    let mut c = sparring();
    c.arg("grade").arg(rows).arg("-o").arg(out);
    c
}

/// `sparring judge-trust ROWS --judge JUDGE --rubric RUBRIC --probe-rows N
/// --json`, for the caller to run.
fn judge_trust_cmd(rows: &Path, judge: &str, rubric: &Path, probe_rows: &str) -> Command {
    let mut c = sparring();
    c.arg("judge-trust")
        .arg(rows)
        .args(["--judge", judge, "--rubric"])
        .arg(rubric)
        .args(["--probe-rows", probe_rows, "--json"]);
    c
}

/// `sparring COMMAND FILE`, whatever its exit code.
fn sparring_on(command: &str, file: &Path) -> Output {
    sparring().arg(command).arg(file).run()
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
    simulate_spec_with(spec, &[])
}

/// `sparring simulate SPEC --agent true ARGS`: for options that must fail
/// before the agent matters.
fn simulate_spec_with(spec: &Path, args: &[&str]) -> Output {
    sparring()
        .arg("simulate")
        .arg(spec)
        .args(["--agent", "true"])
        .args(args)
        .run()
}

/// `c` must fail as bad input naming each of `needles`, before it writes
/// anything into `out`.
fn assert_refused_before_writing(c: &mut Command, out: &Path, needles: &[&str]) {
    assert_usage_error(&c.run(), needles);
    let args: Vec<_> = c.get_args().collect();
    assert!(!out.exists(), "{args:?} wrote files");
}

/// The spec at `spec` must be refused as bad input naming each of
/// `needles`, by each of `commands` and by `simulate`.
fn assert_spec_refused_by(spec: &Path, commands: &[&str], needles: &[&str]) {
    for command in commands {
        assert_usage_error(&sparring_on(command, spec), needles);
    }
    assert_usage_error(&simulate_spec(spec), needles);
}

/// A spec written as `name` in `dir` with `text`, which `sparring
/// simulate` must refuse as bad input naming each of `needles`.
fn assert_spec_refused(dir: &Path, name: &str, text: &str, needles: &[&str]) {
    let spec = write(dir, name, text);
    assert_usage_error(&simulate_spec(&spec), needles);
}

/// A judge's rubric, `rubric.txt` in `dir`.
fn rubric(dir: &Path) -> PathBuf {
    write(
        dir,
        "rubric.txt",
        "Pass when the agent did what was asked.\n",
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The example spec with an `axes` block added.
fn spec_with_axes(dir: &Path, axes: &str) -> PathBuf {
    spec_with(dir, &format!("axes:\n{axes}"))
}

/// The example spec's text with its policy file named by its full path, so
/// that a copy elsewhere reads the same policy.
fn example_spec_text() -> String {
    std::fs::read_to_string(example_spec()).unwrap().replace(
        "{file: policy.md}",
        &format!(
            "{{file: {}}}",
            workspace()
                .join("examples/support-desk/policy.md")
                .display()
        ),
    )
}

/// The example spec with a block of YAML added at the top level.
fn spec_with(dir: &Path, block: &str) -> PathBuf {
    let text = example_spec_text();
    write(dir, "spec.yaml", &format!("{text}\n{block}\n"))
}

fn row_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace().join("docs/row.schema.json")).unwrap(),
    )
    .unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// The rows a run wrote into `out`, each checked against
/// docs/row.schema.json.
fn valid_rows(out: &Path) -> Vec<Value> {
    let rows = read_rows(&out.join("rows.jsonl"));
    assert_valid_rows(&rows);
    rows
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

/// A JSON spec `s.json` in `dir` with these `tools`, which `sparring
/// simulate` must refuse as bad input naming each of `needles`.
fn assert_tools_refused(dir: &Path, tools: &str, needles: &[&str]) {
    let spec = format!(r#"{{"name": "t", "system_prompt": "p", "tools": {tools}}}"#);
    assert_spec_refused(dir, "s.json", &spec, needles);
}

/// A YAML spec of the one tool `TOOL`, with `rest` after it.
fn one_tool_spec(rest: &str) -> String {
    format!("name: t\nsystem_prompt: p\ntools: [{TOOL}]\n{rest}")
}

#[test]
fn world_answers_lines_with_shared_memory_and_explains() {
    let spec = example_spec();
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
    let out = sparring()
        .args(["world", spec.to_str().unwrap(), "--seed", "3"])
        .run_with_stdin(&input);
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
        .run();
    assert!(explain.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&explain.stdout).unwrap();
    assert_eq!(doc["entities"]["orders"]["records"]["from"], "fixtures");
    let cancel = entry(&doc["tools"], "name", "cancel_order");
    assert_eq!(cancel["operation"]["kind"], "state_change");
    assert_eq!(cancel["id_param"], "order_id");
    let bad = sparring().args(["world", "nope.yaml"]).run();
    assert_eq!(bad.status.code(), Some(2));
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

mod agents;
mod bank;
mod calibrate;
mod docs;
mod evaluate;
mod example;
mod execute;
mod grading;
mod grid;
mod models;
mod new_user;
mod policy;
mod report;
mod resume;
mod robustness;
mod runs;
mod score;
mod spec_errors;
