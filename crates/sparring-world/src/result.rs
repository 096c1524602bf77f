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
            Self::Ok(_) => None,
            Self::Err { kind, .. } => Some(kind.as_str()),
        }
    }

    /// The JSON the agent receives.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Ok(result) => json!({"ok": true, "result": result}),
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
