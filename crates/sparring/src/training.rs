//! Training data: graded rows cut into SFT, DPO, GRPO and reward-model sets
//! after decontamination, kept as rows ([`select`]) or written in a trainer's
//! format ([`export`]).
//!
//! [`prepare`] reads the rows, fills what foreign rows lack (a system prompt,
//! tool schemas), and drops rows that near-copy held-out rows or traces. A
//! GRPO group is never split: a task that lost a row to decontamination is
//! left out of the RL cut whole.

use crate::error::{Error, Result};
use serde::Serialize;
use sparring_io::export::{ExportOptions, ExportReport, read_tools, supply};
use sparring_io::rows::{RowWriter, read_holdout, read_rows, read_traces, rows_path};
use sparring_select::decontam::{DecontamOptions, DecontamReport, Reference, decontaminate};
use sparring_select::{
    CutReport, LossMask, PreferencePair, build_preference_pairs, build_reward_pairs, select_for_rl,
    select_for_sft, select_graded,
};
use sparring_types::Row;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub use sparring_io::export::{Format, FormatError};

/// Where the rows come from and how they are cut; every knob `None` takes
/// the cut's default (`sparring_select::defaults`).
#[derive(Clone, Debug, Default)]
pub struct CutSettings {
    /// A run directory or a rows file.
    pub rows: PathBuf,
    /// System prompt for rows that start without one.
    pub system_prompt: Option<String>,
    /// Tool schemas for rows that have none: a JSON list of tools or a spec
    /// file.
    pub tools: Option<PathBuf>,
    /// Held-out rows: their tasks and near-copies never reach a cut; the
    /// Parquet `holdout` split.
    pub holdout: Option<PathBuf>,
    /// Traces whose near-copies are dropped.
    pub traces: Vec<PathBuf>,
    /// Share of a row's n-grams found in the references that drops it.
    pub decontam_threshold: Option<f64>,
    /// Seed of the cuts' tie-breaking draws and the holdout split.
    pub seed: Option<u64>,
    /// SFT loss mask.
    pub mask: Option<LossMask>,
    /// SFT rows per task.
    pub per_task: Option<usize>,
    /// SFT: keep rows the person walked away from (`user_left`).
    pub keep_user_left: bool,
    /// DPO least reward difference.
    pub margin: Option<f64>,
    /// DPO largest length ratio of the exported sides.
    pub max_length_ratio: Option<f64>,
    /// DPO pairs per task at most.
    pub max_pairs_per_task: Option<usize>,
    /// GRPO lowest group pass rate kept.
    pub min_pass_rate: Option<f64>,
    /// GRPO highest group pass rate kept.
    pub max_pass_rate: Option<f64>,
    /// Parquet: share of tasks held out when no held-out rows are given.
    pub holdout_fraction: Option<f64>,
    /// OpenAI files: keep `row_id`, `task_id` and `reward` on each line
    /// instead of in the `<file>.index.jsonl` sidecar.
    pub inline_trace: bool,
}

/// A loss mask by its command-line name (`agent-turns`, `last-exchange`).
///
/// # Errors
///
/// [`crate::ErrorKind::Input`] naming the expected values.
pub fn parse_mask(name: &str) -> Result<LossMask> {
    match name {
        "agent-turns" => Ok(LossMask::AgentTurns),
        "last-exchange" => Ok(LossMask::LastExchange),
        other => Err(Error::input(format!(
            "unknown --mask `{other}`; expected agent-turns or last-exchange"
        ))),
    }
}

fn unit_interval(name: &str, v: Option<f64>) -> Result<Option<f64>> {
    match v {
        Some(x) if !(0.0..=1.0).contains(&x) || x.is_nan() => Err(Error::input(format!(
            "--{name} must be within 0..=1, got `{x}`"
        ))),
        other => Ok(other),
    }
}

impl CutSettings {
    fn export_options(&self) -> Result<ExportOptions> {
        let mut o = ExportOptions::default();
        if let Some(seed) = self.seed {
            o.seed = seed;
            o.sft.seed = seed;
            o.pairs.seed = seed;
            o.reward.seed = seed;
        }
        if let Some(mask) = self.mask {
            o.sft.mask = mask;
        }
        o.sft.keep_user_left = self.keep_user_left;
        if let Some(n) = self.per_task {
            if n == 0 {
                return Err(Error::input("--per-task must be at least 1"));
            }
            o.sft.per_task = n;
        }
        if let Some(m) = unit_interval("margin", self.margin)? {
            o.pairs.margin = m;
        }
        if let Some(r) = self.max_length_ratio {
            if r.is_nan() || r < 1.0 {
                return Err(Error::input(format!(
                    "--max-length-ratio must be at least 1, got `{r}`"
                )));
            }
            o.pairs.max_length_ratio = r;
        }
        if let Some(n) = self.max_pairs_per_task {
            o.pairs.max_pairs_per_task = n;
        }
        if let Some(x) = unit_interval("min-pass-rate", self.min_pass_rate)? {
            o.rl.min_pass_rate = x;
        }
        if let Some(x) = unit_interval("max-pass-rate", self.max_pass_rate)? {
            o.rl.max_pass_rate = x;
        }
        if o.rl.min_pass_rate > o.rl.max_pass_rate {
            return Err(Error::input(format!(
                "--min-pass-rate {} is above --max-pass-rate {}",
                o.rl.min_pass_rate, o.rl.max_pass_rate
            )));
        }
        if let Some(x) = unit_interval("holdout-fraction", self.holdout_fraction)? {
            o.holdout_fraction = x;
        }
        o.inline_trace = self.inline_trace;
        Ok(o)
    }
}

