//! What a tool call returns.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Why a call did not succeed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// No record has the given id.
    NotFound,
    /// The call is well-formed but the world will not do it: an argument
    /// echoes the schema, or the record's state forbids the action.
    Refused,
    /// The arguments break the tool's schema.
    InvalidArguments,
    /// No tool has that name.
    UnknownTool,
    /// A scheduled or random fault (timeout, server error …).
    Fault,
}

impl ErrorKind {
    /// The kind with wire name `name`.
    pub fn parse(name: &str) -> Option<Self> {
        [
            Self::NotFound,
            Self::Refused,
            Self::InvalidArguments,
            Self::UnknownTool,
            Self::Fault,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotFound => "not_found",
            Self::Refused => "refused",
            Self::InvalidArguments => "invalid_arguments",
            Self::UnknownTool => "unknown_tool",
            Self::Fault => "fault",
        }
    }
}

/// The answer to one tool call.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolResult {
    /// The call succeeded.
    Ok(Value),
    /// A malformed answer (a `malformed` fault): text that is not the JSON
    /// the agent expects, delivered as is.
    Raw(String),
    /// The call failed.
    Err {
        /// Why.
        kind: ErrorKind,
        /// What happened, for the agent.
        message: String,
        /// What a valid call looks like, when there is an obvious fix.
        hint: Option<String>,
    },
}

impl ToolResult {
    /// A failure with a hint.
    pub fn failure(kind: ErrorKind, message: impl Into<String>, hint: Option<String>) -> Self {
        Self::Err {
            kind,
            message: message.into(),
            hint,
        }
    }

    pub(crate) fn err(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self::Err {
            kind,
            message: message.into(),
            hint: None,
        }
    }

    pub(crate) fn err_hint(
        kind: ErrorKind,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self::Err {
            kind,
            message: message.into(),
            hint: Some(hint.into()),
        }
    }

    /// Whether the call succeeded.
    pub fn is_ok(&self) -> bool {
        matches!(self, Self::Ok(_))
    }

    /// The error kind's wire name, when the call failed.
    pub fn error_kind(&self) -> Option<&'static str> {
        match self {
            Self::Ok(_) | Self::Raw(_) => None,
            Self::Err { kind, .. } => Some(kind.as_str()),
        }
    }

    /// The JSON the agent receives; a malformed answer is its text as a
    /// JSON string (see [`ToolResult::to_content`] for what is sent).
    pub fn to_json(&self) -> Value {
        match self {
            Self::Ok(result) => json!({"ok": true, "result": result}),
            Self::Raw(text) => Value::String(text.clone()),
            Self::Err {
                kind,
                message,
                hint,
            } => {
                json!({"ok": false, "error": {"kind": kind.as_str(), "message": message, "hint": hint}})
            }
        }
    }
}

impl ToolResult {
    /// The text of the tool message the agent receives: the JSON of
    /// [`ToolResult::to_json`] on one line, or a malformed answer as is.
    pub fn to_content(&self) -> String {
        match self {
            Self::Raw(text) => text.clone(),
            // Written in place, without cloning the result into a wrapper
            // value first; keys in the sorted order `to_json` has.
            Self::Ok(result) => {
                let mut out: Vec<u8> = Vec::with_capacity(256);
                out.extend_from_slice(b"{\"ok\":true,\"result\":");
                // Straight into bytes: faster than `Display`, which goes
                // through a formatter adapter.
                if serde_json::to_writer(&mut out, result).is_err() {
                    return self.to_json().to_string();
                }
                out.push(b'}');
                String::from_utf8(out).unwrap_or_else(|_| self.to_json().to_string())
            }
            Self::Err { .. } => self.to_json().to_string(),
        }
    }
}

impl ToolResult {
    /// Reads an answer in the wire shape back (as the caller's world sends
    /// it); an unknown error kind is `refused`, any other shape is kept as
    /// raw text.
    pub fn from_json(value: &Value) -> Self {
        match value.get("ok").and_then(Value::as_bool) {
            Some(true) => Self::Ok(value.get("result").cloned().unwrap_or(Value::Null)),
            Some(false) => {
                let error = value.get("error");
                let text = |k: &str| {
                    error
                        .and_then(|e| e.get(k))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                };
                Self::Err {
                    kind: text("kind")
                        .and_then(|k| ErrorKind::parse(&k))
                        .unwrap_or(ErrorKind::Refused),
                    message: text("message").unwrap_or_default(),
                    hint: text("hint"),
                }
            }
            None => Self::Raw(value.to_string()),
        }
    }
}

#[cfg(test)]
mod content_tests {
    use super::*;

    #[test]
    fn content_is_the_wire_json_on_one_line() {
        for result in [
            ToolResult::Ok(json!({"b": [1, "x"], "a": {"z": null, "c": "é\"\n"}})),
            ToolResult::Ok(json!([])),
            ToolResult::Ok(Value::Null),
            ToolResult::err_hint(ErrorKind::NotFound, "no order", "ask"),
        ] {
            assert_eq!(result.to_content(), result.to_json().to_string());
        }
    }
}
