//! Exports: training files that trainers load as they are.
//!
//! Each [`Format`] runs its cut from `sparring_select` and writes what the
//! cut kept in the shape its tool reads (see `docs/export.md` for every
//! column and the compatibility test behind it):
//!
//! | format | cut | shape |
//! |---|---|---|
//! | `openai-sft` | SFT | `messages` (arguments as JSON strings, `weight` 0/1 on assistant messages), `tools` |
//! | `openai-dpo` | DPO | `input` {messages, tools}, `preferred_output` / `non_preferred_output` (one text-only assistant message each) |
//! | `trl-sft` | SFT | `messages` + `tools` (arguments as objects), or `prompt` / `completion` when earlier turns are not trained |
//! | `trl-dpo` | DPO | `prompt` / `chosen` / `rejected` (one assistant message each) + `tools`, `margin` |
//! | `trl-reward` | reward pairs | `prompt` / `chosen` / `rejected` / `margin` |
//! | `trl-kto` | graded rows | `prompt` / `completion` (the last assistant message) / `label` |
//! | `trl-grpo` | RL groups | `prompt` only, with `task_id`, `world_seed` (a string), `situation` for reward functions |
//! | `parquet` | all rows | a Hugging Face dataset folder, `train` / `holdout` splits |
//!
//! Every line is traceable to its rows by `row_id`, `task_id` and `reward`:
//! on the line in the TRL formats; in the OpenAI formats, whose lines hold
//! only the keys OpenAI documents, in a sidecar `<file>.index.jsonl` (one
//! line per line of the file), or on the line with
//! [`ExportOptions::inline_trace`]. No empty assistant message (no text, no
//! tool call) is ever in the trained part of a line; the trained part of a
//! DPO or KTO line (`chosen`, `rejected`, `completion`, the OpenAI outputs)
//! is agent turns only.

mod messages;
#[cfg(feature = "parquet")]
mod parquet_out;

use crate::Error;
use crate::defaults;
use messages::{
    hf_all, is_empty_agent, openai, openai_all, opening_end, prompt_end, through_last_assistant,
};
use serde::Serialize;
use serde_json::{Map, Value, json};
use sparring_select::{
    CutReport, LossMask, PairOptions, PairSide, RewardOptions, RlOptions, SftOptions,
    build_preference_pairs, build_reward_pairs, pair_side, select_for_rl, select_for_sft,
    select_graded,
};
use sparring_types::{Message, Role, Row};
use std::collections::BTreeSet;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

/// An export format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// OpenAI chat fine-tuning JSONL.
    OpenaiSft,
    /// OpenAI preference (DPO) JSONL.
    OpenaiDpo,
    /// TRL SFT dataset (JSONL).
    TrlSft,
    /// TRL DPO dataset (JSONL).
    TrlDpo,
    /// TRL reward-model dataset (JSONL).
    TrlReward,
    /// TRL unpaired preference (KTO) dataset (JSONL).
    TrlKto,
    /// TRL GRPO prompts (JSONL).
    TrlGrpo,
    /// A Hugging Face dataset folder of Parquet files.
    Parquet,
}

impl Format {
    /// Every format, in a fixed order.
    pub const ALL: [Self; 8] = [
        Self::OpenaiSft,
        Self::OpenaiDpo,
        Self::TrlSft,
        Self::TrlDpo,
        Self::TrlReward,
        Self::TrlKto,
        Self::TrlGrpo,
        Self::Parquet,
    ];

    /// The name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenaiSft => "openai-sft",
            Self::OpenaiDpo => "openai-dpo",
            Self::TrlSft => "trl-sft",
            Self::TrlDpo => "trl-dpo",
            Self::TrlReward => "trl-reward",
            Self::TrlKto => "trl-kto",
            Self::TrlGrpo => "trl-grpo",
            Self::Parquet => "parquet",
        }
    }

    /// Whether the format's rows carry tool schemas (and so warn without
    /// them).
    pub fn carries_tools(self) -> bool {
        !matches!(self, Self::TrlGrpo)
    }
}

