//! `sparring report`.

use anyhow::Result;
use sparring_io::report::{render, report};
use sparring_io::rows::{read_rows, rows_path};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A run directory or a rows file (`rows.jsonl`)
    path: PathBuf,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let rows = read_rows(&rows_path(&args.path))?;
    let report = report(&rows);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&report));
    }
    Ok(ExitCode::SUCCESS)
}
