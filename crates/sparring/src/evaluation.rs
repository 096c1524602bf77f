//! Evaluation on a fixed list of asks (`sparring evaluate SPEC --eval-set
//! FILE`, `sparring.evaluate(eval_set=asks)`): every ask runs, once per
//! repeat, and a per-ask table says how each scored.
//!
//! Seeds are asks to build a run around; an eval set is the run. The asks
//! become the spec's seeds, word for word, and nothing else is generated:
//! `situations` is the number of asks, one phrasing each, the template
//! writer, every repeat played (`repeat_policy: fixed` unless given), and
//! the conduct checks on unless `grade` is given. An ask the budget cannot
//! pay for is in the table with no rows, and in its warnings.
//!
//! ```
//! use sparring::evaluation::EvalSet;
//! let set = EvalSet::new(vec!["Where is order A1?".into(), "Cancel A2".into()])?;
//! assert_eq!(set.asks().len(), 2);
//! assert!(EvalSet::new(vec!["same".into(), "same".into()]).is_err());
//! # Ok::<(), sparring::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::simulation::{Simulation, SimulationResult};
use serde::Serialize;
use serde_json::Value;
use sparring_types::values::{Phrasings, Situations};
use sparring_types::{OptionsPatch, RepeatPolicy, Row, Spec, defaults};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// A fixed list of distinct asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalSet {
    asks: Vec<String>,
}

