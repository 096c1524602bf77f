//! What a tool call returns.

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value, json};
use std::sync::Arc;

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
///
/// Two answers are equal when their JSON ([`ToolResult::to_json`]) is: a
/// record answered as [`ToolResult::Records`] equals the same record as
/// [`ToolResult::Ok`].
#[derive(Clone, Debug)]
pub enum ToolResult {
    /// The call succeeded.
    Ok(Value),
    /// The call succeeded, answered with records as the world holds them:
    /// shared with its memory rather than copied (a read or a search).
    /// Reads as [`ToolResult::Ok`] of their JSON.
    Records(Records),
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

/// Records a call answers with, shared with the world's memory: one record
/// or a list of them. [`Records::to_value`] gives their JSON.
#[derive(Clone, Debug)]
pub struct Records(Answered);

#[derive(Clone, Debug)]
enum Answered {
    One(Arc<Map<String, Value>>),
    List(Vec<Arc<Map<String, Value>>>),
}

impl Records {
    pub(crate) fn one(record: Arc<Map<String, Value>>) -> Self {
        Self(Answered::One(record))
    }

    pub(crate) fn list(records: Vec<Arc<Map<String, Value>>>) -> Self {
        Self(Answered::List(records))
    }

    /// Whether the answer is a list (else one record).
    pub fn is_list(&self) -> bool {
        matches!(self.0, Answered::List(_))
    }

    /// The JSON of the answer: an object, or an array of objects.
    pub fn to_value(&self) -> Value {
        match &self.0 {
            Answered::One(r) => Value::Object(Map::clone(r)),
            Answered::List(rs) => {
                Value::Array(rs.iter().map(|r| Value::Object(Map::clone(r))).collect())
            }
        }
    }
}

impl Serialize for Records {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Answered::One(r) => r.serialize(serializer),
            Answered::List(rs) => serializer.collect_seq(rs.iter().map(|r| &**r)),
        }
    }
}

impl PartialEq for ToolResult {
    fn eq(&self, other: &Self) -> bool {
        self.to_json() == other.to_json()
    }
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

    /// The failure's message; `None` for a success.
    pub(crate) fn into_error_message(self) -> Option<String> {
        match self {
            Self::Err { message, .. } => Some(message),
            Self::Ok(_) | Self::Records(_) | Self::Raw(_) => None,
        }
    }

    /// Whether the call succeeded.
    pub fn is_ok(&self) -> bool {
        matches!(self, Self::Ok(_) | Self::Records(_))
    }

    /// The error kind's wire name, when the call failed.
    pub fn error_kind(&self) -> Option<&'static str> {
        match self {
            Self::Ok(_) | Self::Records(_) | Self::Raw(_) => None,
            Self::Err { kind, .. } => Some(kind.as_str()),
        }
    }

    /// The JSON the agent receives; a malformed answer is its text as a
    /// JSON string (see [`ToolResult::to_content`] for what is sent).
    pub fn to_json(&self) -> Value {
        match self {
            Self::Ok(result) => json!({"ok": true, "result": result}),
            Self::Records(records) => json!({"ok": true, "result": records.to_value()}),
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
            Self::Ok(result) => self.ok_content(result),
            // Records are written from where the world holds them.
            Self::Records(records) => self.ok_content(records),
            // Also written in place: `to_json`'s keys in their sorted
            // order (`error` before `ok`; `hint`, `kind`, `message`).
            Self::Err {
                kind,
                message,
                hint,
            } => {
                #[derive(Serialize)]
                struct Wire<'a> {
                    error: WireError<'a>,
                    ok: bool,
                }
                #[derive(Serialize)]
                struct WireError<'a> {
                    hint: Option<&'a str>,
                    kind: &'static str,
                    message: &'a str,
                }
                let wire = Wire {
                    error: WireError {
                        hint: hint.as_deref(),
                        kind: kind.as_str(),
                        message,
                    },
                    ok: false,
                };
                serde_json::to_string(&wire).unwrap_or_else(|_| self.to_json().to_string())
            }
        }
    }
}

impl ToolResult {
    /// `{"ok":true,"result":…}` with `result` serialised straight into
    /// bytes: faster than `Display`, which goes through a formatter adapter.
    fn ok_content(&self, result: &impl Serialize) -> String {
        let mut out: Vec<u8> = Vec::with_capacity(256);
        out.extend_from_slice(b"{\"ok\":true,\"result\":");
        if serde_json::to_writer(&mut out, result).is_err() {
            return self.to_json().to_string();
        }
        out.push(b'}');
        String::from_utf8(out).unwrap_or_else(|_| self.to_json().to_string())
    }

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
            ToolResult::err(ErrorKind::Refused, "`a` is \"b\"\n\u{1}é"),
            ToolResult::failure(ErrorKind::Fault, "", Some(String::new())),
            ToolResult::Records(Records::one(Arc::new(
                json!({"b": [1, "x"], "a": {"z": null, "c": "é\"\n"}})
                    .as_object()
                    .unwrap()
                    .clone(),
            ))),
            ToolResult::Records(Records::list(vec![
                Arc::new(json!({"id": "A1", "n": 1.5}).as_object().unwrap().clone()),
                Arc::new(Map::new()),
            ])),
            ToolResult::Records(Records::list(Vec::new())),
        ] {
            assert_eq!(result.to_content(), result.to_json().to_string());
        }
    }
}
