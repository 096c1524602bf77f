//! `sparring grade`, `sparring labels attach` and `sparring judge-trust`.

use crate::UsageError;
use anyhow::{Context as _, Result};
use sparring_engine::judge::{Judge, JudgeKind, JudgeSettings};
use sparring_engine::stages::{Stages, grade_row};
use sparring_engine::trust::{TrustOptions, judge_trust};
use sparring_io::command_agent::CommandAgent;
use sparring_io::command_grader::CommandGrader;
use sparring_io::rows::{RowWriter, read_labels, read_rows, rows_path};
use sparring_llm::{BackendOptions, BackendSpec, HttpGrader, Limiter, RetryPolicy, Sampling};
use sparring_types::defaults;
use sparring_types::hash::short_id;
use sparring_types::{Agent, Grader, Row};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Seconds a grader or judge command may take per row.
const HOOK_TIMEOUT_SECS: f64 = sparring_types::defaults::GRADE_HOOK_TIMEOUT_SECS;

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
    /// Seconds a grader or judge command may take per row [default: 60]
    #[arg(long)]
    timeout: Option<f64>,
    /// Where to write the graded rows
    #[arg(short, long)]
    out: PathBuf,
}

fn timeout(t: Option<f64>) -> Result<Duration> {
    let t = t.unwrap_or(HOOK_TIMEOUT_SECS);
    if t.is_nan() || t <= 0.0 {
        return Err(usage(
            "--timeout must be a number of seconds greater than 0",
        ));
    }
    Ok(Duration::from_secs_f64(t))
}

/// Starts the judge named by `--judge` with the rubric file, or else the
/// rubric read from the rows' policy (`from_policy`).
async fn start_judge(
    backend: &str,
    rubric: Option<&Path>,
    from_policy: Option<String>,
    kind: &str,
    limit: Duration,
) -> Result<Judge> {
    let text = match (rubric, from_policy) {
        (Some(rubric), _) => read_rubric(rubric)?,
        (None, Some(text)) => text,
        (None, None) => {
            return Err(usage(
                "--judge needs --rubric FILE (the criteria the judge grades against)",
            ));
        }
    };
    let kind = JudgeKind::parse(kind).ok_or_else(|| {
        usage(format!(
            "--judge-kind `{kind}` is not a judge kind; expected `score` or `decision`"
        ))
    })?;
    let spec = BackendSpec::parse(backend).map_err(|e| usage(format!("--judge: {e}")))?;
    let mut settings = JudgeSettings {
        kind,
        ..JudgeSettings::default()
    };
    let agent: Arc<dyn Agent> = match spec {
        BackendSpec::Command(command) => {
            Arc::new(CommandAgent::start(&command, limit, None).await?)
        }
        BackendSpec::Model(endpoint) => {
            let resolved = endpoint
                .resolve(&|name| std::env::var(name).ok())
                .map_err(|e| usage(format!("--judge: {e}")))?;
            settings.temperature = Some(defaults::JUDGE_TEMPERATURE);
            let options = BackendOptions {
                sampling: Sampling {
                    temperature: settings.temperature,
                    ..Sampling::default()
                },
                timeout: limit,
                retry: RetryPolicy::with_retries(defaults::RETRIES),
                limiter: Limiter::new(defaults::CONCURRENCY, None),
            };
            sparring_llm::model_agent(resolved, options)
                .map_err(|e| usage(format!("--judge: {e}")))?
        }
    };
    Ok(Judge::new(agent, text, settings))
}

fn read_rubric(rubric: &Path) -> Result<String> {
    let text = std::fs::read_to_string(rubric).map_err(|e| {
        usage(format!(
            "cannot read rubric `{}`: {}",
            rubric.display(),
            e.to_string().to_lowercase()
        ))
    })?;
    if text.trim().is_empty() {
        return Err(usage(format!("rubric `{}` is empty", rubric.display())));
    }
    Ok(text)
}

