//! Rows and gold labels as the scoring commands read them.
//!
//! Scoring reads rows that other tools wrote, so it asks for little: a
//! `task_id` (string or integer) and a `reward` (a number in 0..=1, or null
//! or absent for an ungraded row). Every other field is optional and read
//! only when it has the expected shape. What is there but wrong (a missing
//! `task_id`, a reward that is not a number, a line that is not JSON, an
//! empty file) is an error naming the file and the line.

use crate::Error;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sparring_types::{FaultRecord, SCHEMA_VERSION};
use std::collections::BTreeMap;
use std::path::Path;

/// Which replay of an eval a row belongs to (`lineage.eval_run`): sparring
/// writes integers, other tools may write strings. Integers sort first.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(untagged)]
pub enum EvalRun {
    /// An integer replay index.
    Index(u64),
    /// A named run.
    Name(String),
}

impl std::fmt::Display for EvalRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Index(i) => write!(f, "{i}"),
            Self::Name(n) => f.write_str(n),
        }
    }
}

/// One row, as much of it as scoring uses.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoreRow {
    /// 1-based line of the row in its file.
    pub line: usize,
    /// `row_id`, when present.
    pub row_id: Option<String>,
    /// `task_id` (an integer id is kept as its decimal text).
    pub task_id: String,
    /// `reward`; `None` when the row is ungraded.
    pub reward: Option<f64>,
    /// `situation.axes`: axis → value (strings; numbers and booleans as text).
    pub axes: BTreeMap<String, String>,
    /// `situation.tier`.
    pub tier: Option<String>,
    /// `situation.rule_text`: the text of the rule `axes.policy_rule` names.
    pub rule_text: Option<String>,
    /// `markers`: the numeric ones.
    pub markers: BTreeMap<String, f64>,
    /// `lineage.eval_run`; 0 when absent.
    pub eval_run: EvalRun,
    /// `ended_by`.
    pub ended_by: Option<String>,
    /// `failure_class`.
    pub failure_class: Option<String>,
    /// `messages`, kept as JSON for the hack scan's features.
    pub messages: Vec<Value>,
    /// The goal group of `situation.goal`: its `kind`, or `fault` when a
    /// fault is scheduled; `None` for rows without a goal.
    pub goal: Option<String>,
    /// `conduct_checks.goal`: whether the goal was met, when checked.
    pub goal_met: Option<bool>,
    /// Whether every other conduct check passed, when the row has
    /// `conduct_checks`.
    pub conduct_ok: Option<bool>,
    /// Whether a later grading stage passed the row after an earlier one
    /// failed it (from `grades`; see `sparring_engine::stages::overturned`).
    pub overturned: bool,
    /// The gold label `labels attach` put on the row (`gold_reward`,
    /// `gold_author`), when there is one.
    pub gold: Option<Gold>,
}

/// A gold label carried on a row.
#[derive(Clone, Debug, PartialEq)]
pub struct Gold {
    /// `gold_reward`, 0..=1.
    pub reward: f64,
    /// `gold_author`; `None` when absent or blank.
    pub author: Option<String>,
}

impl ScoreRow {
    /// Whether the row is graded and passed (`reward >= 0.5`).
    pub fn passed(&self) -> Option<bool> {
        self.reward.map(|r| r >= 0.5)
    }

    /// The categories the row belongs to: `<axis>=<value>` for every axis,
    /// and `tier=<tier>`.
    pub fn categories(&self) -> impl Iterator<Item = String> + '_ {
        self.axes
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .chain(self.tier.iter().map(|t| format!("tier={t}")))
            .chain(self.goal.iter().map(|g| format!("goal={g}")))
    }
}

/// The axis that schedules a fault on the situation's tool.
pub const TOOL_CONDITION: &str = "tool_condition";

/// What `tool_condition` reads when the row's scheduled fault never fired
/// (the agent never called the tool it was scheduled on).
pub const NOT_FIRED: &str = "not_fired";