impl std::str::FromStr for Format {
    type Err = FormatError;
    fn from_str(s: &str) -> Result<Self, FormatError> {
        Self::ALL
            .iter()
            .copied()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| FormatError::Unknown(s.to_owned()))
    }
}

/// Why a name is not a [`Format`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// No format has this name.
    #[error("unknown format `{}`; expected one of {}", .0, format_names())]
    Unknown(String),
}

/// Every format's name, in order, for [`FormatError`].
fn format_names() -> String {
    let names: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
    names.join(", ")
}

/// Options of every export.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExportOptions {
    /// SFT cut options.
    pub sft: SftOptions,
    /// DPO cut options.
    pub pairs: PairOptions,
    /// Reward-model pair options.
    pub reward: RewardOptions,
    /// GRPO cut options.
    pub rl: RlOptions,
    /// Seed of the holdout split (Parquet without a held-out file).
    pub seed: u64,
    /// Share of tasks in the `holdout` split when no held-out rows are given
    /// ([`defaults::HOLDOUT_FRACTION`]).
    pub holdout_fraction: f64,
    /// OpenAI files: keep `row_id`, `task_id`, `reward` (and a pair's
    /// `rejected_row_id`, `rejected_reward`, `margin`) on each line instead
    /// of in the `<file>.index.jsonl` sidecar. Off by default: OpenAI's
    /// formats document no such keys.
    pub inline_trace: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        Self {
            sft: SftOptions::default(),
            pairs: PairOptions::default(),
            reward: RewardOptions::default(),
            rl: RlOptions::default(),
            seed: defaults::SEED,
            holdout_fraction: defaults::HOLDOUT_FRACTION,
            inline_trace: false,
        }
    }
}

/// What an export wrote.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExportReport {
    /// The format.
    pub format: Format,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Lines (or Parquet rows) written.
    pub written: usize,
    /// The cut behind the file, with what the export itself left out under
    /// classes starting `export_`.
    pub cut: CutReport,
    /// Things to read before training on the file.
    pub warnings: Vec<String>,
    /// Parquet: the tasks of the `holdout` split, in id order (empty for
    /// the JSONL formats).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub holdout_tasks: Vec<String>,
}

/// Fills in what rows lack: a system message from `system_prompt` for rows
/// that start without one, and `tools` for rows that have none.
pub fn supply(rows: &mut [Row], system_prompt: Option<&str>, tools: Option<&[Value]>) {
    // One copy of the given tools, shared by every row that lacked them.
    let tools = tools.map(|t| sparring_types::Tools::new(t.to_vec()));
    for row in rows {
        if let Some(prompt) = system_prompt
            && row.messages.first().is_none_or(|m| m.role != Role::System)
        {
            row.messages.insert(0, Message::text(Role::System, prompt));
        }
        if let Some(tools) = &tools
            && row.tools.is_empty()
        {
            row.tools.clone_from(tools);
        }
    }
}

fn calls_tools(row: &Row) -> bool {
    row.messages
        .iter()
        .any(|m| !m.tool_calls.is_empty() || m.role == Role::Tool)
}

/// Collects the rows an export uses, for the warnings.
struct Used<'a> {
    rows: Vec<&'a Row>,
    broken_arguments: usize,
}

impl<'a> Used<'a> {
    fn new() -> Self {
        Self {
            rows: Vec::new(),
            broken_arguments: 0,
        }
    }

    /// A pair's line in TRL's preference shape: `prompt`, the two sides and
    /// the chosen row's tools.
    fn hf_pair_line(
        &mut self,
        prompt: &[Message],
        chosen: &[Message],
        rejected: &[Message],
        tools_of: &Row,
    ) -> Map<String, Value> {
        let mut line = Map::new();
        line.insert("prompt".into(), hf_all(prompt, &mut self.broken_arguments));
        line.insert("chosen".into(), hf_all(chosen, &mut self.broken_arguments));
        line.insert(
            "rejected".into(),
            hf_all(rejected, &mut self.broken_arguments),
        );
        line.insert("tools".into(), tools_value(tools_of));
        line
    }

