//! The model backends against the testkit's fake servers: tool calls,
//! sampling, the temperature drop, logprobs, retries and give-ups, timeouts,
//! limits, lenient parsing, the Anthropic mapping, and key redaction.
//! Retry and timeout tests run under tokio's paused clock, so a 30 s
//! `Retry-After` takes no real time and elapsed time is exact.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use sparring_llm::{
    AnthropicAgent, BackendOptions, BackendSpec, Limiter, OpenAiAgent, RetryPolicy, Sampling,
    model_agent,
};
use sparring_testkit::fake_llm::{Behaviour, FakeLlm, FakeOptions, Reply};
use sparring_types::{Agent, AgentErrorKind, AgentRequest, Message, Role, Stop};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

const KEY: &str = "sk-test-SECRET-4d9f0c";

fn options(sampling: Sampling, retries: u32) -> BackendOptions {
    BackendOptions {
        sampling,
        timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            retries,
            base: Duration::from_millis(100),
            cap: Duration::from_secs(2),
            retry_after_cap: Duration::from_mins(2),
        },
        limiter: Limiter::new(64, None),
    }
}

fn backend(spec: &str, server: &FakeLlm, options: BackendOptions) -> Arc<dyn Agent> {
    backend_at(spec, &server.base_url(), KEY, options)
}

/// The agent for `spec` with `URL` replaced by `base_url` and `TEST_KEY`
/// holding `key`.
fn backend_at(spec: &str, base_url: &str, key: &str, options: BackendOptions) -> Arc<dyn Agent> {
    let spec = spec.replace("URL", base_url);
    let BackendSpec::Model(endpoint) = BackendSpec::parse(&spec).unwrap() else {
        panic!("not a model spec")
    };
    let env = |name: &str| (name == "TEST_KEY").then(|| key.to_owned());
    model_agent(endpoint.resolve(&env).unwrap(), options).unwrap()
}

fn openai(server: &FakeLlm, options: BackendOptions) -> Arc<dyn Agent> {
    backend("openai:fake-model@URL#key=TEST_KEY", server, options)
}

fn tools() -> Arc<Vec<Value>> {
    Arc::new(vec![json!({"type": "function", "function": {
        "name": "get_order", "description": "Look up an order",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}})])
}

fn request(id: &str) -> AgentRequest {
    AgentRequest {
        id: id.to_owned(),
        messages: vec![
            Message::text(Role::System, "You help shop customers."),
            Message::text(Role::User, "Where is order #W1001?"),
        ],
        tools: tools(),
    }
}

/// The backend error `agent` answers request `id` with; its message says
/// each of `says` and none of `never`.
async fn backend_error(agent: &dyn Agent, id: &str, says: &[&str], never: &[&str]) {
    let e = agent.respond(request(id)).await.unwrap_err();
    assert_eq!(e.kind, AgentErrorKind::Backend, "{}", e.message);
    for s in says {
        assert!(e.message.contains(s), "`{s}` not in: {}", e.message);
    }
    for n in never {
        assert!(!e.message.contains(n), "`{n}` in: {}", e.message);
    }
}

#[tokio::test]
async fn tool_calls_parallel_and_what_was_sent() {
    let server = FakeLlm::start().await.unwrap();
    server.push([Reply::ToolCalls(vec![
        ("get_order".into(), json!({"order_id": "#W1001"})),
        ("get_order".into(), json!({"order_id": "#W1002"})),
    ])]);
    let agent = openai(
        &server,
        options(
            Sampling {
                temperature: Some(0.3),
                top_p: Some(0.9),
                max_tokens: Some(50),
                seed: Some(11),
                ..Sampling::default()
            },
            0,
        ),
    );
    let reply = agent.respond(request("r-1")).await.unwrap();
    let calls = &reply.message.tool_calls;
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].function.arguments, r##"{"order_id":"#W1002"}"##);
    assert!(calls.iter().all(|c| !c.id.is_empty()));
    assert_eq!(reply.message.content, None);
    let sampling = reply.sampling.unwrap();
    assert_eq!(sampling["model"], "fake-model");
    assert_eq!(sampling["temperature"], 0.3);
    assert_eq!(sampling["top_p"], 0.9);
    assert_eq!(sampling["max_tokens"], 50);
    assert!(sampling["seed"].as_u64().is_some());
    assert!(sampling.get("temperature_dropped").is_none());
    assert!(reply.logprobs.is_none());

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.authorization.as_deref(),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(sent.body["tool_choice"], "auto");
    assert_eq!(sent.body["tools"][0]["function"]["name"], "get_order");
    assert_eq!(sent.body["messages"][0]["role"], "system");
    assert_eq!(sent.body["seed"], sampling["seed"]);
    assert_eq!(sent.body["temperature"], 0.3);
    // Not OpenAI itself: the token limit goes by the name every server knows.
    assert_eq!(sent.body["max_tokens"], 50);
    assert!(sent.body.get("max_completion_tokens").is_none());
    assert_eq!(sampling["max_tokens_param"], "max_tokens");
    assert_eq!(reply.finish.unwrap().reason.as_deref(), Some("tool_calls"));

    // The seed follows the request id: the same id asks for the same sample.
    let again = agent.respond(request("r-1")).await.unwrap();
    assert_eq!(again.sampling.unwrap()["seed"], sampling["seed"]);
    let other = agent.respond(request("r-2")).await.unwrap();
    assert_ne!(other.sampling.unwrap()["seed"], sampling["seed"]);
}

