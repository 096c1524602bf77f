//! `sparring delta`: two runs compared task by task.
//!
//! Rows are paired by `task_id`: a task is paired when both runs have at
//! least one graded row of it; tasks graded in only one run are dropped and
//! counted. Per paired task the difference is `after − before` of its pass
//! rate; [`sparring_stats::paired_delta`] gives the mean difference, its
//! bootstrap interval over paired tasks, the sign-flip p and the verdict.
//! Categories repeat this over the rows of each category; markers over each
//! task's mean marker value.

use super::input::ScoreRow;
use super::{pct, stats, task_pass_rates};
use crate::Error;
use serde::Serialize;
use sparring_stats::{PairedDelta, PairedOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Options of [`delta`].
#[derive(Clone, Debug, PartialEq)]
pub struct DeltaOptions {
    /// Markers whose whole interval must not lie below zero.
    pub must_not_regress: Vec<String>,
    /// Seed of the bootstrap and the Monte Carlo sign-flip test (default
    /// [`sparring_stats::defaults::SEED`]).
    pub seed: u64,
}

impl Default for DeltaOptions {
    fn default() -> Self {
        Self {
            must_not_regress: Vec::new(),
            seed: sparring_stats::defaults::SEED,
        }
    }
}

/// The paired comparison of one category.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CategoryDelta {
    /// Tasks paired within the category.
    pub n_paired: usize,
    /// Mean per-task difference of pass@1 (`null` with no pair).
    pub delta: Option<f64>,
    /// Its 95 % bootstrap interval.
    pub ci95: Option<[f64; 2]>,
    /// Its two-sided sign-flip p.
    pub p_value: Option<f64>,
}

impl CategoryDelta {
    /// `n_paired` tasks and their comparison, `None` when none is paired.
    fn new(n_paired: usize, d: Option<PairedDelta>) -> Self {
        Self {
            n_paired,
            delta: d.map(|d| d.delta.estimate),
            ci95: d.map(|d| [d.delta.lo, d.delta.hi]),
            p_value: d.map(|d| d.test.p_value),
        }
    }
}

/// The paired comparison of one numeric marker.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MarkerDelta {
    /// Tasks carrying the marker in both runs.
    pub n_paired: usize,
    /// Mean per-task difference of the task's mean marker value.
    pub delta: Option<f64>,
    /// Its 95 % bootstrap interval.
    pub ci95: Option<[f64; 2]>,
    /// Its two-sided sign-flip p.
    pub p_value: Option<f64>,
    /// Listed with `--must-not-regress`.
    pub must_not_regress: bool,
    /// Guarded and its whole interval lies below zero.
    pub failed: bool,
}

/// The comparison (its JSON is `sparring delta --json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Delta {
    /// Tasks graded in both runs.
    pub n_paired: usize,
    /// Tasks graded in only one run (dropped).
    pub n_unpaired: usize,
    /// Of those, graded only in BEFORE.
    pub n_only_before: usize,
    /// Of those, graded only in AFTER.
    pub n_only_after: usize,
    /// Mean pass@1 of BEFORE over the paired tasks.
    pub before: f64,
    /// Mean pass@1 of AFTER over the paired tasks.
    pub after: f64,
    /// Mean per-task difference `after − before`.
    pub delta: f64,
    /// Its 95 % percentile-bootstrap interval over paired tasks.
    pub ci95: [f64; 2],
    /// Two-sided sign-flip permutation p.
    pub p_value: f64,
    /// `improved` / `regressed` when the interval excludes zero, else
    /// `inconclusive`.
    pub verdict: String,
    /// `<axis>=<value>` and `tier=<tier>` → the same over that category.
    pub by_category: BTreeMap<String, CategoryDelta>,
    /// Policy rule id → its text (shortened), from either run's rows.
    pub rule_texts: BTreeMap<String, String>,
    /// Numeric marker → the same over per-task mean marker values.
    pub markers: BTreeMap<String, MarkerDelta>,
    /// The seed used.
    pub seed: u64,
}

