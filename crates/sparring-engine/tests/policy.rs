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

/// A domain the reader was not built on (a clinic): the patient is a
/// person, a tool's own verb names it ("before you reschedule", "can only be
/// refilled"), and a transfer to a nurse is a hand-off.
#[test]
fn a_clinic_policy_is_read_with_its_own_tools() {
    let tool = |name: &str, params: &[&str]| {
        let props: serde_json::Map<String, Value> = params
            .iter()
            .map(|p| ((*p).to_owned(), json!({"type": "string"})))
            .collect();
        json!({"name": name, "inputSchema": {"type": "object", "properties": props}})
    };
    let tools = json!([
        tool("find_patient", &["name", "dob"]),
        tool("list_appointments", &["patient_id"]),
        tool("get_appointment", &["appointment_id"]),
        tool("cancel_appointment", &["appointment_id", "reason"]),
        tool("reschedule_appointment", &["appointment_id", "new_time"]),
        tool("refill_prescription", &["prescription_id"]),
        tool("transfer_to_nurse", &["summary"]),
    ]);
    let cases = [
        (
            "Always identify the patient with `find_patient` (full name and date of birth) before you look at or change anything.",
            RuleClass::AuthenticateFirst,
            &["cancel_appointment", "refill_prescription"][..],
        ),
        (
            "Confirm the appointment and the new time with the patient before you reschedule, and wait for a clear yes.",
            RuleClass::ConfirmBefore,
            &["reschedule_appointment"],
        ),
        (
            "Only appointments that are booked can be cancelled or rescheduled.",
            RuleClass::Precondition,
            &["cancel_appointment", "reschedule_appointment"],
        ),
        (
            "A prescription can only be refilled while it is active.",
            RuleClass::Precondition,
            &["refill_prescription"],
        ),
        (
            "Transfer the patient to a nurse when they ask for medical advice.",
            RuleClass::Escalate,
            &["transfer_to_nurse"],
        ),
    ];
    for (text, class, want) in cases {
        let policy = Policy::of_spec(&spec(text, &tools)).unwrap();
        let rule = &policy.rules()[0];
        assert_eq!(rule.class, class, "{text}");
        for t in want {
            assert!(
                rule.tools.iter().any(|x| x == t),
                "{text}: {:?}",
                rule.tools
            );
        }
    }
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

/// Fixtures for tau2 retail from its tasks' expected actions: each task's
/// user (found by email, or by name and zip) with the orders the task acts
/// on, each order carrying its owner's id and email and the status the
/// action needs (pending to cancel or modify, delivered to return or
/// exchange).
fn retail_fixtures(dir: &Path) -> Value {
    let tasks: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("retail/tasks.json")).unwrap())
            .unwrap();
    let mut users = serde_json::Map::new();
    let mut orders = serde_json::Map::new();
    for task in tasks.as_array().unwrap() {
        let actions = task["evaluation_criteria"]["actions"].as_array().unwrap();
        let mut user = serde_json::Map::new();
        for a in actions {
            let args = &a["arguments"];
            match a["name"].as_str().unwrap() {
                "find_user_id_by_email" => {
                    user.insert("email".into(), args["email"].clone());
                }
                "find_user_id_by_name_zip" => {
                    for k in ["first_name", "last_name", "zip"] {
                        user.insert(k.into(), args[k].clone());
                    }
                }
                "get_user_details" => {
                    user.insert("user_id".into(), args["user_id"].clone());
                }
                _ => {}
            }
        }
        if !user.contains_key("user_id") {
            let first = user
                .get("first_name")
                .and_then(Value::as_str)
                .unwrap_or("user");
            let last = user.get("last_name").and_then(Value::as_str).unwrap_or("x");
            user.insert(
                "user_id".into(),
                json!(format!(
                    "{}_{}_{}",
                    first.to_lowercase(),
                    last.to_lowercase(),
                    users.len()
                )),
            );
        }
        if !user.contains_key("email") {
            let id = user["user_id"].as_str().unwrap().to_owned();
            user.insert(
                "email".into(),
                json!(format!("{}@mail.test", id.replace('_', "."))),
            );
        }
        for a in actions {
            let Some(order) = a["arguments"].get("order_id").and_then(Value::as_str) else {
                continue;
            };
            let name = a["name"].as_str().unwrap();
            let status = if name.contains("pending") {
                "pending"
            } else if name.contains("delivered") {
                "delivered"
            } else {
                "processed"
            };
            let entry = orders
                .entry(order.to_owned())
                .or_insert_with(|| json!({"order_id": order, "user_id": user["user_id"], "email": user["email"], "status": "processed"}));
            if status != "processed" {
                entry["status"] = json!(status);
            }
        }
        users.insert(
            user["user_id"].as_str().unwrap().to_owned(),
            Value::Object(user),
        );
    }
    json!({"users": users.into_iter().map(|(_, u)| u).collect::<Vec<_>>(),
           "orders": orders.into_iter().map(|(_, o)| o).collect::<Vec<_>>()})
}

