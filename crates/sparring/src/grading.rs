//! Grading rows in stages (conduct checks, then a grader hook, then an LLM
//! judge), gold labels, and the judge's own measurement.
//!
//! [`Grading::start`] builds the stages from their specs (a grader command
//! or URL, a judge backend and its rubric); [`grade_rows`] grades many rows
//! at once and streams them to a [`RowSink`] in their input order. Each
//! stage's verdict stays on the row in `grades`; the last stage that ran
//! decides `reward` ([`Combine::Last`], counting the rows it passed after an
//! earlier stage failed them in [`GradeSummary::overturned`]), or every
//! stage must pass ([`Combine::All`]). [`grade_file`] grades a rows file
//! into another (or into itself) without losing the input on a stop.

use crate::backends::Env;
use crate::error::{Error, Result};
use serde::Serialize;
use sparring_engine::judge::{Judge, JudgeKind, JudgeSettings};
pub use sparring_engine::stages::{Combine, CombineError};
use sparring_engine::stages::{Stages, grade_row_under, overturned};
use sparring_io::command_agent::CommandAgent;
use sparring_io::command_grader::{CommandGrader, FailFast};
use sparring_llm::{BackendOptions, BackendSpec, HttpGrader, Limiter, RetryPolicy, Sampling};
use sparring_types::defaults;
use sparring_types::hash::short_id;
use sparring_types::{Agent, Grader, Row, RowSink};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Which stages to run and how; what `sparring grade` takes.
#[derive(Clone, Debug)]
pub struct GradeSettings {
    /// Run the conduct checks.
    pub conduct: bool,
    /// A grader: a command or an `http(s)://` URL.
    pub grader: Option<String>,
    /// The judge's backend: `openai:MODEL[@URL]`, `anthropic:MODEL` or
    /// `command:CMD`.
    pub judge: Option<String>,
    /// The judge's rubric file; `None` builds the rubric from the `judge`
    /// rules of the rows' policy.
    pub rubric: Option<PathBuf>,
    /// The judge's answer: a score or a decision.
    pub judge_kind: JudgeKind,
    /// How long a grader or judge may take per row.
    pub timeout: Duration,
    /// Rows graded at once.
    pub concurrency: usize,
    /// How the stages' verdicts combine.
    pub combine: Combine,
}

impl Default for GradeSettings {
    fn default() -> Self {
        Self {
            conduct: true,
            grader: None,
            judge: None,
            rubric: None,
            judge_kind: JudgeKind::Score,
            timeout: Duration::from_secs_f64(defaults::GRADE_HOOK_TIMEOUT_SECS),
            concurrency: defaults::GRADE_CONCURRENCY,
            combine: Combine::Last,
        }
    }
}

/// The stages, started.
pub struct Grading {
    conduct: bool,
    grader: Option<Arc<dyn Grader>>,
    judge: Option<Arc<Judge>>,
    concurrency: usize,
    combine: Combine,
    identity: serde_json::Value,
}

impl std::fmt::Debug for Grading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grading")
            .field("conduct", &self.conduct)
            .field("grader", &self.grader.as_ref().map(|g| g.describe()))
            .field("judge", &self.judge.as_ref().map(|j| j.model()))
            .finish_non_exhaustive()
    }
}

/// Reads a rubric file: it must hold some text.
fn read_rubric(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::input(format!(
            "cannot read rubric `{}`: {}",
            path.display(),
            e.to_string().to_lowercase()
        ))
    })?;
    if text.trim().is_empty() {
        return Err(Error::input(format!(
            "rubric `{}` is empty",
            path.display()
        )));
    }
    Ok(text)
}

