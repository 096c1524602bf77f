//! The policy reader against hand counts.
//!
//! `tests/policy/*.json` hold hand labels of four policies, sentence by
//! sentence: the three tau2-bench policies (read from
//! `../shared/data/tau2`, never copied here; the labels quote a few words
//! and give the line) and the shipped support-desk example. A read rule
//! matches a hand rule when its text holds the hand rule's quote; every
//! read rule must match some label (a rule or a not-rule), so nothing read
//! goes uncounted. The test prints recall, precision and class agreement
//! per policy and requires recall and precision of at least 0.90 each.
//!
//! `tests/policy/sentences.json` is a corpus of confirmation,
//! authentication and limit sentences in varied wording, with hard
//! negatives, each with the class it must get: at least 95 % right.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::float_cmp
)]

use serde_json::{Value, json};
use sparring_engine::policy::{Policy, rule_id};
use sparring_types::{RuleClass, Spec};
use std::path::{Path, PathBuf};

fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tau2() -> Option<PathBuf> {
    let dir = here().join("../../../shared/data/tau2");
    if dir.join("retail/policy.md").exists() {
        Some(dir)
    } else {
        eprintln!("skipped: tau2 data not found at {}", dir.display());
        None
    }
}

fn spec(policy: &str, tools: &Value) -> Spec {
    Spec::from_value(&json!({"name": "policy-test", "system_prompt": policy, "tools": tools}))
        .unwrap()
}

fn tau2_spec(dir: &Path, domain: &str) -> Spec {
    let policy = std::fs::read_to_string(dir.join(domain).join("policy.md")).unwrap();
    let tools: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(domain).join("tools.json")).unwrap(),
    )
    .unwrap();
    spec(&policy, &tools)
}

fn support_desk() -> Spec {
    let dir = here().join("../../examples/support-desk");
    let policy = std::fs::read_to_string(dir.join("policy.md")).unwrap();
    let yaml = std::fs::read_to_string(dir.join("spec.yaml")).unwrap();
    let doc: Value = serde_saphyr::from_str(&yaml).unwrap();
    spec(&policy, &doc["tools"])
}

fn norm(text: &str) -> String {
    text.replace(['`', '*'], "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

struct Label {
    line: u64,
    quote: String,
    class: Option<RuleClass>,
}

fn labels(file: &str) -> Vec<Label> {
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(here().join("tests/policy").join(file)).unwrap(),
    )
    .unwrap();
    let mut out = Vec::new();
    for r in v["rules"].as_array().unwrap() {
        out.push(Label {
            line: r[0].as_u64().unwrap(),
            quote: norm(r[1].as_str().unwrap()),
            class: Some(RuleClass::parse(r[2].as_str().unwrap()).unwrap()),
        });
    }
    for r in v["not_rules"].as_array().unwrap() {
        out.push(Label {
            line: r[0].as_u64().unwrap(),
            quote: norm(r[1].as_str().unwrap()),
            class: None,
        });
    }
    out
}

struct Score {
    name: String,
    hand: usize,
    read: usize,
    tp: usize,
    fp: usize,
    fn_: usize,
    class_right: usize,
}

impl Score {
    fn recall(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fn_).max(1) as f64
    }
    fn precision(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fp).max(1) as f64
    }
}

fn score(name: &str, spec: &Spec, file: &str) -> Score {
    let policy = Policy::of_spec(spec).unwrap();
    let labels = labels(file);
    let source = norm(&spec.system_prompt);
    for l in &labels {
        assert!(
            source.contains(&l.quote),
            "{file}: the quote of line {} is not in the policy: {}",
            l.line,
            l.quote
        );
    }
    let mut claimed = vec![false; labels.len()];
    let (mut tp, mut fp, mut class_right) = (0, 0, 0);
    let mut notes = Vec::new();
    for rule in policy.rules() {
        let text = norm(&rule.text);
        let matching: Vec<usize> = (0..labels.len())
            .filter(|&i| text.contains(&labels[i].quote))
            .collect();
        assert!(
            !matching.is_empty(),
            "{file}: a rule no label names (label it by hand): {}",
            rule.text
        );
        let hand_rule = matching
            .iter()
            .copied()
            .find(|&i| labels[i].class.is_some() && !claimed[i]);
        if let Some(i) = hand_rule {
            claimed[i] = true;
            tp += 1;
            if labels[i].class == Some(rule.class) {
                class_right += 1;
            } else {
                notes.push(format!(
                    "  class: line {} read as {}, labelled {}: {}",
                    labels[i].line,
                    rule.class,
                    labels[i].class.unwrap(),
                    labels[i].quote
                ));
            }
        } else {
            fp += 1;
            notes.push(format!(
                "  not a rule, read as {}: {}",
                rule.class, rule.text
            ));
        }
    }
    let mut fn_ = 0;
    for (i, l) in labels.iter().enumerate() {
        if l.class.is_some() && !claimed[i] {
            fn_ += 1;
            notes.push(format!("  missed (line {}): {}", l.line, l.quote));
        }
    }
    let s = Score {
        name: name.to_owned(),
        hand: labels.iter().filter(|l| l.class.is_some()).count(),
        read: policy.rules().len(),
        tp,
        fp,
        fn_,
        class_right,
    };
    println!(
        "{:<14} hand {:>3}  read {:>3}  tp {:>3}  fp {:>2}  fn {:>2}  recall {:.3}  precision {:.3}  class {}/{}",
        s.name,
        s.hand,
        s.read,
        s.tp,
        s.fp,
        s.fn_,
        s.recall(),
        s.precision(),
        s.class_right,
        s.tp
    );
    for n in notes {
        println!("{n}");
    }
    s
}

