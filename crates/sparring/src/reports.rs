//! The score: reports over rows (`sparring-score`), with the readers that
//! bring rows and labels from files.
//!
//! Rows are read leniently for scoring: only `task_id` and `reward` are
//! required, so rows other tools wrote score too.

use crate::error::Result;
use std::path::Path;

pub use sparring_score::delta::{Delta, DeltaOptions, delta};
pub use sparring_score::eval_variance::{EvalVarianceReport, eval_variance};
pub use sparring_score::hack::{HackReport, hack_scan};
pub use sparring_score::input::{Label, ScoreRow};
pub use sparring_score::judge::{JudgeReport, judge_agreement};
pub use sparring_score::report::{Report, ReportOptions, ReportTally, render, report};

/// Reads a rows file (or a run directory's `rows.jsonl`) for scoring.
///
/// # Errors
///
/// An unreadable file, or a line that is not a row, naming the line.
pub fn read_rows_for_scoring(path: &Path) -> Result<Vec<ScoreRow>> {
    Ok(sparring_io::rows::read_score_rows(
        &sparring_io::rows::rows_path(path),
    )?)
}

/// Reports on a rows file (or a run directory's `rows.jsonl`) while reading
/// it a line at a time: the same report as [`report`] over
/// [`read_rows_for_scoring`], but what is held grows with the tasks, not
/// the rows ([`ReportTally`]). The run's warnings are not added
/// ([`report_run`] adds them).
///
/// # Errors
///
/// As [`read_rows_for_scoring`] and [`report`].
pub fn report_rows_file(path: &Path, options: &ReportOptions) -> Result<Report> {
    let mut tally = ReportTally::default();
    sparring_io::rows::for_each_score_row(&sparring_io::rows::rows_path(path), |row| {
        tally.add(&row);
    })?;
    Ok(tally.finish(options)?)
}

/// The warnings and degraded flags of the run whose rows `path` names (a
/// run directory, or a rows file beside its run's `run.json`), for a report
/// to show before any number. Empty when there is no readable `run.json`.
pub fn read_run_notes(path: &Path) -> (Vec<String>, Vec<String>) {
    let rows = sparring_io::rows::rows_path(path);
    let dir = rows
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Some(summary) = std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    else {
        return (Vec::new(), Vec::new());
    };
    let strings = |key: &str| -> Vec<String> {
        summary
            .get(key)
            .and_then(serde_json::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(serde_json::Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    (strings("warnings"), strings("degraded"))
}

/// Reads a rows file (or a run directory) and reports on it, with its run's
/// warnings and degraded flags ([`read_run_notes`]) on the report.
///
/// # Errors
///
/// As [`read_rows_for_scoring`] and [`report`].
pub fn report_run(path: &Path, options: &ReportOptions) -> Result<Report> {
    let mut r = report_rows_file(path, options)?;
    (r.warnings, r.degraded) = read_run_notes(path);
    Ok(r)
}

/// Reads a gold labels file (`{"row_id", "label", "author"}` lines).
///
/// # Errors
///
/// An unreadable file, or a line that is not a label, naming the line.
pub fn read_labels(path: &Path) -> Result<Vec<Label>> {
    Ok(sparring_io::rows::read_gold_labels(path)?)
}
