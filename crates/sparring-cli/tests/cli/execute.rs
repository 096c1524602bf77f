//! The caller's world (`--execute`): a command world and an HTTP world.

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

/// The first user message's words: the prompt a world sees with each call.
fn first_ask(row: &Value) -> Value {
    row["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .clone()
}

fn simulate(spec: &Path, world: &str, out: &Path, budget: &str) -> Output {
    simulate_cmd(spec, &example_agent(), out)
        .args(["--execute", world, "--budget", budget])
        .run()
}

#[test]
fn a_command_world_answers_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let world = format!("python3 {}", agent_script("world.py").display());
    let o = simulate(&example_spec(), &world, &out, "10");
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = valid_rows(&out);
    assert_eq!(rows.len(), 10);
    let mut answered = 0;
    for row in &rows {
        let prompt = first_ask(row);
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
    let run = run_json(&out);
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
    let rows = valid_rows(&out);
    assert_eq!(rows.len(), 12);
    let sent = fake.requests();
    assert!(!sent.is_empty());
    let mut faulted = 0;
    for row in &rows {
        let prompt = first_ask(row);
        // A fault on tool `none` hits the first call of any tool (`fired_on`).
        let target = row["situation"]["faults"]
            .get(0)
            .and_then(|f| f["fired_on"].as_str())
            .unwrap_or_else(|| row["situation"]["axes"]["tool"].as_str().unwrap());
        let calls = calls(row);
        let mut first_target = true;
        for (tool, answer) in &calls {
            // A fault on tool `none` fires on the first call of any tool.
            if (tool == target || target == "none") && first_target {
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
    let port = sparring_testkit::closed_port();
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
