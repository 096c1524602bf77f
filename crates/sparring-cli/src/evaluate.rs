//! `sparring evaluate SPEC --eval-set FILE`: every ask of a fixed list runs,
//! once per repeat, and a per-ask table says how each scored
//! (`sparring::evaluation`).

use crate::simulate::{drive, exit_code};
use anyhow::Result;
use sparring::evaluation::EvalSet;
use sparring::reports;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
// The flattened simulate arguments are a group called `Args` already.
#[group(id = "EvaluateArgs")]
pub(crate) struct Args {
    /// The asks: one per line, a JSON list (`.json`), or JSON lines of strings or
    /// `{"ask": …}` (`.jsonl`)
    #[arg(long, value_name = "FILE")]
    eval_set: PathBuf,
    /// Print the per-ask table and the report as JSON
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    sim: crate::simulate::Args,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let set = EvalSet::read(&args.eval_set)?;
    let spec = sparring::load_spec(&args.sim.spec)?;
    let sim = set.simulation(spec, args.sim.patch())?;
    let cli = set.simulation_options(args.sim.patch())?;
    let (result, signal) = drive(sim, cli, &args.sim)?;
    let table = set.table_of(&result)?;
    for w in &table.warnings {
        eprintln!("warning: {w}");
    }
    let out = result.out.clone().unwrap_or_default();
    let report = reports::report_rows_file(&out, &reports::ReportOptions::default())?;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"asks": table, "report": report}))?
        );
    } else {
        out!("{}", table.render());
        outln!();
        out!("{}", reports::render(&report));
    }
    Ok(exit_code(&result, signal))
}