impl Delta {
    /// The guarded markers that regressed, in name order.
    pub fn failed_markers(&self) -> Vec<(&str, &MarkerDelta)> {
        self.markers
            .iter()
            .filter(|(_, m)| m.failed)
            .map(|(k, m)| (k.as_str(), m))
            .collect()
    }
}

/// Compares two runs. `names` (BEFORE, AFTER) only name the inputs in
/// errors.
pub fn delta(
    before: &[ScoreRow],
    after: &[ScoreRow],
    names: (&str, &str),
    options: &DeltaOptions,
) -> Result<Delta, Error> {
    let paired_options = PairedOptions::with_seed(options.seed);
    let b = task_pass_rates(before.iter());
    let a = task_pass_rates(after.iter());
    let (pb, pa) = pair(&b, &a);
    let Some(overall) = compare(&pb, &pa, &paired_options)? else {
        return Err(Error::Unscorable {
            message: format!(
                "`{}` and `{}` have no graded task in common ({} and {} graded tasks); hint: delta pairs rows by `task_id`, so compare runs of the same spec and seed",
                names.0,
                names.1,
                b.len(),
                a.len()
            ),
        });
    };
    let only_before = b.keys().filter(|t| !a.contains_key(*t)).count();
    let only_after = a.keys().filter(|t| !b.contains_key(*t)).count();

    let mut by_category = BTreeMap::new();
    let cats_b = categories(before);
    let cats_a = categories(after);
    let keys: BTreeSet<&String> = cats_b.keys().chain(cats_a.keys()).collect();
    for key in keys {
        let rb = task_pass_rates(cats_b.get(key).into_iter().flatten().copied());
        let ra = task_pass_rates(cats_a.get(key).into_iter().flatten().copied());
        let (pb, pa) = pair(&rb, &ra);
        let d = compare(&pb, &pa, &paired_options)?;
        by_category.insert(key.clone(), CategoryDelta::new(pb.len(), d));
    }

    let marks_b = marker_means(before);
    let marks_a = marker_means(after);
    let names_all: BTreeSet<&String> = marks_b.keys().chain(marks_a.keys()).collect();
    for guard in &options.must_not_regress {
        if !names_all.contains(guard) {
            let known: Vec<&str> = names_all.iter().map(|s| s.as_str()).collect();
            return Err(Error::Unscorable {
                message: format!(
                    "`--must-not-regress {guard}`: no row of `{}` or `{}` carries marker `{guard}`; hint: markers present: {}",
                    names.0,
                    names.1,
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            });
        }
    }
    let mut markers = BTreeMap::new();
    let empty = BTreeMap::new();
    for name in names_all {
        let (pb, pa) = pair(
            marks_b.get(name).unwrap_or(&empty),
            marks_a.get(name).unwrap_or(&empty),
        );
        let d = compare(&pb, &pa, &paired_options)?;
        let guarded = options.must_not_regress.contains(name);
        let CategoryDelta {
            n_paired,
            delta,
            ci95,
            p_value,
        } = CategoryDelta::new(pb.len(), d);
        markers.insert(
            name.clone(),
            MarkerDelta {
                n_paired,
                delta,
                ci95,
                p_value,
                must_not_regress: guarded,
                failed: guarded && d.is_some_and(|d| d.delta.hi < 0.0),
            },
        );
    }

    Ok(Delta {
        n_paired: pb.len(),
        n_unpaired: only_before + only_after,
        n_only_before: only_before,
        n_only_after: only_after,
        before: overall.before,
        after: overall.after,
        delta: overall.delta.estimate,
        ci95: [overall.delta.lo, overall.delta.hi],
        p_value: overall.test.p_value,
        verdict: overall.verdict.as_str().to_owned(),
        by_category,
        rule_texts: super::input::rule_texts(before.iter().chain(after)),
        markers,
        seed: options.seed,
    })
}

/// Values of the tasks present on both sides, in task-id order.
fn pair(b: &BTreeMap<&str, f64>, a: &BTreeMap<&str, f64>) -> (Vec<f64>, Vec<f64>) {
    b.iter()
        .filter_map(|(t, &vb)| a.get(t).map(|&va| (vb, va)))
        .unzip()
}

fn compare(
    before: &[f64],
    after: &[f64],
    options: &PairedOptions,
) -> Result<Option<PairedDelta>, Error> {
    if before.is_empty() {
        return Ok(None);
    }
    sparring_stats::paired_delta(before, after, options)
        .map(Some)
        .map_err(stats("delta"))
}

fn categories(rows: &[ScoreRow]) -> BTreeMap<String, Vec<&ScoreRow>> {
    let mut out: BTreeMap<String, Vec<&ScoreRow>> = BTreeMap::new();
    for row in rows {
        for key in row.categories() {
            out.entry(key).or_default().push(row);
        }
    }
    out
}

/// Marker → task → mean of the marker over the task's rows that carry it
/// (graded or not).
fn marker_means(rows: &[ScoreRow]) -> BTreeMap<String, BTreeMap<&str, f64>> {
    let mut sums: BTreeMap<String, BTreeMap<&str, (f64, u64)>> = BTreeMap::new();
    for row in rows {
        for (name, &v) in &row.markers {
            let e = sums
                .entry(name.clone())
                .or_default()
                .entry(row.task_id.as_str())
                .or_default();
            e.0 += v;
            e.1 += 1;
        }
    }
    sums.into_iter()
        .map(|(name, tasks)| {
            let means = tasks
                .into_iter()
                .map(|(t, (s, n))| (t, s / n as f64))
                .collect();
            (name, means)
        })
        .collect()
}

fn signed(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |x| format!("{x:+.3}"))
}

