//! `sparring select` and `sparring export`: the command line into
//! [`sparring::training`], the cut reports on stderr.

use crate::UsageError;
use anyhow::Result;
use sparring::training::{self, Cut, CutSettings, Format, Prepared};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// What `select` and `export` share: the rows, what fills their gaps,
/// decontamination and the knobs of the cuts.
#[derive(Debug, clap::Args)]
pub(crate) struct CutArgs {
    /// A run directory or a rows file (`rows.jsonl`)
    rows: PathBuf,
    /// System prompt for rows that start without one (`@FILE` reads a file)
    #[arg(long)]
    system_prompt: Option<String>,
    /// Tool schemas for rows that have none: a JSON list of tools or a spec file
    #[arg(long)]
    tools: Option<PathBuf>,
    /// Held-out rows: their tasks and near-copies never reach a training
    /// cut; they are the Parquet `holdout` split
    #[arg(long)]
    holdout: Option<PathBuf>,
    /// Traces (JSON Lines or JSON) whose near-copies are dropped; repeatable
    #[arg(long)]
    traces: Vec<PathBuf>,
    /// Share of a row's 8-grams found in --holdout/--traces that drops it [default: 0.5]
    #[arg(long)]
    decontam_threshold: Option<f64>,
    /// Seed of the cuts' tie-breaking draws and the holdout split [default: 0]
    #[arg(long)]
    seed: Option<u64>,
    /// SFT loss mask: agent-turns or last-exchange [default: agent-turns]
    #[arg(long)]
    mask: Option<String>,
    /// SFT rows per task [default: 1]
    #[arg(long)]
    per_task: Option<usize>,
    /// SFT: keep rows the person walked away from (ended_by user_left), left out by default
    #[arg(long)]
    keep_user_left: bool,
    /// DPO least reward difference [default: 0.5]
    #[arg(long)]
    margin: Option<f64>,
    /// DPO largest length ratio of the two exported sides, in agent characters [default: 1.5]
    #[arg(long)]
    max_length_ratio: Option<f64>,
    /// DPO pairs per task at most [default: 4]
    #[arg(long)]
    max_pairs_per_task: Option<usize>,
    /// GRPO lowest group pass rate kept [default: 0.2]
    #[arg(long)]
    min_pass_rate: Option<f64>,
    /// GRPO highest group pass rate kept [default: 0.8]
    #[arg(long)]
    max_pass_rate: Option<f64>,
    /// Print the reports as JSON on stdout
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// openai-sft, openai-dpo, trl-sft, trl-dpo, trl-reward, trl-kto,
    /// trl-grpo, parquet, or `all` (a dataset folder with every format)
    #[arg(long, short)]
    format: String,
    /// Output: a file for the JSONL formats, a folder for `parquet` and `all`
    #[arg(long, short)]
    out: PathBuf,
    /// Parquet: share of tasks held out when --holdout is not given [default: 0.1]
    #[arg(long)]
    holdout_fraction: Option<f64>,
    /// OpenAI files: keep row_id, task_id, reward on each line instead of in
    /// the `<file>.index.jsonl` sidecar
    #[arg(long)]
    inline_trace: bool,
    #[command(flatten)]
    cut: CutArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct SelectArgs {
    /// sft, dpo, grpo, reward-pairs or graded
    #[arg(long, short)]
    cut: String,
    /// The kept rows, as a rows file (`sparring report` and `export` read it)
    #[arg(long, short)]
    out: PathBuf,
    #[command(flatten)]
    rows: CutArgs,
}

impl CutArgs {
    fn settings(&self, holdout_fraction: Option<f64>) -> Result<CutSettings> {
        let system_prompt = match self.system_prompt.as_deref() {
            Some(s) if s.starts_with('@') => {
                let path = PathBuf::from(s.trim_start_matches('@'));
                Some(std::fs::read_to_string(&path).map_err(|e| {
                    UsageError(format!(
                        "cannot read `{}`: {}",
                        path.display(),
                        e.to_string().to_lowercase()
                    ))
                })?)
            }
            other => other.map(str::to_owned),
        };
        Ok(CutSettings {
            rows: self.rows.clone(),
            system_prompt,
            tools: self.tools.clone(),
            holdout: self.holdout.clone(),
            traces: self.traces.clone(),
            decontam_threshold: self.decontam_threshold,
            seed: self.seed,
            mask: self.mask.as_deref().map(training::parse_mask).transpose()?,
            per_task: self.per_task,
            keep_user_left: self.keep_user_left,
            margin: self.margin,
            max_length_ratio: self.max_length_ratio,
            max_pairs_per_task: self.max_pairs_per_task,
            min_pass_rate: self.min_pass_rate,
            max_pass_rate: self.max_pass_rate,
            holdout_fraction,
            inline_trace: false,
        })
    }
}

fn prepare(settings: &CutSettings) -> Result<Prepared> {
    let prepared = training::prepare(settings)?;
    if let Some(report) = &prepared.decontam {
        eprint!("{}", report.render());
    }
    Ok(prepared)
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let started = Instant::now();
    let format: Option<Format> = if args.format == "all" {
        None
    } else {
        Some(
            args.format
                .parse::<Format>()
                .map_err(|e| UsageError(e.to_string()))?,
        )
    };
    let mut settings = args.cut.settings(args.holdout_fraction)?;
    settings.inline_trace = args.inline_trace;
    let prepared = prepare(&settings)?;
    let decontam = prepared.decontam.clone();
    let reports = training::export(prepared, format, &args.out)?;
    for r in &reports {
        let files: Vec<String> = r.files.iter().map(|p| p.display().to_string()).collect();
        if files.is_empty() {
            eprintln!("{}: wrote nothing", r.format.as_str());
        } else {
            eprintln!(
                "{}: wrote {} to {}",
                r.format.as_str(),
                r.written,
                files.join(", ")
            );
        }
        eprint!("{}", r.cut.render());
        for w in &r.warnings {
            eprintln!("warning: {w}");
        }
    }
    eprintln!("exported in {:.3} s", started.elapsed().as_secs_f64());
    if args.cut.json {
        let out = serde_json::json!({
            "decontaminate": decontam,
            "exports": reports,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// `sparring select`: one cut, its kept rows written as a rows file.
pub(crate) fn select(args: &SelectArgs) -> Result<ExitCode> {
    let cut: Cut = args.cut.parse()?;
    let prepared = prepare(&args.rows.settings(None)?)?;
    let selection = training::select(&prepared, cut);
    let warning = training::write_selection(&selection, &args.out)?;
    eprint!("{}", selection.report.render());
    match &warning {
        Some(w) => eprintln!("warning: {w}"),
        None => eprintln!(
            "wrote {} rows to {}",
            selection.rows.len(),
            args.out.display()
        ),
    }
    if args.rows.json {
        let out = serde_json::json!({
            "decontaminate": prepared.decontam,
            "cut": selection.report,
            "pairs": selection.pairs,
            "rows": selection.rows.len(),
            "file": warning.is_none().then_some(&args.out),
            "warnings": warning.iter().collect::<Vec<_>>(),
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(ExitCode::SUCCESS)
}
