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

/// The fault agent of the CLI's suite (`faults.py MODE STATE`): sequential,
/// with one culprit conversation that gets the fault on every request.
fn faults(mode: &str, state: &Path) -> String {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../sparring-cli/tests/agents/faults.py");
    format!("python3 {} {mode} {}", script.display(), state.display())
}

/// Eight conversations in flight at once, `requests` requests each, one
/// after another; returns each request's id and outcome, the culprit the
/// agent chose, the processes started and the second replies dropped.
async fn eight_in_flight(
    mode: &str,
    timeout: Duration,
    requests: usize,
) -> (Vec<(String, Result<String, String>)>, String, u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("culprit");
    let agent = Arc::new(
        CommandAgent::start(&faults(mode, &state), timeout, None)
            .await
            .unwrap(),
    );
    let mut set = tokio::task::JoinSet::new();
    for c in 0..8 {
        let agent = Arc::clone(&agent);
        set.spawn(async move {
            let mut out = Vec::new();
            for r in 0..requests {
                let id = format!("c{c}-{r}");
                let reply = agent
                    .respond(AgentRequest {
                        id: id.clone(),
                        messages: vec![Message::text(Role::User, format!("conversation {c}"))],
                        tools: Arc::new(Vec::new()),
                    })
                    .await;
                out.push((
                    id,
                    reply
                        .map(|r| r.message.content_str().to_owned())
                        .map_err(|e| e.message),
                ));
            }
            out
        });
    }
    let mut out = Vec::new();
    while let Some(done) = set.join_next().await {
        out.extend(done.unwrap());
    }
    out.sort();
    let culprit = std::fs::read_to_string(&state).unwrap_or_default();
    (out, culprit, agent.starts(), agent.dropped_replies())
}

/// Every fault costs its own request only: the culprit fails, the seven
/// innocent requests in flight with it are sent again and answered, and the
/// process was restarted. (A second reply to an answered id is no fault:
/// [`a_second_reply_is_dropped_and_nothing_restarts`].)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_costs_its_own_request_only() {
    for (mode, needle) in [
        ("hang", "did not answer"),
        ("crash", "the agent process exited"),
        ("garbage", "not JSON"),
        ("unknown-id", "unknown id"),
        ("badutf8", "not UTF-8"),
        ("closeout", "closed its standard output"),
    ] {
        // A hang costs its timeout, so it gets a short one; the other faults
        // restart Python processes, which a loaded machine starts slowly.
        let timeout = if mode == "hang" { 2 } else { 20 };
        let (out, culprit, starts, _) =
            eight_in_flight(mode, Duration::from_secs(timeout), 1).await;
        assert!(!culprit.is_empty(), "{mode}: the agent chose no culprit");
        let failed: Vec<_> = out.iter().filter(|(_, r)| r.is_err()).collect();
        assert_eq!(failed.len(), 1, "{mode}: {out:?}");
        let (id, err) = failed[0];
        assert_eq!(
            id,
            &format!("{culprit}-0"),
            "{mode}: the wrong request failed"
        );
        let err = err.as_ref().unwrap_err();
        assert!(err.contains(needle), "{mode}: {err}");
        assert!(
            starts >= 2,
            "{mode}: the process was never restarted ({starts})"
        );
        for (id, r) in &out {
            if let Ok(text) = r {
                assert_eq!(text, "Thanks, all noted.", "{mode} {id}");
            }
        }
    }
}

/// A culprit conversation whose every reply comes twice, three requests of
/// it and of seven others in flight: every request is answered, the second
/// replies are dropped, and the process is never restarted. Before, each
/// second reply restarted it and requests in flight failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_reply_is_dropped_and_nothing_restarts() {
    let (out, culprit, starts, dropped) =
        eight_in_flight("twice", Duration::from_secs(20), 3).await;
    assert!(!culprit.is_empty(), "the agent chose no culprit");
    assert_eq!(out.len(), 24);
    for (id, r) in &out {
        assert_eq!(r.as_deref(), Ok("Thanks, all noted."), "{id}");
    }
    assert_eq!(starts, 1, "the process was restarted");
    assert_eq!(dropped, 3, "one second reply per request of the culprit");
}

/// An agent that never reads its stdin: once the pipe is full a write
/// would block for ever; it times out instead, and every request ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_stdin_pipe_does_not_block_for_ever() {
    let agent = Arc::new(
        CommandAgent::start("sleep 300", Duration::from_secs(1), None)
            .await
            .unwrap(),
    );
    let big = "x".repeat(200_000);
    let started = std::time::Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for c in 0..4 {
        let agent = Arc::clone(&agent);
        let big = big.clone();
        set.spawn(async move {
            agent
                .respond(AgentRequest {
                    id: format!("c{c}-0"),
                    messages: vec![Message::text(Role::User, big)],
                    tools: Arc::new(Vec::new()),
                })
                .await
        });
    }
    while let Some(done) = set.join_next().await {
        let e = done.unwrap().unwrap_err();
        assert!(
            e.message.contains("did not read its input") || e.message.contains("did not answer"),
            "{e}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

/// A command grader pool grades rows at once: eight rows, each taking the
/// grader 0.5 s, through a pool of eight processes take about 0.5 s, not 4
/// (once the processes are started).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grader_pool_grades_rows_at_once() {
    use sparring_io::command_grader::CommandGrader;
    use sparring_types::Grader as _;
    let grader = Arc::new(
        CommandGrader::start_pool(
            r#"python3 -c '
import json, sys, time
for line in sys.stdin:
    r = json.loads(line)
    time.sleep(0.5)
    print(json.dumps({"id": r["id"], "reward": 1}), flush=True)
'"#,
            Duration::from_secs(10),
            8,
        )
        .unwrap(),
    );
    // The first batch starts the processes (Python starts slowly on a
    // loaded machine); the second is timed.
    let mut took = Duration::ZERO;
    for _ in 0..2 {
        let started = std::time::Instant::now();
        let mut set = tokio::task::JoinSet::new();
        for i in 0..8 {
            let grader = Arc::clone(&grader);
            set.spawn(async move {
                let row = sparring_testkit::row("t", &format!("row_{i}"), None, "sig", Vec::new());
                grader.grade(&row).await.map(|v| v.reward)
            });
        }
        while let Some(done) = set.join_next().await {
            assert!((done.unwrap().unwrap() - 1.0).abs() < f64::EPSILON);
        }
        took = started.elapsed();
    }
    assert!(
        took < Duration::from_secs(2),
        "graded one at a time: {took:?}"
    );
}
