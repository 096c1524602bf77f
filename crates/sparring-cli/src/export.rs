//! `sparring select` and `sparring export`.

use crate::UsageError;
use anyhow::Result;
use sparring_io::decontam::{
    DecontamOptions, DecontamReport, Reference, decontaminate, read_holdout, read_traces,
};
use sparring_io::export::{
    ExportOptions, ExportReport, Format, export, export_all, read_tools, supply,
};
use sparring_io::rows::{RowWriter, read_rows, rows_path};
use sparring_io::select::{
    CutReport, LossMask, PreferencePair, build_preference_pairs, build_reward_pairs, select_for_rl,
    select_for_sft, select_graded,
};
use sparring_types::Row;
use std::collections::BTreeSet;
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

fn unit_interval(name: &str, v: Option<f64>) -> Result<Option<f64>> {
    match v {
        Some(x) if !(0.0..=1.0).contains(&x) || x.is_nan() => {
            Err(UsageError(format!("--{name} must be within 0..=1, got `{x}`")).into())
        }
        other => Ok(other),
    }
}

fn options(args: &CutArgs) -> Result<ExportOptions> {
    let mut o = ExportOptions::default();
    if let Some(seed) = args.seed {
        o.seed = seed;
        o.sft.seed = seed;
        o.pairs.seed = seed;
        o.reward.seed = seed;
    }
    if let Some(mask) = &args.mask {
        o.sft.mask = match mask.as_str() {
            "agent-turns" => LossMask::AgentTurns,
            "last-exchange" => LossMask::LastExchange,
            other => {
                return Err(UsageError(format!(
                    "unknown --mask `{other}`; expected agent-turns or last-exchange"
                ))
                .into());
            }
        };
    }
    if let Some(n) = args.per_task {
        if n == 0 {
            return Err(UsageError("--per-task must be at least 1".to_owned()).into());
        }
        o.sft.per_task = n;
    }
    if let Some(m) = unit_interval("margin", args.margin)? {
        o.pairs.margin = m;
    }
    if let Some(r) = args.max_length_ratio {
        if r.is_nan() || r < 1.0 {
            return Err(
                UsageError(format!("--max-length-ratio must be at least 1, got `{r}`")).into(),
            );
        }
        o.pairs.max_length_ratio = r;
    }
    if let Some(n) = args.max_pairs_per_task {
        o.pairs.max_pairs_per_task = n;
    }
    if let Some(x) = unit_interval("min-pass-rate", args.min_pass_rate)? {
        o.rl.min_pass_rate = x;
    }
    if let Some(x) = unit_interval("max-pass-rate", args.max_pass_rate)? {
        o.rl.max_pass_rate = x;
    }
    if o.rl.min_pass_rate > o.rl.max_pass_rate {
        return Err(UsageError(format!(
            "--min-pass-rate {} is above --max-pass-rate {}",
            o.rl.min_pass_rate, o.rl.max_pass_rate
        ))
        .into());
    }
    Ok(o)
}

/// Rows ready for a cut: read, gaps filled, decontaminated.
struct Prepared {
    rows: Vec<Row>,
    holdout: Option<Vec<Row>>,
    decontam: Option<DecontamReport>,
    opts: ExportOptions,
}

