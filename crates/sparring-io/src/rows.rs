//! Rows on disk: `rows.jsonl` (one row per line) and `run.json`.

use crate::Error;
use sparring_types::{Counts, Row, RowCounter, RowSink, RunSummary, SCHEMA_VERSION, SinkError};
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Appends rows to a JSONL file, one line per row, each written and flushed
/// before [`RowWriter::write`] returns: a killed run loses only the rows in
/// flight, and every line on disk is a whole row.
#[derive(Debug)]
pub struct RowWriter {
    file: File,
    path: PathBuf,
    written: u64,
}

impl RowWriter {
    /// Creates the file, replacing any earlier one.
    pub fn create(path: &Path) -> Result<Self, Error> {
        let file = File::create(path).map_err(|e| Error::write(path, &e))?;
        Ok(Self {
            file,
            path: path.to_owned(),
            written: 0,
        })
    }

    /// Opens the file for appending, creating it if needed.
    pub fn append(path: &Path) -> Result<Self, Error> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| Error::write(path, &e))?;
        Ok(Self {
            file,
            path: path.to_owned(),
            written: 0,
        })
    }

    /// Writes one row as one line and flushes it.
    ///
    /// # Errors
    ///
    /// [`Error::Write`] when the row cannot be encoded or written.
    pub fn write(&mut self, row: &Row) -> Result<(), Error> {
        let mut line = serde_json::to_string(row).map_err(|e| Error::Write {
            path: self.path.clone(),
            message: format!("cannot encode row `{}`: {e}", row.row_id),
        })?;
        line.push('\n');
        // One write call per line keeps lines whole even if another process
        // reads the file while it grows.
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| Error::write(&self.path, &e))?;
        self.written += 1;
        Ok(())
    }

    /// Rows written through this writer.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl RowSink for RowWriter {
    fn write(&mut self, row: &Row) -> Result<(), SinkError> {
        Self::write(self, row).map_err(|e| SinkError(e.to_string()))
    }
}

/// Reads every row of a JSONL file. Blank lines are skipped; anything else
/// that is not a row is an error naming its line.
pub fn read_rows(path: &Path) -> Result<Vec<Row>, Error> {
    let text = crate::text::read_utf8(path)?;
    parse_rows(path, &text)
}

/// Parses JSONL text into rows; `path` only names the source in errors.
/// A `row_id` that appears twice is an error naming both lines.
///
/// A line that is not a sparring row (no `schema_version`) but holds a
/// conversation (`messages`, with `tools`, `task_id`, `row_id` and
/// `reward` optional) is imported: the ids it lacks are derived
/// ([`sparring_types::row::imported_task_id`], `imported_row_id`), the rest
/// defaulted, and agent, writer, person and search arm say `imported`.
pub fn parse_rows(path: &Path, text: &str) -> Result<Vec<Row>, Error> {
    let line_count = text.lines().count();
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    // Identical imported conversations seen so far, for their row ids.
    let mut seen: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    // The distinct tool lists met so far: rows with the same list share it.
    let mut tool_lists = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut row = parse_line(path, text, line, i + 1, line_count, &mut seen)?;
        row.tools
            .share(&mut tool_lists, crate::defaults::ROWS_TOOL_LISTS_SHARED);
        rows.push(row);
        lines.push(i + 1);
    }
    if rows.is_empty() {
        return Err(Error::invalid(path, "line 1", "no rows: the file is empty"));
    }
    unique_row_ids(
        path,
        lines
            .iter()
            .copied()
            .zip(rows.iter().map(|r| r.row_id.as_str())),
    )?;
    Ok(rows)
}

/// Refuses a rows file in which one `row_id` appears twice (a file written
/// twice into, or two files joined): every later stage would count the row
/// twice. The error names the id and both lines.
pub fn unique_row_ids<'a>(
    path: &Path,
    ids: impl IntoIterator<Item = (usize, &'a str)>,
) -> Result<(), Error> {
    match sparring_types::first_duplicate(ids) {
        None => Ok(()),
        Some(d) => Err(Error::invalid(
            path,
            format!("line {}", d.line),
            format!(
                "row_id `{}` is also on line {}; each row must appear once (hint: remove the repeated line)",
                d.id, d.first_line
            ),
        )),
    }
}

