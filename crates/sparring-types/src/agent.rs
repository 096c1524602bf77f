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

/// Whose failure an [`AgentError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentErrorKind {
    /// The agent itself failed (a crash, a bad reply, a timeout): the row
    /// ends with `ended_by: "agent_error"`.
    Agent,
    /// A model backend failed after its retries (HTTP errors, rate limits):
    /// the row ends with `ended_by: "backend_error"`.
    Backend,
}

/// Why an agent gave no message. The rollout ends with this text; the run
/// goes on. The message must never contain a secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AgentError {
    /// Whose failure it is.
    pub kind: AgentErrorKind,
    /// What happened, on one line.
    pub message: String,
}

impl AgentError {
    /// A failure of the agent.
    pub fn agent(message: impl Into<String>) -> Self {
        Self {
            kind: AgentErrorKind::Agent,
            message: message.into(),
        }
    }

    /// A failure of a model backend.
    pub fn backend(message: impl Into<String>) -> Self {
        Self {
            kind: AgentErrorKind::Backend,
            message: message.into(),
        }
    }
}

/// One answer of an agent: the message, and how it was sampled when the
/// agent knows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentReply {
    /// The assistant message.
    pub message: Message,
    /// Sampling settings as the backend resolved them (model, temperature,
    /// top_p, max_tokens, seed …), recorded on the row.
    pub sampling: Option<Value>,
    /// Log-probabilities of this turn (summed log-probability, token count,
    /// per-token list, policy version), when asked for and available.
    pub logprobs: Option<Value>,
}

impl From<Message> for AgentReply {
    fn from(message: Message) -> Self {
        Self {
            message,
            sampling: None,
            logprobs: None,
        }
    }
}

/// An agent under test.
pub trait Agent: Send + Sync {
    /// Answers one request with one assistant message.
    fn respond(&self, request: AgentRequest) -> BoxFuture<'_, Result<AgentReply, AgentError>>;

    /// A short description for rows and logs (`command:python3 agent.py`).
    /// It must never contain a secret.
    fn describe(&self) -> String;
}