fn ci(v: Option<[f64; 2]>) -> String {
    v.map_or_else(
        || "-".to_owned(),
        |[lo, hi]| format!("[{lo:+.3}, {hi:+.3}]"),
    )
}

fn p(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |x| format!("{x:.4}"))
}

/// The comparison as plain-text tables.
pub fn render(d: &Delta) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "paired tasks {}  unpaired {} (only before {}, only after {})",
        d.n_paired, d.n_unpaired, d.n_only_before, d.n_only_after
    );
    let _ = writeln!(
        out,
        "pass@1 {} -> {}  delta {} {}  p {}  {}",
        pct(Some(d.before)),
        pct(Some(d.after)),
        signed(Some(d.delta)),
        ci(Some(d.ci95)),
        p(Some(d.p_value)),
        d.verdict
    );
    let width = crate::name_width(
        d.by_category
            .keys()
            .chain(d.markers.keys())
            .map(String::as_str),
        8,
    );
    // The columns a category and a marker row share, after the name.
    let cells = |n_paired: usize, delta, ci95, p_value| {
        format!(
            "{n_paired:>6}  {:>7}  {:<18}  {:>6}",
            signed(delta),
            ci(ci95),
            p(p_value)
        )
    };
    let header = |first: &str| {
        format!(
            "\n{first:<width$}  {:>6}  {:>7}  {:<18}  {:>6}",
            "paired", "delta", "ci95", "p"
        )
    };
    if !d.by_category.is_empty() {
        let _ = writeln!(out, "{}", header("category"));
        for (key, c) in &d.by_category {
            let _ = writeln!(
                out,
                "{key:<width$}  {}{}",
                cells(c.n_paired, c.delta, c.ci95, c.p_value),
                super::input::category_note(key, &d.rule_texts)
            );
        }
    }
    if !d.markers.is_empty() {
        let _ = writeln!(out, "{}  guard", header("marker"));
        for (key, m) in &d.markers {
            let guard = match (m.must_not_regress, m.failed) {
                (true, true) => "FAILED",
                (true, false) => "ok",
                (false, _) => "",
            };
            let _ = writeln!(
                out,
                "{key:<width$}  {}  {guard}",
                cells(m.n_paired, m.delta, m.ci95, m.p_value)
            );
        }
    }
    out
}