/// Whether the situation scheduled a fault (`axes.tool_condition` other
/// than `ok`) that the world records as not fired: no `situation.faults`
/// entry with `source: "scheduled"` and `fired: true`. Rows written before
/// faults recorded `fired` (entries without it) are taken as they are.
fn scheduled_fault_missed(situation: Option<&serde_json::Map<String, Value>>) -> bool {
    let Some(situation) = situation else {
        return false;
    };
    let condition = situation
        .get("axes")
        .and_then(|a| a.get(TOOL_CONDITION))
        .and_then(Value::as_str);
    if condition.is_none_or(|c| c == "ok") {
        return false;
    }
    // Entries of another shape (rows from other tools) are left out.
    let faults: Vec<FaultRecord> = situation
        .get("faults")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|f| FaultRecord::deserialize(f).ok())
        .collect();
    if !faults.is_empty() && faults.iter().all(|f| f.fired.is_none()) {
        return false;
    }
    !faults.iter().any(|f| f.is_scheduled() && f.has_fired())
}

/// The name of the goal check in a row's `conduct_checks`.
pub const GOAL_CHECK: &str = "goal";

/// Policy rule id → its text, from the rows that carry both
/// (`situation.axes.policy_rule` and `situation.rule_text`): what `report`
/// and `delta` print beside each `policy_rule=<id>` category.
pub fn rule_texts<'a>(rows: impl IntoIterator<Item = &'a ScoreRow>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for row in rows {
        if let (Some(id), Some(text)) = (row.axes.get("policy_rule"), &row.rule_text) {
            out.entry(id.clone()).or_insert_with(|| text.clone());
        }
    }
    out
}

/// The text to print after a category's figures: the rule's text for a
/// `policy_rule=<id>` category, else nothing.
pub fn category_note(key: &str, rules: &BTreeMap<String, String>) -> String {
    key.strip_prefix("policy_rule=")
        .and_then(|id| rules.get(id))
        .map_or_else(String::new, |t| format!("  {t}"))
}

/// One gold label: a line `{"row_id", "label" | "reward" | "pass",
/// "author"?}` of a labels file (the one format of `labels attach` and
/// `judge-agreement`), or the `gold_*` fields of a labelled row.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    /// 1-based line in the labels (or rows) file.
    pub line: usize,
    /// The row labelled.
    pub row_id: String,
    /// The gold reward, 0..=1 (`true` / `pass` are 1, `false` / `fail` 0).
    pub reward: f64,
    /// Whether the gold label says the row passes (`reward >= 0.5`).
    pub pass: bool,
    /// Who labelled it; `None` when the label has no author.
    pub author: Option<String>,
}

/// The gold labels the rows carry (`gold_reward`, `gold_author`, as
/// `labels attach` writes them), one per labelled row with a `row_id`.
pub fn labels_from_rows(rows: &[ScoreRow]) -> Vec<Label> {
    rows.iter()
        .filter_map(|r| {
            let gold = r.gold.as_ref()?;
            Some(Label {
                line: r.line,
                row_id: r.row_id.clone()?,
                reward: gold.reward,
                pass: gold.reward >= 0.5,
                author: gold.author.clone(),
            })
        })
        .collect()
}

/// Parses JSONL text into rows for scoring; `path` only names the source in
/// errors.
pub fn parse_score_rows(path: &Path, text: &str) -> Result<Vec<ScoreRow>, Error> {
    // Each line becomes a row as it is read, so only the slim rows are
    // held, never every line's JSON tree at once.
    let rows = jsonl(path, text, true, "rows", |line, value| {
        row(path, line, value)
    })?;
    let ids = rows
        .iter()
        .filter_map(|r| r.row_id.as_deref().map(|id| (r.line, id)));
    if let Some(d) = sparring_types::first_duplicate(ids) {
        return Err(duplicate_error(path, &d));
    }
    Ok(rows)
}

fn duplicate_error(path: &Path, d: &sparring_types::Duplicate) -> Error {
    Error::invalid(
        path,
        format!("line {}", d.line),
        format!(
            "row_id `{}` is also on line {}; each row must appear once (hint: remove the repeated line)",
            d.id, d.first_line
        ),
    )
}

/// Rows for scoring read one line at a time (a file streamed by its
/// reader, never held whole): the same rows, checks and errors as
/// [`parse_score_rows`], but each row is handed back as its line is read,
/// so a caller that folds them ([`crate::report::ReportTally`]) holds one
/// line at a time. Duplicate `row_id`s are found by
/// [`sparring_types::UniqueIds`] (16 bytes per row) and, as there, reported
/// once every line has parsed ([`ScoreRowLines::finish`]).
#[derive(Debug)]
pub struct ScoreRowLines<'p> {
    path: &'p Path,
    ids: sparring_types::UniqueIds,
    duplicate: Option<sparring_types::Duplicate>,
    rows: u64,
}

