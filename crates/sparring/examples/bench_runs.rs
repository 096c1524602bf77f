//! Throughput and memory of the run loop: ROWS rows from an in-process
//! agent, written by the offline row writer, on one core.
//!
//! ```text
//! cargo run --release -p sparring --example bench_runs -- ROWS [competent|instant] [repeats|unique] [OUT]
//! ```
//!
//! `competent` looks the order up with a tool call and answers (two agent
//! requests and one world call per row); `instant` answers at once (one
//! request). `repeats` reaches ROWS with few tasks and many repeats;
//! `unique` draws a new situation per row (`unique_situations`). Prints one
//! JSON line: rows, wall seconds, rows per second, CPU seconds and peak
//! resident memory (`VmHWM`).

use anyhow::{Context as _, Result, bail};
use sparring::engine::run::{RunConfig, run};
use sparring::io::rows::RowWriter;
use sparring::types::{Agent, Message, Role, SimulateOptions};
use sparring_testkit::{ScriptedAgent, shop_spec};
use std::sync::Arc;
use std::time::Instant;

fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// User plus system CPU seconds of this process (clock ticks of 1/100 s).
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let after = s.rsplit_once(')')?.1;
            let fields: Vec<&str> = after.split_whitespace().collect();
            let utime: f64 = fields.get(11)?.parse().ok()?;
            let stime: f64 = fields.get(12)?.parse().ok()?;
            Some((utime + stime) / 100.0)
        })
        .unwrap_or(0.0)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let rows: u64 = args
        .get(1)
        .map_or(Ok(100_000), |s| s.parse())
        .context("ROWS must be a number")?;
    let agent_kind = args.get(2).map_or("competent", String::as_str);
    let shape = args.get(3).map_or("repeats", String::as_str);
    let out = args.get(4).map_or_else(
        || std::env::temp_dir().join("sparring-bench-rows.jsonl"),
        std::path::PathBuf::from,
    );
    let agent: Arc<dyn Agent> = match agent_kind {
        "competent" => Arc::new(ScriptedAgent::competent()),
        "instant" => Arc::new(ScriptedAgent::new("instant", |_| {
            Message::text(Role::Assistant, "Done, your order is on record.")
        })),
        other => bail!("unknown agent `{other}`; expected `competent` or `instant`"),
    };
    let spec = shop_spec();
    let base = SimulateOptions {
        concurrency: 256,
        budget: Some(rows),
        ..SimulateOptions::default()
    };
    let options = match shape {
        "repeats" => {
            let tasks = sparring::engine::plan::plan(&spec, &base)?.tasks.len() as u64;
            SimulateOptions {
                repeats: u32::try_from(rows.div_ceil(tasks.max(1)))?,
                ..base
            }
        }
        "unique" => SimulateOptions {
            unique_situations: true,
            ..base
        },
        other => bail!("unknown shape `{other}`; expected `repeats` or `unique`"),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let summary = runtime.block_on(async {
        let mut sink = RowWriter::create(&out)?;
        let config = RunConfig::new(Arc::new(spec), options, agent);
        anyhow::Ok(run(config, &mut sink, &mut |_| {}).await?)
    })?;
    let secs = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_before;
    let n = summary.counts.rows;
    println!(
        "{}",
        serde_json::json!({
            "rows": n,
            "agent": agent_kind,
            "shape": shape,
            "stopped_because": summary.stopped_because,
            "seconds": secs,
            "rows_per_sec": n as f64 / secs,
            "cpu_seconds": cpu,
            "cpu_us_per_row": cpu * 1e6 / n.max(1) as f64,
            "peak_rss_mb": status_kb("VmHWM:") as f64 / 1024.0,
            "bytes_written": std::fs::metadata(&out).map_or(0, |m| m.len()),
        })
    );
    let _ = std::fs::remove_file(&out);
    Ok(())
}
