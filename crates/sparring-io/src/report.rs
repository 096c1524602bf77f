//! The report over a rows file.
//!
//! pass@1 is computed per task (rows sharing `task_id`) as the share of its
//! graded rows that passed (`reward >= 0.5`), then averaged over tasks, so a
//! task rolled out many times weighs as much as one rolled out once.

use serde::Serialize;
use sparring_types::Row;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// pass@1 over a group of rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Group {
    /// Rows in the group.
    pub n_rows: u64,
    /// Distinct tasks with at least one graded row.
    pub n_tasks: u64,
    /// Mean over those tasks of the task's pass rate; `None` when no row is
    /// graded.
    pub pass_at_1: Option<f64>,
}

/// The report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// Rows read.
    pub n_rows: u64,
    /// Distinct tasks.
    pub n_tasks: u64,
    /// Rows without a reward.
    pub n_ungraded: u64,
    /// pass@1 over graded tasks.
    pub pass_at_1: Option<f64>,
    /// pass@1 per situation tool (`none` for seeds and tool-less asks).
    pub by_tool: BTreeMap<String, Group>,
    /// Rows per `ended_by`.
    pub ended_by: BTreeMap<String, u64>,
    /// Rows per failure class, for failed rows.
    pub failures: BTreeMap<String, u64>,
}

fn group<'a>(rows: impl Iterator<Item = &'a Row>) -> Group {
    let mut n_rows = 0;
    let mut per_task: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for row in rows {
        n_rows += 1;
        if let Some(passed) = row.passed() {
            let entry = per_task.entry(row.task_id.as_str()).or_default();
            entry.0 += 1;
            entry.1 += u64::from(passed);
        }
    }
    let n_tasks = per_task.len() as u64;
    let pass_at_1 = (n_tasks > 0).then(|| {
        per_task
            .values()
            .map(|(n, c)| *c as f64 / *n as f64)
            .sum::<f64>()
            / n_tasks as f64
    });
    Group {
        n_rows,
        n_tasks,
        pass_at_1,
    }
}

/// Builds the report.
pub fn report(rows: &[Row]) -> Report {
    let overall = group(rows.iter());
    let mut tools: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    let mut ended_by = BTreeMap::new();
    let mut failures = BTreeMap::new();
    for row in rows {
        let tool = row
            .situation
            .axes
            .get("tool")
            .cloned()
            .unwrap_or_else(|| "none".to_owned());
        tools.entry(tool).or_default().push(row);
        *ended_by
            .entry(row.ended_by.as_str().to_owned())
            .or_default() += 1;
        if row.passed() == Some(false) {
            let class = row
                .failure_class
                .clone()
                .unwrap_or_else(|| "unspecified".to_owned());
            *failures.entry(class).or_default() += 1;
        }
    }
    let tasks: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.task_id.as_str()).collect();
    Report {
        n_rows: rows.len() as u64,
        n_tasks: tasks.len() as u64,
        n_ungraded: rows.iter().filter(|r| r.reward.is_none()).count() as u64,
        pass_at_1: overall.pass_at_1,
        by_tool: tools
            .into_iter()
            .map(|(k, v)| (k, group(v.into_iter())))
            .collect(),
        ended_by,
        failures,
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |p| format!("{:.1}%", p * 100.0))
}

/// The report as a plain-text table.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "rows {}  tasks {}  ungraded {}  pass@1 {}",
        report.n_rows,
        report.n_tasks,
        report.n_ungraded,
        pct(report.pass_at_1)
    );
    let width = report
        .by_tool
        .keys()
        .map(String::len)
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = write!(
        out,
        "\n{:<width$}  {:>5}  {:>5}  {:>7}\n",
        "tool", "rows", "tasks", "pass@1"
    );
    for (tool, g) in &report.by_tool {
        let _ = writeln!(
            out,
            "{tool:<width$}  {:>5}  {:>5}  {:>7}",
            g.n_rows,
            g.n_tasks,
            pct(g.pass_at_1)
        );
    }
    let ended: Vec<String> = report
        .ended_by
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = write!(out, "\nended by: {}\n", ended.join(", "));
    if !report.failures.is_empty() {
        let f: Vec<String> = report
            .failures
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(out, "failures: {}", f.join(", "));
    }
    out
}
