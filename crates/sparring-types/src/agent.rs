//! The agent trait.
//!
//! An agent receives the conversation so far and the tool schemas and answers
//! with one assistant message: text for the person, tool calls for the world,
//! or both. Command agents, model endpoints and in-process closures all
//! implement [`Agent`]; the engine drives the tool loop around it.

use crate::Message;
use serde::{Deserialize, Serialize};
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
    /// Tokens the backend says this request used, when it says.
    pub usage: Option<Usage>,
}

/// Tokens one model request used, as the backend reported them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the prompt (`prompt_tokens`, Anthropic's `input_tokens`).
    pub input_tokens: u64,
    /// Tokens of the reply (`completion_tokens`, `output_tokens`).
    pub output_tokens: u64,
}

impl Usage {
    /// Reads `usage` from a chat-completions or Messages API response body:
    /// `prompt_tokens`/`completion_tokens` or `input_tokens`/`output_tokens`.
    /// `None` when the body has no usable `usage`.
    #[must_use]
    pub fn from_response(body: &Value) -> Option<Self> {
        let usage = body.get("usage")?;
        let count = |a: &str, b: &str| {
            usage
                .get(a)
                .or_else(|| usage.get(b))
                .and_then(Value::as_u64)
        };
        let input = count("prompt_tokens", "input_tokens");
        let output = count("completion_tokens", "output_tokens");
        if input.is_none() && output.is_none() {
            return None;
        }
        Some(Self {
            input_tokens: input.unwrap_or(0),
            output_tokens: output.unwrap_or(0),
        })
    }
}

impl From<Message> for AgentReply {
    fn from(message: Message) -> Self {
        Self {
            message,
            sampling: None,
            logprobs: None,
            usage: None,
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

/// An in-process agent made from a closure: each request is passed to `f`,
/// whose future gives the reply. The way to put a Rust function (and, through
/// the same trait, a Python callable later) under test without a process or
/// an endpoint.
///
/// ```
/// use sparring_types::{Agent, AgentReply, Message, Role, agent_fn};
/// let agent = agent_fn("echo", |request| async move {
///     let last = request.messages.last().map(|m| m.content_str().to_owned());
///     Ok(AgentReply::from(Message::text(Role::Assistant, last.unwrap_or_default())))
/// });
/// assert_eq!(agent.describe(), "fn:echo");
/// ```
pub struct FnAgent<F> {
    name: String,
    f: F,
}

/// Wraps a closure as an [`Agent`] described as `fn:NAME`.
pub fn agent_fn<F, Fut>(name: impl Into<String>, f: F) -> FnAgent<F>
where
    F: Fn(AgentRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<AgentReply, AgentError>> + Send + 'static,
{
    FnAgent {
        name: name.into(),
        f,
    }
}

impl<F, Fut> Agent for FnAgent<F>
where
    F: Fn(AgentRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<AgentReply, AgentError>> + Send + 'static,
{
    fn respond(&self, request: AgentRequest) -> BoxFuture<'_, Result<AgentReply, AgentError>> {
        Box::pin((self.f)(request))
    }

    fn describe(&self) -> String {
        format!("fn:{}", self.name)
    }
}
