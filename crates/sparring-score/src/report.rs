//! `sparring report`: the pass@k family over a rows file, overall and per
//! category, with a bootstrap interval over tasks for pass@1.

use super::input::{ScoreRow, category_note};
use super::{Estimate, pass_at_1, pct, pct_ci, stats};
use crate::{Error, defaults};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Options of [`report`].
#[derive(Clone, Debug, PartialEq)]
pub struct ReportOptions {
    /// The `k` values for pass@k and pass^k (default
    /// [`defaults::REPORT_K`]); each at least 1.
    pub ks: Vec<u64>,
    /// Seed of the bootstrap (default [`sparring_stats::defaults::SEED`]).
    pub seed: u64,
    /// Bootstrap resamples (default
    /// [`sparring_stats::defaults::BOOTSTRAP_RESAMPLES`]).
    pub resamples: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        Self {
            ks: defaults::REPORT_K.to_vec(),
            seed: sparring_stats::defaults::SEED,
            resamples: sparring_stats::defaults::BOOTSTRAP_RESAMPLES,
        }
    }
}

/// pass@1 over the rows of one category.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Category {
    /// Rows in the category.
    pub n_rows: u64,
    /// Tasks with at least one graded row in the category: what pass@1 and
    /// its interval rest on.
    pub n_tasks: u64,
    /// Mean over those tasks of their pass rate, with its bootstrap interval.
    pub pass_at_1: Estimate,
    /// Share of the rows with a checked goal that met it (`null` when none
    /// was checked).
    pub goal_rate: Option<f64>,
    /// Share of the rows with conduct checks whose checks (the goal aside)
    /// all passed (`null` when none has conduct checks).
    pub conduct_rate: Option<f64>,
}

/// The goal rate and the conduct rate of some rows: shares of the rows
/// that carry each flag.
pub fn rates<'a>(rows: impl IntoIterator<Item = &'a ScoreRow>) -> (Option<f64>, Option<f64>) {
    let share = |flags: Vec<bool>| {
        (!flags.is_empty())
            .then(|| flags.iter().filter(|f| **f).count() as f64 / flags.len() as f64)
    };
    let (mut goal, mut conduct) = (Vec::new(), Vec::new());
    for row in rows {
        goal.extend(row.goal_met);
        conduct.extend(row.conduct_ok);
    }
    (share(goal), share(conduct))
}

/// The report (its JSON is `sparring report --json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// Rows read.
    pub n_rows: u64,
    /// Distinct `task_id`s.
    pub n_tasks: u64,
    /// Rows without a reward.
    pub n_ungraded: u64,
    /// Mean over graded tasks of `c/n`, with its 95 % percentile-bootstrap
    /// interval over tasks.
    pub pass_at_1: Estimate,
    /// Share of the rows with a checked goal that met it.
    pub goal_rate: Option<f64>,
    /// Share of the rows with conduct checks whose checks (the goal aside)
    /// all passed.
    pub conduct_rate: Option<f64>,
    /// k → mean pass@k over the tasks with at least k graded rows (`null`
    /// when there are none).
    pub pass_at_k: BTreeMap<u64, Option<f64>>,
    /// k → mean pass^k over the same tasks.
    pub pass_hat_k: BTreeMap<u64, Option<f64>>,
    /// k → tasks with at least k graded rows.
    pub tasks_at_k: BTreeMap<u64, usize>,
    /// `<axis>=<value>` and `tier=<tier>` → pass@1 over the rows there.
    pub by_category: BTreeMap<String, Category>,
    /// `ended_by` → rows (`unknown` when a row has none).
    pub ended_by: BTreeMap<String, u64>,
    /// `failure_class` → failed rows (`unspecified` when a row has none).
    pub failures: BTreeMap<String, u64>,
    /// Policy rule id → its text (shortened), for the `policy_rule=<id>`
    /// categories whose rows carry it.
    pub rule_texts: BTreeMap<String, String>,
    /// Rows that pass although an earlier grading stage failed them (a
    /// grader or judge had the last word over the conduct checks).
    pub n_overturned: u64,
    /// The run's warnings, from its `run.json` (set by the caller, who
    /// reads the file): printed before any number.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The run's degraded flags, from its `run.json`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<String>,
    /// The bootstrap seed used.
    pub seed: u64,
}

/// Builds the report. Rows need not be graded; with no graded row every
/// figure is `null`.
pub fn report(rows: &[ScoreRow], options: &ReportOptions) -> Result<Report, Error> {
    let mut tally = ReportTally::default();
    for row in rows {
        tally.add(row);
    }
    tally.finish(options)
}

/// `(graded rows, passed rows)` per task, the task by its index in
/// [`ReportTally`]'s task list.
type TaskCounts = BTreeMap<u32, (u64, u64)>;

/// Rows carrying a flag, and those where it is set.
#[derive(Clone, Copy, Debug, Default)]
struct Share {
    n: u64,
    set: u64,
}

