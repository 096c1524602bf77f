//! Who owns what, across a run: an owner-less record has one owner in
//! every situation of a run, and `several` is several records of one owner
//! or no situation at all.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;
use sparring_engine::plan::{Task, draw_unique, plan};
use sparring_types::{SimulateOptions, Spec};
use std::collections::{BTreeMap, BTreeSet};

fn tasks(spec: &Spec, options: &SimulateOptions) -> Vec<Task> {
    let plan = plan(spec, options).unwrap();
    let (more, _) =
        draw_unique(spec, options, &plan, 0, plan.unique_left, plan.tasks.len()).unwrap();
    let mut tasks = plan.tasks;
    tasks.extend(more);
    tasks
}

/// Tickets name no owner; the customers are fixtures, so every situation's
/// world holds the same tickets and the same customers.
fn helpdesk() -> Spec {
    let ticket = json!({"type": "object", "properties": {"ticket_id": {"type": "string",
        "description": "The ticket id, such as 'T-501'."}}, "required": ["ticket_id"]});
    Spec::from_value(&json!({
        "name": "helpdesk",
        "system_prompt": "You help customers with their tickets.",
        "tools": [
            {"name": "get_ticket", "description": "Look up a ticket.", "inputSchema": ticket},
            {"name": "close_ticket", "description": "Close an open ticket.", "inputSchema": ticket},
        ],
        "fixtures": {
            "tickets": [
                {"ticket_id": "T-501", "status": "open", "subject": "login"},
                {"ticket_id": "T-502", "status": "open", "subject": "billing"},
                {"ticket_id": "T-503", "status": "open", "subject": "refund"},
            ],
            "customers": [
                {"customer_id": "C-1", "name": "Ana Lima", "email": "ana.lima@mail.test"},
                {"customer_id": "C-2", "name": "Ben Okafor", "email": "ben.okafor@mail.test"},
                {"customer_id": "C-3", "name": "Chloe Martin", "email": "chloe.martin@mail.test"},
                {"customer_id": "C-4", "name": "Grace Kim", "email": "grace.kim@mail.test"},
            ],
        },
    }))
    .unwrap()
}

#[test]
fn an_owner_less_record_has_one_owner_in_every_situation_of_a_run() {
    let spec = helpdesk();
    for seed in [0, 7] {
        let options = SimulateOptions {
            seed,
            situations: Some(120),
            unique_situations: true,
            ..SimulateOptions::default()
        };
        let mut owners: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for task in tasks(&spec, &options) {
            let state = task.situation.axes["world_state"].as_str();
            if !matches!(state, "exists" | "terminal" | "several") {
                continue;
            }
            if let (Some((_, id)), Some(owner)) = (&task.facts.id, &task.persona.owner) {
                owners.entry(id.clone()).or_default().insert(owner.clone());
            }
        }
        assert!(owners.len() >= 2, "seed {seed}: {owners:?}");
        for (id, who) in &owners {
            assert_eq!(who.len(), 1, "seed {seed}: ticket {id} is owned by {who:?}");
            assert!(
                who.iter().all(|o| o.starts_with("customers/")),
                "seed {seed}: {who:?}"
            );
        }
    }
}