impl<'p> ScoreRowLines<'p> {
    /// Rows of the file at `path` (which only names it in errors).
    pub fn new(path: &'p Path) -> Self {
        Self {
            path,
            ids: sparring_types::UniqueIds::default(),
            duplicate: None,
            rows: 0,
        }
    }

    /// The row on 1-based line `number` (`None` for a blank line). `torn`:
    /// the line is the file's last and has no newline after it (a run
    /// killed while writing it).
    ///
    /// # Errors
    ///
    /// As [`parse_score_rows`]: a line that is not a row.
    pub fn line(
        &mut self,
        number: usize,
        line: &str,
        torn: bool,
    ) -> Result<Option<ScoreRow>, Error> {
        if line.trim().is_empty() {
            return Ok(None);
        }
        let map = json_line(self.path, number, line, torn, true)?;
        let row = row(self.path, number, map)?;
        if self.duplicate.is_none() {
            self.duplicate = row
                .row_id
                .as_deref()
                .and_then(|id| self.ids.check(number, id));
        }
        self.rows += 1;
        Ok(Some(row))
    }

    /// Ends the file: the rows read.
    ///
    /// # Errors
    ///
    /// As [`parse_score_rows`]: no row, or a `row_id` on two lines (the
    /// rows handed back then count nothing).
    pub fn finish(self) -> Result<u64, Error> {
        if self.rows == 0 {
            return Err(empty(self.path, "rows"));
        }
        if let Some(d) = &self.duplicate {
            return Err(duplicate_error(self.path, d));
        }
        Ok(self.rows)
    }
}

fn empty(path: &Path, what: &str) -> Error {
    Error::invalid(path, "line 1", format!("no {what}: the file is empty"))
}

/// Parses gold labels from JSONL text; `path` only names the source in
/// errors.
///
/// The gold value is `label` (a boolean, a number in 0..=1, or the text
/// `pass` / `fail`), or `reward` (a number in 0..=1), or `pass` (a
/// boolean); a label passes at 0.5 and above, like `reward`. An `author`
/// that is absent, null or blank leaves the label unmeasured.
pub fn parse_labels(path: &Path, text: &str) -> Result<Vec<Label>, Error> {
    jsonl(path, text, false, "labels", |line, value| {
        label(path, line, &value)
    })
}

/// Non-blank lines as JSON objects, each handed with its 1-based line number
/// to `each` as soon as it is parsed.
fn jsonl<T>(
    path: &Path,
    text: &str,
    resumable: bool,
    what: &str,
    mut each: impl FnMut(usize, Map<String, Value>) -> Result<T, Error>,
) -> Result<Vec<T>, Error> {
    let line_count = text.lines().count();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let torn = number == line_count && !text.ends_with('\n');
        let map = json_line(path, number, line, torn, resumable)?;
        out.push(each(number, map)?);
    }
    if out.is_empty() {
        return Err(empty(path, what));
    }
    Ok(out)
}

/// What a first line that starts with a byte-order mark is told: JSON
/// Lines text has none, and a JSON parser sees only "expected value at
/// line 1 column 1".
pub const BOM_MESSAGE: &str = "the file starts with a byte-order mark (U+FEFF), which JSON Lines does not allow (hint: save it as UTF-8 without a BOM)";

/// One non-blank line as a JSON object. `torn`: the last line, with no
/// newline after it; `resumable`: a rows file `simulate --resume` repairs.
fn json_line(
    path: &Path,
    number: usize,
    line: &str,
    torn: bool,
    resumable: bool,
) -> Result<Map<String, Value>, Error> {
    let value: Value = serde_json::from_str(line).map_err(|e| {
        if number == 1 && line.starts_with('\u{feff}') {
            return Error::invalid(path, "line 1", BOM_MESSAGE);
        }
        let message = match (torn, resumable) {
            (true, true) => "the last line is incomplete (was the run killed while writing?); `simulate --resume` repairs it".to_owned(),
            (true, false) => format!("the last line is incomplete: {e}"),
            (false, _) => format!("not JSON: {}", sparring_types::clip::json_error(&e)),
        };
        Error::invalid(path, format!("line {number}"), message)
    })?;
    let Value::Object(map) = value else {
        return Err(Error::invalid(
            path,
            format!("line {number}"),
            "not a JSON object",
        ));
    };
    Ok(map)
}