impl Share {
    fn add(&mut self, flag: Option<bool>) {
        if let Some(f) = flag {
            self.n += 1;
            self.set += u64::from(f);
        }
    }

    fn value(self) -> Option<f64> {
        (self.n > 0).then(|| self.set as f64 / self.n as f64)
    }
}

/// What one category adds up to.
#[derive(Clone, Debug, Default)]
struct CategoryTally {
    rows: u64,
    tasks: TaskCounts,
    goal: Share,
    conduct: Share,
}

/// The report's figures gathered a row at a time, so a rows file can be
/// reported while it is read line by line: what it keeps grows with the
/// tasks and the categories (a count pair per task and category), never
/// with the rows. [`report`] is this over a slice; both give the same
/// report for the same rows.
#[derive(Clone, Debug, Default)]
pub struct ReportTally {
    rows: u64,
    ungraded: u64,
    overturned: u64,
    /// Every `task_id` seen, graded or not, with its index.
    task_index: BTreeMap<String, u32>,
    tasks: TaskCounts,
    goal: Share,
    conduct: Share,
    categories: BTreeMap<String, CategoryTally>,
    ended_by: BTreeMap<String, u64>,
    failures: BTreeMap<String, u64>,
    rule_texts: BTreeMap<String, String>,
}

impl ReportTally {
    /// Counts one row.
    pub fn add(&mut self, row: &ScoreRow) {
        self.rows += 1;
        let next = u32::try_from(self.task_index.len()).unwrap_or(u32::MAX);
        let task = if let Some(&i) = self.task_index.get(row.task_id.as_str()) {
            i
        } else {
            self.task_index.insert(row.task_id.clone(), next);
            next
        };
        let passed = row.passed();
        let count = |tasks: &mut TaskCounts| {
            if let Some(p) = passed {
                let e = tasks.entry(task).or_default();
                e.0 += 1;
                e.1 += u64::from(p);
            }
        };
        count(&mut self.tasks);
        self.ungraded += u64::from(row.reward.is_none());
        self.overturned += u64::from(row.overturned);
        self.goal.add(row.goal_met);
        self.conduct.add(row.conduct_ok);
        for key in row.categories() {
            let c = self.categories.entry(key).or_default();
            c.rows += 1;
            count(&mut c.tasks);
            c.goal.add(row.goal_met);
            c.conduct.add(row.conduct_ok);
        }
        let end = row.ended_by.as_deref().unwrap_or("unknown");
        *self.ended_by.entry(end.to_owned()).or_default() += 1;
        if passed == Some(false) {
            let class = row.failure_class.as_deref().unwrap_or("unspecified");
            *self.failures.entry(class.to_owned()).or_default() += 1;
        }
        if let (Some(id), Some(text)) = (row.axes.get("policy_rule"), &row.rule_text)
            && !self.rule_texts.contains_key(id)
        {
            self.rule_texts.insert(id.clone(), text.clone());
        }
    }

    /// The report of the rows counted.
    ///
    /// # Errors
    ///
    /// A `k` of 0 in `options`, or an estimator's refusal.
    pub fn finish(self, options: &ReportOptions) -> Result<Report, Error> {
        if let Some(k) = options.ks.iter().find(|&&k| k == 0) {
            return Err(Error::Unscorable {
                message: format!("`--k {k}`: k must be at least 1"),
            });
        }
        // Figures run over tasks in task-id order: each index's place in it.
        let mut rank = vec![0usize; self.task_index.len()];
        for (place, &i) in self.task_index.values().enumerate() {
            if let Some(r) = rank.get_mut(i as usize) {
                *r = place;
            }
        }
        let in_id_order = |tasks: &TaskCounts| -> Vec<(u64, u64)> {
            let mut v: Vec<(usize, (u64, u64))> = tasks
                .iter()
                .map(|(&i, &c)| (rank.get(i as usize).copied().unwrap_or(0), c))
                .collect();
            v.sort_by_key(|(r, _)| *r);
            v.into_iter().map(|(_, c)| c).collect()
        };
        let rates_of = |counts: &[(u64, u64)]| -> Vec<f64> {
            counts.iter().map(|&(n, c)| c as f64 / n as f64).collect()
        };
        let counts = in_id_order(&self.tasks);
        let rates = rates_of(&counts);
        let mut pass_at_k = BTreeMap::new();
        let mut pass_hat_k = BTreeMap::new();
        let mut tasks_at_k = BTreeMap::new();
        for &k in &options.ks {
            let at = sparring_stats::mean_pass_at_k(&counts, k).map_err(stats("pass@k"))?;
            let hat = sparring_stats::mean_pass_hat_k(&counts, k).map_err(stats("pass^k"))?;
            pass_at_k.insert(k, at.value);
            pass_hat_k.insert(k, hat.value);
            tasks_at_k.insert(k, at.n_tasks);
        }
        let mut by_category = BTreeMap::new();
        for (key, c) in self.categories {
            let rates = rates_of(&in_id_order(&c.tasks));
            by_category.insert(
                key,
                Category {
                    n_rows: c.rows,
                    n_tasks: rates.len() as u64,
                    pass_at_1: pass_at_1(&rates, options.seed, options.resamples)?,
                    goal_rate: c.goal.value(),
                    conduct_rate: c.conduct.value(),
                },
            );
        }
        Ok(Report {
            goal_rate: self.goal.value(),
            conduct_rate: self.conduct.value(),
            n_rows: self.rows,
            n_tasks: self.task_index.len() as u64,
            n_ungraded: self.ungraded,
            pass_at_1: pass_at_1(&rates, options.seed, options.resamples)?,
            pass_at_k,
            pass_hat_k,
            tasks_at_k,
            by_category,
            ended_by: self.ended_by,
            failures: self.failures,
            rule_texts: self.rule_texts,
            n_overturned: self.overturned,
            warnings: Vec::new(),
            degraded: Vec::new(),
            seed: options.seed,
        })
    }
}

