//! The agent trait.
//!
//! An agent receives the conversation so far and the tool schemas and answers
//! with one assistant message: text for the person, tool calls for the world,
//! or both. Command agents, model endpoints and in-process closures all
//! implement [`Agent`]; the engine drives the tool loop around it.

use crate::{EndedBy, Message, Role};
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
    /// How the model's reply ended, as its provider said, when it said.
    pub finish: Option<Finish>,
}

/// How a model's reply ended: the provider's own word, what it means here,
/// and a refusal's text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finish {
    /// The provider's word, verbatim: OpenAI's `finish_reason`, Anthropic's
    /// `stop_reason` (`stop`, `tool_calls`, `length`, `end_turn`, `refusal`
    /// …); `None` when the reply had none.
    pub reason: Option<String>,
    /// What that means for the conversation.
    pub stop: Stop,
    /// The refusal's text: OpenAI's `message.refusal`, or for an Anthropic
    /// `refusal` whatever text came with it.
    pub refusal: Option<String>,
}

/// What the end of a model's reply means for the conversation. Providers'
/// words are an open vocabulary; this is the closed one the engine acts on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The model finished its turn: OpenAI `stop`, `tool_calls`,
    /// `function_call`; Anthropic `end_turn`, `tool_use`, `stop_sequence`;
    /// or no reason given.
    #[default]
    Complete,
    /// The reply was cut at the token limit: OpenAI `length`, Anthropic
    /// `max_tokens` and `model_context_window_exceeded`.
    Truncated,
    /// The provider's content filter withheld or cut the reply: OpenAI
    /// `content_filter`.
    ContentFilter,
    /// The model refused: OpenAI's `message.refusal` set, Anthropic
    /// `refusal`.
    Refused,
    /// A reason this release does not know (Anthropic `pause_turn`, a new
    /// word): the reply is used as it is.
    Other,
}

impl Stop {
    /// The wire name (`complete`, `truncated` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::Truncated => "truncated",
            Self::ContentFilter => "content_filter",
            Self::Refused => "refused",
            Self::Other => "other",
        }
    }
}

/// A reply the provider cut short, as the conversation keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct CutShort {
    /// How the row ends: `refused`, `content_filter` or `truncated`.
    pub ended_by: EndedBy,
    /// The assistant message to keep: the reply's text, or the refusal's
    /// text when the reply has none; never its tool calls, which were not
    /// meant whole (a truncated call is not executed).
    pub message: Message,
    /// Why, on one line, for the row's `error`.
    pub why: String,
}

impl AgentReply {
    /// When the provider cut this reply short (a refusal, the content
    /// filter, the token limit): how the conversation ends and what of the
    /// reply it keeps. `None` for a reply to use as it is.
    pub fn cut_short(&self) -> Option<CutShort> {
        let finish = self.finish.as_ref()?;
        let ended_by = match finish.stop {
            Stop::Refused => EndedBy::Refused,
            Stop::ContentFilter => EndedBy::ContentFilter,
            Stop::Truncated => EndedBy::Truncated,
            Stop::Complete | Stop::Other => return None,
        };
        let reason = finish.reason.as_deref().unwrap_or("refusal");
        let calls = self.message.tool_calls.len();
        let why = match finish.stop {
            Stop::Refused => format!("the model refused (`{reason}`)"),
            Stop::ContentFilter => {
                format!("the provider's content filter stopped the reply (`{reason}`)")
            }
            _ => format!("the reply was cut at the token limit (`{reason}`)"),
        };
        let why = if calls > 0 {
            format!("{why}; its {calls} tool call(s) were not executed")
        } else {
            why
        };
        let text = match (self.message.content_str(), &finish.refusal) {
            ("", Some(refusal)) => refusal.clone(),
            (text, _) => text.to_owned(),
        };
        Some(CutShort {
            ended_by,
            message: Message::text(Role::Assistant, text),
            why,
        })
    }
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
            finish: None,
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

    /// What the agent did wrong that cost no row but belongs in the run's
    /// warnings (a command agent's second replies to one request, dropped),
    /// as the run ends. None by default.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
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