impl EvalSet {
    /// The asks, checked: at least one, none blank, no two the same.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] naming the ask at fault (1-based).
    pub fn new(asks: Vec<String>) -> Result<Self> {
        if asks.is_empty() {
            return Err(Error::input("the eval set is empty: give at least one ask"));
        }
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, ask) in asks.iter().enumerate() {
            if ask.trim().is_empty() {
                return Err(Error::input(format!(
                    "eval set ask {} is blank: every ask needs text",
                    i + 1
                )));
            }
            if let Some(first) = seen.insert(ask.as_str(), i) {
                return Err(Error::input(format!(
                    "eval set ask {} repeats ask {}: `{}`\nhint: repeats of one ask are `repeats`, not copies in the set",
                    i + 1,
                    first + 1,
                    short(ask)
                )));
            }
        }
        Ok(Self { asks })
    }

    /// Reads an eval set file: one ask per line (blank lines skipped), or
    /// with `.json` a list of asks, or with `.jsonl` one ask per line as a
    /// JSON string or an object with `ask`.
    ///
    /// # Errors
    ///
    /// An unreadable file, or an entry that is not an ask, naming the file
    /// and the line or index.
    pub fn read(path: &Path) -> Result<Self> {
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::io("read eval set", path, &e))?;
        let at = |what: String| Error::input(format!("eval set `{}`: {what}", path.display()));
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let asks = match ext {
            "json" => {
                let value: Value =
                    serde_json::from_str(&text).map_err(|e| at(format!("not JSON: {e}")))?;
                let Value::Array(items) = value else {
                    return Err(at("must be a JSON list of asks".to_owned()));
                };
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| ask_of(&v).ok_or_else(|| at(format!("item {i} is not an ask"))))
                    .collect::<Result<Vec<_>>>()?
            }
            "jsonl" => text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, l)| {
                    serde_json::from_str::<Value>(l)
                        .ok()
                        .as_ref()
                        .and_then(ask_of)
                        .ok_or_else(|| {
                            at(format!(
                                "line {}: expected a JSON string or {{\"ask\": …}}",
                                i + 1
                            ))
                        })
                })
                .collect::<Result<Vec<_>>>()?,
            _ => text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect(),
        };
        Self::new(asks).map_err(|e| at(e.message().to_owned()))
    }

    /// The asks, in order.
    pub fn asks(&self) -> &[String] {
        &self.asks
    }

    /// A simulation of `spec` that plays exactly these asks with `options`
    /// over the spec's: see the module's page for what it sets.
    ///
    /// # Errors
    ///
    /// More asks than a run may have situations, or options that pin
    /// another run's tasks.
    pub fn simulation(&self, mut spec: Spec, options: OptionsPatch) -> Result<Simulation> {
        let options = self.options(options)?;
        spec.seeds.clone_from(&self.asks);
        Ok(Simulation::new(spec).options(options))
    }

    /// `options` with what an evaluation sets (what
    /// [`EvalSet::simulation`] runs with).
    ///
    /// # Errors
    ///
    /// As [`EvalSet::simulation`].
    pub fn simulation_options(&self, options: OptionsPatch) -> Result<OptionsPatch> {
        self.options(options)
    }

    fn options(&self, options: OptionsPatch) -> Result<OptionsPatch> {
        if options.unique_situations == Some(true) {
            return Err(Error::input(
                "`unique_situations` draws new situations; an evaluation plays only its asks",
            ));
        }
        let situations = Situations::new(self.asks.len() as u64).map_err(|m| {
            Error::input(format!(
                "the eval set has {} asks: `situations` {m}",
                self.asks.len()
            ))
        })?;
        Ok(OptionsPatch {
            situations: Some(situations),
            phrasings: Phrasings::new(1).ok(),
            unique_situations: Some(false),
            writer: Some(defaults::TEMPLATE.to_owned()),
            repeat_policy: Some(options.repeat_policy.unwrap_or(RepeatPolicy::Fixed)),
            grade: Some(options.grade.unwrap_or(true)),
            ..options
        })
    }

    /// How each ask scored in `rows`: rows are matched to asks by their
    /// opening message.
    pub fn table(&self, rows: &[Row]) -> EvalTable {
        let mut by_ask: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
        for row in rows {
            if let Some(ask) = row.messages.get(1) {
                by_ask.entry(ask.content_str()).or_default().push(row);
            }
        }
        let mut warnings = Vec::new();
        let asks: Vec<AskScore> = self
            .asks
            .iter()
            .enumerate()
            .map(|(i, ask)| {
                let rows = by_ask.get(ask.as_str()).map_or(&[][..], Vec::as_slice);
                AskScore::of(i + 1, ask, rows)
            })
            .collect();
        let not_run: Vec<usize> = asks
            .iter()
            .filter(|a| a.rows == 0)
            .map(|a| a.index)
            .collect();
        if !not_run.is_empty() {
            warnings.push(format!(
                "{} of {} asks did not run (asks {}): raise `budget` to at least asks × repeats",
                not_run.len(),
                asks.len(),
                not_run
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        EvalTable {
            asks,
            not_run,
            warnings,
        }
    }

    /// [`EvalSet::table`] of a finished simulation: its rows in memory, or
    /// its `rows.jsonl`.
    ///
    /// # Errors
    ///
    /// When the rows file cannot be read.
    pub fn table_of(&self, result: &SimulationResult) -> Result<EvalTable> {
        match result.rows_path() {
            Some(path) => Ok(self.table(&sparring_io::rows::read_rows(&path)?)),
            None => Ok(self.table(&result.rows)),
        }
    }
}

fn ask_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("ask").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

/// The first words of an ask, for messages.
fn short(ask: &str) -> String {
    let s: String = ask.chars().take(60).collect();
    if s.len() < ask.len() {
        format!("{s}…")
    } else {
        s
    }
}

/// How one ask scored.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AskScore {
    /// 1-based position in the eval set.
    pub index: usize,
    /// The ask.
    pub ask: String,
    /// Its task id, once it ran.
    pub task_id: Option<String>,
    /// Rows played (one per repeat and eval run).
    pub rows: u64,
    /// Rows graded.
    pub graded: u64,
    /// Graded rows that passed (reward ≥ 0.5).
    pub passed: u64,
    /// `passed / graded`, when any row is graded.
    pub pass_rate: Option<f64>,
    /// Mean reward of the graded rows.
    pub mean_reward: Option<f64>,
    /// How the rows ended: `ended_by` → rows.
    pub ended_by: BTreeMap<String, u64>,
    /// Failure classes of the failed rows → rows.
    pub failures: BTreeMap<String, u64>,
}

impl AskScore {
    fn of(index: usize, ask: &str, rows: &[&Row]) -> Self {
        let rewards: Vec<f64> = rows.iter().filter_map(|r| r.reward).collect();
        let passed = rows.iter().filter(|r| r.passed() == Some(true)).count() as u64;
        let mut ended_by = BTreeMap::new();
        let mut failures = BTreeMap::new();
        for r in rows {
            *ended_by.entry(r.ended_by.as_str().to_owned()).or_insert(0) += 1;
            if r.passed() == Some(false) {
                let class = r.failure_class.clone().unwrap_or_else(|| "fail".to_owned());
                *failures.entry(class).or_insert(0) += 1;
            }
        }
        let graded = rewards.len() as u64;
        Self {
            index,
            ask: ask.to_owned(),
            task_id: rows.first().map(|r| r.task_id.clone()),
            rows: rows.len() as u64,
            graded,
            passed,
            pass_rate: (graded > 0).then(|| passed as f64 / graded as f64),
            mean_reward: (graded > 0).then(|| rewards.iter().sum::<f64>() / graded as f64),
            ended_by,
            failures,
        }
    }
}

/// The per-ask table of an evaluation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EvalTable {
    /// One line per ask, in the eval set's order.
    pub asks: Vec<AskScore>,
    /// Asks that did not run (1-based), when the budget could not pay.
    pub not_run: Vec<usize>,
    /// Things to read before any number.
    pub warnings: Vec<String>,
}