/// Starts the judge named by `backend` with the rubric file, or else the
/// rubric built from the `judge` rules of a policy (`from_policy`).
///
/// # Errors
///
/// No rubric, an unreadable or empty one, a bad backend spec or key.
pub async fn start_judge(
    backend: &str,
    rubric: Option<&Path>,
    from_policy: Option<String>,
    kind: JudgeKind,
    timeout: Duration,
    env: &Env,
) -> Result<Judge> {
    let text = match (rubric, from_policy) {
        (Some(rubric), _) => read_rubric(rubric)?,
        (None, Some(text)) => text,
        (None, None) => {
            return Err(Error::input(
                "--judge needs --rubric FILE (the criteria the judge grades against)",
            ));
        }
    };
    let spec = BackendSpec::parse(backend).map_err(|e| Error::input(format!("--judge: {e}")))?;
    let mut settings = JudgeSettings {
        kind,
        ..JudgeSettings::default()
    };
    let agent: Arc<dyn Agent> = match spec {
        BackendSpec::Command(command) => {
            Arc::new(CommandAgent::start_as("judge", &command, timeout, None).await?)
        }
        BackendSpec::Model(endpoint) => {
            let resolved = endpoint
                .resolve(&|name| env.get(name))
                .map_err(|e| Error::input(format!("--judge: {e}")))?;
            settings.temperature = Some(defaults::JUDGE_TEMPERATURE);
            let options = BackendOptions {
                sampling: Sampling {
                    temperature: settings.temperature,
                    ..Sampling::default()
                },
                timeout,
                retry: RetryPolicy::with_retries(defaults::RETRIES),
                limiter: Limiter::new(defaults::CONCURRENCY, None),
            };
            sparring_llm::model_agent(resolved, options)
                .map_err(|e| Error::input(format!("--judge: {e}")))?
        }
    };
    Ok(Judge::new(agent, text, settings))
}

/// The grader named by `spec`: an HTTP hook for a URL, else a command.
fn start_grader(spec: &str, timeout: Duration, env: &Env) -> Result<Arc<dyn Grader>> {
    if spec.starts_with("http://") || spec.starts_with("https://") {
        let grader = HttpGrader::new(
            spec,
            &|name| env.get(name),
            timeout,
            RetryPolicy::with_retries(defaults::GRADER_RETRIES),
            Limiter::new(defaults::GRADE_CONCURRENCY, None),
        )
        .map_err(|e| Error::input(format!("--grader: {e}")))?;
        return Ok(Arc::new(grader));
    }
    let command = spec.strip_prefix("command:").unwrap_or(spec);
    // One process per CPU (0): Python graders start slowly when crowded.
    Ok(Arc::new(CommandGrader::start_pool(command, timeout, 0)?))
}

impl Grading {
    /// Starts the stages `settings` name, for grading `rows`: a judge
    /// without a rubric grades against the `judge` rules of the rows' policy.
    ///
    /// # Errors
    ///
    /// Nothing to grade with, a rubric without a judge, rows under several
    /// policies (or none with `judge` rules) for a judge without a rubric,
    /// or a stage that cannot start.
    pub async fn start(settings: &GradeSettings, env: &Env, rows: &[Row]) -> Result<Self> {
        Self::start_with(settings, env, rows, None).await
    }

    /// [`Grading::start`] with a grader of the caller's (a closure, a
    /// Python callable) in place of `settings.grader`.
    ///
    /// # Errors
    ///
    /// As [`Grading::start`]; a grader given both ways.
    pub async fn start_with(
        settings: &GradeSettings,
        env: &Env,
        rows: &[Row],
        given: Option<Arc<dyn Grader>>,
    ) -> Result<Self> {
        if given.is_some() && settings.grader.is_some() {
            return Err(Error::input(
                "two graders: give a grader command or URL, or a grader of your own, not both",
            ));
        }
        if !settings.conduct
            && settings.grader.is_none()
            && given.is_none()
            && settings.judge.is_none()
        {
            return Err(Error::input(
                "nothing to grade with: --no-conduct and no --grader or --judge",
            ));
        }
        if settings.rubric.is_some() && settings.judge.is_none() {
            return Err(Error::input("--rubric needs --judge BACKEND"));
        }
        let given_name = given.as_ref().map(|g| g.describe());
        let grader = match given {
            Some(g) => Some(g),
            None => settings
                .grader
                .as_deref()
                .map(|g| start_grader(g, settings.timeout, env))
                .transpose()?,
        };
        // `--judge` without `--rubric`: the `judge` rules of the rows' policy.
        let from_policy = match (&settings.judge, &settings.rubric) {
            (Some(_), None) => Some(
                sparring_engine::judge::policy_rubric(rows)
                    .map_err(|e| Error::input(format!("--judge: {e}")))?,
            ),
            _ => None,
        };
        let judge = match &settings.judge {
            Some(b) => Some(Arc::new(
                start_judge(
                    b,
                    settings.rubric.as_deref(),
                    from_policy,
                    settings.judge_kind,
                    settings.timeout,
                    env,
                )
                .await?,
            )),
            None => None,
        };
        let identity = serde_json::json!({
            "conduct": settings.conduct,
            "grader": settings.grader.clone().or(given_name),
            "judge": settings.judge,
            "rubric_hash": judge.as_ref().map(|j| j.rubric_hash()),
        });
        // `last`, the default, keeps the ids of passes made before there
        // was a choice.
        let mut identity = identity;
        if settings.combine != Combine::Last {
            identity["combine"] = serde_json::json!(settings.combine.as_str());
        }
        Ok(Self {
            conduct: settings.conduct,
            grader,
            judge,
            concurrency: settings.concurrency.max(1),
            combine: settings.combine,
            identity,
        })
    }