fn parse_line(
    path: &Path,
    text: &str,
    line: &str,
    number: usize,
    line_count: usize,
    seen: &mut std::collections::BTreeMap<String, u64>,
) -> Result<Row, Error> {
    // The fast path parses straight into a row; only a line that fails is
    // parsed again as plain JSON to import it or say precisely what is
    // wrong.
    let row: Row = match serde_json::from_str::<Row>(line) {
        Ok(row) if row.schema_version <= SCHEMA_VERSION => row,
        _ => match serde_json::from_str::<serde_json::Value>(line) {
            Ok(serde_json::Value::Object(map))
                if !map.contains_key("schema_version") && map.contains_key("messages") =>
            {
                import(path, number, &map, seen)?
            }
            _ => return Err(line_error(path, text, line, number, line_count)),
        },
    };
    if let Some(r) = row.reward
        && !(0.0..=1.0).contains(&r)
    {
        return Err(Error::invalid(
            path,
            format!("line {number}"),
            format!("reward {r} is outside 0..=1"),
        ));
    }
    Ok(row)
}

/// Why one line is not a row, named by its line number.
fn line_error(path: &Path, text: &str, line: &str, number: usize, line_count: usize) -> Error {
    let value: serde_json::Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(_) if number == 1 && line.starts_with('\u{feff}') => {
            return Error::invalid(path, "line 1", sparring_score::input::BOM_MESSAGE);
        }
        Err(e) => {
            let torn = number == line_count && !text.ends_with('\n');
            let message = if torn {
                "the last line is incomplete (was the run killed while writing?); `simulate --resume` repairs it".to_owned()
            } else {
                format!("not JSON: {}", sparring_types::clip::json_error(&e))
            };
            return Error::invalid(path, format!("line {number}"), message);
        }
    };
    if let Some(version) = value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
        && version > u64::from(SCHEMA_VERSION)
    {
        return Error::invalid(
            path,
            format!("line {number}"),
            format!(
                "row schema_version {version} is newer than this sparring reads ({SCHEMA_VERSION}); upgrade sparring"
            ),
        );
    }
    let Some(map) = value.as_object() else {
        return Error::invalid(
            path,
            format!("line {number}"),
            "not a row: a line must be a JSON object",
        );
    };
    let missing: Vec<String> = sparring_types::row::REQUIRED_FIELDS
        .iter()
        .filter(|f| !map.contains_key(**f))
        .map(|f| format!("`{f}`"))
        .collect();
    let message = if map.contains_key("schema_version") {
        if missing.is_empty() {
            match serde_json::from_value::<Row>(value.clone()) {
                Err(e) => format!("not a sparring row: {e}"),
                Ok(_) => "not a sparring row".to_owned(),
            }
        } else {
            format!("not a sparring row: missing {}", missing.join(", "))
        }
    } else {
        format!(
            "neither a conversation nor a sparring row: a conversation needs `messages` (`tools`, `task_id`, `row_id` and `reward` are optional), which this line lacks; as a sparring row it lacks {}",
            missing.join(", ")
        )
    };
    Error::invalid(path, format!("line {number}"), message)
}