/// Rows ready for a cut: read, gaps filled, decontaminated.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The rows left after decontamination.
    pub rows: Vec<Row>,
    /// The held-out rows, when given.
    pub holdout: Option<Vec<Row>>,
    /// What decontamination dropped, when there was a reference.
    pub decontam: Option<DecontamReport>,
    /// The cuts' and exports' options as resolved.
    pub options: ExportOptions,
}

/// Reads, fills and decontaminates the rows of `settings`.
///
/// # Errors
///
/// Bad settings, unreadable files, or no row left after decontamination.
pub fn prepare(settings: &CutSettings) -> Result<Prepared> {
    let mut options = settings.export_options()?;
    let mut decontam = DecontamOptions::default();
    if let Some(t) = unit_interval("decontam-threshold", settings.decontam_threshold)? {
        decontam.threshold = t;
    }
    let tools = settings.tools.as_deref().map(read_tools).transpose()?;
    let prompt = settings.system_prompt.as_deref();
    let mut rows = read_rows(&rows_path(&settings.rows))?;
    supply(&mut rows, prompt, tools.as_deref());

    let mut references: Vec<Reference> = Vec::new();
    let mut holdout = None;
    if let Some(path) = &settings.holdout {
        let (mut held, reference) = read_holdout(path, decontam.ngram)?;
        supply(&mut held, prompt, tools.as_deref());
        holdout = Some(held);
        references.push(reference);
    }
    for path in &settings.traces {
        references.push(read_traces(path, decontam.ngram)?);
    }
    let mut report = None;
    if !references.is_empty() {
        let (kept, r) = decontaminate(rows, &references, &decontam);
        // A group is never split: the GRPO cut leaves such a task out whole.
        options.rl.decontaminated_tasks = r.tasks_with_dropped_rows();
        rows = kept;
        report = Some(r);
    }
    if rows.is_empty() {
        return Err(Error::input("no rows left after decontamination"));
    }
    Ok(Prepared {
        rows,
        holdout,
        decontam: report,
        options,
    })
}

/// A training cut kept as rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Each task's best reward-1 row.
    Sft,
    /// Rows in DPO pairs.
    Dpo,
    /// Whole groups whose pass rate lies in the band.
    Grpo,
    /// Rows in reward-model pairs.
    RewardPairs,
    /// Every graded row.
    Graded,
}

impl std::str::FromStr for Cut {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "sft" => Self::Sft,
            "dpo" => Self::Dpo,
            "grpo" => Self::Grpo,
            "reward-pairs" => Self::RewardPairs,
            "graded" => Self::Graded,
            other => {
                return Err(Error::input(format!(
                    "unknown --cut `{other}`; expected sft, dpo, grpo, reward-pairs or graded"
                )));
            }
        })
    }
}

/// One pair of a pair cut, by row id.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pair {
    /// The better row.
    pub chosen: String,
    /// The worse row.
    pub rejected: String,
    /// Reward difference.
    pub margin: f64,
    /// Length ratio of the exported sides.
    pub length_ratio: f64,
}

impl From<&PreferencePair<'_>> for Pair {
    fn from(p: &PreferencePair<'_>) -> Self {
        Self {
            chosen: p.chosen.row_id.clone(),
            rejected: p.rejected.row_id.clone(),
            margin: p.margin,
            length_ratio: p.length_ratio,
        }
    }
}

/// What a cut kept.
#[derive(Clone, Debug)]
pub struct Selection {
    /// The rows kept, in a fixed order.
    pub rows: Vec<Row>,
    /// Rows in, items out, every exclusion class.
    pub report: CutReport,
    /// The pairs, for the pair cuts.
    pub pairs: Vec<Pair>,
}