impl EvalTable {
    /// The table as text, one line per ask.
    pub fn render(&self) -> String {
        let mut out = String::from("  #  rows  passed  pass rate  ended by                 ask\n");
        for a in &self.asks {
            let rate = a
                .pass_rate
                .map_or_else(|| "-".to_owned(), |r| format!("{r:.2}"));
            let ended: Vec<String> = a.ended_by.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            let _ = writeln!(
                out,
                "{:>3}  {:>4}  {:>6}  {:>9}  {:<23}  {}",
                a.index,
                a.rows,
                if a.graded > 0 {
                    format!("{}/{}", a.passed, a.graded)
                } else {
                    "-".to_owned()
                },
                rate,
                if ended.is_empty() {
                    "not run".to_owned()
                } else {
                    ended.join(" ")
                },
                short(&a.ask)
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eval_set_sets_the_counts_and_keeps_what_was_given() {
        let set = EvalSet::new(vec!["a".into(), "b".into(), "c".into()]).unwrap();
        let given = OptionsPatch {
            repeats: sparring_types::values::Repeats::new(3).ok(),
            grade: Some(false),
            ..OptionsPatch::default()
        };
        let o = set.options(given).unwrap();
        assert_eq!(o.situations.map(Situations::get), Some(3));
        assert_eq!(o.phrasings.map(Phrasings::get), Some(1));
        assert_eq!(o.repeats.map(sparring_types::values::Repeats::get), Some(3));
        assert_eq!(o.grade, Some(false));
        assert_eq!(o.repeat_policy, Some(RepeatPolicy::Fixed));
        let o = set.options(OptionsPatch::default()).unwrap();
        assert_eq!(o.grade, Some(true));
        let unique = OptionsPatch {
            unique_situations: Some(true),
            ..OptionsPatch::default()
        };
        assert!(set.options(unique).is_err());
    }

    #[test]
    fn bad_sets_name_the_ask() {
        let e = EvalSet::new(vec!["x".into(), " ".into()]).unwrap_err();
        assert!(e.message().contains("ask 2 is blank"), "{e}");
        let e = EvalSet::new(vec!["x".into(), "y".into(), "x".into()]).unwrap_err();
        assert!(e.message().contains("ask 3 repeats ask 1"), "{e}");
        assert!(EvalSet::new(Vec::new()).is_err());
    }

    #[test]
    fn files_in_three_shapes() {
        let dir = tempfile::tempdir().unwrap();
        let lines = dir.path().join("asks.txt");
        std::fs::write(&lines, "first ask\n\n  second ask \n").unwrap();
        assert_eq!(
            EvalSet::read(&lines).unwrap().asks(),
            ["first ask", "second ask"]
        );
        let json = dir.path().join("asks.json");
        std::fs::write(&json, r#"["one", {"ask": "two"}]"#).unwrap();
        assert_eq!(EvalSet::read(&json).unwrap().asks(), ["one", "two"]);
        let jsonl = dir.path().join("asks.jsonl");
        std::fs::write(&jsonl, "\"one\"\n{\"ask\": \"two\"}\n3\n").unwrap();
        let e = EvalSet::read(&jsonl).unwrap_err();
        assert!(e.message().contains("line 3"), "{e}");
        let e = EvalSet::read(&dir.path().join("missing.txt")).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Io);
    }
}
