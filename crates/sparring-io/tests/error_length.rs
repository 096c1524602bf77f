//! Errors that quote a value of the input quote at most a few hundred
//! characters of it, with its length: a 1 MB tool name, schema `type`,
//! `required` entry, key or axis value in a spec, or a 1 MB string where a
//! row wants a number, is one short error line (issue 39: each was quoted
//! whole, one error line of 1–5 MB).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use sparring_io::rows::{read_gold_labels, read_rows, read_score_rows};
use sparring_io::spec_file::load_spec;

/// Longer than any error line may be.
const MB: usize = 1 << 20;

/// The most bytes a line of an error may take.
const LINE_MAX: usize = 4096;

fn assert_short(what: &str, error: &str) {
    for line in error.lines() {
        assert!(
            line.len() < LINE_MAX,
            "{what}: an error line of {} bytes: {}…",
            line.len(),
            &line[..200]
        );
    }
    // An error that quotes the value says how long it was (YAML refuses
    // a key past 1,024 characters without quoting it).
    let quotes = ["xxxxxxxxxx", "a ba ba ba b", "zzzzzzzzzz"]
        .iter()
        .any(|v| error.contains(v));
    assert!(
        !quotes || error.contains("characters)") || error.contains("bytes cut"),
        "{what}: the cut is not said: {}",
        &error[..error.len().min(600)]
    );
}

fn spec() -> Value {
    json!({
        "name": "demo",
        "system_prompt": "Be helpful.",
        "tools": [{
            "name": "get_order",
            "description": "Look up an order",
            "inputSchema": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        }],
    })
}

/// A change to a spec.
type Edit<'a> = Box<dyn Fn(&mut Value) + 'a>;

#[test]
fn spec_errors_quote_a_long_value_cut() {
    let big = "x".repeat(MB);
    let spaced = "a b".repeat(MB / 3);
    let edits: Vec<(&str, Edit<'_>)> = vec![
        (
            "tool name",
            Box::new(|s| s["tools"][0]["name"] = json!(big)),
        ),
        (
            "tool name with spaces",
            Box::new(|s| s["tools"][0]["name"] = json!(spaced)),
        ),
        (
            "schema type",
            Box::new(|s| s["tools"][0]["inputSchema"]["type"] = json!(big)),
        ),
        (
            "schema type, a list",
            Box::new(|s| s["tools"][0]["inputSchema"]["type"] = json!(vec![big.clone(); 4])),
        ),
        (
            "required entry",
            Box::new(|s| s["tools"][0]["inputSchema"]["required"] = json!([big])),
        ),
        ("a top-level key", Box::new(|s| s[big.as_str()] = json!(1))),
        (
            "an option key",
            Box::new(|s| s["options"] = json!({big.as_str(): 1})),
        ),
        (
            "a seed's expect key",
            Box::new(|s| s["seeds"] = json!([{"ask": "hi", "expect": {big.as_str(): 1}}])),
        ),
        (
            "an axis value",
            Box::new(|s| s["axes"] = json!({"stance": [big]})),
        ),
        (
            "a null schema key",
            Box::new(|s| s["tools"][0]["inputSchema"][big.as_str()] = Value::Null),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (what, edit) in &edits {
        let mut s = spec();
        edit(&mut s);
        for ext in ["json", "yaml"] {
            let path = dir.path().join(format!("spec.{ext}"));
            // JSON is YAML too, in flow style.
            std::fs::write(&path, s.to_string()).unwrap();
            let error = load_spec(&path).expect_err(what).to_string();
            assert_short(&format!("{what} ({ext})"), &error);
        }
    }
}

fn row(reward: Value) -> String {
    let mut r = serde_json::to_value(sparring_types::Row::new(
        "r1",
        "task_a",
        "scn_a",
        Vec::new(),
        sparring_types::EndedBy::AgentDone,
    ))
    .unwrap();
    r["reward"] = reward;
    r.to_string()
}

#[test]
fn rows_errors_quote_a_long_value_cut() {
    let big = "z".repeat(MB);
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("a string for the reward", row(json!(big))),
        ("a list for the reward", row(json!(vec![big.clone(); 3]))),
        (
            "a list for the task id",
            json!({"task_id": [big], "reward": 1}).to_string(),
        ),
        (
            "a string for the schema version",
            json!({"schema_version": big, "task_id": "t", "reward": 1}).to_string(),
        ),
        ("a long line that is not JSON", format!("{{{big}")),
    ];
    for (what, line) in cases {
        let path = dir.path().join("rows.jsonl");
        std::fs::write(&path, format!("{line}\n")).unwrap();
        let strict = read_rows(&path).err().map(|e| e.to_string());
        let lenient = read_score_rows(&path).err().map(|e| e.to_string());
        assert!(
            strict.is_some() || lenient.is_some(),
            "{what}: both read it"
        );
        for error in [strict, lenient].into_iter().flatten() {
            for line in error.lines() {
                assert!(line.len() < LINE_MAX, "{what}: {} bytes", line.len());
            }
        }
    }
    let labels = dir.path().join("labels.jsonl");
    std::fs::write(
        &labels,
        format!("{}\n", json!({"row_id": "r1", "label": big})),
    )
    .unwrap();
    let error = read_gold_labels(&labels).unwrap_err().to_string();
    assert_short("a long label", &error);
}