fn row(path: &Path, line: usize, mut map: Map<String, Value>) -> Result<ScoreRow, Error> {
    let at = || format!("line {line}");
    if let Some(version) = map.get("schema_version").and_then(Value::as_u64)
        && version > u64::from(SCHEMA_VERSION)
    {
        return Err(Error::invalid(
            path,
            at(),
            format!(
                "row schema_version {version} is newer than this sparring reads ({SCHEMA_VERSION}); upgrade sparring"
            ),
        ));
    }
    let task_id = match map.get("task_id") {
        // A conversation from elsewhere: its task is its opening, as the
        // rows reader derives it.
        None | Some(Value::Null)
            if !map.contains_key("schema_version")
                && matches!(map.get("messages"), Some(Value::Array(_))) =>
        {
            imported_task_id(map.get("messages"))
        }
        None | Some(Value::Null) => {
            return Err(Error::invalid(
                path,
                at(),
                "missing `task_id`: every row needs the task it repeats",
            ));
        }
        Some(v) => id_text(v).filter(|s| !s.trim().is_empty()).ok_or_else(|| {
            Error::invalid(
                path,
                at(),
                format!("`task_id` must be a non-empty string or an integer, not {v}"),
            )
        })?,
    };
    let reward = match map.get("reward") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => {
            let r = n.as_f64().unwrap_or(f64::NAN);
            if !(0.0..=1.0).contains(&r) {
                return Err(Error::invalid(
                    path,
                    at(),
                    format!("reward {n} is outside 0..=1"),
                ));
            }
            Some(r)
        }
        Some(other) => {
            return Err(Error::invalid(
                path,
                at(),
                format!("`reward` must be a number in 0..=1 or null, not {other}"),
            ));
        }
    };
    let situation = map.get("situation").and_then(Value::as_object);
    let mut axes: BTreeMap<String, String> = situation
        .and_then(|s| s.get("axes"))
        .and_then(Value::as_object)
        .map(|axes| {
            axes.iter()
                .filter_map(|(k, v)| scalar_text(v).map(|v| (k.clone(), v)))
                .collect()
        })
        .unwrap_or_default();
    if scheduled_fault_missed(situation) {
        axes.insert(TOOL_CONDITION.to_owned(), NOT_FIRED.to_owned());
    }
    // A tier is one of the closed vocabulary, as `grade` and `export` read
    // it: a category no other stage accepts would be reported here alone.
    let tier = match situation.and_then(|s| s.get("tier")) {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            serde_json::from_value::<sparring_types::Tier>(v.clone())
                .map_err(|e| Error::invalid(path, at(), format!("`situation.tier`: {e}")))?
                .as_str()
                .to_owned(),
        ),
    };
    let rule_text = situation
        .and_then(|s| s.get("rule_text"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let markers = map
        .get("markers")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_f64().filter(|x| x.is_finite()).map(|x| (k.clone(), x)))
                .collect()
        })
        .unwrap_or_default();
    let eval_run = match map.get("lineage").and_then(|l| l.get("eval_run")) {
        Some(Value::Number(n)) if n.as_u64().is_some() => EvalRun::Index(n.as_u64().unwrap_or(0)),
        Some(v) => scalar_text(v).map_or(EvalRun::Index(0), EvalRun::Name),
        None => EvalRun::Index(0),
    };
    let goal = situation.and_then(|s| s.get("goal")).and_then(|g| {
        let kind = g.get("kind").and_then(Value::as_str)?;
        Some(if g.get("fault").is_some_and(|f| !f.is_null()) {
            "fault".to_owned()
        } else {
            kind.to_owned()
        })
    });
    let checks = map.get("conduct_checks").and_then(Value::as_object);
    let goal_met = checks
        .and_then(|c| c.get(GOAL_CHECK))
        .and_then(Value::as_bool);
    let conduct_ok = checks.map(|c| {
        c.iter()
            .filter(|(k, _)| k.as_str() != GOAL_CHECK)
            .all(|(_, v)| v.as_bool() != Some(false))
    });
    let messages = match map.remove("messages") {
        Some(Value::Array(m)) => m,
        _ => Vec::new(),
    };
    let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_owned);
    // `reward` passes while a stage before the last failed the row.
    let overturned = reward.is_some_and(|r| r >= 0.5)
        && map
            .get("grades")
            .and_then(Value::as_array)
            .and_then(|g| g.split_last())
            .is_some_and(|(_, earlier)| {
                earlier.iter().any(|g| {
                    g.get("reward")
                        .and_then(Value::as_f64)
                        .is_some_and(|r| r < 0.5)
                })
            });
    let gold = map
        .get("gold_reward")
        .and_then(Value::as_f64)
        .filter(|r| (0.0..=1.0).contains(r))
        .map(|reward| Gold {
            reward,
            author: text("gold_author")
                .map(|a| a.trim().to_owned())
                .filter(|a| !a.is_empty()),
        });
    Ok(ScoreRow {
        line,
        row_id: map.get("row_id").and_then(id_text),
        task_id,
        reward,
        axes,
        tier,
        rule_text,
        markers,
        eval_run,
        ended_by: text("ended_by"),
        failure_class: text("failure_class"),
        messages,
        goal,
        goal_met,
        conduct_ok,
        overturned,
        gold,
    })
}

