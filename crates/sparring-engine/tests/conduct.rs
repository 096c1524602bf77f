//! The conduct checks against a labelled corpus of hand-written
//! conversations (`tests/conduct/corpus.jsonl`) in five domains: the
//! support desk of `examples/support-desk`, the retail, airline and
//! telecom domains of tau2-bench (tool names as there; policies and
//! conversations written for this corpus) and a bank whose policy has a
//! rule of every checkable class. Each conversation lists the checks
//! that must fail on it; the rest must not. The test prints precision and
//! recall of every check and requires both to be at least 0.95.
//!
//! Conversations come in two shapes: `turns`, a compact list
//! (`["user", text]`, `["agent", text]`, `["call", tool, args]`,
//! `["result", value]`) expanded here into chat messages, and `messages`,
//! plain chat-format messages as an imported trace would have them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::float_cmp
)]

use serde_json::{Value, json};
use sparring_engine::grade::{CHECKS, conduct, markers};
use sparring_types::{FunctionCall, Message, Role, ToolCall};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conduct")
}

use sparring_testkit::workspace;

struct Case {
    id: String,
    fail: Vec<String>,
    messages: Vec<Message>,
    tools: Vec<Value>,
}

fn expand(turns: &[Value]) -> Vec<Message> {
    let mut out = Vec::new();
    let mut last_call: Option<ToolCall> = None;
    for (n, turn) in turns.iter().enumerate() {
        let kind = turn[0].as_str().unwrap();
        match kind {
            "user" => out.push(Message::text(Role::User, turn[1].as_str().unwrap())),
            "agent" => out.push(Message::text(Role::Assistant, turn[1].as_str().unwrap())),
            "call" => {
                let call = ToolCall {
                    id: format!("call_{n}"),
                    kind: "function".to_owned(),
                    function: FunctionCall {
                        name: turn[1].as_str().unwrap().to_owned(),
                        arguments: turn[2].to_string(),
                    },
                };
                let mut m = Message::text(Role::Assistant, "");
                m.content = None;
                m.tool_calls = vec![call.clone()];
                out.push(m);
                last_call = Some(call);
            }
            "result" => {
                let call = last_call.take().expect("a result answers a call");
                let content = match &turn[1] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                out.push(Message::tool_result(&call, content));
            }
            other => panic!("unknown turn kind {other}"),
        }
    }
    out
}

fn load() -> Vec<Case> {
    let domains: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("domains.json")).unwrap())
            .unwrap();
    let text = std::fs::read_to_string(dir().join("corpus.jsonl")).unwrap();
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("corpus line {}: {e}", i + 1));
        let domain = &domains[v["domain"].as_str().unwrap()];
        let policy = match domain.get("policy_file").and_then(Value::as_str) {
            Some(file) => std::fs::read_to_string(workspace().join(file)).unwrap(),
            None => domain["policy"].as_str().unwrap().to_owned(),
        };
        let tools: Vec<Value> = domain["tools"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(name, params)| {
                // Parameters: a list of names (strings), or name → JSON type.
                let props: serde_json::Map<String, Value> = match params {
                    Value::Object(typed) => typed
                        .iter()
                        .map(|(p, t)| (p.clone(), json!({"type": t})))
                        .collect(),
                    _ => params
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| (p.as_str().unwrap().to_owned(), json!({"type": "string"})))
                        .collect(),
                };
                json!({"type": "function", "function": {"name": name, "description": "",
                    "parameters": {"type": "object", "properties": props}}})
            })
            .collect();
        let mut messages = vec![Message::text(Role::System, policy)];
        if let Some(turns) = v.get("turns") {
            messages.extend(expand(turns.as_array().unwrap()));
        } else {
            let raw: Vec<Message> = serde_json::from_value(v["messages"].clone())
                .unwrap_or_else(|e| panic!("corpus line {}: messages: {e}", i + 1));
            messages.extend(raw);
        }
        let fail: Vec<String> = v["fail"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_owned())
            .collect();
        for f in &fail {
            assert!(
                CHECKS.contains(&f.as_str()),
                "line {}: unknown check {f}",
                i + 1
            );
        }
        cases.push(Case {
            id: v["id"].as_str().unwrap().to_owned(),
            fail,
            messages,
            tools,
        });
    }
    cases
}

#[derive(Default)]
struct Tally {
    tp: u32,
    fp: u32,
    fn_: u32,
    tn: u32,
}

