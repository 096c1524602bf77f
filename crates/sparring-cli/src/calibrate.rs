//! `sparring calibrate SPEC [--agents DIR] [--seed S] [--json]`: runs the
//! calibration agents against a spec and says whether the eval ranks them
//! (logic in `sparring::calibrate`).

use anyhow::Result;
use sparring::OptionsPatch;
use sparring::calibrate::{calibrate, render};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec to calibrate
    spec: PathBuf,
    /// Directory of the calibration agents do_nothing.py, reckless.py, careful.py
    /// [default: the built-in agents]
    #[arg(long)]
    agents: Option<PathBuf>,
    /// Run seed [default: the spec's]
    #[arg(long)]
    seed: Option<u64>,
    /// Print the calibration as JSON
    #[arg(long)]
    json: bool,
}

/// Exit 0 when the eval ranks careful > reckless > do_nothing, 1 when it
/// cannot.
pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let options = OptionsPatch {
        seed: args.seed,
        ..OptionsPatch::default()
    };
    let c = calibrate(&args.spec, args.agents.as_deref(), &options)?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        out!("{}", render(&c));
    }
    Ok(if c.ranked {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