/// The report as plain-text tables: the run's warnings and degraded flags
/// first, then the numbers, or on a run with no graded row what to run.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for w in &report.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    if !report.degraded.is_empty() {
        let _ = writeln!(out, "degraded: {}", report.degraded.join(", "));
    }
    if !report.warnings.is_empty() || !report.degraded.is_empty() {
        out.push('\n');
    }
    if report.n_rows > 0 && report.n_ungraded == report.n_rows {
        let _ = writeln!(
            out,
            "rows {}  tasks {}  ungraded {}",
            report.n_rows, report.n_tasks, report.n_ungraded
        );
        let _ = writeln!(
            out,
            "no row is graded: run `sparring grade` or `simulate --grade`"
        );
        let _ = write!(out, "\nended by: {}\n", counts(&report.ended_by));
        return out;
    }
    let _ = writeln!(
        out,
        "rows {}  tasks {}  ungraded {}  pass@1 {} {}",
        report.n_rows,
        report.n_tasks,
        report.n_ungraded,
        pct(report.pass_at_1.value),
        pct_ci(report.pass_at_1.ci95),
    );
    let goals = report.goal_rate.is_some();
    if goals {
        let _ = writeln!(
            out,
            "goal met {}  conduct clean {}",
            pct(report.goal_rate),
            pct(report.conduct_rate)
        );
    }
    // A k no task has k graded rows for says nothing: it is left out of the
    // table (the JSON keeps it, with 0 tasks).
    let ks: Vec<(&u64, &usize)> = report
        .tasks_at_k
        .iter()
        .filter(|(k, n)| **k == 1 || **n > 0)
        .collect();
    let _ = write!(
        out,
        "\n{:>4}  {:>7}  {:>7}  {:>5}\n",
        "k", "pass@k", "pass^k", "tasks"
    );
    for (k, n) in &ks {
        let _ = writeln!(
            out,
            "{k:>4}  {:>7}  {:>7}  {n:>5}",
            pct(report.pass_at_k.get(*k).copied().flatten()),
            pct(report.pass_hat_k.get(*k).copied().flatten()),
        );
    }
    let unmeasured: Vec<String> = report
        .tasks_at_k
        .iter()
        .filter(|(k, n)| **k > 1 && **n == 0)
        .map(|(k, _)| k.to_string())
        .collect();
    if !unmeasured.is_empty() {
        let _ = writeln!(
            out,
            "   (k = {}: no task has that many graded rows; run with --repeats)",
            unmeasured.join(", ")
        );
    }
    if !report.by_category.is_empty() {
        let width = crate::name_width(report.by_category.keys().map(String::as_str), 8);
        // With goals, the goal rate and the conduct rate stand beside
        // pass@1: which of the two a category fails on.
        let (head, cols) = if goals {
            (format!("  {:>7}  {:>7}", "goal", "conduct"), true)
        } else {
            (String::new(), false)
        };
        let _ = write!(
            out,
            "\n{:<width$}  {:>5}  {:>5}  {:>7}{head}  ci95\n",
            "category", "rows", "tasks", "pass@1"
        );
        for (key, c) in &report.by_category {
            let extra = if cols {
                format!("  {:>7}  {:>7}", pct(c.goal_rate), pct(c.conduct_rate))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "{key:<width$}  {:>5}  {:>5}  {:>7}{extra}  {}{}",
                c.n_rows,
                c.n_tasks,
                pct(c.pass_at_1.value),
                pct_ci(c.pass_at_1.ci95),
                category_note(key, &report.rule_texts),
            );
        }
    }
    let _ = write!(out, "\nended by: {}\n", counts(&report.ended_by));
    if !report.failures.is_empty() {
        let _ = writeln!(out, "failures: {}", counts(&report.failures));
    }
    if report.n_overturned > 0 {
        let _ = writeln!(
            out,
            "overturned: {} passing rows were failed by an earlier grading stage (the last stage decides; `grade --combine all` makes every stage count)",
            report.n_overturned
        );
    }
    out
}

/// Each name with its count: `agent_done 12, max_turns 3`.
fn counts(map: &BTreeMap<String, u64>) -> String {
    map.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}
