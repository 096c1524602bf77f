//! The Parquet export: a Hugging Face dataset folder.
//!
//! `data/train-00000-of-00001.parquet` and `data/holdout-00000-of-00001.parquet`
//! (split names come from the file names) and a `README.md` dataset card
//! whose YAML `configs` names both splits. Columns are typed: `messages` is
//! `list<struct<role, content, tool_calls: list<struct<id, type,
//! function: struct<name, arguments>>>, tool_call_id, name>>`; free-form JSON
//! (tool-call arguments, tools, situation, persona, markers, …) is a UTF-8
//! string marked with the `arrow.json` extension, which `datasets` reads
//! back as parsed JSON and older readers as a string.

use crate::Error;
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, ListArray, RecordBatch, StringArray, StructArray,
    UInt64Array,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde_json::Value;
use sparring_types::Row;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn json_field(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable).with_metadata(HashMap::from([(
        "ARROW:extension:name".to_owned(),
        "arrow.json".to_owned(),
    )]))
}

fn function_fields() -> Fields {
    Fields::from(vec![
        Field::new("name", DataType::Utf8, false),
        json_field("arguments", false),
    ])
}

fn call_fields() -> Fields {
    Fields::from(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("type", DataType::Utf8, false),
        Field::new("function", DataType::Struct(function_fields()), false),
    ])
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

fn message_fields() -> Fields {
    Fields::from(vec![
        Field::new("role", DataType::Utf8, false),
        Field::new("content", DataType::Utf8, true),
        Field::new("tool_calls", list_of(DataType::Struct(call_fields())), true),
        Field::new("tool_call_id", DataType::Utf8, true),
        Field::new("name", DataType::Utf8, true),
    ])
}

/// The schema of both splits.
pub(crate) fn schema() -> Schema {
    let json_item = Arc::new(json_field("item", true));
    Schema::new(vec![
        Field::new("row_id", DataType::Utf8, false),
        Field::new("task_id", DataType::Utf8, false),
        Field::new("scenario_id", DataType::Utf8, false),
        Field::new("reward", DataType::Float64, true),
        Field::new("passed", DataType::Boolean, true),
        Field::new("ended_by", DataType::Utf8, false),
        Field::new("failure_class", DataType::Utf8, true),
        Field::new("behavior_signature", DataType::Utf8, false),
        Field::new("tier", DataType::Utf8, false),
        Field::new("world_seed", DataType::UInt64, false),
        Field::new("seed", DataType::UInt64, false),
        Field::new("model_version", DataType::Utf8, false),
        Field::new(
            "messages",
            list_of(DataType::Struct(message_fields())),
            false,
        ),
        Field::new("tools", DataType::List(json_item), false),
        json_field("situation", false),
        json_field("persona", false),
        json_field("markers", false),
        json_field("conduct_checks", true),
        json_field("lineage", false),
    ])
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    // Serialising plain data (maps of strings and numbers) cannot fail; an
    // empty object stands in if it ever did.
    serde_json::to_string(value).unwrap_or_else(|_| "{}".to_owned())
}

fn strings<'a>(values: impl IntoIterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(StringArray::from_iter(values))
}

fn owned(values: Vec<Option<String>>) -> ArrayRef {
    Arc::new(StringArray::from_iter(values))
}

