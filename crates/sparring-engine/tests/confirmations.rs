//! The person's answers to the agent's requests to confirm ride on the row:
//! the turn, the stance, the answer and what was corrected.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring_engine::run::{RunConfig, run};
use sparring_testkit::{ScriptedAgent, shop_spec};
use sparring_types::{ConfirmationKind, Message, Patience, Role, Row, SimulateOptions};
use std::sync::Arc;

/// The wrong order the agent proposes first.
const WRONG: &str = "#W1999";

/// An agent that proposes a refund of the wrong order, then asks to confirm
/// the person's own, then finishes.
fn proposer() -> ScriptedAgent {
    ScriptedAgent::new("proposer", |messages| {
        let users = messages.iter().filter(|m| m.role == Role::User).count();
        Message::text(
            Role::Assistant,
            match users {
                1 => format!("I found order {WRONG}. Shall I refund it?"),
                2 => "Thanks. Shall I go ahead with your order now?".to_owned(),
                _ => "All done.".to_owned(),
            },
        )
    })
}

async fn rows(agent: ScriptedAgent) -> Vec<Row> {
    let mut rows = Vec::new();
    let options = SimulateOptions {
        patience: Patience::Endless,
        ..SimulateOptions::default()
    };
    let config = RunConfig::new(Arc::new(shop_spec()), options, Arc::new(agent));
    run(config, &mut rows, &mut |_| {}).await.unwrap();
    rows
}

#[tokio::test]
async fn every_answer_to_a_confirmation_is_on_the_row() {
    let rows = rows(proposer()).await;
    let mut corrected = 0;
    for row in &rows {
        let c = &row.confirmations;
        assert_eq!(c.len(), 2, "{}: {c:?}", row.row_id);
        assert_eq!((c[0].turn, c[1].turn), (1, 2));
        for one in c {
            assert_eq!(one.stance, row.persona.stance);
        }
        let own = row
            .persona
            .id_field
            .as_ref()
            .and_then(|f| row.persona.knows.get(f).map(|v| (f, v)));
        match own {
            // A person with an order of its own says no to someone else's,
            // naming its own.
            Some((field, id)) if id != WRONG => {
                corrected += 1;
                assert_eq!(c[0].answer, ConfirmationKind::Correct, "{c:?}");
                let fix = c[0].corrected.as_ref().unwrap();
                assert_eq!(
                    (
                        fix.field.as_str(),
                        fix.proposed.as_str(),
                        fix.actual.as_str()
                    ),
                    (field.as_str(), WRONG, id.as_str())
                );
                let answer = row
                    .messages
                    .iter()
                    .filter(|m| m.role == Role::User)
                    .nth(1)
                    .unwrap();
                assert!(answer.content_str().contains(id.as_str()), "{answer:?}");
            }
            _ => assert_ne!(c[0].answer, ConfirmationKind::Correct, "{c:?}"),
        }
        // The second proposal names nothing wrong: an answer by stance.
        assert_ne!(c[1].answer, ConfirmationKind::Correct, "{c:?}");
        assert_eq!(c[1].corrected, None);
        // Only a manipulative person tries to change the terms, and it
        // never merely pushes.
        let manipulative = c[1].stance == sparring_types::Stance::Manipulative;
        match c[1].answer {
            ConfirmationKind::ChangeTerms => assert!(manipulative, "{c:?}"),
            ConfirmationKind::Push => assert!(!manipulative, "{c:?}"),
            _ => {}
        }
        // On the wire: typed names, the correction only when there is one.
        let json = serde_json::to_value(row).unwrap();
        let wire = json["confirmations"].as_array().unwrap();
        assert_eq!(wire[1]["answer"], c[1].answer.as_str());
        assert!(wire[1].get("corrected").is_none());
    }
    assert!(corrected * 2 > rows.len(), "{corrected} of {}", rows.len());
}

#[tokio::test]
async fn a_row_without_a_confirmation_carries_none() {
    let agent = ScriptedAgent::new("done", |_| Message::text(Role::Assistant, "All done."));
    for row in rows(agent).await {
        assert!(row.confirmations.is_empty());
        let json = serde_json::to_value(&row).unwrap();
        assert!(json.get("confirmations").is_none(), "{json}");
    }
}
