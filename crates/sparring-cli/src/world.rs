//! `sparring world`: serve a spec's sandbox world on stdin and stdout.

use anyhow::Result;
use serde_json::{Value, json};
use sparring::io::spec_file::load_spec;
use sparring::world::World;
use std::io::BufRead as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec: YAML, JSON or TOML
    spec: PathBuf,
    /// World seed: what generated ids and records are [default: the spec's seed, else 0]
    #[arg(long)]
    seed: Option<u64>,
    /// Print what the world inferred (entities, ids, operations and why) as JSON and exit
    #[arg(long)]
    explain: bool,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let spec = load_spec(&args.spec)?;
    let seed = args
        .seed
        .or(spec.options.seed)
        .unwrap_or(sparring::types::defaults::SEED);
    let mut world = World::new(&spec, seed);
    if args.explain {
        let text = serde_json::to_string_pretty(&world.explain())?;
        outln!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    let stdin = std::io::stdin();
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = answer(&mut world, &line, n + 1);
        outln!("{answer}");
    }
    Ok(ExitCode::SUCCESS)
}

/// One request line answered. A line that is not a request is answered
/// with `invalid_arguments`, so a client always gets one line back.
fn answer(world: &mut World, line: &str, n: usize) -> String {
    let bad = |message: String| {
        json!({"ok": false, "error": {"kind": "invalid_arguments", "message": message,
            "hint": "send one JSON object per line: {\"tool\": NAME, \"arguments\": {...}}"}})
        .to_string()
    };
    let request: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return bad(format!("line {n} is not JSON: {e}")),
    };
    let Some(tool) = request.get("tool").and_then(Value::as_str) else {
        return bad(format!("line {n} has no string `tool`"));
    };
    let arguments = request
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    world.call(tool, &arguments).to_content()
}
