//! Where credentials go: a base URL's password is never sent as HTTP Basic
//! auth beside the Bearer key, and every credential the backend knows (the
//! key, the URL's user and password, their base64) is scrubbed from the
//! errors it returns, even when a server quotes them back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring_llm::{BackendOptions, BackendSpec, Limiter, RetryPolicy, Sampling, model_agent};
use sparring_testkit::fake_llm::{Behaviour, FakeLlm};
use sparring_types::secrets::base64;
use sparring_types::{Agent, AgentRequest, Message, Role};
use std::sync::Arc;
use std::time::Duration;

const KEY: &str = "sk-marker-KEY-7f3a9c";
const PASSWORD: &str = "marker-PW-5b2e81";

fn options() -> BackendOptions {
    BackendOptions {
        sampling: Sampling::default(),
        timeout: Duration::from_secs(10),
        retry: RetryPolicy::with_retries(0),
        limiter: Limiter::new(8, None),
    }
}

/// The agent for `spec`, with `TEST_KEY` holding the key when `key`.
fn agent(spec: &str, key: bool) -> Arc<dyn Agent> {
    let BackendSpec::Model(endpoint) = BackendSpec::parse(spec).unwrap() else {
        panic!("not a model spec")
    };
    let env = |name: &str| (key && name == "TEST_KEY").then(|| KEY.to_owned());
    model_agent(endpoint.resolve(&env).unwrap(), options()).unwrap()
}

fn request() -> AgentRequest {
    AgentRequest {
        id: "r-1".to_owned(),
        messages: vec![
            Message::text(Role::System, "policy"),
            Message::text(Role::User, "hello"),
        ],
        tools: Arc::new(Vec::new()),
    }
}

/// `http://user:PASSWORD@127.0.0.1:PORT/v1` for a server.
fn with_password(server: &FakeLlm) -> String {
    format!("http://bob:{PASSWORD}@{}/v1", server.addr())
}

/// The `Authorization` headers one request sends to a URL with a
/// password, with the key (`#key=TEST_KEY`) or without.
async fn authorizations_sent(keyed: bool) -> Vec<String> {
    let server = FakeLlm::start().await.unwrap();
    let suffix = if keyed { "#key=TEST_KEY" } else { "" };
    let spec = format!("openai:m@{}{suffix}", with_password(&server));
    agent(&spec, keyed).respond(request()).await.unwrap();
    server.requests().remove(0).authorizations
}

#[tokio::test]
async fn a_url_password_is_not_sent_beside_the_bearer_key() {
    assert_eq!(
        authorizations_sent(true).await,
        vec![format!("Bearer {KEY}")],
        "one Authorization header, the key's"
    );
}

#[tokio::test]
async fn without_a_key_the_url_credentials_are_sent_as_basic_auth_alone() {
    let basic = format!("Basic {}", base64(format!("bob:{PASSWORD}").as_bytes()));
    assert_eq!(authorizations_sent(false).await, vec![basic]);
}

/// A server that quotes back every credential it was sent: the error the
/// row would store names none of them, in any form.
#[tokio::test]
async fn every_credential_is_scrubbed_from_errors() {
    let server = FakeLlm::behaving(Behaviour::EchoKey(401)).await.unwrap();
    let forms = [
        KEY.to_owned(),
        PASSWORD.to_owned(),
        base64(format!("bob:{PASSWORD}").as_bytes()),
        base64(KEY.as_bytes()),
    ];
    // OpenAI sends the key as Bearer; Anthropic sends it as x-api-key, so
    // the URL's credentials go as Basic beside it and both come back.
    for spec in [
        format!("openai:m@{}#key=TEST_KEY", with_password(&server)),
        format!("anthropic:c@{}#key=TEST_KEY", with_password(&server)),
        format!("openai:m@{}", with_password(&server)),
    ] {
        let e = agent(&spec, true).respond(request()).await.unwrap_err();
        assert!(e.message.contains("401"), "{spec}: {e}");
        assert!(e.message.contains("***"), "the server did quote: {e}");
        for form in &forms {
            assert!(
                !e.message.contains(form.as_str()),
                "{spec}: `{form}` in {e}"
            );
        }
    }
    // The server really was sent them (the test would prove nothing else).
    let sent = server.requests();
    assert!(sent.iter().any(|r| r.api_key.as_deref() == Some(KEY)));
    assert!(
        sent.iter()
            .any(|r| r.authorizations.iter().any(|a| a.starts_with("Basic ")))
    );
}

#[test]
fn a_base_url_must_be_http() {
    for spec in [
        "openai:llama@localhost:8000/v1",
        "openai:llama@ftp://h/v1",
        "openai:llama@file:///etc/passwd",
        "anthropic:c@127.0.0.1:9/v1",
    ] {
        let e = BackendSpec::parse(spec).unwrap_err().to_string();
        assert!(e.contains("must be http:// or https://"), "{spec}: {e}");
        assert!(!e.lines().next().unwrap().is_empty());
    }
}
