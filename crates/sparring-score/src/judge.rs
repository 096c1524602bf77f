//! `sparring judge-agreement`: how well the rows' rewards (a judge's
//! verdicts) agree with gold labels.
//!
//! The labels come from a labels file or, without one, from the rows'
//! own gold labels (`gold_reward`, `gold_author`, as `labels attach` wrote
//! them). A label is used when it has an author, names a row by `row_id`,
//! and that row is graded; the judge passed the row when `reward >= 0.5`. Labels
//! without an author are counted as `unmeasured` and not used: an unsigned
//! label cannot be told from the judge's own output.

use super::input::{Label, ScoreRow};
use super::stats;
use crate::Error;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The agreement (its JSON is `sparring judge-agreement --json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JudgeReport {
    /// Labels compared.
    pub n: usize,
    /// Share of them where judge and gold agree.
    pub agreement: f64,
    /// Wilson 95 % interval of `agreement`.
    pub agreement_ci95: [f64; 2],
    /// Cohen's kappa; `null` when both gave one same label to everything.
    pub kappa: Option<f64>,
    /// Share of gold-fail rows the judge passed; `null` with no gold fail.
    pub pass_when_gold_fail: Option<f64>,
    /// Labels without an author (not used).
    pub unmeasured: usize,
    /// Authored labels naming no row in the rows file (not used).
    pub unmatched: usize,
    /// Authored labels on ungraded rows (not used).
    pub ungraded: usize,
    /// Author → labels used.
    pub authors: BTreeMap<String, usize>,
}

/// Compares rewards with gold labels. `paths` (rows, labels) only name the
/// inputs in errors.
pub fn judge_agreement(
    rows: &[ScoreRow],
    labels: &[Label],
    paths: (&Path, &Path),
) -> Result<JudgeReport, Error> {
    // row_id → (line, reward); a second row with the same id makes the id
    // ambiguous, which is an error only if a label uses it.
    let mut by_id: BTreeMap<&str, (usize, Option<f64>, Option<usize>)> = BTreeMap::new();
    for row in rows {
        if let Some(id) = &row.row_id {
            by_id
                .entry(id.as_str())
                .and_modify(|e| e.2 = e.2.or(Some(row.line)))
                .or_insert((row.line, row.reward, None));
        }
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut judge = Vec::new();
    let mut gold = Vec::new();
    let mut report = JudgeReport {
        n: 0,
        agreement: 0.0,
        agreement_ci95: [0.0, 0.0],
        kappa: None,
        pass_when_gold_fail: None,
        unmeasured: 0,
        unmatched: 0,
        ungraded: 0,
        authors: BTreeMap::new(),
    };
    for label in labels {
        let Some(author) = &label.author else {
            report.unmeasured += 1;
            continue;
        };
        if let Some(first) = seen.insert(label.row_id.as_str(), label.line) {
            return Err(Error::invalid(
                paths.1,
                format!("line {}", label.line),
                format!(
                    "a second label for row `{}` (the first is on line {first}); keep one gold label per row",
                    label.row_id
                ),
            ));
        }
        let Some(&(line, reward, twice)) = by_id.get(label.row_id.as_str()) else {
            report.unmatched += 1;
            continue;
        };
        if let Some(again) = twice {
            return Err(Error::invalid(
                paths.0,
                format!("line {again}"),
                format!(
                    "row_id `{}` is also on line {line}, so the label on line {} of `{}` is ambiguous",
                    label.row_id,
                    label.line,
                    paths.1.display()
                ),
            ));
        }
        let Some(reward) = reward else {
            report.ungraded += 1;
            continue;
        };
        judge.push(reward >= 0.5);
        gold.push(label.pass);
        *report.authors.entry(author.clone()).or_default() += 1;
    }
    if judge.is_empty() && paths.0 == paths.1 {
        return Err(Error::Unscorable {
            message: format!(
                "no graded row of `{}` carries an authored gold label ({} unmeasured, {} on ungraded rows); hint: put labels on the rows with `sparring labels attach`, or pass --labels FILE",
                paths.0.display(),
                report.unmeasured,
                report.ungraded
            ),
        });
    }
    if judge.is_empty() {
        return Err(Error::Unscorable {
            message: format!(
                "no authored label of `{}` matches a graded row of `{}` ({} unmeasured, {} unmatched, {} on ungraded rows); hint: labels need `row_id`, `label` and `author`",
                paths.1.display(),
                paths.0.display(),
                report.unmeasured,
                report.unmatched,
                report.ungraded
            ),
        });
    }
    let a = sparring_stats::judge_agreement(&judge, &gold).map_err(stats("judge agreement"))?;
    report.n = a.n;
    report.agreement = a.agreement;
    report.agreement_ci95 = [a.agreement_ci95.0, a.agreement_ci95.1];
    report.kappa = a.kappa;
    report.pass_when_gold_fail = a.pass_when_gold_fail;
    Ok(report)
}

/// The agreement as plain text.
pub fn render(r: &JudgeReport) -> String {
    let mut out = String::new();
    let opt = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |x| format!("{x:.3}"));
    let _ = writeln!(
        out,
        "labels {}  agreement {:.3} [{:.3}, {:.3}]  kappa {}  pass when gold fails {}",
        r.n,
        r.agreement,
        r.agreement_ci95[0],
        r.agreement_ci95[1],
        opt(r.kappa),
        opt(r.pass_when_gold_fail)
    );
    let _ = writeln!(
        out,
        "not used: {} unmeasured (no author), {} unmatched, {} on ungraded rows",
        r.unmeasured, r.unmatched, r.ungraded
    );
    let authors: Vec<String> = r.authors.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(out, "authors: {}", authors.join(", "));
    out
}
