//! sparring-score: row-level reports over the estimators of `sparring-stats`.
//!
//! Pure: rows come in as text or values ([`input::parse_score_rows`]); reading
//! files is `sparring-io`'s job.
//!
//! Each report is built from rows read leniently ([`input`]), is a plain
//! `Serialize` struct whose JSON keys are the CLI contract (`docs/score.md`
//! documents every figure), and has a `render` for the readable table.
//!
//! - [`report::report`]: pass@1 with a bootstrap interval over tasks,
//!   pass@k, pass^k and the tasks each rests on, per category
//!   (`<axis>=<value>`, `tier=<tier>`), how rows ended and why they failed.
//! - [`delta::delta`]: two runs paired by `task_id`: the mean per-task
//!   difference of pass@1, its interval, a sign-flip p, a verdict, the same
//!   per category, and for numeric markers with `must_not_regress` guards.
//! - [`judge::judge_agreement`]: row rewards against gold labels.
//! - [`hack::hack_scan`]: the reward variance split and row features that
//!   track reward within tasks.
//! - [`eval_variance::eval_variance`]: pass@1 per `lineage.eval_run`.
//!
//! A task is the rows sharing a `task_id`; a row counts when graded
//! (`reward` present) and passes when `reward >= 0.5`. Every interval and
//! p-value is seeded, so the same rows and seed give the same output.
//!
//! ```
//! use sparring_score::{input::parse_score_rows, report::{report, ReportOptions}};
//!
//! let text = "{\"task_id\":\"a\",\"reward\":1}\n{\"task_id\":\"a\",\"reward\":0}\n{\"task_id\":\"b\",\"reward\":1}\n";
//! let rows = parse_score_rows("rows.jsonl".as_ref(), text)?;
//! let r = report(&rows, &ReportOptions::default())?;
//! assert_eq!(r.pass_at_1.value, Some(0.75));
//! # Ok::<(), sparring_score::Error>(())
//! ```

pub mod defaults;
pub mod delta;
mod error;
pub mod eval_variance;
pub mod hack;
pub mod input;
pub mod judge;
pub mod report;

pub use error::Error;

use input::ScoreRow;
use serde::Serialize;
use sparring_stats::{BootstrapOptions, Interval, StatsError};
use std::collections::BTreeMap;

/// A point estimate with its 95 % interval; both `null` when there is
/// nothing to estimate from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// The estimate.
    pub value: Option<f64>,
    /// `[lo, hi]`.
    pub ci95: Option<[f64; 2]>,
}

impl Estimate {
    /// Nothing to estimate from.
    pub const NONE: Self = Self {
        value: None,
        ci95: None,
    };

    pub(crate) fn from_interval(i: Interval) -> Self {
        Self {
            value: Some(i.estimate),
            ci95: Some([i.lo, i.hi]),
        }
    }
}

/// `(graded rows, passed rows)` per task, in task-id order.
pub(crate) fn task_counts<'a>(
    rows: impl Iterator<Item = &'a ScoreRow>,
) -> BTreeMap<&'a str, (u64, u64)> {
    let mut per_task: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for row in rows {
        if let Some(passed) = row.passed() {
            let e = per_task.entry(row.task_id.as_str()).or_default();
            e.0 += 1;
            e.1 += u64::from(passed);
        }
    }
    per_task
}

/// Per-task pass@1 `c/n`, in task-id order.
pub(crate) fn task_pass_rates<'a>(
    rows: impl Iterator<Item = &'a ScoreRow>,
) -> BTreeMap<&'a str, f64> {
    task_counts(rows)
        .into_iter()
        .map(|(t, (n, c))| (t, c as f64 / n as f64))
        .collect()
}

/// Mean pass@1 over tasks with its bootstrap interval over tasks.
pub(crate) fn pass_at_1(rates: &[f64], seed: u64, resamples: usize) -> Result<Estimate, Error> {
    if rates.is_empty() {
        return Ok(Estimate::NONE);
    }
    let options = BootstrapOptions {
        resamples,
        ..BootstrapOptions::with_seed(seed)
    };
    let interval = sparring_stats::bootstrap_mean(rates, &options).map_err(stats("pass@1"))?;
    Ok(Estimate::from_interval(interval))
}

/// Maps an estimator's refusal to an error naming the figure. Inputs are
/// checked before they reach the estimators, so this is a backstop.
pub(crate) fn stats(figure: &'static str) -> impl Fn(StatsError) -> Error {
    move |e| Error::Unscorable {
        message: format!("cannot compute {figure}: {e}"),
    }
}

/// The width of a text table's name column: its longest name, at least
/// `min` and at most [`defaults::NAME_COLUMN_MAX`] characters. A name is
/// data, so its length is never a format width as it stands (past
/// `u16::MAX` that panics, and every other row would be padded to it); a
/// longer name is shown whole and shifts its own row's columns only.
pub(crate) fn name_width<'a>(names: impl IntoIterator<Item = &'a str>, min: usize) -> usize {
    names
        .into_iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(min)
        .clamp(min, defaults::NAME_COLUMN_MAX)
}

/// `12.3%`, or `-` when there is no value.
pub(crate) fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |p| format!("{:.1}%", p * 100.0))
}

/// `[12.3%, 45.6%]`, or `-`.
pub(crate) fn pct_ci(ci: Option<[f64; 2]>) -> String {
    ci.map_or_else(
        || "-".to_owned(),
        |[lo, hi]| format!("[{:.1}%, {:.1}%]", lo * 100.0, hi * 100.0),
    )
}