/// A conversation sparring did not write, as a row (see [`parse_rows`]).
fn import(
    path: &Path,
    number: usize,
    map: &serde_json::Map<String, serde_json::Value>,
    seen: &mut std::collections::BTreeMap<String, u64>,
) -> Result<Row, Error> {
    use serde_json::Value;
    use sparring_types::row::{IMPORTED, imported_row_id, imported_task_id};
    let at = |field: &str| format!("line {number}, `{field}`");
    let messages_value = map.get("messages").cloned().unwrap_or(Value::Null);
    let Value::Array(items) = &messages_value else {
        return Err(Error::invalid(
            path,
            at("messages"),
            "must be a list of chat messages",
        ));
    };
    let mut messages = Vec::with_capacity(items.len());
    for (i, m) in items.iter().enumerate() {
        messages.push(
            serde_json::from_value::<sparring_types::Message>(m.clone()).map_err(|e| {
                Error::invalid(
                    path,
                    at(&format!("messages/{i}")),
                    format!("not a chat message: {e}"),
                )
            })?,
        );
    }
    let tools_value = map
        .get("tools")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    let tools = match &tools_value {
        Value::Array(t) => t.clone(),
        Value::Null => Vec::new(),
        _ => return Err(Error::invalid(path, at("tools"), "must be a list of tools")),
    };
    let id = |field: &str| -> Result<Option<String>, Error> {
        match map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(Value::Number(n)) if n.is_u64() || n.is_i64() => Ok(Some(n.to_string())),
            Some(_) => Err(Error::invalid(
                path,
                at(field),
                "must be a non-empty string or an integer",
            )),
        }
    };
    let first = |role: sparring_types::Role| {
        messages
            .iter()
            .find(|m| m.role == role)
            .map_or("", sparring_types::Message::content_str)
    };
    let task_id = match id("task_id")? {
        Some(t) => t,
        None => imported_task_id(
            first(sparring_types::Role::System),
            first(sparring_types::Role::User),
        ),
    };
    let row_id = if let Some(r) = id("row_id")? {
        r
    } else {
        let key = sparring_types::hash::short_id(
            "line",
            &serde_json::json!([&task_id, &messages_value, &tools_value]),
        );
        let n = seen.entry(key).or_default();
        let id = imported_row_id(&task_id, &messages_value, &tools_value, *n);
        *n += 1;
        id
    };
    let reward = match map.get("reward") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|r| (0.0..=1.0).contains(r))
                .ok_or_else(|| {
                    Error::invalid(path, at("reward"), "must be a number in 0..=1 or null")
                })?,
        ),
    };
    // What the agent did, as far as a foreign row tells: its tool calls in
    // order.
    let behavior_signature = sparring_types::hash::short_id(
        "sig",
        &serde_json::json!({"imported": messages
            .iter()
            .flat_map(|m| m.tool_calls.iter().map(|c| c.function.name.as_str()))
            .collect::<Vec<_>>()}),
    );
    let scenario_id =
        sparring_types::hash::short_id("scn", &serde_json::json!({"imported": &task_id}));
    Ok(Row {
        tools: tools.into(),
        situation: sparring_types::Situation {
            tier: sparring_types::Tier::Imported,
            ..sparring_types::Situation::default()
        },
        reward,
        behavior_signature,
        model_version: IMPORTED.to_owned(),
        writer_model: IMPORTED.to_owned(),
        user_model: IMPORTED.to_owned(),
        lineage: sparring_types::Lineage {
            run_id: IMPORTED.to_owned(),
            arm: sparring_types::Arm::Imported,
            ..sparring_types::Lineage::default()
        },
        ..Row::new(
            row_id,
            task_id,
            scenario_id,
            messages,
            sparring_types::EndedBy::AgentDone,
        )
    })
}

/// Cuts an incomplete last line (a row torn by a killed run) off a rows file.
/// Returns whether anything was cut. Whole lines are never touched.
pub fn repair_torn_line(path: &Path) -> Result<bool, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, &e))?;
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(false);
    }
    let keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| Error::write(path, &e))?;
    file.set_len(keep as u64)
        .map_err(|e| Error::write(path, &e))?;
    Ok(true)
}

/// Row counts of a rows file, read one line at a time so memory does not
/// grow with the file. Lines that are not rows are errors naming the line.
pub fn count_file(path: &Path) -> Result<Counts, Error> {
    let mut counter = RowCounter::default();
    crate::text::for_each_line(path, |number, line, _| {
        if line.trim().is_empty() {
            return Ok(());
        }
        let row = parse_rows(path, line)
            .map_err(|_| Error::invalid(path, format!("line {number}"), "not a sparring row"))?
            .pop();
        if let Some(row) = row {
            counter.add(&row);
        }
        Ok(())
    })?;
    Ok(counter.counts())
}

/// Writes `run.json` into `dir`, replacing it atomically.
pub fn write_summary(dir: &Path, summary: &RunSummary) -> Result<PathBuf, Error> {
    let path = dir.join("run.json");
    let tmp = dir.join("run.json.tmp");
    let mut text = serde_json::to_string_pretty(summary).map_err(|e| Error::Write {
        path: path.clone(),
        message: e.to_string(),
    })?;
    text.push('\n');
    std::fs::write(&tmp, text).map_err(|e| Error::write(&tmp, &e))?;
    std::fs::rename(&tmp, &path).map_err(|e| Error::write(&path, &e))?;
    Ok(path)
}

/// The rows file a path names: the path itself, or `rows.jsonl` inside a run
/// directory.
pub fn rows_path(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("rows.jsonl")
    } else {
        path.to_owned()
    }
}

