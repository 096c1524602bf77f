//! The model-backed writer and person over in-process scripted models:
//! asks rewritten with the world's ids, determinism across concurrency,
//! invented facts refused and replaced by the templates' words, and a
//! person prompt written from the person's side. The same paths over HTTP
//! (the fake OpenAI-compatible server) are in `sparring-cli/tests/cli/models.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring_engine::model_people::{ModelPerson, unknown_ids};
use sparring_engine::run::{RunConfig, run};
use sparring_testkit::{ScriptedAgent, shop_spec};
use sparring_types::{Agent, Message, Role, Row, RunSummary, SimulateOptions};
use std::sync::Arc;

/// A typed summary part as JSON, for the tests' field-by-name checks.
fn json<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap()
}

/// An agent that asks one question, then finishes.
fn asking() -> ScriptedAgent {
    ScriptedAgent::new("asking", |messages| {
        let users = messages.iter().filter(|m| m.role == Role::User).count();
        Message::text(
            Role::Assistant,
            if users <= 1 {
                "What is your order number?"
            } else {
                "Thanks, that is sorted."
            },
        )
    })
}

/// A writer that puts the facts it was told, word for word, into `n`
/// phrasings (or, with `invent`, an order number nobody gave it).
fn writer(invent: bool) -> ScriptedAgent {
    ScriptedAgent::new(
        if invent { "inventive" } else { "writer" },
        move |messages| {
            let user = messages
                .iter()
                .find(|m| m.role == Role::User)
                .map_or("", Message::content_str);
            let system = messages[0].content_str();
            let n: usize = system
                .split("Write ")
                .nth(1)
                .and_then(|t| t.split_whitespace().next())
                .and_then(|w| w.parse().ok())
                .unwrap();
            let ids: Vec<&str> = user
                .lines()
                .filter(|l| l.starts_with("Their ") && l.contains(" id: "))
                .filter_map(|l| l.split(": ").nth(1))
                .map(|v| v.trim_end_matches('.'))
                .collect();
            let extra = if invent { " or maybe #W99999" } else { "" };
            let phrasings: Vec<String> = (0..n)
                .map(|k| format!("written {k}: help with {}{extra}", ids.join(" and ")))
                .collect();
            Message::text(
                Role::Assistant,
                serde_json::json!({ "phrasings": phrasings }).to_string(),
            )
        },
    )
}

async fn simulate(
    concurrency: usize,
    writer: Option<Arc<dyn Agent>>,
    person: Option<Arc<dyn Agent>>,
) -> (Vec<Row>, RunSummary) {
    simulate_known(
        concurrency,
        writer,
        person,
        std::collections::BTreeMap::new(),
    )
    .await
}

async fn simulate_known(
    concurrency: usize,
    writer: Option<Arc<dyn Agent>>,
    person: Option<Arc<dyn Agent>>,
    written_asks: std::collections::BTreeMap<String, Vec<String>>,
) -> (Vec<Row>, RunSummary) {
    let mut rows = Vec::new();
    let config = RunConfig {
        writer,
        person,
        written_asks,
        ..RunConfig::new(
            Arc::new(shop_spec()),
            SimulateOptions {
                concurrency,
                phrasings: 2,
                patience: sparring_types::Patience::Endless,
                ..SimulateOptions::default()
            },
            Arc::new(asking()),
        )
    };
    let summary = run(config, &mut rows, &mut |_| {}).await.unwrap();
    rows.sort_by(|a, b| a.row_id.cmp(&b.row_id));
    (rows, summary)
}

#[tokio::test]
async fn a_model_writer_writes_the_words_and_the_world_gives_the_ids() {
    let (rows, summary) = simulate(8, Some(Arc::new(writer(false))), None).await;
    let written: Vec<&Row> = rows
        .iter()
        .filter(|r| r.writer_model == "scripted:writer")
        .collect();
    assert!(
        written.len() > rows.len() / 2,
        "{} of {}",
        written.len(),
        rows.len()
    );
    for row in &written {
        let ask = row.messages[1].content_str();
        assert!(ask.starts_with("written "), "{ask}");
        if let Some(id) = row.persona.knows.get("order_id") {
            assert!(ask.contains(id.as_str()), "{ask} lacks {id}");
        }
    }
    // Phrasings of one situation are distinct tasks.
    let tasks: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.task_id.as_str()).collect();
    assert_eq!(tasks.len(), rows.len());
    assert!(summary.degraded.is_empty(), "{:?}", summary.degraded);
    assert_eq!(json(&summary.search)["writer"]["fallbacks"], 0);
    // The same rows at another concurrency.
    let (again, _) = simulate(1, Some(Arc::new(writer(false))), None).await;
    assert_eq!(rows, again);
}