    /// Both rows of a written pair.
    fn pair(&mut self, chosen: &'a Row, rejected: &'a Row) {
        self.rows.push(chosen);
        self.rows.push(rejected);
    }

    /// Distinct rows written.
    fn distinct_rows(&self) -> usize {
        self.rows
            .iter()
            .map(|r| r.row_id.as_str())
            .collect::<BTreeSet<_>>()
            .len()
    }

    fn warnings(&self, format: Format) -> Vec<String> {
        let mut out = Vec::new();
        if format.carries_tools() {
            let ids: BTreeSet<&str> = self
                .rows
                .iter()
                .filter(|r| r.tools.is_empty() && calls_tools(r))
                .map(|r| r.row_id.as_str())
                .collect();
            if !ids.is_empty() {
                out.push(format!(
                    "{} exported rows call tools but carry no tool schemas, so a trainer cannot render the tools the model saw; hint: pass --tools FILE",
                    ids.len()
                ));
            }
        }
        if self.broken_arguments > 0 {
            out.push(format!(
                "{} tool calls have arguments that are not a JSON object; they are kept as {{\"_raw\": text}}",
                self.broken_arguments
            ));
        }
        out
    }
}

fn trace(row: &Row) -> Map<String, Value> {
    let mut t = Map::new();
    t.insert("row_id".into(), Value::from(row.row_id.as_str()));
    t.insert("task_id".into(), Value::from(row.task_id.as_str()));
    t.insert("reward".into(), row.reward.map_or(Value::Null, Value::from));
    t
}

/// The class and rule of a line left out because an agent turn it would
/// train says nothing.
const EMPTY_AGENT_TURN: (&str, &str) = (
    "export_empty_agent_turn",
    "an agent turn that would be trained has no text and no tool call",
);

fn tools_value(row: &Row) -> Value {
    Value::Array(row.tools.to_vec())
}

/// Where a line's trace (`row_id`, `task_id`, `reward` …) goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TraceAt {
    /// On the line itself.
    Line,
    /// In the sidecar `<file>.index.jsonl`, as `{"line": n, …}`.
    Sidecar,
}

impl TraceAt {
    fn of(format: Format, opts: &ExportOptions) -> Self {
        if matches!(format, Format::OpenaiSft | Format::OpenaiDpo) && !opts.inline_trace {
            Self::Sidecar
        } else {
            Self::Line
        }
    }
}

/// The sidecar of a training file: `<file>.index.jsonl`.
pub fn index_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".index.jsonl");
    PathBuf::from(name)
}

/// One JSON-lines file being written.
struct JsonlFile {
    out: BufWriter<std::fs::File>,
    path: PathBuf,
}

