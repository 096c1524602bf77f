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
pub use sparring_score::report::{Report, ReportOptions, render, report};

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

/// Reads a gold labels file (`{"row_id", "label", "author"}` lines).
///
/// # Errors
///
/// An unreadable file, or a line that is not a label, naming the line.
pub fn read_labels(path: &Path) -> Result<Vec<Label>> {
    Ok(sparring_io::rows::read_gold_labels(path)?)
}