#[tokio::test]
async fn resuming_keeps_the_asks_the_model_wrote_before() {
    let (rows, _) = simulate(4, Some(Arc::new(writer(false))), None).await;
    let mut known: std::collections::BTreeMap<String, Vec<String>> =
        std::collections::BTreeMap::new();
    for r in rows.iter().filter(|r| r.writer_model != "template") {
        known
            .entry(r.scenario_id.clone())
            .or_default()
            .push(r.messages[1].content_str().to_owned());
    }
    // Another model now: every situation is known, so it is never asked,
    // and every task keeps its id.
    let other = Arc::new(writer(true));
    let (again, _) = simulate_known(4, Some(other.clone()), None, known.clone()).await;
    assert_eq!(other.requests(), 0);
    let ids = |rows: &[Row]| -> std::collections::BTreeSet<String> {
        rows.iter().map(|r| r.task_id.clone()).collect()
    };
    assert_eq!(ids(&rows), ids(&again));
    // One phrasing of one situation missing: only that situation is asked
    // for; when the model then fails, the phrasing kept from before stays
    // and the template fills the gap.
    let (scenario, asks) = known.iter_mut().next().unwrap();
    asks.remove(0);
    let (scenario, remaining) = (scenario.clone(), asks.clone());
    assert_eq!(remaining.len(), 1);
    let failing = Arc::new(writer(true));
    let (partly, summary) = simulate_known(4, Some(failing.clone()), None, known).await;
    assert_eq!(failing.requests(), 2, "one situation, asked twice");
    assert_eq!(json(&summary.search)["writer"]["asked"], 1);
    assert_eq!(json(&summary.search)["writer"]["fallbacks"], 1);
    let situation: Vec<&Row> = partly
        .iter()
        .filter(|r| r.scenario_id == scenario)
        .collect();
    assert_eq!(situation.len(), 2);
    assert!(
        situation
            .iter()
            .any(|r| r.messages[1].content_str() == remaining[0]
                && r.writer_model == "scripted:inventive")
    );
    assert!(situation.iter().any(|r| r.writer_model == "template"));
}

#[tokio::test]
async fn a_writer_that_invents_ids_is_refused_and_the_templates_stand_in() {
    let inventive = Arc::new(writer(true));
    let (rows, summary) = simulate(4, Some(inventive.clone()), None).await;
    assert!(rows.iter().all(|r| r.writer_model == "template"));
    assert!(
        rows.iter()
            .all(|r| !r.messages[1].content_str().contains("W99999"))
    );
    assert_eq!(
        summary.degraded,
        vec![sparring_types::Degraded::GeneratorFallback]
    );
    let errors = &summary.search.writer_errors;
    assert!(
        errors[0].contains("`#W99999`, which the person was not given"),
        "{errors:?}"
    );
    // Asked twice per situation (one retry) for one batch, then given up.
    assert!(
        errors.last().unwrap().contains("stopped asking the writer"),
        "{errors:?}"
    );
    assert_eq!(inventive.requests(), 8);
}

#[tokio::test]
async fn a_model_person_that_invents_a_fact_is_replaced_for_that_turn() {
    let liar = ScriptedAgent::new("liar", |_| {
        Message::text(Role::Assistant, "Sure, it's order #ZZ98765, placed by me.")
    });
    let (rows, summary) = simulate(4, None, Some(Arc::new(liar))).await;
    assert!(!rows.is_empty());
    for row in &rows {
        assert_eq!(row.user_model, "scripted:liar");
        for m in row.messages.iter().skip(2).filter(|m| m.role == Role::User) {
            assert!(!m.content_str().contains("ZZ98765"), "{}", m.content_str());
        }
    }
    assert!(
        summary
            .degraded
            .contains(&sparring_types::Degraded::PersonFallback)
    );
    let errors = &summary.search.person_errors;
    assert!(errors[0].contains("could not know"), "{errors:?}");
    // An honest person's words are kept.
    let honest = ScriptedAgent::new("honest", |_| {
        Message::text(Role::Assistant, "I'm not sure, I only want it sorted.")
    });
    let (rows, summary) = simulate(4, None, Some(Arc::new(honest))).await;
    assert!(summary.degraded.is_empty());
    assert!(rows.iter().any(|r| {
        r.messages
            .iter()
            .any(|m| m.content_str() == "I'm not sure, I only want it sorted.")
    }));
}

#[test]
fn the_person_sees_the_conversation_from_its_side() {
    let plan = sparring_engine::plan::plan(&shop_spec(), &SimulateOptions::default()).unwrap();
    let task = plan.tasks.iter().find(|t| t.facts.id.is_some()).unwrap();
    let person = ModelPerson::new(Arc::new(asking())).unwrap();
    let mut call =
        sparring_testkit::tool_call("get_order", &serde_json::json!({"order_id": "#W1"}));
    call.content = Some("Let me look.".into());
    let conversation = vec![
        Message::text(Role::System, "the agent's policy"),
        Message::text(Role::User, task.ask.clone()),
        call.clone(),
        Message::tool_result(&call.tool_calls[0], "{\"ok\": true}"),
        Message::text(Role::Assistant, "What is your email?"),
    ];
    let prompt = person.prompt(task, &conversation);
    let roles: Vec<Role> = prompt.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::System, Role::User, Role::Assistant, Role::User]
    );
    assert!(!prompt[0].content_str().contains("the agent's policy"));
    assert!(prompt[0].content_str().contains(&task.persona.name));
    let (_, id) = task.facts.id.as_ref().unwrap();
    assert!(prompt[0].content_str().contains(id.as_str()));
    assert_eq!(prompt[2].content_str(), task.ask);
    assert_eq!(prompt[3].content_str(), "Let me look.\nWhat is your email?");
    assert!(prompt.iter().all(|m| !m.content_str().contains("\"ok\"")));
}

#[test]
fn unknown_ids_spots_invented_ones() {
    assert_eq!(
        unknown_ids("It's #W1001 or W1002, mail me at a@b.test", &["#W1001"]),
        vec!["W1002".to_owned(), "a@b.test".to_owned()]
    );
    assert!(unknown_ids("It was $18.50 on the 3rd, 2 items", &[]).is_empty());
}
