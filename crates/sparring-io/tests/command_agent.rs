//! One command agent process serving many conversations at once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring_io::command_agent::CommandAgent;
use sparring_types::{Agent, AgentRequest, Message, Role};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// 200 conversations of three turns each, all in flight together through
/// one process that answers in random order: every reply reaches the
/// conversation and turn that asked, the process is never restarted, and
/// replies really did overtake each other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_conversations_through_one_process_out_of_order() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/echo_shuffle.py");
    let agent = Arc::new(
        CommandAgent::start(
            &format!("python3 {}", script.display()),
            Duration::from_mins(1),
            None,
        )
        .await
        .unwrap(),
    );
    let tools = Arc::new(Vec::new());
    let mut conversations = tokio::task::JoinSet::new();
    for c in 0..200 {
        let agent = Arc::clone(&agent);
        let tools = Arc::clone(&tools);
        conversations.spawn(async move {
            let mut messages = vec![
                Message::text(Role::System, "policy"),
                Message::text(Role::User, format!("conversation {c}")),
            ];
            let mut order = Vec::new();
            for turn in 0..3 {
                let id = format!("c{c}-t{turn}");
                let reply = agent
                    .respond(AgentRequest {
                        id: id.clone(),
                        messages: messages.clone(),
                        tools: Arc::clone(&tools),
                    })
                    .await
                    .unwrap();
                let text = reply.message.content_str().to_owned();
                let parts: Vec<&str> = text.split('|').collect();
                assert_eq!(parts[0], id, "reply reached the wrong request");
                assert_eq!(
                    parts[1],
                    messages.len().to_string(),
                    "wrong conversation state"
                );
                order.push(parts[2].parse::<u64>().unwrap());
                messages.push(reply.message);
                messages.push(Message::text(Role::User, "go on"));
            }
            (c, order)
        });
    }
    let mut first_turn_order = Vec::new();
    while let Some(done) = conversations.join_next().await {
        let (c, order) = done.unwrap();
        first_turn_order.push((c, order[0]));
    }
    assert_eq!(first_turn_order.len(), 200);
    assert_eq!(agent.starts(), 1, "the process was never restarted");
    // Requests for turn 0 were sent in conversation order (roughly); if the
    // replies came back in that order too, nothing was out of order.
    first_turn_order.sort_unstable();
    let written: Vec<u64> = first_turn_order.iter().map(|(_, w)| *w).collect();
    let inversions = written.windows(2).filter(|w| w[0] > w[1]).count();
    assert!(
        inversions > 20,
        "replies came back nearly in order ({inversions} inversions)"
    );
}
