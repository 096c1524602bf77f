//! Reading spec files.
//!
//! A spec is YAML (`.yaml`, `.yml`), JSON (`.json`) or TOML (`.toml`), chosen
//! by extension. `system_prompt` and `tools` may be `{file: PATH}`, relative
//! to the spec: a prompt file is read as text; a tools file is parsed by its
//! own extension and must hold a list of tools. Errors inside a tools file
//! name that file and the pointer within it.

use crate::Error;
use serde_json::Value;
use sparring_types::Spec;
use std::path::{Path, PathBuf};

/// The formats a spec may be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Yaml,
    Json,
    Toml,
}

fn format_of(path: &Path) -> Result<Format, Error> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_lowercase)
        .as_deref()
    {
        Some("yaml" | "yml") => Ok(Format::Yaml),
        Some("json") => Ok(Format::Json),
        Some("toml") => Ok(Format::Toml),
        other => Err(Error::invalid(
            path,
            "the file name",
            format!(
                "unknown extension {}; a spec is `.yaml`, `.yml`, `.json` or `.toml`",
                other.map_or_else(|| "(none)".to_owned(), |e| format!("`.{e}`"))
            ),
        )),
    }
}

/// Reads a file as a JSON value, by its extension.
pub fn read_document(path: &Path) -> Result<Value, Error> {
    let format = format_of(path)?;
    let text = crate::text::read_utf8(path)?;
    parse_document(path, &text, format)
}

fn parse_document(path: &Path, text: &str, format: Format) -> Result<Value, Error> {
    match format {
        Format::Json => serde_json::from_str(text).map_err(|e| {
            let message = strip_location(&e.to_string());
            let message = if text.starts_with('\u{feff}') {
                "the file starts with a byte-order mark (U+FEFF), which JSON does not allow (hint: save it as UTF-8 without a BOM)".to_owned()
            } else if message == "recursion limit exceeded" {
                nested_too_deep(JSON_MAX_DEPTH)
            } else {
                message
            };
            Error::invalid(
                path,
                format!("line {}, column {}", e.line(), e.column()),
                format!("invalid JSON: {message}"),
            )
        }),
        Format::Yaml => {
            if text.trim().is_empty() {
                return Err(Error::invalid(path, "line 1", "the file is empty"));
            }
            serde_saphyr::from_str::<Value>(text).map_err(|e| yaml_error(path, &e))
        }
        Format::Toml => toml::from_str::<Value>(text).map_err(|e| {
            let at = e
                .span()
                .map_or_else(|| "line 1".to_owned(), |span| line_col(text, span.start));
            Error::invalid(
                path,
                at,
                format!("invalid TOML: {}", first_line(e.message())),
            )
        }),
    }
}

fn yaml_error(path: &Path, e: &serde_saphyr::Error) -> Error {
    use serde_saphyr::MessageFormatter as _;
    // The library's own messages name its settings ("set DuplicateKeyPolicy
    // in Options") and debug values ("Nodes { nodes: 250001 }"); the user
    // formatter and our budget wording say what is wrong with the file.
    let mut inner = e;
    while let serde_saphyr::Error::WithSnippet { error, .. }
    | serde_saphyr::Error::AliasError { error, .. } = inner
    {
        inner = error;
    }
    let message = match inner {
        serde_saphyr::Error::Budget { breach, .. } => budget_message(breach),
        // The parser's own nesting limit (flow collections past 255 deep)
        // trips before the budget's depth is counted: the same limit, said
        // the same way.
        serde_saphyr::Error::ExternalMessage { source, .. }
            if matches!(
                &**source,
                serde_saphyr::ExternalMessageSource::Parser(scan)
                    if matches!(scan.kind(), serde_saphyr::granit_parser::ErrorKind::RecursionLimitExceeded)
            ) =>
        {
            nested_too_deep(serde_saphyr::Budget::default().max_depth)
        }
        other => serde_saphyr::UserMessageFormatter
            .format_message(other)
            .into_owned(),
    };
    let one = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let location = e
        .location()
        .filter(|loc| loc.line() > 0)
        .map(|loc| format!("line {}, column {}", loc.line(), loc.column()));
    match location {
        Some(at) => Error::invalid(path, at, format!("invalid YAML: {}", strip_location(&one))),
        None => Error::invalid(path, "the document", format!("invalid YAML: {one}")),
    }
}