#[test]
fn recall_and_precision_against_hand_counts() {
    let mut scores = vec![score("support-desk", &support_desk(), "support-desk.json")];
    if let Some(dir) = tau2() {
        for domain in ["retail", "airline", "telecom"] {
            scores.push(score(
                &format!("tau2 {domain}"),
                &tau2_spec(&dir, domain),
                &format!("tau2-{domain}.json"),
            ));
        }
    }
    for s in &scores {
        assert!(
            s.recall() >= 0.90 && s.precision() >= 0.90,
            "{}: recall {:.3}, precision {:.3}",
            s.name,
            s.recall(),
            s.precision()
        );
    }
}

#[test]
fn confirmation_authentication_and_limit_sentences() {
    let corpus: Value = serde_json::from_str(
        &std::fs::read_to_string(here().join("tests/policy/sentences.json")).unwrap(),
    )
    .unwrap();
    let tools = &corpus["tools"];
    let items = corpus["sentences"].as_array().unwrap();
    let mut right = 0;
    let mut wrong = Vec::new();
    let mut by_class: std::collections::BTreeMap<String, (u32, u32)> =
        std::collections::BTreeMap::new();
    for item in items {
        let text = item[0].as_str().unwrap();
        let want = item[1].as_str().unwrap();
        let tools_want: Vec<&str> = item
            .get(2)
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|t| t.as_str().unwrap()).collect())
            .unwrap_or_default();
        let policy = Policy::of_spec(&spec(text, tools)).unwrap();
        let got = policy.rules().first();
        let class = got.map_or("not_a_rule", |r| r.class.as_str());
        let tools_ok = tools_want.is_empty()
            || got.is_some_and(|r| tools_want.iter().all(|t| r.tools.iter().any(|x| x == t)));
        let e = by_class.entry(want.to_owned()).or_default();
        e.1 += 1;
        if class == want && tools_ok && policy.rules().len() <= 1 {
            right += 1;
            e.0 += 1;
        } else {
            wrong.push(format!(
                "  {text}\n    want {want} {tools_want:?}, got {class} {:?}",
                got.map(|r| r.tools.clone())
            ));
        }
    }
    let share = f64::from(right) / items.len() as f64;
    println!(
        "\n{right} of {} sentences classified right ({share:.3})",
        items.len()
    );
    for (class, (r, n)) in &by_class {
        println!("  {class:<20} {r}/{n}");
    }
    for w in &wrong {
        println!("{w}");
    }
    assert!(items.len() >= 40, "{} sentences", items.len());
    assert!(share >= 0.95, "{share:.3} right");
}

#[test]
fn ids_come_from_the_rules_own_words() {
    let spec = support_desk();
    let before = Policy::of_spec(&spec).unwrap();
    let mut moved = spec.clone();
    moved.system_prompt = moved.system_prompt.replacen(
        "\n- ",
        "\n- You must never share a customer's card number.\n- Keep replies short and never use emoji.\n- ",
        1,
    );
    let after = Policy::of_spec(&moved).unwrap();
    assert_eq!(after.rules().len(), before.rules().len() + 2);
    for rule in before.rules() {
        let same = after.rules().iter().find(|r| r.text == rule.text).unwrap();
        assert_eq!(same.id, rule.id, "{}", rule.text);
    }
    // The bullets moved down two places: positions changed, ids did not.
    let pos = |p: &Policy, id: &str| p.rules().iter().position(|r| r.id == id).unwrap();
    let first = &before.rules()[0].id;
    assert_eq!(pos(&after, first), pos(&before, first) + 2);
    assert_eq!(
        rule_id("Never guess an order number."),
        "never-guess-order-number"
    );
    // Putting the bullets in the opposite order keeps every id too.
    let mut parts: Vec<&str> = spec.system_prompt.split("\n- ").collect();
    let head = parts.remove(0);
    parts.reverse();
    let mut reversed = spec.clone();
    reversed.system_prompt = format!("{head}\n- {}", parts.join("\n- "));
    let r = Policy::of_spec(&reversed).unwrap();
    let mut a: Vec<&str> = before.rules().iter().map(|r| r.id.as_str()).collect();
    let mut b: Vec<&str> = r.rules().iter().map(|r| r.id.as_str()).collect();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
}

#[test]
fn ids_are_unique_on_every_policy() {
    let mut specs = vec![support_desk()];
    if let Some(dir) = tau2() {
        for d in ["retail", "airline", "telecom"] {
            specs.push(tau2_spec(&dir, d));
        }
    }
    for spec in specs {
        let p = Policy::of_spec(&spec).unwrap();
        let mut ids: Vec<&str> = p.rules().iter().map(|r| r.id.as_str()).collect();
        for id in &ids {
            assert!(sparring_types::policy::is_rule_id(id), "{id}");
        }
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate ids");
    }
}