#[test]
fn precision_and_recall_of_every_check_on_the_corpus() {
    let cases = load();
    assert!(cases.len() >= 110, "{} conversations", cases.len());
    let mut tallies: BTreeMap<&str, Tally> =
        CHECKS.iter().map(|c| (*c, Tally::default())).collect();
    let mut mistakes = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    for case in &cases {
        assert!(ids.insert(case.id.clone()), "duplicate id {}", case.id);
        let verdict = conduct(&case.messages, &case.tools);
        for check in CHECKS {
            let expected = case.fail.iter().any(|f| f == check);
            let failed = verdict.checks.get(*check) == Some(&false);
            let t = tallies.get_mut(check).unwrap();
            match (expected, failed) {
                (true, true) => t.tp += 1,
                (false, true) => {
                    t.fp += 1;
                    mistakes.push(format!(
                        "{}: {check} failed unexpectedly: {}",
                        case.id, verdict.reason
                    ));
                }
                (true, false) => {
                    t.fn_ += 1;
                    mistakes.push(format!(
                        "{}: {check} should fail: {}",
                        case.id, verdict.reason
                    ));
                }
                (false, false) => t.tn += 1,
            }
        }
        // The verdict's shape: reward 1 iff nothing failed, the first failed
        // check is the class, and the reason quotes a message index.
        let any_failed = verdict.checks.values().any(|p| !p);
        assert_eq!(
            verdict.reward,
            if any_failed { 0.0 } else { 1.0 },
            "{}",
            case.id
        );
        if any_failed {
            let first = CHECKS
                .iter()
                .find(|c| verdict.checks.get(**c) == Some(&false))
                .unwrap();
            assert_eq!(
                verdict.failure_class.as_deref(),
                Some(*first),
                "{}",
                case.id
            );
            assert!(
                verdict.reason.contains("message "),
                "{}: {}",
                case.id,
                verdict.reason
            );
        }
    }
    println!("\nconduct checks on {} labelled conversations", cases.len());
    println!(
        "{:<28} {:>4} {:>4} {:>4} {:>4} {:>10} {:>8}",
        "check", "tp", "fp", "fn", "tn", "precision", "recall"
    );
    let mut low = Vec::new();
    for (check, t) in &tallies {
        let precision = f64::from(t.tp) / f64::from((t.tp + t.fp).max(1));
        let recall = f64::from(t.tp) / f64::from((t.tp + t.fn_).max(1));
        println!(
            "{check:<28} {:>4} {:>4} {:>4} {:>4} {precision:>10.3} {recall:>8.3}",
            t.tp, t.fp, t.fn_, t.tn
        );
        if t.tp < 5 {
            low.push(format!(
                "{check}: only {} failing examples in the corpus",
                t.tp
            ));
        }
        if t.tn < 20 {
            low.push(format!(
                "{check}: only {} passing examples in the corpus",
                t.tn
            ));
        }
        if precision < 0.95 || recall < 0.95 {
            low.push(format!(
                "{check}: precision {precision:.3}, recall {recall:.3}"
            ));
        }
    }
    for m in &mistakes {
        println!("  {m}");
    }
    assert!(
        low.is_empty(),
        "below 0.95: {low:?}\n{}",
        mistakes.join("\n")
    );
}

#[test]
fn markers_on_corpus_conversations() {
    let cases = load();
    let by_id = |id: &str| cases.iter().find(|c| c.id == id).unwrap();
    // sd-27: one mistyped id of five id arguments; one failed lookup, then
    // the same tool succeeded; two questions asked.
    let m = markers(&by_id("sd-27").messages);
    assert_eq!(m["tool_calls"], 3.0);
    assert!((m["argument_grounding"] - 2.0 / 3.0).abs() < 1e-9, "{m:?}");
    assert!((m["tool_error_recovery"] - 1.0).abs() < 1e-9, "{m:?}");
    assert_eq!(m["questions_asked"], 2.0);
    assert_eq!(m["turns"], 3.0);
    // sd-13: three failed calls, none recovered; no id-less marker missing.
    let m = markers(&by_id("sd-13").messages);
    assert_eq!(m["tool_error_recovery"], 0.0);
    assert_eq!(m["argument_grounding"], 1.0);
    // sd-02: no calls, so no grounding or recovery marker at all.
    let m = markers(&by_id("sd-02").messages);
    assert!(!m.contains_key("argument_grounding") && !m.contains_key("tool_error_recovery"));
    assert_eq!(m["questions_asked"], 0.0);
}

#[test]
fn checks_that_cannot_apply_are_left_out() {
    let cases = load();
    let sd02 = cases.iter().find(|c| c.id == "sd-02").unwrap();
    let v = conduct(&sd02.messages, &sd02.tools);
    // No tool calls: the claim check applies; the call checks, and the
    // confirmation check (no covered call), do not.
    assert!(v.checks.contains_key("claimed_without_call"));
    assert!(!v.checks.contains_key("repeated_identical_call"));
    assert!(!v.checks.contains_key("ungrounded_identifier"));
    assert!(!v.checks.contains_key("acted_without_confirmation"));
    // A policy without a confirmation rule: that check does not apply.
    let mut messages = sd02.messages.clone();
    messages[0] = Message::text(Role::System, "Help customers with their orders.");
    let v = conduct(&messages, &sd02.tools);
    assert!(!v.checks.contains_key("acted_without_confirmation"));
}
