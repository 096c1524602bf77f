//! Tool schemas, normalised from the OpenAI and MCP formats.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One tool the agent may call.
///
/// Specs give tools in the OpenAI function format
/// (`{"type":"function","function":{name, description, parameters}}`) or the
/// MCP format (`{name, description, inputSchema}`); both become this.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name, unique within a spec.
    pub name: String,
    /// What the tool does, as the agent reads it.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments; always an object schema.
    pub parameters: Value,
    /// JSON Schema of the result, when the spec gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

impl ToolSpec {
    /// A tool of `name` taking `params`, each a (name, JSON Schema type)
    /// pair, in that order and none required, with no description (add one
    /// with [`described`](Self::described)): a tool written in code, as
    /// tests and drafts write one.
    pub fn with_parameters(name: &str, params: &[(&str, &str)]) -> Self {
        let properties: serde_json::Map<String, Value> = params
            .iter()
            .map(|(p, kind)| ((*p).to_owned(), json!({"type": kind})))
            .collect();
        Self {
            name: name.to_owned(),
            description: String::new(),
            parameters: json!({"type": "object", "properties": properties}),
            output_schema: None,
        }
    }

    /// The tool with `description`.
    #[must_use]
    pub fn described(mut self, description: &str) -> Self {
        description.clone_into(&mut self.description);
        self
    }

    /// The tool in the OpenAI function format, as agents receive it.
    pub fn to_openai(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }

    /// The names of the tool's parameters, in schema order.
    pub fn parameter_names(&self) -> Vec<&str> {
        self.parameters
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// The schema of one parameter.
    pub fn parameter(&self, name: &str) -> Option<&Value> {
        self.parameters.get("properties")?.get(name)
    }

    /// The names listed under `required`.
    pub fn required(&self) -> Vec<&str> {
        self.parameters
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

/// A validator for a tool's argument schema, formats checked, the way every
/// part of sparring checks arguments (the world, seed expectations), so an
/// argument one accepts the other does not refuse.
///
/// `date-time` also takes a local time without its offset
/// (`2026-12-10T09:30:00`, `2026-12-10T09:30`), as fixtures and many
/// backends write it; everything else is JSON Schema's own check.
///
/// # Errors
/// When the schema itself is not a valid JSON Schema.
pub fn arguments_validator(
    schema: &Value,
) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
    jsonschema::options()
        .should_validate_formats(true)
        .with_format("date-time", is_date_time)
        .build(schema)
}

/// Whether `text` is a date-time: RFC 3339 (`2026-12-10T09:30:00Z`,
/// `…+01:00`), or the same without the offset, seconds optional.
pub fn is_date_time(text: &str) -> bool {
    let Some((date, time)) = text.split_once(['T', 't', ' ']) else {
        return false;
    };
    is_date(date) && is_time(time)
}

fn digits(text: &str, len: usize) -> Option<u32> {
    (text.len() == len && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

pub(crate) fn is_date(text: &str) -> bool {
    let mut parts = text.split('-');
    let (Some(y), Some(m), Some(d), None) = (
        parts.next().and_then(|p| digits(p, 4)),
        parts.next().and_then(|p| digits(p, 2)),
        parts.next().and_then(|p| digits(p, 2)),
        parts.next(),
    ) else {
        return false;
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

fn is_time(text: &str) -> bool {
    // The offset: `Z`, or `±HH:MM` after the clock.
    let clock = if let Some(c) = text.strip_suffix(['Z', 'z']) {
        c
    } else if let Some(at) = text.rfind(['+', '-']) {
        let (c, offset) = text.split_at(at);
        match offset[1..].split_once(':') {
            Some((h, m))
                if digits(h, 2).is_some_and(|h| h < 24) && digits(m, 2).is_some_and(|m| m < 60) =>
            {
                c
            }
            _ => return false,
        }
    } else {
        text
    };
    let (hms, fraction) = clock.split_once('.').unwrap_or((clock, "1"));
    if fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let parts: Vec<&str> = hms.split(':').collect();
    let ok = |i: usize, max: u32| {
        parts
            .get(i)
            .and_then(|p| digits(p, 2))
            .is_some_and(|v| v <= max)
    };
    matches!(parts.len(), 2 | 3) && ok(0, 23) && ok(1, 59) && (parts.len() == 2 || ok(2, 60))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn date_times_with_and_without_an_offset() {
        for good in [
            "2026-12-10T09:30:00Z",
            "2026-12-10T09:30:00.250+01:00",
            "2026-12-10t09:30:00-05:30",
            "2026-12-10T09:30:00",
            "2026-12-10T09:30",
            "2024-02-29 23:59:60",
        ] {
            assert!(is_date_time(good), "{good}");
        }
        for bad in [
            "2026-12-10",
            "2026-13-10T09:30:00",
            "2025-02-29T09:30:00",
            "2026-12-10T24:00:00",
            "2026-12-10T09:30:00+25:00",
            "2026-12-10T09:30:00.",
            "2026-12-10T9:30",
            "next tuesday",
        ] {
            assert!(!is_date_time(bad), "{bad}");
        }
        let v = arguments_validator(&json!({"type": "object", "properties": {
            "at": {"type": "string", "format": "date-time"},
            "on": {"type": "string", "format": "date"}}}))
        .unwrap();
        assert!(v.is_valid(&json!({"at": "2026-12-10T09:30:00", "on": "2026-12-10"})));
        assert!(!v.is_valid(&json!({"at": "tomorrow"})));
        assert!(!v.is_valid(&json!({"on": "2026-12-10T09:30:00"})));
    }
}