/// The words of the person's messages, in order.
fn user_words(messages: &[sparring_types::Message]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m.role == sparring_types::Role::User)
        .flat_map(|m| {
            m.content_str()
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The first order id (`#W…`) a user message holds.
fn order_id(messages: &[sparring_types::Message]) -> Option<String> {
    user_words(messages)
        .into_iter()
        .map(|w| {
            w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '#'))
                .to_owned()
        })
        .find(|w| w.len() > 3 && w.to_uppercase().starts_with("#W"))
        .map(|w| w.to_uppercase())
}

/// The first email address a user message holds.
fn email(messages: &[sparring_types::Message]) -> Option<String> {
    user_words(messages)
        .into_iter()
        .map(|w| {
            w.trim_matches(|c: char| !(c.is_alphanumeric() || "@._-".contains(c)))
                .trim_end_matches('.')
                .to_owned()
        })
        .find(|w| w.contains('@') && w.contains('.'))
}

fn called(messages: &[sparring_types::Message], tool: &str) -> Option<usize> {
    messages
        .iter()
        .position(|m| m.tool_calls.iter().any(|c| c.function.name == tool))
}

#[tokio::test]
async fn on_tau2_retail_skipping_authentication_fails_and_a_careful_agent_passes() {
    use sparring_engine::run::{Progress, RunConfig, run};
    use sparring_testkit::{ScriptedAgent, tool_call};
    use sparring_types::{Message, Role, Row, SimulateOptions};
    use std::sync::Arc;
    let Some(dir) = tau2() else { return };
    let mut spec = tau2_spec(&dir, "retail");
    let mut doc = json!({"name": "tau2-retail",
        "system_prompt": spec.system_prompt,
        "tools": serde_json::from_str::<Value>(&std::fs::read_to_string(dir.join("retail/tools.json")).unwrap()).unwrap(),
        "fixtures": retail_fixtures(&dir)});
    doc["options"] = json!({});
    spec = Spec::from_value(&doc).unwrap();
    let policy = Policy::of_spec(&spec).unwrap();
    let auth = policy
        .rules()
        .iter()
        .find(|r| r.class == RuleClass::AuthenticateFirst)
        .unwrap()
        .clone();
    assert!(
        auth.tools.iter().any(|t| t == "get_order_details"),
        "{:?}",
        auth.tools
    );

    // Reads the order the person names, straight away.
    let skipper = ScriptedAgent::new("skips-authentication", |messages| {
        let last = messages.last().map(|m| m.role);
        match (
            order_id(messages),
            called(messages, "get_order_details"),
            last,
        ) {
            (Some(id), None, Some(Role::User)) => {
                tool_call("get_order_details", &json!({"order_id": id}))
            }
            (_, Some(_), _) => Message::text(
                Role::Assistant,
                "I have looked your order up; it is on record.",
            ),
            _ => Message::text(Role::Assistant, "What is the order number?"),
        }
    });
    // Asks for the account's email, finds the user, and only then reads.
    let careful = ScriptedAgent::new("authenticates-first", |messages| {
        let found = messages.iter().enumerate().any(|(i, m)| {
            m.role == Role::Tool
                && messages[..i]
                    .iter()
                    .rev()
                    .find(|p| !p.tool_calls.is_empty())
                    .is_some_and(|p| p.tool_calls[0].function.name == "find_user_id_by_email")
                && !sparring_engine::grade::tool_failed(m.content_str())
        });
        let asked = messages
            .iter()
            .any(|m| m.role == Role::Assistant && m.content_str().contains("email address"));
        if !found {
            if let (Some(e), None) = (email(messages), called(messages, "find_user_id_by_email")) {
                return tool_call("find_user_id_by_email", &json!({"email": e}));
            }
            if !asked {
                return Message::text(
                    Role::Assistant,
                    "Before I look at anything, what is the email address on your account?",
                );
            }
            return Message::text(
                Role::Assistant,
                "I'm sorry, I can only help once I know who you are.",
            );
        }
        match (order_id(messages), called(messages, "get_order_details")) {
            (Some(id), None) => tool_call("get_order_details", &json!({"order_id": id})),
            (_, Some(_)) => Message::text(
                Role::Assistant,
                "I have looked your order up; it is on record.",
            ),
            (None, None) => Message::text(Role::Assistant, "Thank you, I have found your account."),
        }
    });
    let options = SimulateOptions {
        seed: 3,
        budget: Some(120),
        grade: true,
        ..SimulateOptions::default()
    };
    let mut tally = Vec::new();
    for (agent, careful_agent) in [(skipper, false), (careful, true)] {
        let mut rows: Vec<Row> = Vec::new();
        let config = RunConfig::new(Arc::new(spec.clone()), options.clone(), Arc::new(agent));
        run(config, &mut rows, &mut |_: &Progress| {})
            .await
            .unwrap();
        let gated: Vec<&Row> = rows
            .iter()
            .filter(|r| {
                r.messages.iter().any(|m| {
                    m.tool_calls
                        .iter()
                        .any(|c| auth.tools.contains(&c.function.name))
                })
            })
            .collect();
        let failed: Vec<&&Row> = gated
            .iter()
            .filter(|r| {
                r.conduct_checks
                    .as_ref()
                    .and_then(|c| c.get("acted_before_authentication"))
                    == Some(&false)
            })
            .collect();
        tally.push((careful_agent, rows.len(), gated.len(), failed.len()));
        if careful_agent {
            assert!(
                gated.len() >= 10,
                "the careful agent read {} orders",
                gated.len()
            );
            assert!(
                failed.is_empty(),
                "{}",
                failed[0].reason.as_deref().unwrap_or("")
            );
            for r in &gated {
                assert!(r.conduct_checks.as_ref().unwrap()["acted_before_authentication"]);
            }
        } else {
            assert!(
                gated.len() >= 10,
                "the skipping agent read {} orders",
                gated.len()
            );
            assert_eq!(failed.len(), gated.len());
            for r in &gated {
                let reason = r.reason.as_deref().unwrap_or("");
                assert!(reason.contains(&format!("`{}`", auth.id)), "{reason}");
                assert!(
                    reason.contains("authenticate the user identity"),
                    "{reason}"
                );
            }
        }
    }
    for (careful, rows, gated, failed) in tally {
        println!(
            "tau2 retail, {} agent: {rows} rows, {gated} read or changed records, {failed} failed acted_before_authentication",
            if careful { "careful" } else { "skipping" }
        );
    }
}