/// The grader named by `--grader`: an HTTP hook for a URL, else a command.
fn start_grader(spec: &str, limit: Duration) -> Result<Box<dyn Grader>> {
    if spec.starts_with("http://") || spec.starts_with("https://") {
        let grader = HttpGrader::new(
            spec,
            &|name| std::env::var(name).ok(),
            limit,
            RetryPolicy::with_retries(defaults::GRADER_RETRIES),
            Limiter::new(1, None),
        )
        .map_err(|e| usage(format!("--grader: {e}")))?;
        return Ok(Box::new(grader));
    }
    let command = spec.strip_prefix("command:").unwrap_or(spec);
    Ok(Box::new(CommandGrader::start(command, limit)?))
}

/// `same_model` warnings: the judge's backend against the roles the rows
/// record (agent, writer, person), by the rule `simulate` uses.
fn judge_same_model(rows: &[Row], judge: &str) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut warnings = Vec::new();
    for row in rows {
        let roles: BTreeMap<String, String> = [
            ("agent", row.model_version.as_str()),
            ("writer", row.writer_model.as_str()),
            ("person", row.user_model.as_str()),
            ("judge", judge),
        ]
        .into_iter()
        .map(|(r, s)| (r.to_owned(), s.to_owned()))
        .collect();
        if !seen.insert(roles.clone()) {
            continue;
        }
        for w in sparring_llm::roles::same_model_moving(&roles, "judge").warnings {
            if w.contains("the judge") && !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    warnings
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub(crate) fn grade(args: &GradeArgs) -> Result<ExitCode> {
    let mut rows = read_rows(&rows_path(&args.rows))?;
    let conduct = !args.no_conduct;
    if !conduct && args.grader.is_none() && args.judge.is_none() {
        return Err(usage(
            "nothing to grade with: --no-conduct and no --grader or --judge",
        ));
    }
    if args.rubric.is_some() && args.judge.is_none() {
        return Err(usage("--rubric needs --judge BACKEND"));
    }
    let limit = timeout(args.timeout)?;
    // `--judge` without `--rubric`: the `judge` rules of the rows' policy.
    let from_policy = match (&args.judge, &args.rubric) {
        (Some(_), None) => Some(
            sparring_engine::judge::policy_rubric(&rows)
                .map_err(|e| usage(format!("--judge: {e}")))?,
        ),
        _ => None,
    };
    let out = args.out.clone();
    runtime()?.block_on(async move {
        let grader = match &args.grader {
            Some(spec) => Some(start_grader(spec, limit)?),
            None => None,
        };
        let judge = match &args.judge {
            Some(b) => Some(
                start_judge(b, args.rubric.as_deref(), from_policy, &args.judge_kind, limit).await?,
            ),
            None => None,
        };
        let stages = Stages {
            conduct,
            grader: grader.as_deref(),
            judge: judge.as_ref(),
        };
        let ids: Vec<&str> = rows.iter().map(|r| r.row_id.as_str()).collect();
        let scoring_run_id = short_id(
            "grade",
            &serde_json::json!({"rows": ids, "conduct": conduct, "grader": args.grader, "judge": args.judge,
                "rubric_hash": judge.as_ref().map(Judge::rubric_hash)}),
        );
        if let Some(judge) = &judge {
            for w in judge_same_model(&rows, &judge.model()) {
                eprintln!("warning: same_model: {w}");
            }
        }
        let mut writer = RowWriter::create(&out)?;
        let (mut passed, mut ungraded, mut stage_errors) = (0u64, 0u64, BTreeMap::<String, u64>::new());
        for row in &mut rows {
            grade_row(row, stages, &scoring_run_id).await;
            match row.passed() {
                Some(true) => passed += 1,
                Some(false) => {}
                None => ungraded += 1,
            }
            for g in row.grades.iter().flatten().filter(|g| g.error.is_some()) {
                *stage_errors.entry(g.stage.clone()).or_default() += 1;
            }
            writer.write(row)?;
        }
        eprintln!(
            "graded {} rows: {passed} passed, {} failed, {ungraded} ungraded -> {}",
            rows.len(),
            rows.len() as u64 - passed - ungraded,
            out.display()
        );
        for (stage, n) in &stage_errors {
            eprintln!("warning: the {stage} stage could not grade {n} rows; their `grades` say why");
        }
        Ok(ExitCode::SUCCESS)
    })
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
    /// Labels: JSON lines `{"row_id", "reward"}` (or `"pass": true|false`)
    labels: PathBuf,
    /// What gave the labels: `human` (or `model`, `rule`)
    #[arg(long)]
    kind: String,
    /// Who gave them
    #[arg(long)]
    author: String,
    /// Where to write the labelled rows
    #[arg(short, long)]
    out: PathBuf,
}

pub(crate) fn labels(command: &LabelsCommand) -> Result<ExitCode> {
    let LabelsCommand::Attach(args) = command;
    if !matches!(args.kind.as_str(), "human" | "model" | "rule") {
        return Err(usage(format!(
            "--kind `{}` is not a label kind; expected `human`, `model` or `rule`",
            args.kind
        )));
    }
    if args.author.trim().is_empty() {
        return Err(usage("--author must name who gave the labels"));
    }
    let mut rows = read_rows(&rows_path(&args.rows))?;
    let labels = read_labels(&args.labels)?;
    let mut by_id = BTreeMap::new();
    for (i, l) in labels.iter().enumerate() {
        if by_id.insert(l.row_id.clone(), l.reward).is_some() {
            return Err(usage(format!(
                "`{}`: label {} repeats row `{}`",
                args.labels.display(),
                i + 1,
                l.row_id
            )));
        }
        if !rows.iter().any(|r| r.row_id == l.row_id) {
            return Err(usage(format!(
                "`{}`: label {} names row `{}`, which is not in `{}`",
                args.labels.display(),
                i + 1,
                l.row_id,
                args.rows.display()
            )));
        }
    }
    let mut writer = RowWriter::create(&args.out)?;
    let mut labelled = 0;
    for row in &mut rows {
        if let Some(r) = by_id.get(&row.row_id) {
            row.gold_reward = Some(*r);
            row.gold_author = Some(args.author.clone());
            row.gold_kind = Some(args.kind.clone());
            labelled += 1;
        }
        writer.write(row)?;
    }
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
    /// Seed of the halves split and the probe rows [default: 0]
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Rows to build probes from, at most
    #[arg(long, default_value_t = sparring_engine::trust::PROBE_ROWS)]
    probe_rows: usize,
    /// Seconds the judge may take per request [default: 60]
    #[arg(long)]
    timeout: Option<f64>,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

pub(crate) fn trust(args: &TrustArgs) -> Result<ExitCode> {
    let rows = read_rows(&rows_path(&args.rows))?;
    let limit = timeout(args.timeout)?;
    runtime()?.block_on(async move {
        let judge =
            start_judge(&args.judge, Some(&args.rubric), None, &args.judge_kind, limit).await?;
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
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            println!(
                "judge {} (rubric {})",
                report.judge,
                &report.rubric_hash[..16]
            );
            println!("rows {}, with gold {}", report.rows, report.gold_rows);
            for (i, h) in report.halves.iter().enumerate() {
                let kappa = h
                    .kappa
                    .map_or_else(|| "n/a".to_owned(), |k| format!("{k:.3}"));
                let interval = h
                    .agreement_ci95
                    .map_or_else(String::new, |(lo, hi)| format!(" [{lo:.3}, {hi:.3}]"));
                println!(
                    "half {}: n {}, agreement {:.3}{interval}, kappa {kappa}, passed when gold failed {}",
                    i + 1,
                    h.n,
                    h.agreement,
                    h.pass_when_gold_fail
                );
            }
            println!("probes wrongly passed: {:.3}", report.wrongly_passed);
            for (probe, share) in &report.wrongly_passed_by_probe {
                println!("  {probe:<22} {share:.3}");
            }
        }
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
        Ok(ExitCode::SUCCESS)
    })
}
