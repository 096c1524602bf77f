//! Decontamination: keep training rows away from held-out rows and traces.
//!
//! A row's text is the content of its person and agent messages and the
//! arguments of the agent's tool calls. Each text is lowercased and split
//! into words (runs of letters and digits); every run of
//! [`DecontamOptions::ngram`] consecutive words is an n-gram. A row is
//! dropped when at least [`DecontamOptions::threshold`] of its distinct
//! n-grams appear in the references taken together (a hit in any
//! [`Reference`] counts). A row whose task is a
//! held-out task is dropped whatever its text: held-out tasks never reach a
//! training cut.
//!
//! References come from a held-out rows file ([`Reference::from_rows`]) or a
//! traces file ([`Reference::from_json_text`]: every string in every JSON
//! value, JSON-encoded strings opened up, so OTLP spans and chat logs both
//! work).

use crate::defaults;
use serde::Serialize;
use serde_json::Value;
use sparring_types::{Role, Row};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write as _;

/// Options of [`decontaminate`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DecontamOptions {
    /// Words per n-gram ([`defaults::DECONTAM_NGRAM`]).
    pub ngram: usize,
    /// Share of a row's distinct n-grams found in the reference at which the
    /// row is dropped ([`defaults::DECONTAM_THRESHOLD`]).
    pub threshold: f64,
}

impl Default for DecontamOptions {
    fn default() -> Self {
        Self {
            ngram: defaults::DECONTAM_NGRAM,
            threshold: defaults::DECONTAM_THRESHOLD,
        }
    }
}

/// The words of a text: lowercased runs of letters and digits.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// FNV-1a over the words of one n-gram, with a separator so word boundaries
/// count. In memory only; never persisted.
fn gram_hash(words: &[String]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in words {
        for b in w.as_bytes().iter().chain(std::iter::once(&0x1f)) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Adds the n-grams of one text to `out`.
fn add_grams(text: &str, n: usize, out: &mut HashSet<u64>) {
    let w = words(text);
    if n == 0 || w.len() < n {
        return;
    }
    for window in w.windows(n) {
        out.insert(gram_hash(window));
    }
}

/// The distinct n-grams of a row's person and agent text: message content
/// and the arguments of the agent's tool calls (each call's arguments one
/// text).
pub fn row_grams(row: &Row, n: usize) -> HashSet<u64> {
    let mut grams = HashSet::new();
    for m in &row.messages {
        if matches!(m.role, Role::User | Role::Assistant) {
            add_grams(m.content_str(), n, &mut grams);
            for call in &m.tool_calls {
                add_grams(&call.function.arguments, n, &mut grams);
            }
        }
    }
    grams
}

/// Text to keep training rows away from.
#[derive(Clone, Debug, Default)]
pub struct Reference {
    /// What it came from (a file name), for the report.
    pub source: String,
    /// Held-out task ids (empty for traces).
    pub tasks: BTreeSet<String>,
    grams: HashSet<u64>,
}

impl Reference {
    /// A reference from held-out rows: their n-grams and their tasks.
    pub fn from_rows(source: &str, rows: &[Row], n: usize) -> Self {
        let mut grams = HashSet::new();
        for row in rows {
            grams.extend(row_grams(row, n));
        }
        Self {
            source: source.to_owned(),
            tasks: rows.iter().map(|r| r.task_id.clone()).collect(),
            grams,
        }
    }

    /// A reference from traces: JSON Lines (or one JSON document); every
    /// string anywhere in it is text, and a string that itself holds JSON is
    /// opened up. Lines that are not JSON are taken as plain text.
    pub fn from_json_text(source: &str, text: &str, n: usize) -> Self {
        let mut grams = HashSet::new();
        let whole: Option<Value> = serde_json::from_str(text).ok();
        if let Some(value) = whole {
            collect_strings(&value, n, &mut grams, 0);
        } else {
            for line in text.lines() {
                match serde_json::from_str::<Value>(line) {
                    Ok(value) => collect_strings(&value, n, &mut grams, 0),
                    Err(_) => add_grams(line, n, &mut grams),
                }
            }
        }
        Self {
            source: source.to_owned(),
            tasks: BTreeSet::new(),
            grams,
        }
    }

    /// Distinct n-grams held.
    pub fn len(&self) -> usize {
        self.grams.len()
    }

    /// Whether it holds no n-gram and no task.
    pub fn is_empty(&self) -> bool {
        self.grams.is_empty() && self.tasks.is_empty()
    }
}

fn collect_strings(value: &Value, n: usize, out: &mut HashSet<u64>, depth: usize) {
    match value {
        Value::String(s) => {
            let t = s.trim_start();
            if depth < 8
                && (t.starts_with('{') || t.starts_with('['))
                && let Ok(inner) = serde_json::from_str::<Value>(s)
            {
                collect_strings(&inner, n, out, depth + 1);
            } else {
                add_grams(s, n, out);
            }
        }
        Value::Array(items) => {
            for v in items {
                collect_strings(v, n, out, depth);
            }
        }
        Value::Object(map) => {
            for v in map.values() {
                collect_strings(v, n, out, depth);
            }
        }
        _ => {}
    }
}

/// One dropped row and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dropped {
    /// The row.
    pub row_id: String,
    /// Its task.
    pub task_id: String,
    /// `holdout_task` or `ngram_overlap`.
    pub reason: &'static str,
    /// Share of the row's n-grams found in any reference (0 for
    /// `holdout_task`).
    pub overlap: f64,
    /// The reference that caught it; for `ngram_overlap`, every reference
    /// holding some of its n-grams, comma-separated.
    pub source: String,
}

/// What [`decontaminate`] did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DecontamReport {
    /// Rows in.
    pub rows_in: usize,
    /// Rows kept.
    pub rows_out: usize,
    /// Reason → rows dropped for it.
    pub by_reason: BTreeMap<String, usize>,
    /// Every dropped row, in input order.
    pub dropped: Vec<Dropped>,
    /// Options used.
    pub ngram: usize,
    /// Threshold used.
    pub threshold: f64,
}

