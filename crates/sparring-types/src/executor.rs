//! The caller's world: a trait for answering tool calls for real.
//!
//! By default the sandbox world answers an agent's tool calls. With
//! `execute`, the caller's own world does instead (a command speaking JSON
//! lines, later an HTTP URL or a Python callable). The engine still applies
//! the situation's scheduled faults and random faults first; everything else
//! (what exists, what is refused) is the caller's to decide.

use crate::agent::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The rollout a tool call belongs to, so the caller's world can keep one
/// state per rollout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolloutContext {
    /// The opening ask of the rollout.
    pub prompt: String,
    /// Index of the rollout within the run (task index × repeats + repeat).
    pub rollout_index: u64,
    /// Seed of the rollout.
    pub seed: u64,
}

/// One tool call for the caller's world.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecuteRequest {
    /// Unique within a run; a command world echoes it in its reply.
    pub id: String,
    /// The tool's name.
    pub tool: String,
    /// The arguments, as the agent gave them.
    pub arguments: Value,
    /// The rollout the call belongs to.
    pub rollout: RolloutContext,
}

/// Why the caller's world gave no answer (it crashed, broke the protocol or
/// timed out). The agent sees a `fault`; the run goes on. The message must
/// never contain a secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExecuteError(pub String);

/// Answers tool calls in place of the sandbox world.
pub trait ToolExecutor: Send + Sync {
    /// Answers one call with the JSON the agent receives:
    /// `{"ok": true, "result": …}` or `{"ok": false, "error": {"kind",
    /// "message", "hint"}}`.
    fn execute(&self, request: ExecuteRequest) -> BoxFuture<'_, Result<Value, ExecuteError>>;

    /// A short description for rows and logs (`command:python3 world.py`).
    /// It must never contain a secret.
    fn describe(&self) -> String;
}

/// The JSON an agent receives for a caller's world reply: `{"result": ANY}`
/// becomes `{"ok": true, "result": …}`, `{"error": …}` (an object with
/// `kind`, `message`, `hint`, or a bare message) becomes `{"ok": false,
/// "error": {"kind", "message", "hint"}}`, `kind` defaulting to `refused`.
/// One reading for every kind of caller's world (command, HTTP).
pub fn world_answer(reply: &Value) -> Value {
    if let Some(error) = reply.get("error").filter(|e| !e.is_null()) {
        let field = |k: &str| error.get(k).cloned().unwrap_or(Value::Null);
        let message = error
            .as_str()
            .map_or_else(|| field("message"), |s| Value::String(s.to_owned()));
        let kind = error
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("refused")
            .to_owned();
        return json!({"ok": false, "error": {"kind": kind, "message": message, "hint": field("hint")}});
    }
    json!({"ok": true, "result": reply.get("result").cloned().unwrap_or(Value::Null)})
}
