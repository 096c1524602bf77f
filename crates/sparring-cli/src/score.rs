//! `sparring report`, `delta`, `judge-agreement`, `hack-scan` and
//! `eval-variance`: read rows, build the report in `sparring::io::score`,
//! print it as a table or as JSON.

use anyhow::Result;
use serde::Serialize;
use sparring::io::rows::rows_path;
use sparring::io::rows::{read_gold_labels, read_score_rows};
use sparring::score::input::ScoreRow;
use sparring::score::{delta, eval_variance, hack, judge, report};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// A run directory or a rows file (`rows.jsonl`)
    path: PathBuf,
    /// The k values for pass@k and pass^k, a comma list [default: 1,2,4]
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..))]
    k: Vec<u64>,
    /// Seed of the bootstrap interval
    #[arg(long, default_value_t = sparring::score::defaults::SEED)]
    seed: u64,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct DeltaArgs {
    /// The run before the change (a run directory or a rows file)
    before: PathBuf,
    /// The run after the change
    after: PathBuf,
    /// A numeric marker whose whole interval must not lie below zero; exit 1 when it does (repeatable)
    #[arg(long = "must-not-regress", value_name = "NAME")]
    must_not_regress: Vec<String>,
    /// Seed of the bootstrap and the permutation test
    #[arg(long, default_value_t = sparring::score::defaults::SEED)]
    seed: u64,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct JudgeArgs {
    /// A run directory or a rows file whose rewards are the judge's verdicts
    path: PathBuf,
    /// Gold labels, JSONL: `{"row_id", "label", "author"}` per line (the format
    /// `labels attach` reads) [default: the gold labels on the rows, as
    /// `labels attach` put them]
    #[arg(long)]
    labels: Option<PathBuf>,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct HackArgs {
    /// A run directory or a rows file
    path: PathBuf,
    /// Seed of the within-task shuffles behind the floor
    #[arg(long, default_value_t = sparring::score::defaults::SEED)]
    seed: u64,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct EvalVarianceArgs {
    /// A run directory or a rows file
    path: PathBuf,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

fn rows(path: &Path) -> Result<(PathBuf, Vec<ScoreRow>)> {
    let path = rows_path(path);
    let rows = read_score_rows(&path)?;
    Ok((path, rows))
}

/// Prints the report to stdout (quiet on a closed pipe, like every
/// command: [`crate::write_out`]).
fn print<T: Serialize>(json: bool, value: &T, render: impl FnOnce(&T) -> String) -> Result<()> {
    let text = if json {
        let mut t = serde_json::to_string_pretty(value)?;
        t.push('\n');
        t
    } else {
        render(value)
    };
    crate::write_out(&text);
    Ok(())
}

pub(crate) fn report(args: &ReportArgs) -> Result<ExitCode> {
    let mut options = report::ReportOptions {
        seed: args.seed,
        ..report::ReportOptions::default()
    };
    if !args.k.is_empty() {
        options.ks.clone_from(&args.k);
    }
    let r = sparring::reports::report_run(&args.path, &options)?;
    print(args.json, &r, report::render)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn delta(args: &DeltaArgs) -> Result<ExitCode> {
    let (before_path, before) = rows(&args.before)?;
    let (after_path, after) = rows(&args.after)?;
    let options = delta::DeltaOptions {
        must_not_regress: args.must_not_regress.clone(),
        seed: args.seed,
    };
    let d = delta::delta(
        &before,
        &after,
        (
            &before_path.display().to_string(),
            &after_path.display().to_string(),
        ),
        &options,
    )?;
    print(args.json, &d, delta::render)?;
    let failed = d.failed_markers();
    if failed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let which: Vec<String> = failed
        .iter()
        .map(|(name, m)| {
            let [lo, hi] = m.ci95.unwrap_or([f64::NAN, f64::NAN]);
            format!(
                "`{name}` (delta {:+.3}, ci95 [{lo:+.3}, {hi:+.3}])",
                m.delta.unwrap_or(f64::NAN)
            )
        })
        .collect();
    eprintln!(
        "error: must-not-regress marker regressed: {}",
        which.join(", ")
    );
    Ok(ExitCode::from(1))
}

pub(crate) fn judge_agreement(args: &JudgeArgs) -> Result<ExitCode> {
    let (path, rows) = rows(&args.path)?;
    let (labels, from) = match &args.labels {
        Some(file) => (read_gold_labels(file)?, file.clone()),
        None => (
            sparring::score::input::labels_from_rows(&rows),
            path.clone(),
        ),
    };
    let r = judge::judge_agreement(&rows, &labels, (&path, &from))?;
    print(args.json, &r, judge::render)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn hack_scan(args: &HackArgs) -> Result<ExitCode> {
    let (path, rows) = rows(&args.path)?;
    let r = hack::hack_scan(&rows, &path.display().to_string(), args.seed)?;
    print(args.json, &r, hack::render)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn eval_variance(args: &EvalVarianceArgs) -> Result<ExitCode> {
    let (path, rows) = rows(&args.path)?;
    let r = eval_variance::eval_variance(&rows, &path.display().to_string())?;
    print(args.json, &r, eval_variance::render)?;
    Ok(ExitCode::SUCCESS)
}
