//! `sparring eval-variance`: how much pass@1 moves between repeated runs of
//! one eval (`lineage.eval_run`), which is the noise any delta must beat.

use super::input::{EvalRun, ScoreRow};
use super::{stats, task_pass_rates};
use crate::Error;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One eval run's line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunLine {
    /// `lineage.eval_run` (0 when rows carry none).
    pub eval_run: EvalRun,
    /// Mean over the run's graded tasks of their pass rate.
    pub pass_at_1: f64,
    /// Graded tasks in the run.
    pub n_tasks: usize,
    /// Graded rows in the run.
    pub n_rows: usize,
}

/// The spread (its JSON is `sparring eval-variance --json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EvalVarianceReport {
    /// One line per eval run with graded rows, in run order.
    pub runs: Vec<RunLine>,
    /// Mean of the runs' pass@1.
    pub mean: f64,
    /// Sample standard deviation of the runs' pass@1 (`n − 1`); `null` with
    /// one run.
    pub std: Option<f64>,
}

/// pass@1 per eval run and its spread. `name` only names the input in
/// errors.
pub fn eval_variance(rows: &[ScoreRow], name: &str) -> Result<EvalVarianceReport, Error> {
    let mut runs: BTreeMap<&EvalRun, Vec<&ScoreRow>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.reward.is_some()) {
        runs.entry(&row.eval_run).or_default().push(row);
    }
    if runs.is_empty() {
        return Err(Error::Unscorable {
            message: format!(
                "`{name}` has no graded row; hint: grade the run first (`simulate --grade`)"
            ),
        });
    }
    let lines: Vec<RunLine> = runs
        .into_iter()
        .map(|(run, rows)| {
            let rates: Vec<f64> = task_pass_rates(rows.iter().copied())
                .into_values()
                .collect();
            RunLine {
                eval_run: run.clone(),
                pass_at_1: rates.iter().sum::<f64>() / rates.len() as f64,
                n_tasks: rates.len(),
                n_rows: rows.len(),
            }
        })
        .collect();
    let per_run: Vec<f64> = lines.iter().map(|l| l.pass_at_1).collect();
    let v = sparring_stats::eval_variance(&per_run).map_err(stats("eval variance"))?;
    Ok(EvalVarianceReport {
        runs: lines,
        mean: v.mean,
        std: v.std,
    })
}

/// The spread as plain text.
pub fn render(r: &EvalVarianceReport) -> String {
    let mut out = String::new();
    let names: Vec<String> = r.runs.iter().map(|l| l.eval_run.to_string()).collect();
    let width = crate::name_width(names.iter().map(String::as_str), 8);
    let _ = writeln!(
        out,
        "{:<width$}  {:>5}  {:>5}  {:>7}",
        "eval_run", "rows", "tasks", "pass@1"
    );
    for l in &r.runs {
        let _ = writeln!(
            out,
            "{:<width$}  {:>5}  {:>5}  {:>6.1}%",
            l.eval_run.to_string(),
            l.n_rows,
            l.n_tasks,
            l.pass_at_1 * 100.0
        );
    }
    let std = r.std.map_or_else(
        || "- (one run)".to_owned(),
        |s| format!("{:.1} points", s * 100.0),
    );
    let _ = writeln!(
        out,
        "\n{} runs  mean {:.1}%  std {std}",
        r.runs.len(),
        r.mean * 100.0
    );
    out
}
