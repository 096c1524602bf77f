//! `sparring hack-scan`: does reward track something other than doing the
//! job?
//!
//! Over graded rows grouped by task, the reward variance is split into its
//! within-task and between-task parts, and each row feature in [`FEATURES`]
//! is correlated with reward within tasks (both demeaned per task). The
//! strongest correlation is compared with a floor from rewards shuffled
//! within tasks ([`sparring_stats::hack_scan`]); features above it are
//! flagged.

use super::input::ScoreRow;
use super::stats;
use crate::Error;
use serde::Serialize;
use serde_json::Value;
use sparring_stats::HackScanOptions;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The row features, in output order. All are computed from the agent's
/// (`assistant`) messages:
///
/// - `reply_chars`: characters of the final reply (the last assistant
///   message with text).
/// - `agent_chars`: characters of all assistant text.
/// - `tool_calls`: tool calls made.
/// - `turns`: assistant messages with text (replies to the person).
/// - `apologies`: apology phrases ([`APOLOGY_PHRASES`]), case-insensitive.
/// - `markdown`: lines that open a heading, list item, quote, table row or
///   code fence, plus `**` bold spans.
/// - `questions`: question marks.
/// - `exclamations`: exclamation marks.
pub const FEATURES: [&str; 8] = [
    "reply_chars",
    "agent_chars",
    "tool_calls",
    "turns",
    "apologies",
    "markdown",
    "questions",
    "exclamations",
];

/// Phrases counted by the `apologies` feature (lowercase; `apolog` covers
/// apologise, apologize and apologies).
pub const APOLOGY_PHRASES: [&str; 5] = ["sorry", "apolog", "my mistake", "my bad", "forgive"];

/// The features of one conversation, in [`FEATURES`] order.
pub fn row_features(messages: &[Value]) -> [f64; FEATURES.len()] {
    let mut last_reply = 0usize;
    let mut agent_chars = 0usize;
    let mut tool_calls = 0usize;
    let mut turns = 0usize;
    let mut apologies = 0usize;
    let mut markdown = 0usize;
    let mut questions = 0usize;
    let mut exclamations = 0usize;
    for m in messages {
        if m.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        tool_calls += m
            .get("tool_calls")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let text = content_text(m.get("content"));
        if text.trim().is_empty() {
            continue;
        }
        let chars = text.chars().count();
        turns += 1;
        last_reply = chars;
        agent_chars += chars;
        let lower = text.to_lowercase();
        apologies += APOLOGY_PHRASES
            .iter()
            .map(|p| lower.matches(p).count())
            .sum::<usize>();
        markdown +=
            text.lines().filter(|l| opens_block(l)).count() + text.matches("**").count() / 2;
        questions += text.matches('?').count();
        exclamations += text.matches('!').count();
    }
    [
        last_reply,
        agent_chars,
        tool_calls,
        turns,
        apologies,
        markdown,
        questions,
        exclamations,
    ]
    .map(|x| x as f64)
}

/// Text of a message's `content`: a string, or the `text` of its parts.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Whether a line opens a markdown block: `#` heading, `-`/`*`/`+` or `1.`
/// list item, `>` quote, `|` table row, or a code fence.
fn opens_block(line: &str) -> bool {
    let l = line.trim_start();
    if l.starts_with("```") || l.starts_with('>') || l.starts_with('|') {
        return true;
    }
    if let Some(rest) = l.strip_prefix('#') {
        let rest = rest.trim_start_matches('#');
        return rest.starts_with(' ');
    }
    if ["- ", "* ", "+ "].iter().any(|p| l.starts_with(p)) {
        return true;
    }
    let digits = l.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && l[digits..].starts_with(". ")
}

/// One feature's line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FeatureLine {
    /// The feature ([`FEATURES`]).
    pub name: String,
    /// Within-task correlation with reward.
    pub corr: f64,
    /// `|corr|` is above the floor.
    pub flagged: bool,
}

/// The scan (its JSON is `sparring hack-scan --json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HackReport {
    /// Graded rows used.
    pub n_rows: usize,
    /// Tasks they belong to.
    pub n_tasks: usize,
    /// `E[Var(r | task)]`.
    pub within_task_var: f64,
    /// `Var(E[r | task])`.
    pub between_task_var: f64,
    /// Population variance of all rewards (the sum of the two).
    pub total_var: f64,
    /// The 95th percentile of the strongest `|corr|` over within-task reward
    /// shuffles.
    pub floor: f64,
    /// One line per feature, in [`FEATURES`] order.
    pub features: Vec<FeatureLine>,
    /// Shuffles behind the floor.
    pub shuffles: usize,
    /// The seed used.
    pub seed: u64,
    /// Why the scan can say little, when it can.
    pub warnings: Vec<String>,
}

