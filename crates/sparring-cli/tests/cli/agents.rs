//! Command agents that misbehave: crashes, garbage, hangs; only the affected row fails.

use super::*;

fn run_flaky(mode: &str) -> (Vec<Value>, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = simulate_cmd(example_spec(), &flaky(mode, dir.path()), &out)
        .args(["--budget", "8", "--concurrency", "1", "--grade"])
        .run();
    assert!(o.status.success(), "{mode}: {}", stderr(&o));
    let rows = valid_rows(&out);
    let summary = run_json(&out);
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
    // The other rows are graded as any row: clean conduct (the flaky
    // agent's replies do nothing, so their goals may be unmet).
    assert!(
        rows.iter()
            .filter(|r| r["ended_by"] != "agent_error")
            .all(|r| r["reward"].is_number()
                && (r["failure_class"].is_null() || r["failure_class"] == "goal_not_met"))
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
    assert!(log.contains("start 2"), "the agent was restarted: {log}");
}

#[test]
fn non_json_line() {
    let (rows, _, log) = run_flaky("nonjson");
    no_error_row(&rows, &log, "not JSON");
}

#[test]
fn unknown_id() {
    let (rows, _, log) = run_flaky("unknown-id");
    no_error_row(&rows, &log, "unknown id `nobody-asked`");
}

#[test]
fn dies_mid_run() {
    let (rows, summary, log) = run_flaky("die");
    no_error_row(&rows, &log, "exited");
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
    let script = agent_script("shuffle.py");
    simulate_cmd(
        example_spec(),
        &format!("python3 {}", script.display()),
        &out,
    )
    .args(["--repeats", "4", "--concurrency", "16"])
    .run_ok();
    let rows = valid_rows(&out);
    assert!(rows.len() > 100, "{}", rows.len());
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
    let o = simulate_cmd(example_spec(), "python3 -c 'import sys; sys.exit(1)'", &out)
        .args(["--concurrency", "1"])
        .run();
    assert_exit(&o, 1);
    assert_stderr_has(&o, "never replied");
    let rows = valid_rows(&out);
    assert_eq!(rows.len(), 3);
    let summary = run_json(&out);
    assert_eq!(summary["stopped_because"], "agent_unavailable");
}
