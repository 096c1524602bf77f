//! An in-process closure agent (`agent_fn`) through the whole engine: it
//! runs the tool loop against the sandbox world and its rows say who it is.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::Value;
use sparring_engine::run::{Progress, RunConfig, run};
use sparring_testkit::shop_spec;
use sparring_types::{
    Agent, AgentError, AgentReply, EndedBy, FunctionCall, Message, Role, Row, SimulateOptions,
    ToolCall, agent_fn,
};
use std::sync::Arc;

/// Calls `get_order` with the first `#W…` id of the opening ask, then tells
/// the person what the world answered; fails on purpose when the ask has the
/// word "broken", to show a closure's error becomes that row's `agent_error`.
fn lookup_agent() -> Arc<dyn Agent> {
    Arc::new(agent_fn("lookup", |request| async move {
        let ask = request.messages[1].content_str().to_owned();
        if ask.contains("broken") {
            return Err(AgentError::agent("refusing broken things"));
        }
        let last = request.messages.last().unwrap();
        if last.role == Role::Tool {
            let answer: Value = serde_json::from_str(last.content_str()).unwrap_or_default();
            let text = if answer["ok"] == true {
                "I found your order.".to_owned()
            } else {
                format!("I could not find it: {}", answer["error"]["kind"])
            };
            return Ok(AgentReply::from(Message::text(Role::Assistant, text)));
        }
        let id = ask
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '#'))
            .find(|w| w.starts_with("#W"));
        let Some(id) = id else {
            return Ok(AgentReply::from(Message::text(
                Role::Assistant,
                "Thanks, that is all I can do.",
            )));
        };
        let mut reply = Message::text(Role::Assistant, "");
        reply.content = None;
        reply.tool_calls = vec![ToolCall {
            id: String::new(),
            kind: "function".to_owned(),
            function: FunctionCall {
                name: "get_order".to_owned(),
                arguments: format!("{{\"order_id\": \"{id}\"}}"),
            },
        }];
        Ok(AgentReply::from(reply))
    }))
}

#[tokio::test]
async fn a_closure_agent_runs_the_tool_loop() {
    let mut rows: Vec<Row> = Vec::new();
    let config = RunConfig::new(
        Arc::new(shop_spec()),
        SimulateOptions {
            seed: 5,
            ..SimulateOptions::default()
        },
        lookup_agent(),
    );
    let summary = run(config, &mut rows, &mut |_: &Progress| {})
        .await
        .unwrap();
    assert_eq!(summary.counts.rows as usize, rows.len());
    assert!(rows.iter().all(|r| r.model_version == "fn:lookup"));
    let with_call: Vec<&Row> = rows
        .iter()
        .filter(|r| r.messages.iter().any(|m| !m.tool_calls.is_empty()))
        .collect();
    assert!(!with_call.is_empty(), "some asks carry an order id");
    for row in &with_call {
        // The world answered the call and the closure saw the answer.
        let tool = row.messages.iter().find(|m| m.role == Role::Tool).unwrap();
        assert!(
            tool.content_str().starts_with('{'),
            "{}",
            tool.content_str()
        );
        assert_eq!(row.ended_by, EndedBy::AgentDone);
    }
    let failed: Vec<&Row> = rows
        .iter()
        .filter(|r| r.ended_by == EndedBy::AgentError)
        .collect();
    assert!(!failed.is_empty(), "the seed ask says `broken`");
    assert!(
        failed
            .iter()
            .all(|r| r.error.as_deref() == Some("refusing broken things"))
    );
}

/// A backend whose every request fails (a model at an unreachable URL) gives
/// rows that end `backend_error`; graded, every one of them fails with the
/// error as its reason. They once graded reward 1: nothing in an empty
/// conversation broke a conduct check.
#[tokio::test]
async fn a_dead_backend_never_passes() {
    let dead: Arc<dyn Agent> = Arc::new(agent_fn("dead", |_request| async move {
        Err::<AgentReply, _>(AgentError::backend("cannot connect to 127.0.0.1:9"))
    }));
    let mut rows: Vec<Row> = Vec::new();
    let config = RunConfig::new(
        Arc::new(shop_spec()),
        SimulateOptions {
            grade: true,
            ..SimulateOptions::default()
        },
        dead,
    );
    run(config, &mut rows, &mut |_: &Progress| {})
        .await
        .unwrap();
    assert!(!rows.is_empty());
    for row in &rows {
        assert_eq!(row.ended_by, EndedBy::BackendError);
        assert_eq!(row.reward, Some(0.0), "{}", row.row_id);
        assert_eq!(row.failure_class.as_deref(), Some("backend_error"));
        assert!(
            row.reason
                .as_deref()
                .is_some_and(|r| r.starts_with("backend_error: cannot connect")),
            "{:?}",
            row.reason
        );
    }
}
