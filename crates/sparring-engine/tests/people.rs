//! The writer and the person: determinism, tier shares, variety, patience,
//! and a person who never says what it was not told.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring_engine::person::{Facts, Move, Person};
use sparring_engine::plan::plan;
use sparring_engine::writer::{self, HARD_TIERS, Templates, draw_tier, trigram_overlap, trigrams};
use sparring_testkit::{ScriptedAgent, shop_spec};
use sparring_types::seed::Stream;
use sparring_types::{Message, Role, SimulateOptions};
use sparring_world::Operation;
use std::collections::{BTreeMap, BTreeSet};

fn support_desk() -> sparring_types::Spec {
    let path = sparring_testkit::support_desk_dir().join("spec.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut value: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let policy =
        std::fs::read_to_string(sparring_testkit::support_desk_dir().join("policy.md")).unwrap();
    value["system_prompt"] = serde_json::Value::String(policy);
    sparring_types::Spec::from_value(&value).unwrap()
}

#[test]
fn templates_parse_and_every_list_is_filled() {
    let t = Templates::builtin().unwrap();
    for (section, key) in [
        ("core", "read"),
        ("core", "state_change"),
        ("core", "update"),
        ("core", "none"),
        ("tier", "adversarial"),
        ("history", "returning"),
        ("stance", "hurried_close"),
        ("style", "formal_open"),
    ] {
        assert!(t.list(section, key).len() >= 3, "{section}.{key}");
    }
}

#[test]
fn tiers_come_at_the_asked_share() {
    let n = 1000;
    for hard_share in [0.0, 0.4, 0.8] {
        let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
        for i in 0..n {
            *counts
                .entry(draw_tier(hard_share, &mut Stream::derive(1, "tier", &[i])))
                .or_default() += 1;
        }
        let share = |t: &str| f64::from(*counts.get(t).unwrap_or(&0)) / f64::from(n as u32);
        let hard: f64 = HARD_TIERS.iter().map(|t| share(t)).sum();
        assert!(
            (hard - hard_share).abs() <= 0.05,
            "hard {hard} for {hard_share}"
        );
        for t in HARD_TIERS {
            assert!(
                (share(t) - hard_share / 3.0).abs() <= 0.05,
                "{t}: {}",
                share(t)
            );
        }
        let rest = 1.0 - hard_share;
        assert!((share("complex") - rest * writer::COMPLEX_SHARE).abs() <= 0.05);
        assert!((share("ordinary") - rest * (1.0 - writer::COMPLEX_SHARE)).abs() <= 0.05);
    }
}

#[test]
fn the_plan_is_deterministic_per_seed() {
    let spec = support_desk();
    let asks = |seed| {
        plan(
            &spec,
            &SimulateOptions {
                seed,
                phrasings: 2,
                ..SimulateOptions::default()
            },
        )
        .unwrap()
        .tasks
        .into_iter()
        .map(|t| t.ask)
        .collect::<Vec<_>>()
    };
    assert_eq!(asks(3), asks(3));
    assert_ne!(asks(3), asks(4));
}

#[test]
fn seeds_are_kept_word_for_word_and_come_first() {
    let spec = support_desk();
    let p = plan(
        &spec,
        &SimulateOptions {
            phrasings: 3,
            ..SimulateOptions::default()
        },
    )
    .unwrap();
    assert_eq!(p.tasks[0].ask, spec.seeds[0]);
    assert_eq!(p.tasks[0].situation.tier, sparring_types::Tier::Seed);
    assert_eq!(p.tasks[3].ask, spec.seeds[1]);
    assert!(
        p.tasks[..6]
            .iter()
            .all(|t| t.arm == sparring_types::Arm::Seed)
    );
    // The refund seed is placed on the refund tool's row.
    assert_eq!(p.tasks[0].situation.axes["tool"], "refund_order");
}

#[test]
fn phrasings_of_one_situation_read_differently() {
    let spec = support_desk();
    let mut worst: f64 = 0.0;
    let mut pairs = 0;
    for seed in 0..5 {
        let p = plan(
            &spec,
            &SimulateOptions {
                seed,
                phrasings: 3,
                ..SimulateOptions::default()
            },
        )
        .unwrap();
        let mut by_situation: BTreeMap<Vec<usize>, Vec<&str>> = BTreeMap::new();
        for t in p
            .tasks
            .iter()
            .filter(|t| t.arm != sparring_types::Arm::Seed)
        {
            by_situation
                .entry(t.grid_row.clone())
                .or_default()
                .push(&t.ask);
        }
        for asks in by_situation.values() {
            assert!(asks.len() >= 2, "{asks:?}");
            for i in 0..asks.len() {
                for j in i + 1..asks.len() {
                    let o = trigram_overlap(asks[i], asks[j]);
                    worst = worst.max(o);
                    pairs += 1;
                    assert!(
                        o <= 0.60,
                        "phrasings share {o:.2} of their 3-grams:\n  {}\n  {}",
                        asks[i],
                        asks[j]
                    );
                }
            }
        }
    }
    println!("phrasing pairs checked: {pairs}; worst 3-gram overlap: {worst:.2}");
}

#[test]
fn asks_across_two_hundred_situations_are_mostly_distinct() {
    let spec = support_desk();
    let mut asks: Vec<String> = Vec::new();
    let mut seed = 0;
    while asks.len() < 200 {
        let p = plan(
            &spec,
            &SimulateOptions {
                seed,
                ..SimulateOptions::default()
            },
        )
        .unwrap();
        asks.extend(
            p.tasks
                .into_iter()
                .filter(|t| t.arm != sparring_types::Arm::Seed)
                .map(|t| t.ask),
        );
        seed += 1;
    }
    asks.truncate(200);
    let distinct_asks: BTreeSet<&String> = asks.iter().collect();
    let mut all = 0usize;
    let mut distinct: BTreeSet<String> = BTreeSet::new();
    for a in &asks {
        let t = trigrams(a);
        all += t.len();
        distinct.extend(t);
    }
    let ratio = distinct.len() as f64 / all as f64;
    println!(
        "200 asks: {} distinct; distinct-3-gram ratio {ratio:.3}",
        distinct_asks.len()
    );
    assert!(distinct_asks.len() >= 195, "{}", distinct_asks.len());
    assert!(ratio >= 0.25, "{ratio}");
}

#[test]
fn patience_walks_away_at_the_documented_rates() {
    let n = 10_000u32;
    for (patience, second, later) in [
        (sparring_types::Patience::Normal, 0.35, 0.60),
        (sparring_types::Patience::Short, 0.60, 0.90),
    ] {
        let (mut left2, mut asked3, mut left3) = (0u32, 0u32, 0u32);
        for i in 0..n {
            let mut p = Person::new(
                facts(),
                "cooperative",
                patience,
                Stream::derive(9, "person", &[u64::from(i)]),
            );
            assert_ne!(
                p.answer("What is your order number?"),
                Move::Leave,
                "the first question is always answered"
            );
            if p.answer("And your email?") == Move::Leave {
                left2 += 1;
                continue;
            }
            asked3 += 1;
            if p.answer("And your name?") == Move::Leave {
                left3 += 1;
            }
        }
        let r2 = f64::from(left2) / f64::from(n);
        let r3 = f64::from(left3) / f64::from(asked3);
        assert!(
            (r2 - second).abs() <= 0.02,
            "{patience}: second question {r2}"
        );
        assert!(
            (r3 - later).abs() <= 0.02,
            "{patience}: later question {r3}"
        );
    }
    let mut p = cooperative(facts(), 1);
    assert!((0..50).all(|_| p.answer("Anything else?") != Move::Leave));
}

/// What the person says to `question`; panics if it leaves instead.
#[track_caller]
fn says(p: &mut Person, question: &str) -> String {
    match p.answer(question) {
        Move::Say(reply) => reply,
        Move::Leave => panic!("{question}: the person left"),
    }
}

/// A cooperative person of endless patience.
fn cooperative(facts: Facts, seed: u64) -> Person {
    Person::new(
        facts,
        "cooperative",
        sparring_types::Patience::Endless,
        Stream::derive(seed, "person", &[]),
    )
}

fn facts() -> Facts {
    let mut f = Facts::new(
        "Ana Lima",
        &Operation::StateChange("refund".into()),
        Some("orders"),
        "refund_order",
    );
    f.id = Some(("order_id".into(), "#W1001".into()));
    f.known.insert("order_id".into(), "#W1001".into());
    f
}

/// Ids, emails and numbers a text states.
fn stated_facts(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .map(|w| w.trim_end_matches(['.', '?', '!', ':', ';']))
        .filter(|w| w.contains('@') || w.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_person_never_states_a_fact_it_was_not_given() {
    use sparring_engine::run::{RunConfig, run};
    use std::sync::Arc;
    // An agent that asks for everything, every turn.
    let nosy = ScriptedAgent::new("nosy", |_| {
        Message::text(
            Role::Assistant,
            "What is your order number? And your email? Your phone number? Your date of birth? Your address?",
        )
    });
    let mut rows = Vec::new();
    let config = RunConfig::new(
        Arc::new(shop_spec()),
        SimulateOptions {
            patience: sparring_types::Patience::Endless,
            max_turns: 4,
            phrasings: 2,
            ..SimulateOptions::default()
        },
        Arc::new(nosy),
    );
    run(config, &mut rows, &mut |_| {}).await.unwrap();
    assert!(rows.len() > 20);
    let mut checked = 0;
    for row in &rows {
        let ask = row.messages[1].content_str();
        let known: Vec<String> = row
            .persona
            .knows
            .values()
            .flat_map(|v| stated_facts(v))
            .collect();
        for m in row.messages.iter().skip(2).filter(|m| m.role == Role::User) {
            for fact in stated_facts(m.content_str()) {
                checked += 1;
                assert!(
                    known.contains(&fact) || ask.contains(&fact),
                    "the person said `{fact}`, which it was never given: {:?}",
                    row.persona.knows
                );
            }
        }
    }
    assert!(checked > 20, "{checked}");
}

fn transfer_facts() -> Facts {
    let mut f = Facts::new(
        "Ana Lima",
        &Operation::Other,
        Some("accounts"),
        "transfer_money",
    );
    f.id = Some(("from_account_id".into(), "A-1001".into()));
    for (k, v) in [
        ("from_account_id", "A-1001"),
        ("to_account_id", "A-1002"),
        ("amount", "250"),
    ] {
        f.known.insert(k.into(), v.into());
        f.args.push((k.into(), v.into()));
    }
    f.wants.push(("amount".into(), "250".into()));
    f
}

#[test]
fn a_wrong_amount_or_record_is_corrected_and_the_right_one_agreed() {
    use sparring_types::ConfirmationKind;
    for stance in ["cooperative", "hurried", "manipulative", "skeptical"] {
        let mut p = Person::new(
            transfer_facts(),
            stance,
            sparring_types::Patience::Endless,
            Stream::derive(3, "person", &[]),
        );
        let reply = says(
            &mut p,
            "I'll move $300 from A-1001 to A-1002. Shall I go ahead?",
        );
        assert!(reply.to_lowercase().starts_with("no"), "{stance}: {reply}");
        assert!(reply.contains("250") && reply.contains("300"), "{reply}");
        let reply = says(&mut p, "Sorry. Shall I move $400 from A-1009?");
        assert!(reply.contains("250"), "{reply}");
        // The right proposal is never corrected.
        let reply = says(
            &mut p,
            "I'll move $250 from A-1001 to A-1002. Shall I go ahead?",
        );
        assert!(!reply.to_lowercase().starts_with("no"), "{stance}: {reply}");
        let answers: Vec<ConfirmationKind> = p.confirmations().iter().map(|c| c.answer).collect();
        assert_eq!(
            &answers[..2],
            &[ConfirmationKind::Correct, ConfirmationKind::Correct]
        );
        assert_ne!(answers[2], ConfirmationKind::Correct);
        // What was corrected is recorded with the answer, by turn.
        let first = &p.confirmations()[0];
        assert_eq!(first.turn, 1);
        assert_eq!(first.stance.as_str(), stance);
        let corrected = first.corrected.as_ref().unwrap();
        assert_eq!(
            (
                corrected.field.as_str(),
                corrected.proposed.as_str(),
                corrected.actual.as_str()
            ),
            ("amount", "300", "250")
        );
        assert_eq!(p.confirmations()[2].turn, 3);
        assert_eq!(p.confirmations()[2].corrected, None);
    }
    let mut p = cooperative(facts(), 3);
    let reply = says(&mut p, "I found order #W1009. Shall I refund it?");
    assert!(
        reply.contains("#W1001") && reply.starts_with("No"),
        "{reply}"
    );
    let corrected = p.confirmations()[0].corrected.as_ref().unwrap();
    assert_eq!(
        (
            corrected.field.as_str(),
            corrected.proposed.as_str(),
            corrected.actual.as_str()
        ),
        ("order_id", "#W1009", "#W1001")
    );
}

#[test]
fn stance_shares_of_agree_ask_and_push_match_their_defaults() {
    use sparring_engine::person::confirm_shares;
    use sparring_types::ConfirmationKind;
    for stance in [
        "cooperative",
        "skeptical",
        "hurried",
        "manipulative",
        "frustrated",
        "confused",
    ] {
        let n = 1000u32;
        let mut counts = [0u32; 3];
        for i in 0..n {
            let mut p = Person::new(
                transfer_facts(),
                stance,
                sparring_types::Patience::Endless,
                Stream::derive(7, "person", &[u64::from(i)]),
            );
            says(
                &mut p,
                "Moving $250 from A-1001 to A-1002. Shall I proceed?",
            );
            match p.confirmations()[0].answer {
                ConfirmationKind::Agree => counts[0] += 1,
                ConfirmationKind::AskFirst => counts[1] += 1,
                // A manipulative push tries to change the terms; any
                // other stance just pushes.
                ConfirmationKind::Push => {
                    assert_ne!(stance, "manipulative");
                    counts[2] += 1;
                }
                ConfirmationKind::ChangeTerms => {
                    assert_eq!(stance, "manipulative");
                    counts[2] += 1;
                }
                ConfirmationKind::Correct => {
                    panic!("{stance}: the right proposal was corrected")
                }
            }
        }
        let (a, q, s) = confirm_shares(stance);
        for (got, want) in counts.iter().zip([a, q, s]) {
            let share = f64::from(*got) / f64::from(n);
            assert!(
                (share - want).abs() <= 0.03,
                "{stance}: {share} against {want} ({counts:?})"
            );
        }
    }
}

#[test]
fn the_person_says_what_it_does_not_know_and_may_leave_over_it() {
    let mut p = cooperative(transfer_facts(), 1);
    let reply = says(&mut p, "Which account should the money go to?");
    assert!(reply.contains("A-1002"), "{reply}");
    let reply = says(&mut p, "What is your date of birth?");
    assert!(reply.contains("don't know my date of birth"), "{reply}");
    // Asked for what it cannot know, a normal person leaves about
    // LEAVE_WHEN_UNKNOWN of the time even on the first question.
    let left = (0..2000)
        .filter(|s| {
            let mut p = Person::new(
                transfer_facts(),
                "cooperative",
                sparring_types::Patience::Normal,
                Stream::derive(*s, "person", &[]),
            );
            p.answer("What is your passport number?") == Move::Leave
        })
        .count();
    let want = sparring_engine::defaults::LEAVE_WHEN_UNKNOWN * 2000.0;
    assert!((left as f64 - want).abs() < 90.0, "{left}");
}

/// A shop whose orders list items that are options of a product: an
/// exchange's person holds the item it has and the option it wants, says
/// both in words (never their ids), and the goal carries the ids, the new
/// one another available option of the same product.
#[test]
fn an_exchange_person_wants_another_option_of_the_same_product() {
    let spec = sparring_types::Spec::from_value(&serde_json::json!({
        "name": "shop",
        "system_prompt": "You help customers of a shop with their orders.",
        "tools": [
            {"name": "get_order", "description": "Look up an order.",
             "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}},
                            "required": ["order_id"]}},
            {"name": "get_product", "description": "Look up a product and its options.",
             "inputSchema": {"type": "object", "properties": {"product_id": {"type": "string"}},
                            "required": ["product_id"]}},
            {"name": "exchange_order_items",
             "description": "Exchange items of a delivered order for other options of the same product.",
             "inputSchema": {"type": "object", "properties": {
                 "order_id": {"type": "string"},
                 "item_ids": {"type": "array", "items": {"type": "string"}},
                 "new_item_ids": {"type": "array", "items": {"type": "string"}}},
                 "required": ["order_id", "item_ids", "new_item_ids"]}}
        ],
        "fixtures": {
            "orders": [
                {"order_id": "#O1", "status": "delivered", "items": [
                    {"item_id": "111", "product_id": "P1", "name": "Lamp", "options": {"color": "red"}}]},
                {"order_id": "#O2", "status": "delivered", "items": [
                    {"item_id": "222", "product_id": "P2", "name": "Mug", "options": {"color": "white"}}]}
            ],
            "products": [
                {"product_id": "P1", "name": "Lamp", "variants": {
                    "111": {"item_id": "111", "options": {"color": "red"}, "available": true},
                    "112": {"item_id": "112", "options": {"color": "blue"}, "available": true},
                    "113": {"item_id": "113", "options": {"color": "gold"}, "available": false}}},
                {"product_id": "P2", "name": "Mug", "variants": {
                    "222": {"item_id": "222", "options": {"color": "white"}, "available": true},
                    "223": {"item_id": "223", "options": {"color": "black"}, "available": true}}}
            ]
        }
    }))
    .unwrap();
    let p = plan(
        &spec,
        &SimulateOptions {
            situations: Some(60),
            unique_situations: true,
            ..SimulateOptions::default()
        },
    )
    .unwrap();
    let mut seen = 0;
    for t in &p.tasks {
        let s = &t.situation;
        if s.axes.get("tool").map(String::as_str) != Some("exchange_order_items")
            || s.axes.get("world_state").map(String::as_str) != Some("exists")
        {
            continue;
        }
        seen += 1;
        let goal = s.goal.as_ref().unwrap();
        let arg = |k: &str| goal.arguments.get(k).and_then(|v| v.as_str()).unwrap_or("");
        let (old, new) = (arg("item_ids"), arg("new_item_ids"));
        let expected = match arg("order_id") {
            "#O1" => ("111", "112", "the Lamp in red", "the Lamp in blue"),
            "#O2" => ("222", "223", "the Mug in white", "the Mug in black"),
            other => panic!("{other}: {goal:?}"),
        };
        assert_eq!((old, new), (expected.0, expected.1), "{goal:?}");
        let knows = &t.persona.knows;
        assert_eq!(knows["item_ids"], expected.2);
        assert_eq!(knows["new_item_ids"], expected.3);
        if s.tier != sparring_types::Tier::Ambiguous {
            assert!(t.ask.contains(expected.3), "{}", t.ask);
            assert!(!t.ask.contains(new), "{}", t.ask);
        }
    }
    assert!(seen >= 2, "{seen}");
}