#[tokio::test]
async fn temperature_rejected_is_dropped_once_and_recorded() {
    let server = text_server(FakeOptions {
        reject_temperature: vec!["fake-model".into()],
        ..FakeOptions::default()
    })
    .await;
    let sampling = Sampling {
        temperature: Some(0.2),
        ..Sampling::default()
    };
    let agent = openai(&server, options(sampling, 0));
    let reply = agent.respond(request("a")).await.unwrap();
    assert_eq!(reply.message.content.as_deref(), Some("Done."));
    let s = reply.sampling.unwrap();
    assert_eq!(s["temperature"], Value::Null);
    assert_eq!(s["temperature_dropped"], true);
    assert_eq!(s["temperature_requested"], 0.2);
    let sent = server.requests();
    assert_eq!(sent.len(), 2, "rejected, then retried without it");
    assert_eq!(sent[0].body["temperature"], 0.2);
    assert!(sent[1].body.get("temperature").is_none());
    // Later requests no longer send it and still say it was dropped.
    let reply = agent.respond(request("b")).await.unwrap();
    assert_eq!(server.count(), 3);
    assert!(server.requests()[2].body.get("temperature").is_none());
    assert_eq!(reply.sampling.unwrap()["temperature_dropped"], true);

    // Another model keeps its temperature.
    let keeps = backend(
        "openai:other@URL#key=TEST_KEY",
        &server,
        options(sampling, 0),
    );
    let reply = keeps.respond(request("c")).await.unwrap();
    assert_eq!(reply.sampling.unwrap()["temperature"], 0.2);
}

#[tokio::test]
async fn a_400_about_something_else_is_not_retried() {
    let server = FakeLlm::start().await.unwrap();
    server.push([Reply::error(400, "messages: bad role")]);
    let agent = openai(&server, options(Sampling::default(), 5));
    backend_error(&*agent, "a", &["HTTP 400: messages: bad role"], &[]).await;
    assert_eq!(server.count(), 1);
}

#[tokio::test]
async fn logprobs_sum_tokens_and_policy_version() {
    let server = FakeLlm::start().await.unwrap();
    server.push([Reply::Text("one two three".into())]);
    let sampling = Sampling {
        logprobs: true,
        top_logprobs: Some(2),
        ..Sampling::default()
    };
    let agent = openai(&server, options(sampling, 0));
    let reply = agent.respond(request("a")).await.unwrap();
    let lp = reply.logprobs.unwrap();
    assert_eq!(lp["tokens"], 3);
    assert!((lp["sum"].as_f64().unwrap() - -1.5).abs() < 1e-9, "{lp}");
    assert_eq!(lp["content"][1]["token"], "two");
    assert_eq!(lp["content"][1]["logprob"], -0.5);
    assert_eq!(
        lp["content"][0]["top_logprobs"].as_array().unwrap().len(),
        2
    );
    assert_eq!(lp["policy_version"], "fp_fake");
    let sent = &server.requests()[0].body;
    assert_eq!(
        (sent["logprobs"].clone(), sent["top_logprobs"].clone()),
        (json!(true), json!(2))
    );
    assert_eq!(reply.sampling.unwrap()["top_logprobs"], 2);

    // Asked for but not given: recorded as missing, not silently absent.
    server.push([Reply::Raw(
        json!({"choices": [{"message": {"content": "hi"}}], "model": "m2"}),
    )]);
    let lp = agent.respond(request("b")).await.unwrap().logprobs.unwrap();
    assert_eq!(lp["missing"], true);
    assert_eq!(lp["policy_version"], "m2");
}

