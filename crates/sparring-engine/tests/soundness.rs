//! The soundness figures of `run.json` and their warning: whether the agent
//! reached the situations' tools and whether the person held what they need.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::float_cmp
)]

use sparring_engine::run::{RunConfig, run};
use sparring_testkit::{ScriptedAgent, shop_spec};
use sparring_types::{Agent, Message, Role, Row, RunSummary, SimulateOptions};
use std::sync::Arc;

async fn simulate(agent: ScriptedAgent) -> (Vec<Row>, RunSummary) {
    let mut rows: Vec<Row> = Vec::new();
    let agent: Arc<dyn Agent> = Arc::new(agent);
    let options = SimulateOptions {
        seed: 5,
        ..SimulateOptions::default()
    };
    let config = RunConfig::new(Arc::new(shop_spec()), options, agent);
    let summary = run(config, &mut rows, &mut |_| {}).await.unwrap();
    (rows, summary)
}

#[tokio::test]
async fn an_agent_that_never_calls_a_tool_is_reported_and_warned_about() {
    let idle = ScriptedAgent::new("idle", |_| {
        Message::text(Role::Assistant, "Sorry, I can't help with that today.")
    });
    let (rows, summary) = simulate(idle).await;
    assert!(rows.len() >= 10);
    let s = &summary.soundness;
    assert_eq!(s.reached_a_tool, 0.0);
    assert_eq!(s.goal_tool_called, 0.0);
    assert_eq!(s.act_inform_goal_tool_called, 0.0);
    assert!(s.act_inform_rows > 0);
    assert!(s.tools_called.is_empty());
    assert_eq!(s.tools_never_called.len(), shop_spec().tools.len());
    assert!(s.goal_rows > 0 && s.goal_rows <= rows.len() as u64);
    assert!(
        summary
            .warnings
            .iter()
            .any(|w| w.starts_with("100 % of rows never reached a tool")),
        "{:?}",
        summary.warnings
    );
}

#[tokio::test]
async fn the_goal_tool_share_counts_the_calls_of_each_situations_tool() {
    // Calls get_order with the first id of the ask, then finishes.
    let reader = ScriptedAgent::new("reader", |messages| {
        if messages.iter().any(|m| m.role == Role::Tool) {
            return Message::text(Role::Assistant, "Here is what I found.");
        }
        let ask = messages
            .iter()
            .find(|m| m.role == Role::User)
            .map(|m| m.content_str().to_owned())
            .unwrap_or_default();
        let id = ask
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '#')))
            .find(|w| w.chars().any(|c| c.is_ascii_digit()))
            .unwrap_or("#W1001")
            .to_owned();
        sparring_testkit::tool_call("get_order", &serde_json::json!({"order_id": id}))
    });
    let (rows, summary) = simulate(reader).await;
    let s = &summary.soundness;
    assert_eq!(s.tools_called, vec!["get_order".to_owned()]);
    let about_a_tool: Vec<&Row> = rows
        .iter()
        .filter(|r| {
            r.situation.axes.get("tool").is_some_and(|t| t != "none")
                && r.lineage.arm != sparring_types::Arm::Seed
        })
        .collect();
    let about_get_order = about_a_tool
        .iter()
        .filter(|r| r.situation.axes["tool"] == "get_order")
        .count();
    assert_eq!(s.goal_rows, about_a_tool.len() as u64);
    let want = about_get_order as f64 / about_a_tool.len() as f64;
    assert!((s.goal_tool_called - want).abs() < 1e-9, "{s:?}");
    // The figure: `act` and `inform` rows only, by the goal's tool.
    let act_inform: Vec<&&Row> = about_a_tool
        .iter()
        .filter(|r| {
            r.situation.goal.as_ref().is_some_and(|g| {
                matches!(
                    g.kind,
                    sparring_types::GoalKind::Act | sparring_types::GoalKind::Inform
                )
            })
        })
        .collect();
    let called = act_inform
        .iter()
        .filter(|r| r.situation.goal.as_ref().and_then(|g| g.tool.as_deref()) == Some("get_order"))
        .count();
    assert!(!act_inform.is_empty() && act_inform.len() < about_a_tool.len());
    assert_eq!(s.act_inform_rows, act_inform.len() as u64);
    let want = called as f64 / act_inform.len() as f64;
    assert!((s.act_inform_goal_tool_called - want).abs() < 1e-9, "{s:?}");
    assert!(s.reached_a_tool > 0.9, "{s:?}");
    assert!(s.faults_fired <= s.faults_scheduled);
    assert!(
        !summary
            .warnings
            .iter()
            .any(|w| w.contains("never reached a tool")),
        "{:?}",
        summary.warnings
    );
}