/// A YAML size limit that a document exceeds, in the user's words. The
/// limits are serde-saphyr's defaults, which protect sparring from a spec
/// that would take minutes or gigabytes to read.
fn budget_message(breach: &serde_saphyr::budget::BudgetBreach) -> String {
    use serde_saphyr::budget::BudgetBreach as B;
    let limits = serde_saphyr::Budget::default();
    match breach {
        B::Nodes { .. } => format!(
            "the document has more than {} values (lists, maps and scalars); a spec must be smaller",
            limits.max_nodes
        ),
        B::Events { .. } => format!(
            "the document has more than {} YAML events; a spec must be smaller",
            limits.max_events
        ),
        B::Depth { .. } => nested_too_deep(limits.max_depth),
        B::Aliases { .. } | B::AliasAnchorRatio { .. } => {
            "the document uses too many aliases (`*name`); an alias bomb would take too long to expand".to_owned()
        }
        B::Anchors { .. } => format!(
            "the document defines more than {} anchors (`&name`)",
            limits.max_anchors
        ),
        B::ScalarBytes { .. } => format!(
            "the document's text values add up to more than {} MiB",
            limits.max_total_scalar_bytes / (1024 * 1024)
        ),
        B::Documents { .. } => "the file holds too many YAML documents; a spec is one document".to_owned(),
        B::MergeKeys { .. } => format!(
            "the document has more than {} merge keys (`<<`)",
            limits.max_merge_keys
        ),
        B::InputBytes { .. } => "the file is too large to be a spec".to_owned(),
        B::SequenceUnbalanced => "a list or map ends that never started".to_owned(),
        _ => "the document is too large or too complex to be a spec".to_owned(),
    }
}

/// The one wording of a document nested deeper than a parser goes.
fn nested_too_deep(limit: impl std::fmt::Display) -> String {
    format!("lists and maps are nested more than {limit} deep")
}

/// serde_json's nesting limit, which it states as "recursion limit
/// exceeded" (`serde_json::de`'s `remaining_depth`).
const JSON_MAX_DEPTH: usize = 128;

fn strip_location(message: &str) -> String {
    // "… at line 3 column 5" is said once, in the location.
    let cut = message.find(" at line ").unwrap_or(message.len());
    message[..cut].trim().to_owned()
}

fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or("").trim().to_owned()
}

fn line_col(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {line}, column {column}")
}

/// If `value` is `{file: PATH}`, the path resolved against `base`.
fn file_reference(
    value: &Value,
    base: &Path,
    spec_path: &Path,
    pointer: &str,
) -> Result<Option<PathBuf>, Error> {
    let Some(map) = value.as_object() else {
        return Ok(None);
    };
    if !map.contains_key("file") {
        return Ok(None);
    }
    if let Some(extra) = map.keys().find(|k| k.as_str() != "file") {
        return Err(Error::invalid(
            spec_path,
            format!("`{pointer}/{extra}`"),
            format!("unknown key `{extra}`; a file reference is `{{file: PATH}}` alone"),
        ));
    }
    match map.get("file") {
        Some(Value::String(p)) => Ok(Some(base.join(p))),
        _ => Err(Error::invalid(
            spec_path,
            format!("`{pointer}/file`"),
            "must be a path (text)",
        )),
    }
}

/// A `{file: PATH}` the spec names that cannot be read, said at its key
/// with the path as resolved (relative paths are from the spec's folder).
fn unreadable(spec_path: &Path, file: &Path, key: &str, e: &std::io::Error) -> Error {
    let message = Error::read_message(e);
    Error::invalid(
        spec_path,
        format!("`/{key}/file`"),
        format!(
            "cannot read `{}` ({message}; a relative path is read from the spec's folder)",
            file.display()
        ),
    )
}

