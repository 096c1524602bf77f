//! Running out of file descriptors is said as such, not as "cannot connect"
//! (which sends the user to check a server that is fine).
//!
//! The test runs itself again under `ulimit -n 128` (a limit of its own, so
//! no other test shares it), opens files until the process has no
//! descriptor left, and asks a live server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring_llm::{BackendOptions, BackendSpec, Limiter, RetryPolicy, Sampling, model_agent};
use sparring_testkit::fake_llm::FakeLlm;
use sparring_types::{AgentRequest, Message, Role};
use std::sync::Arc;
use std::time::Duration;

const CHILD: &str = "SPARRING_TEST_DESCRIPTORS_CHILD";

#[test]
fn out_of_descriptors_is_not_cannot_connect() {
    if std::env::var_os(CHILD).is_some() {
        child();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            r#"ulimit -n 128 && exec "$0" --exact out_of_descriptors_is_not_cannot_connect --nocapture"#,
        ])
        .arg(&exe)
        .env(CHILD, "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("error: sparring ran out of file descriptors"),
        "{text}"
    );
}

fn child() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let server = FakeLlm::start().await.unwrap();
        let BackendSpec::Model(endpoint) =
            BackendSpec::parse(&format!("openai:m@{}", server.base_url())).unwrap()
        else {
            panic!("not a model spec")
        };
        let agent = model_agent(
            endpoint.resolve(&|_| None).unwrap(),
            BackendOptions {
                sampling: Sampling::default(),
                timeout: Duration::from_secs(5),
                retry: RetryPolicy::with_retries(0),
                limiter: Limiter::new(1, None),
            },
        )
        .unwrap();
        // Every descriptor left, taken.
        let mut held = Vec::new();
        while let Ok(f) = std::fs::File::open("/dev/null") {
            held.push(f);
        }
        let e = agent
            .respond(AgentRequest {
                id: "r".to_owned(),
                messages: vec![Message::text(Role::User, "hi")],
                tools: Arc::new(Vec::new()),
            })
            .await
            .unwrap_err();
        drop(held);
        assert!(!e.message.contains("cannot connect"), "{e}");
        println!("error: {}", e.message.split(": ").last().unwrap_or(""));
        assert!(e.message.contains("out of file descriptors"), "{e}");
    });
}
