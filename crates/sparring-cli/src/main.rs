//! The `sparring` binary: parses arguments, wires the crates together, and
//! prints. It holds no logic of its own; see `docs/ARCHITECTURE.md`.

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod export;
mod report;
mod simulate;

/// Evals and training data for tool-calling agents, by simulation.
#[derive(Debug, Parser)]
#[command(name = "sparring", version, about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Play an agent against simulated people in a sandbox world and write
    /// one row per conversation
    Simulate(simulate::Args),
    /// Summarise a run's rows: pass@1 overall and per tool
    Report(report::Args),
    /// Cut graded rows into training sets and write them in a trainer's
    /// format (OpenAI, TRL, Parquet)
    Export(export::Args),
}

/// A failure the user caused (bad input): exit code 2.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<ExitCode> = match cli.command {
        Command::Simulate(args) => simulate::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Export(args) => export::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            let usage = error.downcast_ref::<UsageError>().is_some()
                || error.downcast_ref::<sparring_io::Error>().is_some();
            eprintln!("error: {error}");
            if usage {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