fn label(path: &Path, line: usize, map: &Map<String, Value>) -> Result<Label, Error> {
    let at = || format!("line {line}");
    let row_id = match map.get("row_id") {
        None | Some(Value::Null) => {
            return Err(Error::invalid(path, at(), "missing `row_id`"));
        }
        Some(v) => id_text(v).filter(|s| !s.is_empty()).ok_or_else(|| {
            Error::invalid(
                path,
                at(),
                format!("`row_id` must be a non-empty string or an integer, not {v}"),
            )
        })?,
    };
    let bad = |key: &str, v: &Value| {
        Error::invalid(
            path,
            at(),
            format!("`{key}` must be a boolean, a number in 0..=1, `pass` or `fail`, not {v}"),
        )
    };
    let given: Vec<&str> = ["label", "reward", "pass"]
        .into_iter()
        .filter(|k| map.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
    let key = match given.as_slice() {
        [] => {
            return Err(Error::invalid(
                path,
                at(),
                "missing the gold value: give `label` (or `reward`, or `pass`)",
            ));
        }
        [one] => *one,
        more => {
            return Err(Error::invalid(
                path,
                at(),
                format!(
                    "{} all given; a label has one gold value",
                    more.iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    };
    let value = &map[key];
    let reward = match value {
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => match n.as_f64() {
            Some(x) if (0.0..=1.0).contains(&x) => x,
            _ => return Err(bad(key, value)),
        },
        Value::String(s) if key == "label" => match s.trim().to_ascii_lowercase().as_str() {
            "pass" | "true" => 1.0,
            "fail" | "false" => 0.0,
            _ => return Err(bad(key, value)),
        },
        _ => return Err(bad(key, value)),
    };
    let pass = reward >= 0.5;
    let author = match map.get("author") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.trim().to_owned()).filter(|s| !s.is_empty()),
        Some(v) => {
            return Err(Error::invalid(
                path,
                at(),
                format!("`author` must be a string or null, not {v}"),
            ));
        }
    };
    Ok(Label {
        line,
        row_id,
        reward,
        pass,
        author,
    })
}

/// The task id of a conversation without one: its first system and user
/// messages, as `sparring_types::row::imported_task_id` reads them.
fn imported_task_id(messages: Option<&Value>) -> String {
    let messages: Vec<sparring_types::Message> = messages
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|m| serde_json::from_value(m.clone()).ok())
                .collect()
        })
        .unwrap_or_default();
    let first = |role: sparring_types::Role| {
        messages
            .iter()
            .find(|m| m.role == role)
            .map_or("", sparring_types::Message::content_str)
    };
    sparring_types::row::imported_task_id(
        first(sparring_types::Role::System),
        first(sparring_types::Role::User),
    )
}

/// An id: a string, or an integer as its decimal text.
fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) if n.is_u64() || n.is_i64() => Some(n.to_string()),
        _ => None,
    }
}