    /// The judge, when one was named.
    pub fn judge(&self) -> Option<&Judge> {
        self.judge.as_deref()
    }
}

/// What a grading pass did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GradeSummary {
    /// Rows graded.
    pub rows: u64,
    /// Rows that passed.
    pub passed: u64,
    /// Rows that failed.
    pub failed: u64,
    /// Rows no stage could grade.
    pub ungraded: u64,
    /// Stage → rows it could not grade (their `grades` say why).
    pub stage_errors: BTreeMap<String, u64>,
    /// The grading pass's id, on every row's `lineage.scoring_run_id`.
    pub scoring_run_id: String,
    /// Things to read before any number (a judge that is also a role of the
    /// rows).
    pub warnings: Vec<String>,
    /// Why the pass stopped before the last row: no hook could be reached
    /// on `sparring_io::defaults::GRADE_FAIL_FAST_ROWS` rows in a row. The
    /// rows after the last one written were not graded and not written.
    pub stopped: Option<String>,
    /// Rows given to the pass.
    pub rows_in: u64,
    /// Rows a later stage passed after an earlier stage failed them (the
    /// last stage decides under [`Combine::Last`]; never under
    /// [`Combine::All`]).
    pub overturned: u64,
}

/// The policies of the rows one pass grades: read once per distinct system
/// prompt and tool list, not once per row.
#[derive(Default)]
struct Policies(BTreeMap<String, Arc<sparring_engine::policy::Policy>>);

impl Policies {
    /// The policy a row ran under, read from its system messages and tools.
    fn of(&mut self, row: &Row) -> Arc<sparring_engine::policy::Policy> {
        let prompt: Vec<&str> = row
            .messages
            .iter()
            .filter(|m| m.role == sparring_types::Role::System)
            .map(sparring_types::Message::content_str)
            .collect();
        let key = serde_json::json!({"prompt": prompt, "tools": &*row.tools});
        let key =
            sparring_types::hash::sha256_hex(sparring_types::hash::canonical_json(&key).as_bytes());
        Arc::clone(self.0.entry(key).or_insert_with(|| {
            Arc::new(sparring_engine::policy::Policy::of_conversation(
                &row.messages,
                &row.tools,
            ))
        }))
    }
}

