//! `sparring-fake-llm`: the testkit's fake model server as a process, for
//! benchmarks. Prints `listening on http://127.0.0.1:PORT/v1` on stdout once
//! it accepts connections, then serves until killed.
//!
//! Usage: `sparring-fake-llm [--port N] [--latency-ms MS] [--workers N] [--agent-text TEXT]`
//!
//! `--agent-text` replaces the agent's `Done.` after a tool result (a
//! question keeps a simulated conversation going).

#![allow(clippy::print_stdout)]

use sparring_testkit::fake_llm::{FakeLlm, FakeOptions};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let mut port = 0u16;
    let mut latency_ms = 0u64;
    let mut workers = 1usize;
    let mut agent_text = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let raw = args.next();
        if flag == "--agent-text" {
            agent_text = raw;
            continue;
        }
        let value = raw.and_then(|v| v.parse::<u64>().ok());
        match (flag.as_str(), value) {
            ("--port", Some(v)) => port = u16::try_from(v).unwrap_or(0),
            ("--latency-ms", Some(v)) => latency_ms = v,
            ("--workers", Some(v)) => workers = usize::try_from(v).unwrap_or(1).max(1),
            _ => {
                eprintln!(
                    "usage: sparring-fake-llm [--port N] [--latency-ms MS] [--workers N] [--agent-text TEXT]"
                );
                return ExitCode::from(2);
            }
        }
    }
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
    else {
        eprintln!("error: cannot start the async runtime");
        return ExitCode::from(1);
    };
    runtime.block_on(async move {
        let options = FakeOptions {
            latency: Duration::from_millis(latency_ms),
            agent_text,
            ..FakeOptions::default()
        };
        match FakeLlm::bind(options, SocketAddr::from(([127, 0, 0, 1], port))).await {
            Ok(server) => {
                println!("listening on {}", server.base_url());
                std::future::pending::<()>().await;
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: cannot listen on port {port}: {e}");
                ExitCode::from(1)
            }
        }
    })
}