/// A string, or a number or boolean as text.
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Result<Vec<ScoreRow>, crate::Error> {
        parse_score_rows(Path::new("r.jsonl"), text)
    }

    #[test]
    fn only_task_id_and_reward_are_needed() {
        let r = rows("{\"task_id\": \"a\", \"reward\": 1}\n\n{\"task_id\": 7}\n").unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].reward, Some(1.0));
        assert_eq!(r[1].task_id, "7");
        assert_eq!(r[1].line, 3);
        assert_eq!(r[1].reward, None);
        assert_eq!(r[1].eval_run, EvalRun::Index(0));
        assert!(r[1].categories().next().is_none());
    }

    #[test]
    fn an_unknown_tier_is_refused_as_the_rows_reader_refuses_it() {
        let e = rows(r#"{"task_id":"t","reward":1,"situation":{"tier":"legendary"}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("at line 1: `situation.tier`: unknown tier `legendary`"),
            "{e}"
        );
        let e = rows(r#"{"task_id":"t","reward":1,"situation":{"tier":3}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("must be a string"), "{e}");
        let r = rows(r#"{"task_id":"t","reward":1,"situation":{"tier":null}}"#).unwrap();
        assert_eq!(r[0].tier, None);
    }

    #[test]
    fn optional_fields_are_read_when_well_formed() {
        let line = r#"{"task_id":"t","reward":0.4,"row_id":"r1","situation":{"axes":{"tool":"x","n":2,"o":{}},"tier":"seed"},"markers":{"turns":3,"bad":"x"},"lineage":{"eval_run":"b"},"ended_by":"agent_done","messages":[{"role":"user","content":"hi"}]}"#;
        let r = &rows(line).unwrap()[0];
        assert_eq!(r.passed(), Some(false));
        assert_eq!(
            r.categories().collect::<Vec<_>>(),
            ["n=2", "tool=x", "tier=seed"]
        );
        assert_eq!(r.markers.len(), 1);
        assert_eq!(r.eval_run, EvalRun::Name("b".into()));
        assert_eq!(r.messages.len(), 1);
    }

    #[test]
    fn goal_kinds_are_categories_with_goal_and_conduct_rates() {
        let line = |task: &str, reward: u8, kind: &str, fault: bool, goal: bool, conduct: bool| {
            let fault = if fault { r#","fault":"timeout""# } else { "" };
            format!(
                r#"{{"task_id":"{task}","reward":{reward},"situation":{{"axes":{{"tool":"t"}},"goal":{{"kind":"{kind}"{fault}}}}},"conduct_checks":{{"goal":{goal},"claimed_without_call":{conduct}}}}}"#
            )
        };
        let text = [
            line("a", 1, "act", false, true, true),
            line("b", 0, "act", false, false, true),
            line("c", 0, "decline", false, true, false),
            line("d", 0, "inform", true, false, false),
        ]
        .join("\n");
        let r = rows(&text).unwrap();
        assert_eq!(r[3].goal.as_deref(), Some("fault"));
        let report = crate::report::report(&r, &crate::report::ReportOptions::default()).unwrap();
        assert_eq!(report.goal_rate, Some(0.5));
        assert_eq!(report.conduct_rate, Some(0.5));
        let act = &report.by_category["goal=act"];
        assert_eq!(
            (act.n_rows, act.goal_rate, act.conduct_rate),
            (2, Some(0.5), Some(1.0))
        );
        let decline = &report.by_category["goal=decline"];
        assert_eq!(
            (decline.goal_rate, decline.conduct_rate),
            (Some(1.0), Some(0.0))
        );
        let shown = crate::report::render(&report);
        assert!(
            shown.contains("goal met 50.0%  conduct clean 50.0%"),
            "{shown}"
        );
        let row = shown.lines().find(|l| l.starts_with("goal=act")).unwrap();
        assert!(row.contains("50.0%") && row.contains("100.0%"), "{row}");
        // Without goals the columns stay out.
        let plain =
            rows(r#"{"task_id":"a","reward":1,"situation":{"axes":{"tool":"t"}}}"#).unwrap();
        let shown = crate::report::render(
            &crate::report::report(&plain, &crate::report::ReportOptions::default()).unwrap(),
        );
        assert!(!shown.contains("conduct"), "{shown}");
        // delta compares per goal kind too.
        let d = crate::delta::delta(&r, &r, ("a", "b"), &crate::delta::DeltaOptions::default())
            .unwrap();
        assert!(d.by_category.contains_key("goal=act"));
        assert!(d.by_category.contains_key("goal=fault"));
    }

    #[test]
    fn a_scheduled_fault_that_never_fired_counts_as_not_fired() {
        let line = |faults: &str| {
            format!(
                r#"{{"task_id":"t","reward":1,"situation":{{"axes":{{"tool":"get_order","tool_condition":"timeout"}},"faults":{faults}}}}}"#
            )
        };
        let condition = |faults: &str| {
            rows(&line(faults)).unwrap()[0]
                .axes
                .get(TOOL_CONDITION)
                .cloned()
                .unwrap()
        };
        let fired =
            r#"[{"tool":"get_order","kind":"timeout","source":"scheduled","fired":true,"call":1}]"#;
        let missed =
            r#"[{"tool":"get_order","kind":"timeout","source":"scheduled","fired":false}]"#;
        let random_only = r#"[{"tool":"get_order","kind":"empty","source":"random","fired":true,"call":2},{"tool":"get_order","kind":"timeout","source":"scheduled","fired":false}]"#;
        let legacy = r#"[{"tool":"get_order","kind":"timeout","source":"scheduled"}]"#;
        assert_eq!(condition(fired), "timeout");
        assert_eq!(condition(missed), NOT_FIRED);
        assert_eq!(condition(random_only), NOT_FIRED);
        assert_eq!(condition("[]"), NOT_FIRED);
        assert_eq!(condition(legacy), "timeout");
    }

    #[test]
    fn rule_texts_stand_beside_policy_rule_categories() {
        let text = concat!(
            r#"{"task_id":"a","reward":1,"situation":{"axes":{"policy_rule":"never-guess-order-number","tool":"get_order"},"tier":"seed","rule_text":"Never guess an order number."}}"#,
            "\n",
            r#"{"task_id":"b","reward":0,"situation":{"axes":{"policy_rule":"none","tool":"get_order"},"tier":"seed"}}"#,
            "\n"
        );
        let r = rows(text).unwrap();
        let texts = rule_texts(&r);
        assert_eq!(texts.len(), 1);
        assert_eq!(
            texts["never-guess-order-number"],
            "Never guess an order number."
        );
        let report = crate::report::report(&r, &crate::report::ReportOptions::default()).unwrap();
        assert_eq!(report.rule_texts, texts);
        let shown = crate::report::render(&report);
        let line = shown
            .lines()
            .find(|l| l.starts_with("policy_rule=never-guess-order-number"))
            .unwrap();
        assert!(line.ends_with("  Never guess an order number."), "{line}");
        assert!(
            shown
                .lines()
                .find(|l| l.starts_with("policy_rule=none"))
                .is_some_and(|l| !l.ends_with(' ')),
            "{shown}"
        );
        let d = crate::delta::delta(&r, &r, ("a", "b"), &crate::delta::DeltaOptions::default())
            .unwrap();
        assert_eq!(d.rule_texts, texts);
        assert!(
            crate::delta::render(&d).contains("Never guess an order number."),
            "{}",
            crate::delta::render(&d)
        );
    }

    #[test]
    fn bad_rows_name_file_and_line() {
        let e = rows("{\"task_id\": \"a\"}\n{\"reward\": 1}\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "`r.jsonl`: at line 2: missing `task_id`: every row needs the task it repeats"
        );
        let e = rows("{\"task_id\": \"a\", \"reward\": \"high\"}\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 1") && e.contains("`reward` must be a number"),
            "{e}"
        );
        let e = rows("{\"task_id\": \"a\", \"reward\": 2}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside 0..=1"), "{e}");
        let e = rows("\n\n").unwrap_err().to_string();
        assert!(e.contains("no rows: the file is empty"), "{e}");
        let e = rows("[1]\n").unwrap_err().to_string();
        assert!(e.contains("not a JSON object"), "{e}");
        let e = rows("{\"task_id\": \"a\"}\n{\"task_id\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("incomplete"), "{e}");
        let e = rows("{\"task_id\": \"a\", \"schema_version\": 99}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("newer"), "{e}");
    }

    #[test]
    fn labels() {
        let p = Path::new("l.jsonl");
        let l = parse_labels(
            p,
            "{\"row_id\":\"a\",\"label\":true,\"author\":\"ann\"}\n{\"row_id\":\"b\",\"label\":0.2}\n{\"row_id\":3,\"label\":\"PASS\",\"author\":\" \"}\n",
        )
        .unwrap();
        assert_eq!(l[0].author.as_deref(), Some("ann"));
        assert!(l[0].pass && !l[1].pass && l[2].pass);
        assert_eq!(l[1].author, None);
        assert_eq!(l[2].author, None);
        assert_eq!(l[2].row_id, "3");
        let e = parse_labels(p, "{\"row_id\":\"a\",\"label\":\"maybe\"}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`l.jsonl`: at line 1: `label` must be"), "{e}");
        let e = parse_labels(p, "{\"label\":true}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing `row_id`"), "{e}");
    }
}