/// Grades `rows` with the started stages, up to the stages' concurrency at
/// once, writing each to `sink` in input order. Hooks that cannot be reached
/// on many rows in a row stop the pass ([`GradeSummary::stopped`]), so a
/// dead endpoint costs seconds, not a timeout per row.
///
/// # Errors
///
/// When the sink cannot store a row; rows stored before stay valid.
pub async fn grade_rows(
    rows: Vec<Row>,
    grading: &Grading,
    sink: &mut dyn RowSink,
) -> Result<GradeSummary> {
    let ids: Vec<&str> = rows.iter().map(|r| r.row_id.as_str()).collect();
    let mut identity = grading.identity.clone();
    identity["rows"] = serde_json::json!(ids);
    let scoring_run_id = short_id("grade", &identity);
    let mut summary = GradeSummary {
        scoring_run_id: scoring_run_id.clone(),
        rows_in: rows.len() as u64,
        ..GradeSummary::default()
    };
    let mut guard = FailFast::default();
    if let Some(judge) = &grading.judge {
        summary.warnings = judge_same_model(&rows, &judge.model())
            .into_iter()
            .map(|w| format!("same_model: {w}"))
            .collect();
    }
    let total = rows.len();
    let mut policies = Policies::default();
    let mut pending = rows.into_iter().enumerate();
    let mut in_flight = tokio::task::JoinSet::new();
    // Finished rows wait here until every row before them is written.
    let mut finished: BTreeMap<usize, Row> = BTreeMap::new();
    let mut next = 0usize;
    while next < total {
        while in_flight.len() < grading.concurrency {
            let Some((i, mut row)) = pending.next() else {
                break;
            };
            let conduct = grading.conduct;
            let grader = grading.grader.clone();
            let judge = grading.judge.clone();
            let id = scoring_run_id.clone();
            let combine = grading.combine;
            let policy = policies.of(&row);
            in_flight.spawn(async move {
                let stages = Stages {
                    conduct,
                    grader: grader.as_deref(),
                    judge: judge.as_deref(),
                    combine,
                };
                grade_row_under(&mut row, stages, Some(&policy), &id).await;
                (i, row)
            });
        }
        match in_flight.join_next().await {
            Some(Ok((i, row))) => {
                finished.insert(i, row);
            }
            Some(Err(e)) => {
                return Err(Error::new(
                    crate::ErrorKind::Failed,
                    format!("a grading task failed: {e}"),
                ));
            }
            None => break,
        }
        while let Some(row) = finished.remove(&next) {
            summary.rows += 1;
            match row.passed() {
                Some(true) => summary.passed += 1,
                Some(false) => summary.failed += 1,
                None => summary.ungraded += 1,
            }
            if overturned(row.grades.as_deref().unwrap_or_default(), row.reward) {
                summary.overturned += 1;
            }
            for g in row.grades.iter().flatten().filter(|g| g.error.is_some()) {
                *summary
                    .stage_errors
                    .entry(g.stage.as_str().to_owned())
                    .or_default() += 1;
            }
            sink.write(&row)
                .map_err(|e| Error::new(crate::ErrorKind::Io, e.0))?;
            next += 1;
            if guard.record_row(&row) {
                in_flight.abort_all();
                summary.stopped = guard.message();
                return Ok(summary);
            }
        }
    }
    Ok(summary)
}

/// What [`grade_file`] did besides grading.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GradedFile {
    /// The pass.
    pub summary: GradeSummary,
    /// Whether the output is the input file itself (graded in place).
    pub in_place: bool,
    /// The output was left as it was because the pass stopped before the
    /// last row and the output is the input: nothing was lost.
    pub kept_input: bool,
    /// The `run.json` beside the output whose counts were brought up to
    /// date (the output being its run's `rows.jsonl`).
    pub updated_summary: Option<PathBuf>,
}

/// Grades `rows`, read from the rows file `input` (see
/// [`sparring_io::rows::rows_path`]), into `out`.
/// The rows go to a file beside `out` first and replace it only at the end,
/// so grading a file in place never loses a row: when the pass stops early
/// ([`GradeSummary::stopped`]) an in-place input is left untouched (another
/// `out` gets the rows graded so far, as before). When `out` is a run's
/// `rows.jsonl`, that run's `run.json` gets the new counts.
///
/// # Errors
///
/// A file that cannot be written, or a stage that cannot start.
pub async fn grade_file(
    rows: Vec<Row>,
    input: &Path,
    out: &Path,
    grading: &Grading,
) -> Result<GradedFile> {
    let in_place = same_file(input, out);
    let mut partial = out.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    crate::training::create_parent(out)?;
    let mut writer = sparring_io::rows::RowWriter::create(&partial)?;
    let summary = grade_rows(rows, grading, &mut writer).await;
    drop(writer);
    let summary = match summary {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    };
    let mut done = GradedFile {
        in_place,
        ..GradedFile::default()
    };
    if in_place && summary.stopped.is_some() {
        std::fs::remove_file(&partial).map_err(|e| Error::io("remove", &partial, &e))?;
        done.kept_input = true;
        done.summary = summary;
        return Ok(done);
    }
    std::fs::rename(&partial, out).map_err(|e| Error::io("write", out, &e))?;
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty());
    let run_json = dir.map_or_else(|| PathBuf::from("run.json"), |d| d.join("run.json"));
    if out.file_name().is_some_and(|n| n == "rows.jsonl") && run_json.exists() {
        update_counts(&run_json, out)?;
        done.updated_summary = Some(run_json);
    }
    done.summary = summary;
    Ok(done)
}