/// Reads and validates a spec.
pub fn load_spec(path: &Path) -> Result<Spec, Error> {
    let mut doc = read_document(path)?;
    let base = path.parent().map(Path::to_owned).unwrap_or_default();
    // `policy` is an alias of `system_prompt`; both at once is an error
    // that `Spec::from_value` reports.
    let prompt_key = if doc.get("system_prompt").is_none() && doc.get("policy").is_some() {
        "policy"
    } else {
        "system_prompt"
    };
    if let Some(v) = doc.get(prompt_key)
        && let Some(file) = file_reference(v, &base, path, &format!("/{prompt_key}"))?
    {
        let text =
            std::fs::read_to_string(&file).map_err(|e| unreadable(path, &file, prompt_key, &e))?;
        doc[prompt_key] = Value::String(text);
    }
    let mut tools_file = None;
    if let Some(v) = doc.get("tools")
        && let Some(file) = file_reference(v, &base, path, "/tools")?
    {
        if let Err(e) = std::fs::metadata(&file) {
            return Err(unreadable(path, &file, "tools", &e));
        }
        let tools = read_document(&file)?;
        if !tools.is_array() {
            return Err(Error::invalid(
                &file,
                "`` (the whole file)",
                "a tools file must hold a list of tools",
            ));
        }
        doc["tools"] = tools;
        tools_file = Some(file);
    }
    Spec::from_value(&doc).map_err(|e| match (&tools_file, e.pointer.strip_prefix("/tools")) {
        (Some(file), Some(rest)) if !rest.is_empty() => {
            Error::invalid(file, format!("`{rest}`"), e.message)
        }
        _ => Error::invalid(path, format!("`{}`", e.pointer), e.message),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_errors_speak_of_the_file_not_the_library() {
        let path = Path::new("spec.yaml");
        let dup = parse_document(path, "a: 1\na: 2\n", Format::Yaml)
            .unwrap_err()
            .to_string();
        assert!(dup.contains("duplicate") && dup.contains('a'), "{dup}");
        assert!(
            !dup.contains("DuplicateKeyPolicy") && !dup.contains("Options"),
            "{dup}"
        );
        let many = format!("[{}]", vec!["1"; 260_000].join(","));
        let big = parse_document(path, &many, Format::Yaml)
            .unwrap_err()
            .to_string();
        assert!(big.contains("more than 250000 values"), "{big}");
        assert!(!big.contains("Nodes {") && !big.contains("breach"), "{big}");
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        let deep = parse_document(path, &deep, Format::Yaml)
            .unwrap_err()
            .to_string();
        assert!(deep.contains("nested more than 64 deep"), "{deep}");
        for e in [&dup, &big, &deep] {
            assert!(!e.contains('\n'), "{e}");
        }
    }

    /// Past the parser's own limit (255 flow levels), the same words as
    /// past the budget's 64; JSON past serde_json's 128 alike (issue 39:
    /// "recursion limit exceeded").
    #[test]
    fn nesting_too_deep_is_said_alike_at_any_depth() {
        for depth in [65, 300, 1_000, 100_000] {
            let text = format!("tools: {}{}", "[".repeat(depth), "]".repeat(depth));
            let e = parse_document(Path::new("spec.yaml"), &text, Format::Yaml)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("lists and maps are nested more than 64 deep"),
                "{depth}: {e}"
            );
            let text = format!("{{\"tools\": {}{}}}", "[".repeat(depth), "]".repeat(depth));
            let json = parse_document(Path::new("spec.json"), &text, Format::Json);
            if depth > JSON_MAX_DEPTH {
                let e = json.unwrap_err().to_string();
                assert!(
                    e.contains("lists and maps are nested more than 128 deep"),
                    "{depth}: {e}"
                );
            }
        }
    }

    #[test]
    fn a_byte_order_mark_is_named_in_json() {
        let e = parse_document(Path::new("spec.json"), "\u{feff}{}", Format::Json)
            .unwrap_err()
            .to_string();
        assert!(e.contains("byte-order mark"), "{e}");
    }

    #[test]
    fn locations() {
        assert_eq!(line_col("a\nbc\nd", 3), "line 2, column 2");
        assert_eq!(
            strip_location("expected value at line 3 column 5"),
            "expected value"
        );
    }
}
