//! The agent trait.
//!
//! An agent receives the conversation so far and the tool schemas and answers
//! with one assistant message: text for the person, tool calls for the world,
//! or both. Command agents, model endpoints and in-process closures all
//! implement [`Agent`]; the engine drives the tool loop around it.

use crate::Message;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A boxed, sendable future, so agents can be used as `dyn Agent`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One request to an agent.
#[derive(Clone, Debug)]
pub struct AgentRequest {
    /// Unique within a run; a command agent echoes it in its reply.
    pub id: String,
    /// The conversation so far, starting with the system message.
    pub messages: Vec<Message>,
    /// The tools in the OpenAI function format, shared across requests.
    pub tools: Arc<Vec<Value>>,
}

/// Why an agent gave no message. The rollout ends with
/// `ended_by: "agent_error"` and this text; the run goes on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AgentError(pub String);

/// An agent under test.
pub trait Agent: Send + Sync {
    /// Answers one request with one assistant message.
    fn respond(&self, request: AgentRequest) -> BoxFuture<'_, Result<Message, AgentError>>;

    /// A short description for rows and logs (`command:python3 agent.py`).
    /// It must never contain a secret.
    fn describe(&self) -> String;
}