impl DecontamReport {
    /// Tasks some of whose rows were dropped for their text
    /// (`ngram_overlap`); a `holdout_task` drop takes the whole task.
    pub fn tasks_with_dropped_rows(&self) -> BTreeSet<String> {
        self.dropped
            .iter()
            .filter(|d| d.reason == "ngram_overlap")
            .map(|d| d.task_id.clone())
            .collect()
    }

    /// A short account for people.
    pub fn render(&self) -> String {
        let mut out = format!(
            "decontaminate: {} rows in -> {} kept ({}-grams, threshold {})\n",
            self.rows_in, self.rows_out, self.ngram, self.threshold
        );
        for (reason, n) in &self.by_reason {
            let _ = writeln!(out, "  dropped {n} rows [{reason}]");
        }
        out
    }
}

/// Drops rows of held-out tasks and rows whose text overlaps a reference.
/// Kept rows come back in input order.
pub fn decontaminate(
    rows: Vec<Row>,
    references: &[Reference],
    opts: &DecontamOptions,
) -> (Vec<Row>, DecontamReport) {
    let mut report = DecontamReport {
        rows_in: rows.len(),
        ngram: opts.ngram,
        threshold: opts.threshold,
        ..DecontamReport::default()
    };
    let mut kept = Vec::with_capacity(rows.len());
    for row in rows {
        let mut verdict: Option<Dropped> = references
            .iter()
            .find(|r| r.tasks.contains(&row.task_id))
            .map(|r| Dropped {
                row_id: row.row_id.clone(),
                task_id: row.task_id.clone(),
                reason: "holdout_task",
                overlap: 0.0,
                source: r.source.clone(),
            });
        if verdict.is_none() && references.iter().any(|r| !r.grams.is_empty()) {
            let grams = row_grams(&row, opts.ngram);
            if !grams.is_empty() {
                // Hits against the union of the references, so overlap
                // spread across several files still counts.
                let mut hits = 0usize;
                let mut caught = vec![false; references.len()];
                for g in &grams {
                    let mut hit = false;
                    for (i, reference) in references.iter().enumerate() {
                        if reference.grams.contains(g) {
                            caught[i] = true;
                            hit = true;
                        }
                    }
                    hits += usize::from(hit);
                }
                let overlap = hits as f64 / grams.len() as f64;
                if hits > 0 && overlap + 1e-12 >= opts.threshold {
                    let sources: Vec<&str> = references
                        .iter()
                        .zip(&caught)
                        .filter(|(_, c)| **c)
                        .map(|(r, _)| r.source.as_str())
                        .collect();
                    verdict = Some(Dropped {
                        row_id: row.row_id.clone(),
                        task_id: row.task_id.clone(),
                        reason: "ngram_overlap",
                        overlap,
                        source: sources.join(", "),
                    });
                }
            }
        }
        match verdict {
            Some(d) => {
                *report.by_reason.entry(d.reason.to_owned()).or_default() += 1;
                report.dropped.push(d);
            }
            None => kept.push(row),
        }
    }
    report.rows_out = kept.len();
    (kept, report)
}