fn arrow_err(path: &Path, e: &impl std::fmt::Display) -> Error {
    Error::Write {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

fn batch(rows: &[&Row], path: &Path) -> Result<RecordBatch, Error> {
    // Messages, flattened across rows, and their tool calls flattened across
    // messages; offsets rebuild the nesting.
    let mut msg_per_row = Vec::with_capacity(rows.len());
    let (mut role, mut content, mut call_id_of_tool, mut name) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut calls_per_msg, mut has_calls) = (Vec::new(), Vec::new());
    let (mut call_id, mut call_type, mut fn_name, mut fn_args) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut tools_per_row = Vec::with_capacity(rows.len());
    let mut tools = Vec::new();
    for row in rows {
        msg_per_row.push(row.messages.len());
        for m in &row.messages {
            role.push(Some(match m.role {
                sparring_types::Role::System => "system",
                sparring_types::Role::User => "user",
                sparring_types::Role::Assistant => "assistant",
                sparring_types::Role::Tool => "tool",
            }));
            content.push(m.content.as_deref());
            call_id_of_tool.push(m.tool_call_id.as_deref());
            name.push(m.name.as_deref());
            calls_per_msg.push(m.tool_calls.len());
            has_calls.push(!m.tool_calls.is_empty());
            for c in &m.tool_calls {
                call_id.push(Some(c.id.as_str()));
                call_type.push(Some("function"));
                fn_name.push(Some(c.function.name.as_str()));
                let (args, _) = super::messages::arguments_object(&c.function.arguments);
                fn_args.push(Some(args.to_string()));
            }
        }
        tools_per_row.push(row.tools.len());
        tools.extend(row.tools.iter().map(|t: &Value| Some(t.to_string())));
    }
    // Arrow's constructors fail only on mismatched lengths: a write error
    // naming the file, never a panic.
    let structs = |fields: Fields, columns: Vec<ArrayRef>| {
        StructArray::try_new(fields, columns, None).map_err(|e| arrow_err(path, &e))
    };
    let lists = |item: Field, lengths: Vec<usize>, values: ArrayRef, nulls: Option<NullBuffer>| {
        ListArray::try_new(
            Arc::new(item),
            OffsetBuffer::from_lengths(lengths),
            values,
            nulls,
        )
        .map_err(|e| arrow_err(path, &e))
    };
    let item = |fields: Fields| Field::new("item", DataType::Struct(fields), true);
    let function = structs(function_fields(), vec![strings(fn_name), owned(fn_args)])?;
    let calls = structs(
        call_fields(),
        vec![strings(call_id), strings(call_type), Arc::new(function)],
    )?;
    let tool_calls = lists(
        item(call_fields()),
        calls_per_msg,
        Arc::new(calls),
        Some(NullBuffer::from(has_calls)),
    )?;
    let messages = structs(
        message_fields(),
        vec![
            strings(role),
            strings(content),
            Arc::new(tool_calls),
            strings(call_id_of_tool),
            strings(name),
        ],
    )?;
    let messages = lists(
        item(message_fields()),
        msg_per_row,
        Arc::new(messages),
        None,
    )?;
    let tools = lists(json_field("item", true), tools_per_row, owned(tools), None)?;

    let col = |f: &dyn Fn(&Row) -> Option<String>| owned(rows.iter().map(|r| f(r)).collect());
    let columns: Vec<ArrayRef> = vec![
        col(&|r| Some(r.row_id.clone())),
        col(&|r| Some(r.task_id.clone())),
        col(&|r| Some(r.scenario_id.clone())),
        Arc::new(rows.iter().map(|r| r.reward).collect::<Float64Array>()),
        Arc::new(
            rows.iter()
                .map(|r| r.reward.map(|x| x >= crate::defaults::PASS_THRESHOLD))
                .collect::<BooleanArray>(),
        ),
        col(&|r| Some(r.ended_by.as_str().to_owned())),
        col(&|r| r.failure_class.clone()),
        col(&|r| Some(r.behavior_signature.clone())),
        col(&|r| Some(r.situation.tier.as_str().to_owned())),
        Arc::new(UInt64Array::from_iter_values(
            rows.iter().map(|r| r.situation.world_seed),
        )),
        Arc::new(UInt64Array::from_iter_values(rows.iter().map(|r| r.seed))),
        col(&|r| Some(r.model_version.clone())),
        Arc::new(messages),
        Arc::new(tools),
        col(&|r| Some(to_json(&r.situation))),
        col(&|r| Some(to_json(&r.persona))),
        col(&|r| Some(to_json(&r.markers))),
        col(&|r| r.conduct_checks.as_ref().map(to_json)),
        col(&|r| Some(to_json(&r.lineage))),
    ];
    RecordBatch::try_new(Arc::new(schema()), columns).map_err(|e| arrow_err(path, &e))
}

fn write_split(path: &Path, rows: &[&Row]) -> Result<(), Error> {
    let batch = batch(rows, path)?;
    let file = std::fs::File::create(path).map_err(|e| Error::write(path, &e))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut writer =
        ArrowWriter::try_new(file, batch.schema(), Some(props)).map_err(|e| arrow_err(path, &e))?;
    writer.write(&batch).map_err(|e| arrow_err(path, &e))?;
    writer.close().map_err(|e| arrow_err(path, &e))?;
    Ok(())
}

/// The dataset card: YAML configs naming both splits, then what the columns
/// mean.
pub(crate) fn card(train: usize, holdout: usize, extra: &[(&str, String)]) -> String {
    let mut splits = String::new();
    for (name, n) in [("train", train), ("holdout", holdout)] {
        if n > 0 {
            let _ = writeln!(splits, "  - split: {name}\n    path: data/{name}-*.parquet");
        }
    }
    // `datasets` picks one builder for a whole folder from its files'
    // extensions, so the JSONL training files cannot be configs beside the
    // Parquet split; the card says how to load them instead.
    let mut others = String::new();
    if !extra.is_empty() {
        others.push_str("Training files, each loaded with `load_dataset(\"json\", data_files=PATH)`\n(shapes in sparring's `docs/export.md`):\n\n");
        for (name, path) in extra {
            let _ = writeln!(others, "- `{name}`: `{path}`");
        }
        others.push('\n');
    }
    // The Hub's recommended metadata (its dataset-card docs): the rows are
    // the user's, so their licence is theirs to state (`other` until then);
    // the offline writer and person speak English.
    let size = size_category(train + holdout);
    format!(
        "---\nconfigs:\n- config_name: default\n  default: true\n  data_files:\n{splits}pretty_name: sparring rows\nlicense: other\nlanguage:\n- en\ntask_categories:\n- text-generation\nsize_categories:\n- {size}\ntags:\n- tool-calling\n- agents\n- synthetic\n- sparring\n---\n\n\
# sparring rows\n\n\
Conversations of a tool-calling agent with simulated people in a sandbox world, made by\n\
[sparring](https://github.com/sparring-dev/sparring): {train} rows in `train`, {holdout} in\n\
`holdout` (a split with no rows has no file). Tasks never straddle the splits.\n\n\
Columns: `row_id`, `task_id` (rows with the same task are repeats of one ask in one\n\
situation), `scenario_id`, `reward` (0..1, null when ungraded), `passed` (`reward >= 0.5`),\n\
`ended_by`, `failure_class`, `behavior_signature`, `tier`, `world_seed`, `seed`,\n\
`model_version`, `messages` (chat-completions shape; tool-call `arguments` are JSON),\n\
`tools` (OpenAI function schemas, JSON), and `situation`, `persona`, `markers`,\n\
`conduct_checks`, `lineage` as JSON. Every field is documented in sparring's `docs/rows.md`.\n\n\
{others}\
```python\nfrom datasets import load_dataset\nds = load_dataset(\"path/to/this/folder\")\nprint(ds[\"train\"][0][\"messages\"])\n```\n"
    )
}

/// The Hub's `size_categories` value for `n` rows (`n<1K`, `1K<n<10K` …).
pub(crate) fn size_category(n: usize) -> &'static str {
    match n {
        0..1_000 => "n<1K",
        1_000..10_000 => "1K<n<10K",
        10_000..100_000 => "10K<n<100K",
        100_000..1_000_000 => "100K<n<1M",
        1_000_000..10_000_000 => "1M<n<10M",
        10_000_000..100_000_000 => "10M<n<100M",
        100_000_000..1_000_000_000 => "100M<n<1B",
        1_000_000_000..10_000_000_000 => "1B<n<10B",
        10_000_000_000..100_000_000_000 => "10B<n<100B",
        100_000_000_000..1_000_000_000_000 => "100B<n<1T",
        _ => "n>1T",
    }
}