/// Runs one cut over prepared rows.
pub fn select(prepared: &Prepared, cut: Cut) -> Selection {
    let rows = &prepared.rows;
    let opts = &prepared.options;
    let mut pairs = Vec::new();
    let (kept, report): (Vec<&Row>, CutReport) = match cut {
        Cut::Sft => {
            let (examples, report) = select_for_sft(rows, &opts.sft);
            (examples.into_iter().map(|e| e.row).collect(), report)
        }
        Cut::Dpo | Cut::RewardPairs => {
            let (found, report) = if cut == Cut::Dpo {
                build_preference_pairs(rows, &opts.pairs)
            } else {
                build_reward_pairs(rows, &opts.reward)
            };
            pairs = found.iter().map(Pair::from).collect();
            let used: BTreeSet<&str> = found
                .iter()
                .flat_map(|p| [p.chosen.row_id.as_str(), p.rejected.row_id.as_str()])
                .collect();
            let kept = rows
                .iter()
                .filter(|r| used.contains(r.row_id.as_str()))
                .collect();
            (kept, report)
        }
        Cut::Grpo => {
            let (groups, report) = select_for_rl(rows, &opts.rl);
            let mut kept: Vec<&Row> = groups.into_iter().flat_map(|g| g.rows).collect();
            kept.sort_by_key(|r| (r.task_id.as_str(), r.row_id.as_str()));
            (kept, report)
        }
        Cut::Graded => select_graded(rows),
    };
    Selection {
        rows: kept.into_iter().cloned().collect(),
        report,
        pairs,
    }
}

/// Writes a selection's rows as a rows file (`sparring report` and
/// `export` read it), creating the parent directory. A selection that kept
/// nothing writes no file (an earlier file at `path` stays as it was) and
/// returns the warning that says so.
///
/// # Errors
///
/// When the file cannot be written.
pub fn write_selection(selection: &Selection, path: &Path) -> Result<Option<String>> {
    if selection.rows.is_empty() {
        return Ok(Some(format!(
            "the {} cut kept nothing, so no file was written (`{}` was left as it was)",
            selection.report.cut,
            path.display()
        )));
    }
    write_rows(&selection.rows, path)?;
    Ok(None)
}

/// Creates the folder an output file goes in, as `export` does for its
/// own: every stage that writes a file takes `-o DIR/FILE` alike.
///
/// # Errors
///
/// When the folder cannot be created.
pub(crate) fn create_parent(path: &Path) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, &e))?;
    }
    Ok(())
}

/// Writes rows as a rows file, creating the parent directory.
///
/// # Errors
///
/// When the file cannot be written.
pub fn write_rows(rows: &[Row], path: &Path) -> Result<()> {
    create_parent(path)?;
    let mut writer = RowWriter::create(path)?;
    for row in rows {
        writer.write(row)?;
    }
    Ok(())
}

/// Writes prepared rows in one format (`Some`) or every format as a dataset
/// folder (`None`, `-f all`). A JSONL format whose cut keeps nothing writes
/// no file (an earlier file at `out` stays as it was) and says so in its
/// report's warnings, as `-f all` does for each of its formats.
///
/// # Errors
///
/// When nothing can be written or a file cannot be.
pub fn export(prepared: Prepared, format: Option<Format>, out: &Path) -> Result<Vec<ExportReport>> {
    let Prepared {
        rows,
        holdout,
        options,
        ..
    } = prepared;
    Ok(match format {
        Some(Format::Parquet) => vec![sparring_io::export::export(
            &rows,
            holdout.as_deref(),
            Format::Parquet,
            &options,
            out,
        )?],
        Some(f) => {
            // Written beside `out` first: only a file with lines replaces it.
            let mut name = out.as_os_str().to_owned();
            name.push(".partial");
            let partial = PathBuf::from(name);
            let mut report =
                sparring_io::export::export(&rows, holdout.as_deref(), f, &options, &partial)?;
            let (index_from, index_to) = (
                sparring_io::export::index_path(&partial),
                sparring_io::export::index_path(out),
            );
            let mut files = Vec::new();
            for file in std::mem::take(&mut report.files) {
                let to = if file == partial {
                    out.to_path_buf()
                } else if file == index_from {
                    index_to.clone()
                } else {
                    file.clone()
                };
                if report.written == 0 {
                    std::fs::remove_file(&file).map_err(|e| Error::io("remove", &file, &e))?;
                } else {
                    std::fs::rename(&file, &to).map_err(|e| Error::io("write", &to, &e))?;
                    files.push(to);
                }
            }
            report.files = files;
            if report.written == 0 {
                report.warnings.push(format!(
                    "the {} cut kept nothing, so no file was written (`{}` was left as it was)",
                    report.cut.cut,
                    out.display()
                ));
            }
            vec![report]
        }
        None => sparring_io::export::export_all(rows, holdout.as_deref(), &options, out)?,
    })
}
