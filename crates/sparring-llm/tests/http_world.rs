//! The caller's world behind HTTP (`execute http://…`), against the
//! testkit's fake world on a loopback port.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;
use sparring_llm::HttpWorld;
use sparring_testkit::fake_world::FakeWorld;
use sparring_types::{ExecuteRequest, RolloutContext, ToolExecutor};
use std::time::Duration;

fn request(id: &str, tool: &str, rollout_index: u64) -> ExecuteRequest {
    ExecuteRequest {
        id: id.to_owned(),
        tool: tool.to_owned(),
        arguments: json!({"order_id": "#W1001"}),
        rollout: RolloutContext {
            prompt: "where is #W1001?".to_owned(),
            rollout_index,
            seed: 9,
        },
    }
}

/// A fake world and the HTTP world reaching it with `timeout`.
async fn fake_world(timeout: Duration) -> (FakeWorld, HttpWorld) {
    let fake = FakeWorld::start().await.unwrap();
    let world = HttpWorld::start(&fake.url(), timeout, None).await.unwrap();
    (fake, world)
}

#[tokio::test]
async fn posts_each_call_with_its_rollout_and_keeps_answers_apart() {
    let (fake, world) = fake_world(Duration::from_secs(5)).await;
    let a = world.execute(request("w-1", "get_order", 3)).await.unwrap();
    assert_eq!(a["ok"], true);
    assert_eq!(a["result"]["served_by"], "fake-world");
    assert_eq!(a["result"]["arguments"]["order_id"], "#W1001");
    assert_eq!(a["result"]["call"], 1);
    // State per rollout: a second call of rollout 3 is its second, a call of
    // rollout 4 is that rollout's first.
    let b = world
        .execute(request("w-2", "cancel_order", 3))
        .await
        .unwrap();
    assert_eq!(b["result"]["call"], 2);
    let c = world.execute(request("w-3", "get_order", 4)).await.unwrap();
    assert_eq!(c["result"]["call"], 1);
    let sent = fake.requests();
    assert_eq!(sent.len(), 3);
    assert_eq!(
        sent[0],
        json!({"id": "w-1", "tool": "get_order", "arguments": {"order_id": "#W1001"},
               "rollout": {"prompt": "where is #W1001?", "rollout_index": 3, "seed": 9}})
    );
    assert!(world.describe().starts_with("http:http://127.0.0.1:"));
}

#[tokio::test]
async fn refusals_pass_through_and_broken_answers_fail_the_call() {
    let (_fake, world) = fake_world(Duration::from_millis(800)).await;
    let no = world.execute(request("1", "refuse", 0)).await.unwrap();
    assert_eq!(
        no,
        json!({"ok": false, "error": {"kind": "not_found", "message": "no such thing", "hint": "ask for another"}})
    );
    let boom = world.execute(request("2", "boom", 0)).await.unwrap_err();
    assert!(
        boom.0.contains("HTTP 500") && boom.0.contains("kaput"),
        "{boom}"
    );
    let garbage = world.execute(request("3", "garbage", 0)).await.unwrap_err();
    assert!(garbage.0.contains("not JSON"), "{garbage}");
    let slow = world.execute(request("4", "slow", 0)).await.unwrap_err();
    assert!(slow.0.contains("timeout"), "{slow}");
    // The world still answers after all that.
    let ok = world.execute(request("5", "get_order", 0)).await.unwrap();
    assert_eq!(ok["ok"], true);
}

#[tokio::test]
async fn bad_urls_and_silent_hosts_are_errors_without_secrets() {
    let e = HttpWorld::start("ftp://example.test/x", Duration::from_secs(1), None)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("http:// or https://"), "{e}");
    // A port nothing listens on (bound, then released).
    let port = sparring_testkit::closed_port();
    let url = format!("http://user:hunter2@127.0.0.1:{port}/world?key=sk-secret");
    let e = HttpWorld::start(&url, Duration::from_secs(2), None)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("nothing answers there"), "{e}");
    assert!(!e.contains("hunter2") && !e.contains("sk-secret"), "{e}");
    assert!(e.contains(&format!("127.0.0.1:{port}/world")), "{e}");
}
