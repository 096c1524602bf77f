//! Load generator for `benches/llm/`: sends `--requests N` chat-completion
//! requests through one [`OpenAiAgent`] with `--concurrency C` in flight,
//! each one turn of a rollout (system prompt, the person's ask, one tool),
//! and prints one JSON line: requests, errors, seconds, requests per second,
//! and the most requests this client had in flight at once.
//!
//! `cargo run --release -p sparring-llm --example load -- --url http://127.0.0.1:PORT/v1 --requests 20000 --concurrency 1000`

#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use serde_json::json;
use sparring_llm::{BackendOptions, BackendSpec, Limiter, RetryPolicy, Sampling, model_agent};
use sparring_types::{AgentRequest, Message, Role};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let mut url = String::new();
    let mut requests = 10_000usize;
    let mut concurrency = 1000usize;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_default();
        match flag.as_str() {
            "--url" => url = value,
            "--requests" => requests = value.parse().expect("--requests N"),
            "--concurrency" => concurrency = value.parse().expect("--concurrency N"),
            _ => panic!("usage: load --url URL [--requests N] [--concurrency C]"),
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let BackendSpec::Model(endpoint) =
            BackendSpec::parse(&format!("openai:fake-model@{url}")).unwrap()
        else {
            panic!("not a model spec")
        };
        let agent = model_agent(
            endpoint.resolve(&|_| Some("sk-bench".to_owned())).unwrap(),
            BackendOptions {
                sampling: Sampling::default(),
                timeout: Duration::from_mins(2),
                retry: RetryPolicy::with_retries(0),
                limiter: Limiter::new(concurrency, None),
            },
        )
        .unwrap();
        let tools = Arc::new(vec![json!({"type": "function", "function": {
            "name": "get_order", "description": "Look up an order by its id",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                           "required": ["order_id"]}}})]);
        let next = Arc::new(AtomicUsize::new(0));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let errors = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..concurrency {
            let (agent, tools, next, in_flight, peak, errors) = (
                Arc::clone(&agent),
                Arc::clone(&tools),
                Arc::clone(&next),
                Arc::clone(&in_flight),
                Arc::clone(&peak),
                Arc::clone(&errors),
            );
            workers.spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= requests {
                        break;
                    }
                    let now = in_flight.fetch_add(1, Ordering::Relaxed) + 1;
                    peak.fetch_max(now, Ordering::Relaxed);
                    let reply = agent
                        .respond(AgentRequest {
                            id: format!("bench-{i}"),
                            messages: vec![
                                Message::text(
                                    Role::System,
                                    "You help shop customers. Look orders up before you answer.",
                                ),
                                Message::text(Role::User, format!("Where is my order #W{i:07}?")),
                            ],
                            tools: Arc::clone(&tools),
                        })
                        .await;
                    in_flight.fetch_sub(1, Ordering::Relaxed);
                    if reply.is_err() {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
        while workers.join_next().await.is_some() {}
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "{}",
            json!({
                "client": "sparring-llm",
                "requests": requests,
                "errors": errors.load(Ordering::Relaxed),
                "seconds": seconds,
                "rps": requests as f64 / seconds,
                "peak_in_flight": peak.load(Ordering::Relaxed),
            })
        );
    });
}