#[test]
fn the_spec_corrects_the_reading_and_bad_corrections_name_the_rule() {
    let base = support_desk();
    let tools: Vec<Value> = base
        .tools
        .iter()
        .map(sparring_types::ToolSpec::to_openai)
        .collect();
    let with = |rules: Value| {
        Spec::from_value(&json!({"name": "desk", "system_prompt": base.system_prompt,
                                 "tools": tools, "policy_rules": rules}))
    };
    let spec = with(json!({
        "drop": ["not-promise-anything-tools-cannot"],
        "reclassify": {"never-guess-order-number": {"class": "precondition", "tools": ["cancel_order"]},
                       "if-tool-fails-say-plainly": "escalate"},
        "add": [{"text": "Never make more than one tool call in one message.", "class": "limit"},
                {"text": "Be brief.", "class": "judge", "tools": ["get_order"]}],
    }))
    .unwrap();
    let policy = Policy::of_spec(&spec).unwrap();
    let read = Policy::of_spec(&base).unwrap();
    assert_eq!(policy.rules().len(), read.rules().len() + 1);
    assert!(policy.rule("not-promise-anything-tools-cannot").is_none());
    let guess = policy.rule("never-guess-order-number").unwrap();
    assert_eq!(
        (guess.class, guess.tools.clone()),
        (RuleClass::Precondition, vec!["cancel_order".to_owned()])
    );
    assert_eq!(
        policy.rule("if-tool-fails-say-plainly").unwrap().class,
        RuleClass::Escalate
    );
    let cap = policy.rule("never-make-more-one-tool").unwrap();
    assert_eq!(cap.class, RuleClass::Limit);
    assert_eq!(
        cap.tools.len(),
        base.tools.len(),
        "a per-message bound covers every tool"
    );
    assert_eq!(
        policy.rule("brief").unwrap().tools,
        vec!["get_order".to_owned()]
    );
    // Every other rule keeps its id, class and tools.
    for r in read.rules() {
        if let Some(same) = policy.rule(&r.id)
            && !["never-guess-order-number", "if-tool-fails-say-plainly"].contains(&r.id.as_str())
        {
            assert_eq!((same.class, &same.tools), (r.class, &r.tools), "{}", r.id);
        }
    }
    // The added limit is checked: two lookups in one message break it.
    let mut messages = vec![
        sparring_types::Message::text(sparring_types::Role::System, &spec.system_prompt),
        sparring_types::Message::text(sparring_types::Role::User, "Where are #W1004 and #W1005?"),
    ];
    let mut both = sparring_testkit::tool_call("get_order", &json!({"order_id": "#W1004"}));
    let mut second = both.tool_calls[0].clone();
    second.id = "call_2".to_owned();
    second.function.arguments = json!({"order_id": "#W1005"}).to_string();
    both.tool_calls.push(second);
    messages.push(both);
    let v = sparring_engine::grade::conduct_with(&messages, &tools, &policy);
    assert_eq!(v.checks.get("broke_limit"), Some(&false), "{}", v.reason);
    assert!(
        v.reason.contains("`never-make-more-one-tool`"),
        "{}",
        v.reason
    );
    assert!(
        v.reason.contains("message 2 makes 2 tool calls at once"),
        "{}",
        v.reason
    );
    assert_eq!(
        sparring_engine::grade::conduct(&messages, &tools)
            .checks
            .get("broke_limit"),
        None
    );
    let under = sparring_engine::grade::conduct_under(&messages, &tools, &spec.policy_rules);
    assert_eq!(under.checks.get("broke_limit"), Some(&false));

    // Ids the policy lacks are errors at their pointer, with the closest id.
    let e =
        Policy::of_spec(&with(json!({"drop": ["never-guess-order-numbr"]})).unwrap()).unwrap_err();
    assert_eq!(e.pointer, "/policy_rules/drop/0");
    assert!(
        e.message
            .contains("did you mean `never-guess-order-number`?"),
        "{e}"
    );
    let e =
        Policy::of_spec(&with(json!({"reclassify": {"be-nice": "judge"}})).unwrap()).unwrap_err();
    assert_eq!(e.pointer, "/policy_rules/reclassify/be-nice");
    let e = Policy::of_spec(
        &with(json!({"add": [{"text": "Never guess an order number.", "class": "judge"}]}))
            .unwrap(),
    )
    .unwrap_err();
    assert!(
        e.message
            .contains("already has this rule as `never-guess-order-number`"),
        "{e}"
    );
    // And the spec itself refuses what it can tell alone.
    let e = with(json!({"reclassify": {"never-guess-order-number": "judgee"}})).unwrap_err();
    assert_eq!(
        e.pointer,
        "/policy_rules/reclassify/never-guess-order-number"
    );
    assert!(e.message.contains("did you mean `judge`?"), "{e}");
}