/// Whether two paths name one file (the second may not exist yet).
fn same_file(a: &Path, b: &Path) -> bool {
    let full = |p: &Path| {
        p.canonicalize().ok().or_else(|| {
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty())?;
            Some(parent.canonicalize().ok()?.join(p.file_name()?))
        })
    };
    matches!((full(a), full(b)), (Some(x), Some(y)) if x == y)
}

/// Rewrites the `counts` of a `run.json` from its rows file.
fn update_counts(run_json: &Path, rows: &Path) -> Result<()> {
    let text = std::fs::read_to_string(run_json).map_err(|e| Error::io("read", run_json, &e))?;
    let mut summary: sparring_types::RunSummary = serde_json::from_str(&text).map_err(|e| {
        Error::input(format!(
            "`{}` is not a run summary: {e}",
            run_json.display()
        ))
    })?;
    summary.counts = sparring_io::rows::count_file(rows)?;
    let dir = run_json.parent().unwrap_or(Path::new("."));
    sparring_io::rows::write_summary(dir, &summary)?;
    Ok(())
}

/// `same_model` warnings: the judge's backend against the roles the rows
/// record (agent, writer, person), by the rule `simulate` uses.
pub fn judge_same_model(rows: &[Row], judge: &str) -> Vec<String> {
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

/// Puts gold labels on rows (`gold_reward`, `gold_author`, `gold_kind`).
/// A label's own `author` wins; `author` names who gave the labels that
/// have none. Returns how many rows were labelled.
///
/// # Errors
///
/// A bad kind, a label with no author from either place, a label that
/// repeats a row or names one that is not there.
pub fn attach_labels(
    rows: &mut [Row],
    labels: &[sparring_io::rows::Label],
    labels_file: &Path,
    kind: &str,
    author: Option<&str>,
) -> Result<usize> {
    if !matches!(kind, "human" | "model" | "rule") {
        return Err(Error::input(format!(
            "--kind `{kind}` is not a label kind; expected `human`, `model` or `rule`"
        )));
    }
    let author = author.map(str::trim).filter(|a| !a.is_empty());
    if let Some(i) = labels.iter().position(|l| l.author.is_none())
        && author.is_none()
    {
        return Err(Error::input(format!(
            "`{}`: label {} has no `author`, and --author names nobody; give --author NAME (who gave the labels) or an `author` on each line",
            labels_file.display(),
            i + 1
        )));
    }
    let mut by_id = BTreeMap::new();
    let known: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.row_id.as_str()).collect();
    for (i, l) in labels.iter().enumerate() {
        let who = l.author.as_deref().or(author).unwrap_or_default();
        if by_id
            .insert(l.row_id.clone(), (l.reward, who.to_owned()))
            .is_some()
        {
            return Err(Error::input(format!(
                "`{}`: label {} repeats row `{}`",
                labels_file.display(),
                i + 1,
                l.row_id
            )));
        }
        if !known.contains(l.row_id.as_str()) {
            return Err(Error::input(format!(
                "`{}`: label {} names row `{}`, which is not in the rows",
                labels_file.display(),
                i + 1,
                l.row_id,
            )));
        }
    }
    let mut labelled = 0;
    for row in rows.iter_mut() {
        if let Some((r, who)) = by_id.get(&row.row_id) {
            row.gold_reward = Some(*r);
            row.gold_author = Some(who.clone());
            row.gold_kind = Some(kind.to_owned());
            labelled += 1;
        }
    }
    Ok(labelled)
}