#[tokio::test]
async fn lenient_parsing_of_other_servers() {
    let server = FakeLlm::start().await.unwrap();
    server.push([
        Reply::Raw(json!({
            "choices": [{"index": 0, "finish_reason": "", "message": {
                "content": [{"type": "text", "text": "Checking"}],
                "reasoning_content": "think",
                "tool_calls": [{"function": {"name": "get_order", "arguments": {"order_id": "#W1"}}}]}}],
            "unknown_extra": {"x": 1}
        })),
        Reply::Raw(json!({"choices": [{"message": {"role": "assistant", "content": null}, "finish_reason": "weird_new_reason"}]})),
        Reply::Raw(json!({"object": "list", "data": []})),
    ]);
    let agent = openai(&server, options(Sampling::default(), 0));
    let m = agent.respond(request("a")).await.unwrap().message;
    assert_eq!(m.content.as_deref(), Some("Checking"));
    assert_eq!(
        m.tool_calls[0].function.arguments,
        r##"{"order_id":"#W1"}"##
    );
    let m = agent.respond(request("b")).await.unwrap().message;
    assert_eq!(m.content.as_deref(), Some(""));
    backend_error(&*agent, "c", &["no `choices`"], &[]).await;
}

#[tokio::test(start_paused = true)]
async fn rate_limit_honours_retry_after() {
    let server = FakeLlm::start().await.unwrap();
    server.push([Reply::rate_limited("30"), Reply::Text("ok".into())]);
    let agent = openai(&server, options(Sampling::default(), 3));
    let started = Instant::now();
    let reply = agent.respond(request("a")).await.unwrap();
    let waited = started.elapsed();
    assert_eq!(reply.message.content.as_deref(), Some("ok"));
    assert_eq!(server.count(), 2);
    assert!(
        waited >= Duration::from_secs(30) && waited < Duration::from_secs(31),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn server_errors_back_off_then_succeed() {
    let server = FakeLlm::start().await.unwrap();
    server.push([
        Reply::error(500, "boom"),
        Reply::error(503, "busy"),
        Reply::Text("ok".into()),
    ]);
    let agent = openai(&server, options(Sampling::default(), 3));
    let started = Instant::now();
    let reply = agent.respond(request("a")).await.unwrap();
    assert_eq!(reply.message.content.as_deref(), Some("ok"));
    assert_eq!(server.count(), 3);
    // Full jitter under ceilings of 100 ms and 200 ms.
    assert!(
        started.elapsed() <= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn give_up_after_the_retry_budget() {
    let server = FakeLlm::behaving(Behaviour::Status(500)).await.unwrap();
    let agent = openai(&server, options(Sampling::default(), 2));
    backend_error(
        &*agent,
        "a",
        &[
            "HTTP 500: the fake server is down",
            "gave up after 3 attempts",
            "openai `fake-model` at http://127.0.0.1:",
        ],
        &[],
    )
    .await;
    assert_eq!(server.count(), 3);
}

#[tokio::test(start_paused = true)]
async fn slow_replies_time_out_and_are_retried() {
    let server = FakeLlm::start().await.unwrap();
    server.push([
        Reply::Delayed(
            Duration::from_secs(30),
            Box::new(Reply::Text("late".into())),
        ),
        Reply::Text("quick".into()),
    ]);
    let mut o = options(Sampling::default(), 1);
    o.timeout = Duration::from_secs(5);
    let agent = openai(&server, o.clone());
    let started = Instant::now();
    let reply = agent.respond(request("a")).await.unwrap();
    assert_eq!(reply.message.content.as_deref(), Some("quick"));
    assert!(
        started.elapsed() >= Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    // Without retries the timeout is the row's error.
    server.push([Reply::Delayed(
        Duration::from_secs(30),
        Box::new(Reply::Text("late".into())),
    )]);
    o.retry.retries = 0;
    let agent = openai(&server, o);
    backend_error(
        &*agent,
        "b",
        &["no reply within 5 s", "gave up after 1 attempt"],
        &[],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn connection_refused_is_retried_then_reported() {
    let port = sparring_testkit::closed_port();
    let spec = format!("openai:m@http://127.0.0.1:{port}/v1");
    let BackendSpec::Model(endpoint) = BackendSpec::parse(&spec).unwrap() else {
        panic!()
    };
    let agent = model_agent(
        endpoint.resolve(&|_| None).unwrap(),
        options(Sampling::default(), 2),
    )
    .unwrap();
    backend_error(
        &*agent,
        "a",
        &["cannot connect", "gave up after 3 attempts"],
        &[],
    )
    .await;
}

#[tokio::test]
async fn the_concurrency_limit_is_global() {
    let server = FakeLlm::with(FakeOptions {
        latency: Duration::from_millis(40),
        behaviour: Behaviour::Text,
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let limiter = Limiter::new(4, None);
    let mut o = options(Sampling::default(), 0);
    o.limiter = limiter.clone();
    // Two backends sharing one limiter: together at most 4 in flight.
    let a = openai(&server, o.clone());
    let b = backend("openai:other@URL#key=TEST_KEY", &server, o);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..24 {
        let agent = Arc::clone(if i % 2 == 0 { &a } else { &b });
        tasks.spawn(async move { agent.respond(request(&format!("r{i}"))).await });
    }
    while let Some(r) = tasks.join_next().await {
        assert!(r.unwrap().is_ok());
    }
    assert_eq!(server.count(), 24);
    assert_eq!(server.max_in_flight(), 4);
}

#[tokio::test(start_paused = true)]
async fn requests_per_minute_are_spaced() {
    let server = FakeLlm::with(FakeOptions {
        behaviour: Behaviour::Text,
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let mut o = options(Sampling::default(), 0);
    o.limiter = Limiter::new(100, Some(60));
    let agent = openai(&server, o);
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..5 {
        let agent = Arc::clone(&agent);
        tasks.spawn(async move { agent.respond(request(&format!("r{i}"))).await });
    }
    while let Some(r) = tasks.join_next().await {
        assert!(r.unwrap().is_ok());
    }
    let elapsed = started.elapsed();
    // 60 per minute: one a second, the first at once.
    assert!(
        elapsed >= Duration::from_secs(4) && elapsed < Duration::from_secs(5),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn the_key_never_appears_in_errors_or_descriptions() {
    let server = FakeLlm::behaving(Behaviour::EchoKey(401)).await.unwrap();
    let agent = openai(&server, options(Sampling::default(), 0));
    backend_error(
        &*agent,
        "a",
        &["Incorrect API key provided: Bearer ***"],
        &[KEY],
    )
    .await;
    assert!(!agent.describe().contains(KEY));
    // The same for a retried status and for Anthropic's header.
    server.push([Reply::EchoKey(500), Reply::EchoKey(500)]);
    let agent = openai(&server, options(Sampling::default(), 1));
    backend_error(&*agent, "b", &["***"], &[KEY]).await;
    let anthropic = agent_anthropic(&server, options(Sampling::default(), 0));
    backend_error(&*anthropic, "c", &["***"], &[KEY]).await;
    assert_eq!(
        server.requests().last().unwrap().api_key.as_deref(),
        Some(KEY)
    );
}

fn agent_anthropic(server: &FakeLlm, options: BackendOptions) -> Arc<dyn Agent> {
    backend("anthropic:claude-fake@URL#key=TEST_KEY", server, options)
}

#[tokio::test]
async fn anthropic_maps_tool_use_and_tool_results() {
    let server = FakeLlm::start().await.unwrap();
    server.push([
        Reply::ToolCalls(vec![
            ("get_order".into(), json!({"order_id": "#W1001"})),
            ("get_order".into(), json!({"order_id": "#W1002"})),
        ]),
        Reply::Text("Both orders are on their way.".into()),
    ]);
    let sampling = Sampling {
        temperature: Some(0.5),
        ..Sampling::default()
    };
    let agent = agent_anthropic(&server, options(sampling, 0));
    let mut req = request("a");
    let reply = agent.respond(req.clone()).await.unwrap();
    let calls = reply.message.tool_calls.clone();
    assert_eq!(calls.len(), 2);
    assert!(calls[0].id.starts_with("toolu_"));
    assert_eq!(calls[0].function.arguments, r##"{"order_id":"#W1001"}"##);
    let s = reply.sampling.clone().unwrap();
    assert_eq!(
        (s["backend"].clone(), s["max_tokens"].clone()),
        (json!("anthropic"), json!(1024))
    );
    assert_eq!(s["temperature"], 0.5);
    assert_eq!(s["seed"], Value::Null);
    // Tool results go back as tool_result blocks in one user message; the
    // fake refuses any other shape, as the real API does.
    req.messages.push(reply.message);
    for c in &calls {
        req.messages
            .push(Message::tool_result(c, r#"{"ok": true}"#));
    }
    let reply = agent.respond(req).await.unwrap();
    assert_eq!(
        reply.message.content.as_deref(),
        Some("Both orders are on their way.")
    );
    let sent = server.requests();
    assert_eq!(sent[0].path, "/v1/messages");
    assert_eq!(sent[0].api_key.as_deref(), Some(KEY));
    assert!(sent[0].authorization.is_none());
    assert_eq!(sent[0].body["system"], "You help shop customers.");
    assert_eq!(sent[0].body["tools"][0]["input_schema"]["type"], "object");
    let second = &sent[1].body["messages"];
    assert_eq!(second.as_array().unwrap().len(), 3, "{second}");
    assert_eq!(second[2]["content"][1]["type"], "tool_result");
}

#[tokio::test(start_paused = true)]
async fn anthropic_overloaded_is_retried() {
    let server = FakeLlm::start().await.unwrap();
    server.push([
        Reply::Status {
            code: 529,
            body: json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            retry_after: Some("2".into()),
        },
        Reply::Text("fine".into()),
    ]);
    let agent = agent_anthropic(&server, options(Sampling::default(), 2));
    let started = Instant::now();
    let reply = agent.respond(request("a")).await.unwrap();
    assert_eq!(reply.message.content.as_deref(), Some("fine"));
    assert!(started.elapsed() >= Duration::from_secs(2));
    // Gives up the same way.
    server.push((0..3).map(|_| Reply::Status {
        code: 529,
        body: json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        retry_after: None,
    }));
    backend_error(
        &*agent,
        "b",
        &["HTTP 529: Overloaded", "gave up after 3 attempts"],
        &[],
    )
    .await;
}

#[tokio::test]
async fn anthropic_rejects_logprobs_at_setup() {
    let server = FakeLlm::start().await.unwrap();
    let BackendSpec::Model(endpoint) =
        BackendSpec::parse(&format!("anthropic:c@{}", server.base_url())).unwrap()
    else {
        panic!()
    };
    let resolved = endpoint
        .resolve(&|n| (n == "ANTHROPIC_API_KEY").then(|| KEY.to_owned()))
        .unwrap();
    let e = model_agent(
        resolved,
        options(
            Sampling {
                logprobs: true,
                ..Sampling::default()
            },
            0,
        ),
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("no log-probabilities"), "{e}");
}

/// One backend holds 1,000 requests in flight at once: the server sees all
/// of them open together (each is held 4 s, far longer than it takes to
/// open them all).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_requests_in_flight() {
    const N: usize = 1000;
    // Client and server sockets share this process: 2 per request. The
    // soft limit is raised towards the hard one; a machine that cannot give
    // enough fails this test loudly rather than skipping it.
    let needed = 2 * N as u64 + 100;
    let got = rlimit::increase_nofile_limit(needed).unwrap();
    assert!(
        got >= needed,
        "the open-files limit is {got}, below the {needed} this test needs (raise `ulimit -n`)"
    );
    let server = FakeLlm::with(FakeOptions {
        latency: Duration::from_secs(4),
        behaviour: Behaviour::Text,
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let mut o = options(Sampling::default(), 0);
    o.timeout = Duration::from_mins(1);
    o.limiter = Limiter::new(N, None);
    let agent = openai(&server, o);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..N {
        let agent = Arc::clone(&agent);
        tasks.spawn(async move { agent.respond(request(&format!("r{i}"))).await });
    }
    let mut ok = 0;
    while let Some(r) = tasks.join_next().await {
        if r.unwrap().is_ok() {
            ok += 1;
        }
    }
    assert_eq!(ok, N);
    assert_eq!(server.count(), N);
    assert_eq!(server.max_in_flight(), N, "every request open at once");
}

#[tokio::test(start_paused = true)]
async fn a_key_a_header_cannot_carry_fails_once_without_showing_it() {
    // A control character cannot go in a header (bytes above ASCII can, and
    // are sent as they are).
    const ODD_KEY: &str = "sk-test\nSECRET-77";
    let server = FakeLlm::with(FakeOptions {
        record: true,
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    for spec in ["openai:m@URL#key=TEST_KEY", "anthropic:c@URL#key=TEST_KEY"] {
        let start = Instant::now();
        let agent = backend_at(
            spec,
            &server.base_url(),
            ODD_KEY,
            options(Sampling::default(), 3),
        );
        backend_error(
            &*agent,
            "a",
            &["the API key or a header value is not valid"],
            &["attempts", "SECRET", "sk-test"],
        )
        .await;
        assert_eq!(start.elapsed(), Duration::ZERO, "no backoff: one attempt");
    }
    assert_eq!(server.count(), 0);
}

/// A bare HTTP server answering every request with `reply` (a status line
/// and headers); counts the connections it accepted.
async fn raw_server(reply: String) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            let reply = reply.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 1 << 16];
                let _ = socket.read(&mut buf).await;
                let reply = format!("{reply}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                let _ = socket.write_all(reply.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (format!("http://{addr}/v1"), hits)
}

#[tokio::test]
async fn redirects_are_not_followed_so_the_key_stays_home() {
    // The target is another host name (`localhost`, not `127.0.0.1`), as a
    // cross-host redirect would be.
    let (target, target_hits) = raw_server("HTTP/1.1 500 Stolen".to_owned()).await;
    let to = target.replace("127.0.0.1", "localhost");
    let (url, hits) = raw_server(format!("HTTP/1.1 302 Found\r\nlocation: {to}/x")).await;
    for spec in ["anthropic:c@URL#key=TEST_KEY", "openai:m@URL#key=TEST_KEY"] {
        let agent = backend_at(spec, &url, KEY, options(Sampling::default(), 3));
        backend_error(&*agent, "a", &["HTTP 302"], &[KEY]).await;
    }
    assert_eq!(
        hits.load(Ordering::SeqCst),
        2,
        "one attempt each, not retried"
    );
    assert_eq!(
        target_hits.load(Ordering::SeqCst),
        0,
        "the redirect was not followed"
    );
}

/// A recording fake that answers `Done.` to everything, with `options`.
async fn text_server(options: FakeOptions) -> FakeLlm {
    FakeLlm::with(FakeOptions {
        record: true,
        behaviour: Behaviour::Text,
        ..options
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn no_seed_is_sent_unless_the_run_sets_one() {
    let server = FakeLlm::start().await.unwrap();
    let agent = openai(&server, options(Sampling::default(), 0));
    let reply = agent.respond(request("a")).await.unwrap();
    let body = &server.requests()[0].body;
    for key in [
        "seed",
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
    ] {
        assert!(body.get(key).is_none(), "{key} sent: {body}");
    }
    assert_eq!(reply.sampling.unwrap()["seed"], Value::Null);
}

/// The spec's endpoint resolved with a key, for agents built directly.
fn resolved(spec: &str) -> sparring_llm::Resolved {
    let BackendSpec::Model(endpoint) = BackendSpec::parse(spec).unwrap() else {
        panic!("not a model spec")
    };
    endpoint
        .resolve(&|n| n.ends_with("_API_KEY").then(|| KEY.to_owned()))
        .unwrap()
}

#[test]
fn openai_itself_gets_max_completion_tokens_and_no_seed() {
    let sampling = Sampling {
        max_tokens: Some(64),
        ..Sampling::default()
    };
    let agent = OpenAiAgent::new(resolved("openai:gpt-5"), options(sampling, 0)).unwrap();
    let body = agent.request_body(&request("a"));
    assert_eq!(body["max_completion_tokens"], 64, "{body}");
    assert!(
        body.get("max_tokens").is_none() && body.get("seed").is_none(),
        "{body}"
    );
    let seeded = Sampling {
        seed: Some(3),
        ..sampling
    };
    let agent = OpenAiAgent::new(resolved("openai:gpt-5"), options(seeded, 0)).unwrap();
    let body = agent.request_body(&request("a"));
    assert!(body["seed"].as_u64().unwrap() < 1 << 31, "{body}");
}

#[tokio::test]
async fn rejected_top_p_and_max_tokens_are_dropped_or_renamed_once_and_recorded() {
    for plain in [false, true] {
        let server = text_server(FakeOptions {
            reject_params: vec!["top_p".into(), "max_tokens".into()],
            plain_errors: plain,
            ..FakeOptions::default()
        })
        .await;
        let sampling = Sampling {
            top_p: Some(0.9),
            max_tokens: Some(80),
            ..Sampling::default()
        };
        let agent = openai(&server, options(sampling, 0));
        let reply = agent.respond(request("a")).await.unwrap();
        assert_eq!(reply.message.content.as_deref(), Some("Done."));
        let sent = server.requests();
        assert_eq!(
            sent.len(),
            3,
            "plain {plain}: one retry per rejected parameter"
        );
        // The first rejection names top_p (checked first by the fake); then
        // max_tokens is renamed, which this server takes.
        assert!(sent[1].body.get("top_p").is_none());
        assert_eq!(sent[1].body["max_tokens"], 80);
        assert_eq!(sent[2].body["max_completion_tokens"], 80);
        assert!(sent[2].body.get("max_tokens").is_none());
        let s = reply.sampling.unwrap();
        assert_eq!(s["dropped"], json!(["top_p"]), "{s}");
        assert_eq!(s["requested"]["top_p"], 0.9, "{s}");
        assert_eq!(
            s["renamed"],
            json!({"max_tokens": "max_completion_tokens"}),
            "{s}"
        );
        assert_eq!(s["max_tokens"], 80);
        assert_eq!(s["top_p"], Value::Null);
        // Later requests are sent adjusted from the start.
        let again = agent.respond(request("b")).await.unwrap();
        assert_eq!(server.count(), 4);
        assert_eq!(again.sampling.unwrap()["dropped"], json!(["top_p"]));
    }
}

#[tokio::test]
async fn a_token_limit_rejected_under_both_names_is_dropped() {
    let server = text_server(FakeOptions {
        reject_params: vec!["max_tokens".into(), "max_completion_tokens".into()],
        ..FakeOptions::default()
    })
    .await;
    let sampling = Sampling {
        max_tokens: Some(80),
        ..Sampling::default()
    };
    let agent = openai(&server, options(sampling, 0));
    let reply = agent.respond(request("a")).await.unwrap();
    assert_eq!(server.count(), 3);
    let s = reply.sampling.unwrap();
    assert_eq!(s["max_tokens"], Value::Null, "{s}");
    assert_eq!(s["dropped"], json!(["max_completion_tokens"]), "{s}");
    assert!(s.get("renamed").is_none(), "{s}");
}

#[tokio::test]
async fn a_second_rejection_of_the_same_parameter_fails_the_request() {
    let server = FakeLlm::start().await.unwrap();
    let rejection = || Reply::Status {
        code: 400,
        body: json!({"error": {"message": "bad seed", "param": "seed"}}),
        retry_after: None,
    };
    server.push([rejection(), rejection()]);
    let sampling = Sampling {
        seed: Some(1),
        ..Sampling::default()
    };
    let agent = openai(&server, options(sampling, 0));
    // The seed is dropped after the first; the second names it again, but
    // it was not sent: nothing left to adjust.
    backend_error(&*agent, "a", &["HTTP 400: bad seed"], &[]).await;
    assert_eq!(server.count(), 2);
}

#[tokio::test]
async fn a_reply_cut_at_the_limit_is_asked_again_with_more_room() {
    let server = FakeLlm::with(FakeOptions {
        room_needed: Some(150),
        record: true,
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    // The same answer to both requests; the fake cuts the first, whose
    // limit is below what it needs.
    let text = || Reply::Text("All three orders shipped on Monday.".into());
    server.push([text(), text()]);
    let sampling = Sampling {
        max_tokens: Some(100),
        ..Sampling::default()
    };
    let agent = openai(&server, options(sampling, 0));
    let reply = agent.respond(request("a")).await.unwrap();
    assert_eq!(
        reply.message.content.as_deref(),
        Some("All three orders shipped on Monday.")
    );
    let finish = reply.finish.unwrap();
    assert_eq!(finish.stop, Stop::Complete);
    let sent = server.requests();
    assert_eq!(sent[0].body["max_tokens"], 100);
    assert_eq!(sent[1].body["max_tokens"], 200);
    let s = reply.sampling.unwrap();
    assert_eq!(s["more_room"], json!({"from": 100, "to": 200}), "{s}");
    assert_eq!(s["max_tokens"], 200);
    // Both requests' tokens count.
    assert_eq!(reply.usage.unwrap().output_tokens, 10);

    // Not enough room even then: the reply comes back truncated.
    let small = Sampling {
        max_tokens: Some(10),
        ..Sampling::default()
    };
    server.push([text(), text()]);
    let agent = openai(&server, options(small, 0));
    let reply = agent.respond(request("b")).await.unwrap();
    let finish = reply.finish.unwrap();
    assert_eq!(
        (finish.stop, finish.reason.as_deref()),
        (Stop::Truncated, Some("length"))
    );
    assert_eq!(server.count(), 4);
    // Without a limit there is no room to give: asked once.
    server.push([Reply::Finished(
        Box::new(Reply::Text("cut".into())),
        "length".into(),
    )]);
    let agent = openai(&server, options(Sampling::default(), 0));
    let reply = agent.respond(request("c")).await.unwrap();
    assert_eq!(reply.finish.unwrap().stop, Stop::Truncated);
    assert_eq!(server.count(), 5);
}

#[tokio::test]
async fn refusals_and_the_content_filter_are_read_from_both_apis() {
    let server = FakeLlm::start().await.unwrap();
    server.push([
        Reply::Refusal("I can't help with that.".into()),
        Reply::Finished(
            Box::new(Reply::Text(String::new())),
            "content_filter".into(),
        ),
        Reply::Refusal("I won't do that.".into()),
    ]);
    let agent = openai(&server, options(Sampling::default(), 0));
    let reply = agent.respond(request("a")).await.unwrap();
    let f = reply.finish.clone().unwrap();
    assert_eq!(
        (f.stop, f.refusal.as_deref()),
        (Stop::Refused, Some("I can't help with that."))
    );
    let cut = reply.cut_short().unwrap();
    assert_eq!(cut.ended_by.as_str(), "refused");
    assert_eq!(
        cut.message.content.as_deref(),
        Some("I can't help with that.")
    );
    let reply = agent.respond(request("b")).await.unwrap();
    assert_eq!(reply.finish.unwrap().stop, Stop::ContentFilter);
    let anthropic = agent_anthropic(&server, options(Sampling::default(), 0));
    let reply = anthropic.respond(request("c")).await.unwrap();
    let f = reply.finish.unwrap();
    assert_eq!(
        (f.stop, f.reason.as_deref(), f.refusal.as_deref()),
        (Stop::Refused, Some("refusal"), Some("I won't do that."))
    );
}

#[tokio::test]
async fn anthropic_takes_temperature_up_to_1_and_drops_it_when_refused() {
    let e = AnthropicAgent::new(
        resolved("anthropic:claude-x"),
        options(
            Sampling {
                temperature: Some(1.5),
                ..Sampling::default()
            },
            0,
        ),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("`temperature` 1.5 is out of range") && e.contains("0 to 1"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
    // A current model that takes one of temperature and top_p: the fake
    // refuses temperature the way the API words it, without `param`.
    let server = FakeLlm::start().await.unwrap();
    server.push([Reply::Status {
        code: 400,
        body: json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "`temperature` and `top_p` cannot both be specified for this model. Please use only one."}}),
        retry_after: None,
    }]);
    let sampling = Sampling {
        temperature: Some(0.7),
        top_p: Some(0.9),
        ..Sampling::default()
    };
    let agent = agent_anthropic(&server, options(sampling, 0));
    let reply = agent.respond(request("a")).await.unwrap();
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    assert!(sent[1].body.get("temperature").is_none());
    assert_eq!(sent[1].body["top_p"], 0.9);
    assert_eq!(
        sent[1].body["max_tokens"], 1024,
        "max_tokens is never adjusted"
    );
    let s = reply.sampling.unwrap();
    assert_eq!(s["temperature_dropped"], true);
    assert_eq!(s["dropped"], json!(["temperature"]));
}