fn prepare(args: &CutArgs) -> Result<Prepared> {
    let mut opts = options(args)?;
    let mut decontam = DecontamOptions::default();
    if let Some(t) = unit_interval("decontam-threshold", args.decontam_threshold)? {
        decontam.threshold = t;
    }
    let system_prompt = match args.system_prompt.as_deref() {
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
    let tools = args.tools.as_deref().map(read_tools).transpose()?;

    let mut rows = read_rows(&rows_path(&args.rows))?;
    supply(&mut rows, system_prompt.as_deref(), tools.as_deref());

    let mut references: Vec<Reference> = Vec::new();
    let mut holdout_rows = None;
    if let Some(path) = &args.holdout {
        let (mut held, reference) = read_holdout(path, decontam.ngram)?;
        supply(&mut held, system_prompt.as_deref(), tools.as_deref());
        holdout_rows = Some(held);
        references.push(reference);
    }
    for path in &args.traces {
        references.push(read_traces(path, decontam.ngram)?);
    }
    let mut decontam_report = None;
    if !references.is_empty() {
        let (kept, report) = decontaminate(rows, &references, &decontam);
        eprint!("{}", report.render());
        // A group is never split: the GRPO cut leaves such a task out whole.
        opts.rl.decontaminated_tasks = report.tasks_with_dropped_rows();
        rows = kept;
        decontam_report = Some(report);
    }
    if rows.is_empty() {
        return Err(UsageError("no rows left after decontamination".to_owned()).into());
    }
    Ok(Prepared {
        rows,
        holdout: holdout_rows,
        decontam: decontam_report,
        opts,
    })
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let started = Instant::now();
    let format: Option<Format> = if args.format == "all" {
        None
    } else {
        Some(args.format.parse().map_err(UsageError)?)
    };
    let Prepared {
        rows,
        holdout: holdout_rows,
        decontam: decontam_report,
        mut opts,
    } = prepare(&args.cut)?;
    if let Some(x) = unit_interval("holdout-fraction", args.holdout_fraction)? {
        opts.holdout_fraction = x;
    }
    opts.inline_trace = args.inline_trace;

    let reports: Vec<ExportReport> = match format {
        Some(f) => vec![export(&rows, holdout_rows.as_deref(), f, &opts, &args.out)?],
        None => export_all(rows, holdout_rows.as_deref(), &opts, &args.out)?,
    };
    for r in &reports {
        let files: Vec<String> = r.files.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "{}: wrote {} to {}",
            r.format.as_str(),
            r.written,
            files.join(", ")
        );
        eprint!("{}", r.cut.render());
        for w in &r.warnings {
            eprintln!("warning: {w}");
        }
    }
    eprintln!("exported in {:.3} s", started.elapsed().as_secs_f64());
    if args.cut.json {
        let out = serde_json::json!({
            "decontaminate": decontam_report,
            "exports": reports,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// `sparring select`: one cut, its kept rows written as a rows file.
pub(crate) fn select(args: &SelectArgs) -> Result<ExitCode> {
    let Prepared {
        rows,
        decontam: decontam_report,
        opts,
        ..
    } = prepare(&args.rows)?;
    let mut pairs_json: Vec<serde_json::Value> = Vec::new();
    let pair_json = |p: &PreferencePair<'_>| {
        serde_json::json!({
            "chosen": p.chosen.row_id,
            "rejected": p.rejected.row_id,
            "margin": p.margin,
            "length_ratio": p.length_ratio,
        })
    };
    let (kept, report): (Vec<&Row>, CutReport) = match args.cut.as_str() {
        "sft" => {
            let (examples, report) = select_for_sft(&rows, &opts.sft);
            (examples.into_iter().map(|e| e.row).collect(), report)
        }
        "dpo" | "reward-pairs" => {
            let (pairs, report) = if args.cut == "dpo" {
                build_preference_pairs(&rows, &opts.pairs)
            } else {
                build_reward_pairs(&rows, &opts.reward)
            };
            pairs_json = pairs.iter().map(pair_json).collect();
            let used: BTreeSet<&str> = pairs
                .iter()
                .flat_map(|p| [p.chosen.row_id.as_str(), p.rejected.row_id.as_str()])
                .collect();
            let kept = rows
                .iter()
                .filter(|r| used.contains(r.row_id.as_str()))
                .collect();
            (kept, report)
        }
        "grpo" => {
            let (groups, report) = select_for_rl(&rows, &opts.rl);
            let mut kept: Vec<&Row> = groups.into_iter().flat_map(|g| g.rows).collect();
            kept.sort_by_key(|r| (r.task_id.as_str(), r.row_id.as_str()));
            (kept, report)
        }
        "graded" => select_graded(&rows),
        other => {
            return Err(UsageError(format!(
                "unknown --cut `{other}`; expected sft, dpo, grpo, reward-pairs or graded"
            ))
            .into());
        }
    };
    if let Some(parent) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| UsageError(format!("cannot create `{}`: {e}", parent.display())))?;
    }
    let mut writer = RowWriter::create(&args.out)?;
    for row in &kept {
        writer.write(row)?;
    }
    drop(writer);
    eprint!("{}", report.render());
    eprintln!("wrote {} rows to {}", kept.len(), args.out.display());
    if args.rows.json {
        let out = serde_json::json!({
            "decontaminate": decontam_report,
            "cut": report,
            "pairs": pairs_json,
            "rows": kept.len(),
            "file": args.out,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(ExitCode::SUCCESS)
}
