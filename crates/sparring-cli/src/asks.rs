//! `sparring asks`: what the writer makes of a spec.

use anyhow::Result;
use serde_json::json;
use sparring_engine::plan::plan;
use sparring_io::spec_file::load_spec;
use sparring_types::OptionsPatch;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec
    spec: PathBuf,
    /// Situations to print
    #[arg(long, default_value_t = 20)]
    n: usize,
    /// Wordings per situation [default: the spec's, else 1]
    #[arg(long)]
    phrasings: Option<u32>,
    /// Seed [default: the spec's, else 0]
    #[arg(long)]
    seed: Option<u64>,
    /// One JSON object per situation
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let spec = load_spec(&args.spec)?;
    let patch = OptionsPatch {
        phrasings: args.phrasings,
        seed: args.seed,
        ..OptionsPatch::default()
    };
    let options = patch.over(spec.options.clone()).resolve();
    let p = plan(&spec, &options).map_err(|e| crate::UsageError(e.to_string()))?;
    // Group wordings by situation, in plan order.
    let mut order: Vec<Vec<usize>> = Vec::new();
    let mut by_row: std::collections::BTreeMap<Vec<usize>, Vec<&sparring_engine::plan::Task>> =
        std::collections::BTreeMap::new();
    for t in &p.tasks {
        if !by_row.contains_key(&t.grid_row) {
            order.push(t.grid_row.clone());
        }
        by_row.entry(t.grid_row.clone()).or_default().push(t);
    }
    for row in order.iter().take(args.n) {
        let tasks = &by_row[row];
        let first = tasks[0];
        if args.json {
            println!(
                "{}",
                json!({"situation": {"axes": first.situation.axes, "tier": first.situation.tier},
                       "persona": first.persona,
                       "phrasings": tasks.iter().map(|t| &t.ask).collect::<Vec<_>>()})
            );
        } else {
            let axes: Vec<String> = first
                .situation
                .axes
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            println!(
                "[{}] {} (style {})",
                first.situation.tier,
                axes.join(" "),
                first.persona.style
            );
            for t in tasks {
                println!("  - {}", t.ask);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