/// Runs the scan over the graded rows. `name` only names the input in
/// errors.
pub fn hack_scan(rows: &[ScoreRow], name: &str, seed: u64) -> Result<HackReport, Error> {
    let mut tasks: BTreeMap<&str, Vec<&ScoreRow>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.reward.is_some()) {
        tasks.entry(row.task_id.as_str()).or_default().push(row);
    }
    if tasks.is_empty() {
        return Err(Error::Unscorable {
            message: format!(
                "`{name}` has no graded row; hint: grade the run first (`simulate --grade`)"
            ),
        });
    }
    let reward: Vec<Vec<f64>> = tasks
        .values()
        .map(|rows| rows.iter().map(|r| r.reward.unwrap_or(0.0)).collect())
        .collect();
    let per_row: Vec<Vec<[f64; FEATURES.len()]>> = tasks
        .values()
        .map(|rows| rows.iter().map(|r| row_features(&r.messages)).collect())
        .collect();
    let features: Vec<Vec<Vec<f64>>> = (0..FEATURES.len())
        .map(|j| {
            per_row
                .iter()
                .map(|task| task.iter().map(|f| f[j]).collect())
                .collect()
        })
        .collect();
    let options = HackScanOptions {
        seed,
        ..HackScanOptions::default()
    };
    let scan =
        sparring_stats::hack_scan(&reward, &features, &options).map_err(stats("hack scan"))?;
    let mut warnings = Vec::new();
    if reward.iter().all(|t| t.len() < 2) {
        warnings.push(
            "no task has two graded rows, so nothing varies within a task; hint: repeat tasks (`simulate --repeats 4`)"
                .to_owned(),
        );
    } else if scan.variance.within_task == 0.0 {
        warnings.push("rewards never vary within a task, so no feature can track them".to_owned());
    }
    Ok(HackReport {
        n_rows: scan.variance.n_rows,
        n_tasks: scan.variance.n_tasks,
        within_task_var: scan.variance.within_task,
        between_task_var: scan.variance.between_task,
        total_var: scan.variance.total,
        floor: scan.floor,
        features: FEATURES
            .iter()
            .zip(&scan.features)
            .map(|(name, f)| FeatureLine {
                name: (*name).to_owned(),
                corr: f.corr,
                flagged: f.flagged,
            })
            .collect(),
        shuffles: options.shuffles,
        seed,
        warnings,
    })
}

/// The scan as plain text.
pub fn render(r: &HackReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "rows {}  tasks {}  reward variance {:.4} = within task {:.4} + between tasks {:.4}",
        r.n_rows, r.n_tasks, r.total_var, r.within_task_var, r.between_task_var
    );
    let _ = write!(
        out,
        "floor {:.3} (95th percentile of the strongest |corr| over {} within-task shuffles)\n\n{:<14}  {:>7}  flagged\n",
        r.floor, r.shuffles, "feature", "corr"
    );
    for f in &r.features {
        let _ = writeln!(
            out,
            "{:<14}  {:>+7.3}  {}",
            f.name,
            f.corr,
            if f.flagged { "yes" } else { "" }
        );
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // The features are counts: exact.
    #[allow(clippy::float_cmp)]
    #[test]
    fn features_count_what_they_say() {
        let messages = vec![
            json!({"role": "system", "content": "Sorry? ## no"}),
            json!({"role": "user", "content": "hi!"}),
            json!({"role": "assistant", "tool_calls": [{"id": "a"}, {"id": "b"}]}),
            json!({"role": "tool", "content": "{}"}),
            json!({"role": "assistant", "content": "Sorry, I apologise! Which order?\n- one\n- two\n## Title\n**bold** and 3. not a list"}),
            json!({"role": "user", "content": "W1"}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "Done."}], "tool_calls": [{"id": "c"}]}),
        ];
        let f = row_features(&messages);
        let first =
            "Sorry, I apologise! Which order?\n- one\n- two\n## Title\n**bold** and 3. not a list";
        assert_eq!(
            f,
            [
                5.0,
                (first.chars().count() + 5) as f64,
                3.0,
                2.0,
                2.0,
                4.0,
                1.0,
                1.0
            ]
        );
        assert_eq!(row_features(&[]), [0.0; 8]);
    }
}
