//! `sparring grade`, `sparring labels attach` and `sparring judge-trust`.

use crate::UsageError;
use anyhow::{Context as _, Result};
use sparring::Env;
use sparring::engine::judge::JudgeKind;
use sparring::engine::trust::{TrustOptions, judge_trust};
use sparring::grading::{
    Combine, GradeSettings, Grading, attach_labels, grade_file, judge_same_model, start_judge,
};
use sparring::io::rows::{read_labels, read_rows, rows_path};
use sparring::types::defaults;
use sparring::types::values::Timeout;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

#[derive(Debug, clap::Args)]
pub(crate) struct GradeArgs {
    /// A rows file (or a run directory holding rows.jsonl)
    rows: PathBuf,
    /// Run the conduct checks (on by default)
    #[arg(long, overrides_with = "no_conduct")]
    conduct: bool,
    /// Skip the conduct checks
    #[arg(long)]
    no_conduct: bool,
    /// A grader: a command (gets `{"id","row"}` per line, answers
    /// `{"id","reward","reason","markers"}`) or an http(s):// URL (one POST per row)
    #[arg(long)]
    grader: Option<String>,
    /// The judge's backend: `openai:MODEL[@URL]`, `anthropic:MODEL` or `command:CMD`
    #[arg(long)]
    judge: Option<String>,
    /// The judge's rubric: a text file with the criteria [default: the
    /// `judge` rules of the rows' policy]
    #[arg(long)]
    rubric: Option<PathBuf>,
    /// The judge's answer: `score` (0..1) or `decision` (a probability)
    #[arg(long, default_value = "score")]
    judge_kind: String,
    /// Seconds a grader or judge command may take per row, at most a day
    /// [default: 60]
    #[arg(long)]
    timeout: Option<Timeout>,
    /// How the stages' verdicts make the row's: `last` (the last stage that ran
    /// decides) or `all` (every stage must pass)
    #[arg(long, default_value = "last")]
    combine: String,
    /// Where to write the graded rows (the input itself grades in place, and a
    /// run's rows.jsonl gets its run.json updated)
    #[arg(short, long)]
    out: PathBuf,
}

/// The hooks' timeout: `Timeout` bounds it (above 0, at most a day), so
/// `1e300` or `inf` is a usage error from the argument parser, not a panic.
fn timeout(t: Option<Timeout>) -> Duration {
    Duration::from_secs_f64(t.map_or(defaults::GRADE_HOOK_TIMEOUT_SECS, Timeout::get))
}