/// One gold label: a row id, the reward a person gave it, and who.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    /// The row labelled.
    pub row_id: String,
    /// 0..=1.
    pub reward: f64,
    /// Who gave it, when the line says (`author`).
    pub author: Option<String>,
}

/// Reads a labels file in the one labels format
/// ([`sparring_score::input::parse_labels`]): JSON lines `{"row_id",
/// "label" | "reward" | "pass", "author"?}`, `label` a boolean, a number in
/// 0..=1 or `pass` / `fail`. Every error names the line.
pub fn read_labels(path: &Path) -> Result<Vec<Label>, Error> {
    Ok(read_gold_labels(path)?
        .into_iter()
        .map(|l| Label {
            row_id: l.row_id,
            reward: l.reward,
            author: l.author,
        })
        .collect())
}

/// Reads the rows of a JSONL file for scoring, leniently (only `task_id` and
/// `reward` are required): [`sparring_score::input::parse_score_rows`].
pub fn read_score_rows(path: &Path) -> Result<Vec<sparring_score::input::ScoreRow>, Error> {
    let mut rows = Vec::new();
    for_each_score_row(path, |row| rows.push(row))?;
    Ok(rows)
}

/// Reads the rows of a JSONL file for scoring a line at a time, handing each
/// to `each` as it is read: the file is never held whole, only the line
/// being read ([`sparring_score::input::ScoreRowLines`]: the same checks
/// and errors as [`read_score_rows`]). Returns the rows read.
pub fn for_each_score_row(
    path: &Path,
    mut each: impl FnMut(sparring_score::input::ScoreRow),
) -> Result<u64, Error> {
    let mut lines = sparring_score::input::ScoreRowLines::new(path);
    crate::text::for_each_line(path, |number, line, torn| {
        if let Some(row) = lines.line(number, line, torn)? {
            each(row);
        }
        Ok(())
    })?;
    Ok(lines.finish()?)
}

/// Reads a gold labels file for `judge-agreement`:
/// [`sparring_score::input::parse_labels`].
pub fn read_gold_labels(path: &Path) -> Result<Vec<sparring_score::input::Label>, Error> {
    let text = crate::text::read_utf8(path)?;
    Ok(sparring_score::input::parse_labels(path, &text)?)
}

/// Reads held-out rows (a rows file or a run directory) as a decontamination
/// reference of `n`-grams.
pub fn read_holdout(
    path: &Path,
    n: usize,
) -> Result<(Vec<Row>, sparring_select::decontam::Reference), Error> {
    // A run directory is its rows, as everywhere rows are read.
    let path = &rows_path(path);
    let text = crate::text::read_utf8(path)?;
    let rows = parse_rows(path, &text)?;
    let reference =
        sparring_select::decontam::Reference::from_rows(&path.display().to_string(), &rows, n);
    Ok((rows, reference))
}

/// Reads a traces file (JSON Lines or JSON) as a decontamination reference.
pub fn read_traces(path: &Path, n: usize) -> Result<sparring_select::decontam::Reference, Error> {
    let path = &rows_path(path);
    let text = crate::text::read_utf8(path)?;
    Ok(sparring_select::decontam::Reference::from_json_text(
        &path.display().to_string(),
        &text,
        n,
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn line(id: &str, tool: &str) -> String {
        let mut row = Row::new(
            id,
            "task_a",
            "scn_a",
            Vec::new(),
            sparring_types::EndedBy::AgentDone,
        );
        row.tools = vec![json!({"type": "function", "function": {"name": tool}})].into();
        serde_json::to_string(&row).unwrap()
    }

    #[test]
    fn rows_with_the_same_tools_share_one_copy() {
        let text = [
            line("r1", "get_order"),
            line("r2", "get_order"),
            line("r3", "cancel_order"),
            line("r4", "get_order"),
            line("r5", "cancel_order"),
        ]
        .join("\n");
        let rows = parse_rows(Path::new("rows.jsonl"), &text).unwrap();
        let at = |i: usize| rows[i].tools.as_ptr();
        assert_eq!(at(0), at(1));
        assert_eq!(at(0), at(3));
        assert_eq!(at(2), at(4));
        assert_ne!(at(0), at(2));
        // Shared, they still read and write as each row's own list.
        assert_eq!(rows[2].tools[0]["function"]["name"], "cancel_order");
        let again: Row = serde_json::from_str(&serde_json::to_string(&rows[3]).unwrap()).unwrap();
        assert_eq!(again, rows[3]);
    }
}