impl JsonlFile {
    fn create(path: &Path) -> Result<Self, Error> {
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent).map_err(|e| Error::write(parent, &e))?;
        }
        let file = std::fs::File::create(path).map_err(|e| Error::write(path, &e))?;
        Ok(Self {
            out: BufWriter::with_capacity(1 << 20, file),
            path: path.to_owned(),
        })
    }

    fn push(&mut self, line: &Map<String, Value>) -> Result<(), Error> {
        serde_json::to_writer(&mut self.out, line).map_err(|e| Error::Write {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        self.out
            .write_all(b"\n")
            .map_err(|e| Error::write(&self.path, &e))
    }

    fn finish(mut self) -> Result<PathBuf, Error> {
        self.out.flush().map_err(|e| Error::write(&self.path, &e))?;
        Ok(self.path)
    }
}

/// A writer of training lines and, for the OpenAI formats, their sidecar.
struct Lines {
    file: JsonlFile,
    index: Option<JsonlFile>,
    written: usize,
}

impl Lines {
    fn create(path: &Path, at: TraceAt) -> Result<Self, Error> {
        let file = JsonlFile::create(path)?;
        let index = match at {
            TraceAt::Line => None,
            TraceAt::Sidecar => Some(JsonlFile::create(&index_path(path))?),
        };
        Ok(Self {
            file,
            index,
            written: 0,
        })
    }

    /// Writes `line` with its `trace`: on the line, or in the sidecar
    /// under the line's number (1-based).
    fn push(
        &mut self,
        mut line: Map<String, Value>,
        trace: Map<String, Value>,
    ) -> Result<(), Error> {
        match &mut self.index {
            None => line.extend(trace),
            Some(index) => {
                let mut entry = Map::new();
                entry.insert("line".into(), Value::from(self.written + 1));
                entry.extend(trace);
                index.push(&entry)?;
            }
        }
        self.file.push(&line)?;
        self.written += 1;
        Ok(())
    }

    fn finish(self) -> Result<(Vec<PathBuf>, usize), Error> {
        let mut files = vec![self.file.finish()?];
        if let Some(index) = self.index {
            files.push(index.finish()?);
        }
        Ok((files, self.written))
    }
}

/// Writes one format. `path` is a file for the JSONL formats and a folder
/// for `parquet`. `holdout` are held-out rows for the Parquet `holdout`
/// split; without them a seeded share of tasks is held out.
pub fn export(
    rows: &[Row],
    holdout: Option<&[Row]>,
    format: Format,
    opts: &ExportOptions,
    path: &Path,
) -> Result<ExportReport, Error> {
    match format {
        Format::OpenaiSft | Format::TrlSft => export_sft(rows, format, opts, path),
        Format::OpenaiDpo | Format::TrlDpo => export_dpo(rows, format, opts, path),
        Format::TrlReward => export_reward(rows, &opts.reward, path),
        Format::TrlKto => export_kto(rows, path),
        Format::TrlGrpo => export_grpo(rows, &opts.rl, path),
        Format::Parquet => export_parquet(rows, holdout, opts, path, &[]),
    }
}

/// Writes every format into one Hugging Face dataset folder: the Parquet
/// rows under `data/` (the folder's config, splits `train` and `holdout`)
/// and each JSONL format under `<format>/train-00000-of-00001.jsonl`, listed
/// in `README.md` (`datasets` infers one builder per folder, so the JSONL
/// files load with `load_dataset("json", data_files=…)`). A format whose cut
/// kept nothing has no file and a warning says so.
///
/// The JSONL cuts see only the rows of the Parquet `train` split: without
/// `holdout`, the tasks drawn into the `holdout` split are left out of them;
/// with it, rows of its tasks are. A held-out task never reaches a training
/// file of the folder. The rows are taken by value so the split moves them
/// instead of copying.
pub fn export_all(
    rows: Vec<Row>,
    holdout: Option<&[Row]>,
    opts: &ExportOptions,
    dir: &Path,
) -> Result<Vec<ExportReport>, Error> {
    let held_tasks: BTreeSet<String> = match holdout {
        Some(h) => h.iter().map(|r| r.task_id.clone()).collect(),
        None => sparring_select::split_by_task(&rows, opts.seed, opts.holdout_fraction)
            .1
            .iter()
            .map(|r| r.task_id.clone())
            .collect(),
    };
    let rows_in = rows.len();
    let tasks_in = rows
        .iter()
        .map(|r| r.task_id.as_str())
        .collect::<BTreeSet<_>>()
        .len();
    let (mut train, held): (Vec<Row>, Vec<Row>) = rows
        .into_iter()
        .partition(|r| !held_tasks.contains(&r.task_id));
    let mut reports = Vec::new();
    let mut configs: Vec<(String, String)> = Vec::new();
    for format in Format::ALL {
        if format == Format::Parquet {
            continue;
        }
        let name = format.as_str();
        let file = dir.join(name).join("train-00000-of-00001.jsonl");
        let mut report = export(&train, holdout, format, opts, &file)?;
        if !held.is_empty() {
            report.cut.rows_in = rows_in;
            report.cut.tasks_in = tasks_in;
            report.cut.exclude(
                "holdout_task",
                "rows",
                "in a task of the holdout split, which never reaches a training file",
                held.len(),
            );
        }
        if report.written == 0 {
            // `datasets` cannot load a config with no rows: leave it out.
            for f in &report.files {
                std::fs::remove_file(f).map_err(|e| Error::write(f, &e))?;
            }
            report.files.clear();
            report.warnings.push(format!(
                "the {} cut kept nothing, so the folder has no `{name}` file",
                report.cut.cut
            ));
        } else {
            configs.push((
                name.to_owned(),
                format!("{name}/train-00000-of-00001.jsonl"),
            ));
        }
        reports.push(report);
    }
    let named: Vec<(&str, String)> = configs
        .iter()
        .map(|(n, p)| (n.as_str(), p.clone()))
        .collect();
    let dropped = if holdout.is_some() {
        // Rows of a `--holdout` task are not put in the `train` split either.
        held.len()
    } else {
        // The split is a function of the task ids, not of the row order, so
        // the Parquet export draws the same holdout from the rows put back
        // together.
        train.extend(held);
        0
    };
    let mut parquet = export_parquet(&train, holdout, opts, dir, &named)?;
    if dropped > 0 {
        parquet.cut.rows_in = rows_in;
        parquet.cut.tasks_in = tasks_in;
        parquet.cut.exclude(
            "holdout_task",
            "rows",
            "in a task of the held-out rows, which never reaches the train split",
            dropped,
        );
    }
    reports.push(parquet);
    Ok(reports)
}

fn finish(
    format: Format,
    lines: Lines,
    cut: CutReport,
    used: &Used<'_>,
) -> Result<ExportReport, Error> {
    let (files, written) = lines.finish()?;
    Ok(ExportReport {
        format,
        files,
        written,
        cut,
        warnings: used.warnings(format),
        holdout_tasks: Vec::new(),
    })
}

fn export_sft(
    rows: &[Row],
    format: Format,
    export_opts: &ExportOptions,
    path: &Path,
) -> Result<ExportReport, Error> {
    let opts = &export_opts.sft;
    let (examples, mut cut) = select_for_sft(rows, opts);
    let mut lines = Lines::create(path, TraceAt::of(format, export_opts))?;
    let mut used = Used::new();
    for ex in &examples {
        let messages = through_last_assistant(&ex.row.messages);
        let trained = &ex.trained[..messages.len()];
        let Some(first) = trained.iter().position(|&t| t) else {
            cut.exclude(
                "export_nothing_trained",
                "rows",
                "no agent turn is left to train after the mask",
                1,
            );
            continue;
        };
        if messages
            .iter()
            .zip(trained)
            .any(|(m, &t)| t && is_empty_agent(m))
        {
            cut.exclude(EMPTY_AGENT_TURN.0, "rows", EMPTY_AGENT_TURN.1, 1);
            continue;
        }
        let mut line = Map::new();
        if format == Format::OpenaiSft {
            let msgs: Vec<Value> = messages
                .iter()
                .zip(trained)
                .map(|(m, &t)| openai(m, Some(t)))
                .collect();
            line.insert("messages".into(), Value::Array(msgs));
            if !ex.row.tools.is_empty() {
                line.insert("tools".into(), tools_value(ex.row));
            }
        } else if opts.mask == LossMask::AgentTurns {
            line.insert(
                "messages".into(),
                hf_all(messages, &mut used.broken_arguments),
            );
            line.insert("tools".into(), tools_value(ex.row));
        } else {
            // Earlier turns are context: TRL trains only the completion.
            line.insert(
                "prompt".into(),
                hf_all(&messages[..first], &mut used.broken_arguments),
            );
            line.insert(
                "completion".into(),
                hf_all(&messages[first..], &mut used.broken_arguments),
            );
            line.insert("tools".into(), tools_value(ex.row));
        }
        lines.push(line, trace(ex.row))?;
        used.rows.push(ex.row);
    }
    cut.items_out = lines.written;
    cut.rows_out = lines.written;
    finish(format, lines, cut, &used)
}

fn pair_trace(chosen: &Row, rejected: &Row, margin: f64) -> Map<String, Value> {
    let mut t = trace(chosen);
    t.insert(
        "rejected_row_id".into(),
        Value::from(rejected.row_id.as_str()),
    );
    t.insert(
        "rejected_reward".into(),
        rejected.reward.map_or(Value::Null, Value::from),
    );
    t.insert("margin".into(), Value::from(margin));
    t
}

fn export_dpo(
    rows: &[Row],
    format: Format,
    export_opts: &ExportOptions,
    path: &Path,
) -> Result<ExportReport, Error> {
    // Each side is the one diverging assistant message, so what DPO trains
    // (the completion) is the agent's words only, in both formats; the
    // length ratio is measured on exactly that.
    let side = PairSide::Message;
    let opts = PairOptions {
        side,
        ..export_opts.pairs.clone()
    };
    let (pairs, mut cut) = build_preference_pairs(rows, &opts);
    let mut lines = Lines::create(path, TraceAt::of(format, export_opts))?;
    let mut used = Used::new();
    for p in &pairs {
        let prefix = &p.chosen.messages[..p.split];
        let chosen = pair_side(&p.chosen.messages, p.split, side);
        let rejected = pair_side(&p.rejected.messages, p.split, side);
        if chosen.iter().chain(rejected).any(is_empty_agent) {
            cut.exclude(EMPTY_AGENT_TURN.0, "pairs", EMPTY_AGENT_TURN.1, 1);
            continue;
        }
        let line = if format == Format::OpenaiDpo {
            // OpenAI's DPO takes text outputs only.
            if chosen
                .iter()
                .chain(rejected)
                .any(|m| !m.tool_calls.is_empty())
            {
                cut.exclude(
                    "export_tool_call_output",
                    "pairs",
                    "a side is a tool call, and OpenAI's DPO takes text outputs only",
                    1,
                );
                continue;
            }
            let mut input = Map::new();
            input.insert("messages".into(), openai_all(prefix));
            if !p.chosen.tools.is_empty() {
                input.insert("tools".into(), tools_value(p.chosen));
            }
            let mut line = Map::new();
            line.insert("input".into(), Value::Object(input));
            line.insert("preferred_output".into(), openai_all(chosen));
            line.insert("non_preferred_output".into(), openai_all(rejected));
            line
        } else {
            used.hf_pair_line(prefix, chosen, rejected, p.chosen)
        };
        lines.push(line, pair_trace(p.chosen, p.rejected, p.margin))?;
        used.pair(p.chosen, p.rejected);
    }
    cut.items_out = lines.written;
    cut.rows_out = used.distinct_rows();
    finish(format, lines, cut, &used)
}

fn export_reward(rows: &[Row], opts: &RewardOptions, path: &Path) -> Result<ExportReport, Error> {
    let (pairs, mut cut) = build_reward_pairs(rows, opts);
    let mut lines = Lines::create(path, TraceAt::Line)?;
    let mut used = Used::new();
    for p in &pairs {
        let j = prompt_end(&p.chosen.messages, p.split).max(opening_end(&p.chosen.messages));
        let chosen = p.chosen.messages.get(j..).unwrap_or(&[]);
        let rejected = p.rejected.messages.get(j..).unwrap_or(&[]);
        if chosen.is_empty() || rejected.is_empty() {
            cut.exclude(
                "export_empty_side",
                "pairs",
                "one conversation ends where the other goes on, so one side would be empty",
                1,
            );
            continue;
        }
        if chosen.iter().chain(rejected).any(is_empty_agent) {
            cut.exclude(EMPTY_AGENT_TURN.0, "pairs", EMPTY_AGENT_TURN.1, 1);
            continue;
        }
        let line = used.hf_pair_line(&p.chosen.messages[..j], chosen, rejected, p.chosen);
        lines.push(line, pair_trace(p.chosen, p.rejected, p.margin))?;
        used.pair(p.chosen, p.rejected);
    }
    cut.items_out = lines.written;
    // Only the pairs written count, not those `export_empty_side` left out.
    cut.rows_out = used.distinct_rows();
    finish(Format::TrlReward, lines, cut, &used)
}

fn export_kto(rows: &[Row], path: &Path) -> Result<ExportReport, Error> {
    let (graded, mut cut) = select_graded(rows);
    let mut lines = Lines::create(path, TraceAt::Line)?;
    let mut used = Used::new();
    for row in graded {
        // The completion is the agent's last message, so KTO trains the
        // agent's words only; everything before it is the prompt.
        let Some(k) = row.messages.iter().rposition(|m| m.role == Role::Assistant) else {
            cut.exclude(
                "export_no_completion",
                "rows",
                "the agent never spoke, so there is no completion to label",
                1,
            );
            continue;
        };
        if is_empty_agent(&row.messages[k]) {
            cut.exclude(EMPTY_AGENT_TURN.0, "rows", EMPTY_AGENT_TURN.1, 1);
            continue;
        }
        let mut line = Map::new();
        line.insert(
            "prompt".into(),
            hf_all(&row.messages[..k], &mut used.broken_arguments),
        );
        line.insert(
            "completion".into(),
            hf_all(&row.messages[k..=k], &mut used.broken_arguments),
        );
        line.insert(
            "label".into(),
            Value::from(row.reward.is_some_and(|r| r >= defaults::PASS_THRESHOLD)),
        );
        line.insert("tools".into(), tools_value(row));
        lines.push(line, trace(row))?;
        used.rows.push(row);
    }
    cut.items_out = lines.written;
    cut.rows_out = lines.written;
    finish(Format::TrlKto, lines, cut, &used)
}

fn export_grpo(rows: &[Row], opts: &RlOptions, path: &Path) -> Result<ExportReport, Error> {
    let (groups, cut) = select_for_rl(rows, opts);
    let mut lines = Lines::create(path, TraceAt::Line)?;
    let mut used = Used::new();
    for g in &groups {
        let first = g.rows[0];
        let mut line = Map::new();
        line.insert(
            "prompt".into(),
            hf_all(
                &first.messages[..opening_end(&first.messages)],
                &mut used.broken_arguments,
            ),
        );
        line.insert("row_id".into(), Value::from(first.row_id.as_str()));
        line.insert("task_id".into(), Value::from(g.task_id));
        line.insert("reward".into(), Value::from(g.mean_reward));
        line.insert(
            "row_ids".into(),
            Value::from(g.rows.iter().map(|r| r.row_id.as_str()).collect::<Vec<_>>()),
        );
        line.insert("pass_rate".into(), Value::from(g.pass_rate));
        line.insert(
            "scenario_id".into(),
            Value::from(first.scenario_id.as_str()),
        );
        // A 64-bit seed as a string: `load_dataset("json")` types a column
        // with values at or above 2^63 as float64, which loses digits.
        line.insert(
            "world_seed".into(),
            Value::from(first.situation.world_seed.to_string()),
        );
        line.insert("tier".into(), Value::from(first.situation.tier.as_str()));
        // Free-form JSON rides as a string so heterogeneous rows load as
        // one column type; reward functions `json.loads` it.
        let situation = serde_json::to_string(&first.situation).map_err(|e| Error::Write {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        line.insert("situation".into(), Value::from(situation));
        lines.push(line, Map::new())?;
        used.rows.extend(g.rows.iter().copied());
    }
    finish(Format::TrlGrpo, lines, cut, &used)
}

#[cfg(feature = "parquet")]
fn export_parquet(
    rows: &[Row],
    holdout: Option<&[Row]>,
    opts: &ExportOptions,
    path: &Path,
    extra: &[(&str, String)],
) -> Result<ExportReport, Error> {
    let (train, held): (Vec<&Row>, Vec<&Row>) = match holdout {
        Some(h) => (rows.iter().collect(), h.iter().collect()),
        None => sparring_select::split_by_task(rows, opts.seed, opts.holdout_fraction),
    };
    let mut cut = CutReport {
        cut: "all".to_owned(),
        rows_in: rows.len(),
        tasks_in: rows
            .iter()
            .map(|r| &r.task_id)
            .collect::<BTreeSet<_>>()
            .len(),
        rows_out: train.len() + held.len(),
        items_out: train.len() + held.len(),
        item: "rows",
        ..CutReport::default()
    };
    if holdout.is_none() {
        cut.exclude(
            "holdout_split",
            "rows",
            &format!(
                "moved to the holdout split with their task (seeded share {} of tasks)",
                opts.holdout_fraction
            ),
            held.len(),
        );
    }
    let files = parquet_out::write_dataset(path, &train, &held, extra)?;
    let mut used = Used::new();
    used.rows.extend(train.iter().copied());
    used.rows.extend(held.iter().copied());
    Ok(ExportReport {
        format: Format::Parquet,
        files,
        written: train.len() + held.len(),
        cut,
        warnings: used.warnings(Format::Parquet),
        holdout_tasks: held
            .iter()
            .map(|r| r.task_id.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    })
}

#[cfg(not(feature = "parquet"))]
fn export_parquet(
    _rows: &[Row],
    _holdout: Option<&[Row]>,
    _opts: &ExportOptions,
    path: &Path,
    _extra: &[(&str, String)],
) -> Result<ExportReport, Error> {
    Err(Error::Write {
        path: path.to_owned(),
        message: "this sparring was built without the `parquet` feature".to_owned(),
    })
}

/// Reads tool schemas for rows that lack them: a JSON array of tools (OpenAI
/// function format or MCP `{name, description, inputSchema}`), a JSON object
/// with a `tools` array, or a spec file (YAML, JSON or TOML, by extension).
pub fn read_tools(path: &Path) -> Result<Vec<Value>, Error> {
    let is_json = path.extension().is_some_and(|e| e == "json");
    if !is_json {
        let spec = crate::spec_file::load_spec(path)?;
        return Ok(spec
            .tools
            .iter()
            .map(sparring_types::ToolSpec::to_openai)
            .collect());
    }
    let text = crate::text::read_utf8(path)?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        Error::invalid(
            path,
            format!("line {}", e.line()),
            format!("not JSON: {}", sparring_types::clip::json_error(&e)),
        )
    })?;
    let list = match &doc {
        Value::Array(items) => items.clone(),
        Value::Object(o) => match o.get("tools") {
            Some(Value::Array(items)) => items.clone(),
            _ => {
                return Err(Error::invalid(
                    path,
                    "/tools",
                    "expected a list of tools or an object with a `tools` list",
                ));
            }
        },
        _ => {
            return Err(Error::invalid(
                path,
                "/",
                "expected a list of tools or an object with a `tools` list",
            ));
        }
    };
    list.iter()
        .enumerate()
        .map(|(i, tool)| normalise_tool(tool).ok_or_else(|| {
            Error::invalid(
                path,
                format!("/{i}"),
                "a tool needs `{\"type\": \"function\", \"function\": {name, parameters}}` or `{name, inputSchema}`",
            )
        }))
        .collect()
}

fn normalise_tool(tool: &Value) -> Option<Value> {
    if tool
        .get("function")
        .and_then(|f| f.get("name"))
        .is_some_and(Value::is_string)
    {
        return Some(tool.clone());
    }
    let name = tool.get("name")?.as_str()?;
    let parameters = tool
        .get("inputSchema")
        .or_else(|| tool.get("parameters"))
        .cloned()
        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    let description = tool
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    Some(json!({"type": "function", "function": {
        "name": name, "description": description, "parameters": parameters}}))
}