fn judge_kind(kind: &str) -> Result<JudgeKind> {
    JudgeKind::parse(kind).ok_or_else(|| {
        usage(format!(
            "--judge-kind `{kind}` is not a judge kind; expected `score` or `decision`"
        ))
    })
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub(crate) fn grade(args: &GradeArgs) -> Result<ExitCode> {
    let combine = args
        .combine
        .parse::<Combine>()
        .map_err(|e| usage(e.to_string()))?;
    let settings = GradeSettings {
        conduct: !args.no_conduct,
        grader: args.grader.clone(),
        judge: args.judge.clone(),
        rubric: args.rubric.clone(),
        judge_kind: judge_kind(&args.judge_kind)?,
        timeout: timeout(args.timeout),
        combine,
        ..GradeSettings::default()
    };
    let input = rows_path(&args.rows);
    let rows = read_rows(&input)?;
    let graded = runtime()?.block_on(async {
        let grading = Grading::start(&settings, &Env::process(), &rows).await?;
        grade_file(rows, &input, &args.out, &grading).await
    })?;
    let summary = &graded.summary;
    for w in &summary.warnings {
        eprintln!("warning: {w}");
    }
    eprintln!(
        "graded {} rows: {} passed, {} failed, {} ungraded -> {}",
        summary.rows,
        summary.passed,
        summary.failed,
        summary.ungraded,
        args.out.display()
    );
    for (stage, n) in &summary.stage_errors {
        eprintln!("warning: the {stage} stage could not grade {n} rows; their `grades` say why");
    }
    if summary.overturned > 0 {
        eprintln!(
            "warning: {} rows passed although an earlier stage failed them (the last stage decides); `--combine all` makes every stage count",
            summary.overturned
        );
    }
    if let Some(path) = &graded.updated_summary {
        eprintln!("updated the counts in {}", path.display());
    }
    if let Some(message) = &summary.stopped {
        if graded.kept_input {
            eprintln!(
                "error: {message}; `{}` was left as it was (the {} rows graded so far were not written over it)",
                args.out.display(),
                summary.rows
            );
        } else {
            eprintln!(
                "error: {message}; the other {} of {} rows were not graded and are not in `{}`",
                summary.rows_in - summary.rows,
                summary.rows_in,
                args.out.display()
            );
        }
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum LabelsCommand {
    /// Put gold labels on rows (`gold_reward`, `gold_author`, `gold_kind`)
    Attach(AttachArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct AttachArgs {
    /// A rows file (or a run directory)
    rows: PathBuf,
    /// Labels: JSON lines `{"row_id", "label", "author"}`, `label` true/false, 0..1
    /// or pass/fail (`reward` or `pass` may stand for `label`), the format
    /// judge-agreement reads too
    labels: PathBuf,
    /// What gave the labels: `human` (or `model`, `rule`)
    #[arg(long)]
    kind: String,
    /// Who gave the labels that name no `author` of their own
    #[arg(long)]
    author: Option<String>,
    /// Where to write the labelled rows
    #[arg(short, long)]
    out: PathBuf,
}

pub(crate) fn labels(command: &LabelsCommand) -> Result<ExitCode> {
    let LabelsCommand::Attach(args) = command;
    let mut rows = read_rows(&rows_path(&args.rows))?;
    let labels = read_labels(&args.labels)?;
    let labelled = attach_labels(
        &mut rows,
        &labels,
        &args.labels,
        &args.kind,
        args.author.as_deref(),
    )?;
    sparring::training::write_rows(&rows, &args.out)?;
    eprintln!(
        "labelled {labelled} of {} rows -> {}",
        rows.len(),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, clap::Args)]
pub(crate) struct TrustArgs {
    /// A rows file (or a run directory); gold labels make agreement measurable
    rows: PathBuf,
    /// The judge's backend: `openai:MODEL[@URL]`, `anthropic:MODEL` or `command:CMD`
    #[arg(long)]
    judge: String,
    /// The judge's rubric
    #[arg(long)]
    rubric: PathBuf,
    /// `score` or `decision`
    #[arg(long, default_value = "score")]
    judge_kind: String,
    /// Seed of the halves split and the probe rows
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Rows to build probes from, at most
    #[arg(long, default_value_t = sparring::engine::trust::PROBE_ROWS)]
    probe_rows: usize,
    /// Seconds the judge may take per request, at most a day [default: 60]
    #[arg(long)]
    timeout: Option<Timeout>,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

pub(crate) fn trust(args: &TrustArgs) -> Result<ExitCode> {
    let rows = read_rows(&rows_path(&args.rows))?;
    let limit = timeout(args.timeout);
    let kind = judge_kind(&args.judge_kind)?;
    runtime()?.block_on(async move {
        let judge =
            start_judge(&args.judge, Some(&args.rubric), None, kind, limit, &Env::process()).await?;
        let report = judge_trust(
            &judge,
            &rows,
            &TrustOptions {
                seed: args.seed,
                probe_rows: args.probe_rows,
                same_model: judge_same_model(&rows, &judge.model()),
            },
        )
        .await;
        if args.json {
            outln!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            outln!(
                "judge {} (rubric {})",
                report.judge,
                &report.rubric_hash[..16]
            );
            outln!("rows {}, with gold {}", report.rows, report.gold_rows);
            for (i, h) in report.halves.iter().enumerate() {
                let kappa = h
                    .kappa
                    .map_or_else(|| "n/a".to_owned(), |k| format!("{k:.3}"));
                let interval = h
                    .agreement_ci95
                    .map_or_else(String::new, |(lo, hi)| format!(" [{lo:.3}, {hi:.3}]"));
                outln!(
                    "half {}: n {}, agreement {:.3}{interval}, kappa {kappa}, passed when gold failed {}",
                    i + 1,
                    h.n,
                    h.agreement,
                    h.pass_when_gold_fail
                );
            }
            outln!("probes wrongly passed: {:.3}", report.wrongly_passed);
            for (probe, share) in &report.wrongly_passed_by_probe {
                outln!("  {probe:<22} {share:.3}");
            }
        }
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
        Ok(ExitCode::SUCCESS)
    })
}