/// Writes the dataset folder; returns the files written.
pub(crate) fn write_dataset(
    dir: &Path,
    train: &[&Row],
    holdout: &[&Row],
    extra: &[(&str, String)],
) -> Result<Vec<PathBuf>, Error> {
    if train.is_empty() && holdout.is_empty() {
        // A card with no split would say `data_files: null`, which
        // `load_dataset` refuses.
        return Err(Error::Write {
            path: dir.to_owned(),
            message: "nothing to write: no rows for either the train or the holdout split"
                .to_owned(),
        });
    }
    let data = dir.join("data");
    std::fs::create_dir_all(&data).map_err(|e| Error::write(&data, &e))?;
    let mut files = Vec::new();
    for (name, split) in [("train", train), ("holdout", holdout)] {
        let path = data.join(format!("{name}-00000-of-00001.parquet"));
        if split.is_empty() {
            // `datasets` refuses a split with no rows; a file left by an
            // earlier export into the same folder would be stale.
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(Error::write(&path, &e));
                }
                _ => {}
            }
        } else {
            write_split(&path, split)?;
            files.push(path);
        }
    }
    let readme = dir.join("README.md");
    std::fs::write(&readme, card(train.len(), holdout.len(), extra))
        .map_err(|e| Error::write(&readme, &e))?;
    files.push(readme);
    Ok(files)
}