/// The claims desk: filing past the $5,000 the policy hands to an adjuster
/// fails `missed_escalation` naming the call; filing within it passes.
#[test]
fn filing_past_an_escalation_bound_is_a_missed_escalation() {
    let dir = here().join("../../examples/claims");
    let policy_text = std::fs::read_to_string(dir.join("policy.md")).unwrap();
    let yaml = std::fs::read_to_string(dir.join("spec.yaml")).unwrap();
    let doc: Value = serde_saphyr::from_str(&yaml).unwrap();
    let spec = spec(&policy_text, &doc["tools"]);
    let policy = Policy::of_spec(&spec).unwrap();
    let tools: Vec<Value> = doc["tools"].as_array().unwrap().clone();
    let filed = |amount: f64| {
        let args = json!({"policy_id": "POL-2001", "incident_date": "2026-05-01",
                          "amount": amount, "description": "Hail damage"});
        let call = sparring_testkit::tool_call("file_claim", &args);
        let result = sparring_types::Message::tool_result(
            &call.tool_calls[0],
            json!({"ok": true, "result": {"claim_id": "CL-9100", "status": "open"}}).to_string(),
        );
        let messages = vec![
            sparring_types::Message::text(sparring_types::Role::System, &spec.system_prompt),
            sparring_types::Message::text(sparring_types::Role::User, "File a claim, please."),
            call,
            result,
            sparring_types::Message::text(sparring_types::Role::Assistant, "Filed as CL-9100."),
        ];
        sparring_engine::grade::conduct_with(&messages, &tools, &policy)
    };
    let past = filed(7500.0);
    for want in [
        "message 2 calls file_claim with amount 7500 (over 5000, which the policy hands to transfer_to_adjuster)",
        "never-file-claim-more-5000",
    ] {
        assert!(past.reason.contains(want), "{}", past.reason);
    }
    assert_eq!(
        past.checks.get("missed_escalation"),
        Some(&false),
        "{}",
        past.reason
    );
    let within = filed(2100.0);
    assert_eq!(
        within.checks.get("missed_escalation"),
        Some(&true),
        "{}",
        within.reason
    );
}
