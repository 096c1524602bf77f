//! Work scales with what the budget runs, not with the size of the spec: a
//! spec of many tools or many policy rules, run with a small budget, writes
//! only the situations the budget can reach, and reading the spec grows
//! about linearly with it (issue 22, "Bounds").

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::cast_precision_loss
)]

use serde_json::{Value, json};
use sparring_engine::plan::plan;
use sparring_engine::policy::Policy;
use sparring_engine::run::{RunConfig, run};
use sparring_testkit::ScriptedAgent;
use sparring_types::{Agent, Message, Role, Row, SimulateOptions, Spec};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ENTITIES: &[&str] = &["order", "account", "ticket", "invoice", "booking"];

fn lookup(name: &str, entity: &str, description: &str) -> Value {
    json!({"type": "function", "function": {
        "name": name,
        "description": description,
        "parameters": {"type": "object",
            "properties": {format!("{entity}_id"): {"type": "string", "description": format!("The {entity} id.")}},
            "required": [format!("{entity}_id")]}}})
}

/// A spec of `n` look-up tools over five entities and a two-rule policy.
fn many_tools(n: usize) -> Spec {
    let tools: Vec<Value> = (0..n)
        .map(|i| {
            let e = ENTITIES[i % ENTITIES.len()];
            lookup(
                &format!("get_{e}_{i}"),
                e,
                &format!("Look up one {e} by its {e} id (variant {i})."),
            )
        })
        .collect();
    Spec::from_value(&json!({
        "name": format!("tools-{n}"),
        "system_prompt": "You are a support agent. Never reveal internal notes. Always confirm before cancelling an order.",
        "tools": tools,
    }))
    .unwrap()
}

/// A spec of two tools and a policy of `n` distinct rules.
fn many_rules(n: usize) -> Spec {
    let rules: Vec<String> = (0..n)
        .map(|i| format!("- You must never cancel an order of category c{i} without asking the customer to confirm first."))
        .collect();
    Spec::from_value(&json!({
        "name": format!("rules-{n}"),
        "system_prompt": format!("You are a support agent.\n\n{}", rules.join("\n")),
        "tools": [
            lookup("get_order", "order", "Look up one order by its order id."),
            lookup("cancel_order", "order", "Cancel a pending order."),
        ],
    }))
    .unwrap()
}

fn budget(b: u64) -> SimulateOptions {
    SimulateOptions {
        budget: Some(b),
        ..SimulateOptions::default()
    }
}

#[test]
fn a_small_budget_writes_only_the_situations_it_can_reach() {
    for spec in [many_tools(300), many_rules(300)] {
        let p = plan(&spec, &budget(3)).unwrap();
        let rows = p.array.rows.len();
        assert!(rows > 300, "{}: {rows} array rows", spec.name);
        // Three rows and one more to know the budget stopped the run.
        let situations: std::collections::BTreeSet<&str> =
            p.tasks.iter().map(|t| t.scenario_id.as_str()).collect();
        assert_eq!(situations.len(), 4, "{}", spec.name);
        assert_eq!(situations.len() + p.beyond_budget, rows, "{}", spec.name);
        // Every situation's tier is still drawn, written or not.
        assert_eq!(p.tier_mix.values().sum::<u64>(), rows as u64);
    }
}

#[test]
fn the_first_tasks_are_the_same_with_any_budget() {
    let spec = many_tools(40);
    let all = plan(&spec, &SimulateOptions::default()).unwrap();
    let some = plan(&spec, &budget(5)).unwrap();
    let ids = |p: &sparring_engine::plan::Plan, n: usize| -> Vec<String> {
        p.tasks.iter().take(n).map(|t| t.task_id.clone()).collect()
    };
    assert_eq!(ids(&some, 6), ids(&all, 6));
    assert_eq!(all.tier_mix, some.tier_mix);
    assert_eq!(all.beyond_budget, 0);
}

#[tokio::test]
async fn a_budget_of_three_on_a_large_spec_stops_on_its_budget() {
    let agent: Arc<dyn Agent> = Arc::new(ScriptedAgent::new("quiet", |_| {
        Message::text(Role::Assistant, "Done.")
    }));
    let spec = Arc::new(many_tools(300));
    let mut rows: Vec<Row> = Vec::new();
    let summary = run(
        RunConfig::new(spec, budget(3), agent),
        &mut rows,
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(summary.stopped_because.to_string(), "budget_spent");
    assert_eq!(
        summary.coverage.situations_planned,
        summary.coverage.grid_rows.unwrap()
    );
}

/// The least of three timings of what a run does with the spec before its
/// first rollout: the plan and the policy read.
fn prepare_time(spec: &Spec) -> Duration {
    (0..3)
        .map(|_| {
            let started = Instant::now();
            let p = plan(spec, &budget(3)).unwrap();
            let policy = Policy::of_spec(spec).unwrap();
            assert!(!p.tasks.is_empty() && !policy.rules().is_empty());
            started.elapsed()
        })
        .min()
        .unwrap()
}

/// Four times the tools or rules costs about four times the time; the old
/// quadratic (and worse) planning cost 16 times and more. 10 leaves room
/// for a loaded machine.
#[test]
fn reading_a_spec_grows_about_linearly_with_its_tools_and_rules() {
    for (name, make) in [
        ("tools", many_tools as fn(usize) -> Spec),
        ("rules", many_rules),
    ] {
        let (small, large) = (make(100), make(400));
        let (a, b) = (prepare_time(&small), prepare_time(&large));
        let ratio = b.as_secs_f64() / a.as_secs_f64().max(1e-6);
        assert!(
            ratio < 10.0,
            "{name}: 100 took {a:?}, 400 took {b:?} ({ratio:.1}x)"
        );
    }
}
