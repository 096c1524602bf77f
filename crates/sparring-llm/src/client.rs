//! What the two model agents share, whichever API they speak: the
//! endpoint's model and URL, the sampling asked for, the transport, the
//! parameters the server has rejected so far, and one exchange with it
//! read into a reply. Each agent keeps only its API's own shapes (the
//! request body, the reply, how a reply ends).

use crate::backend::Resolved;
use crate::http::{Transport, label};
use crate::settings::{self, BackendOptions, Param, Post, Rejected, Sampling};
use serde_json::{Map, Value, json};
use sparring_types::{AgentError, AgentReply, Finish, Message};

/// A model endpoint and how to talk to it.
pub(crate) struct ModelClient {
    /// `openai` or `anthropic`: the provider in labels and `sampling`.
    provider: &'static str,
    pub(crate) model: String,
    url: String,
    /// The endpoint as the spec named it (no key).
    pub(crate) describe: String,
    pub(crate) sampling: Sampling,
    pub(crate) transport: Transport,
    rejected: Rejected,
}

impl std::fmt::Debug for ModelClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelClient")
            .field("backend", &self.describe)
            .finish_non_exhaustive()
    }
}

impl ModelClient {
    /// A client of `provider` for `resolved`, posting to
    /// `{base_url}/{path}`; `adjustable` are the parameters it may leave
    /// out or rename when the server rejects them.
    pub(crate) fn new(
        provider: &'static str,
        path: &str,
        adjustable: &'static [Param],
        resolved: Resolved,
        options: BackendOptions,
    ) -> Result<Self, crate::Error> {
        let Resolved {
            endpoint,
            base_url,
            key,
        } = resolved;
        let model = endpoint.model.clone();
        let transport = Transport::new(
            label(provider, &model, &base_url),
            &base_url,
            key,
            options.timeout,
            options.retry,
            options.limiter,
        )?;
        Ok(Self {
            provider,
            url: format!("{base_url}/{path}"),
            describe: endpoint.describe(),
            model,
            sampling: options.sampling,
            transport,
            rejected: Rejected::new(adjustable),
        })
    }

    /// The sampling settings both APIs name alike (`temperature`,
    /// `top_p`), added to `body` where they are set.
    pub(crate) fn insert_shared_sampling(&self, body: &mut Map<String, Value>) {
        if let Some(t) = self.sampling.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(p) = self.sampling.top_p {
            body.insert("top_p".into(), json!(p));
        }
    }

    /// Sends `body` with `headers` ([`settings::exchange`]: rejected
    /// parameters adjusted, a truncated reply asked again with more room)
    /// and reads the reply: `finish` says how it ended, `read` takes its
    /// message and log-probabilities. The reply carries the `sampling`
    /// record of what was sent; one `read` cannot take is
    /// [`Self::unreadable`].
    pub(crate) async fn reply(
        &self,
        headers: &[(&str, String)],
        request_id: &str,
        body: &Map<String, Value>,
        finish: fn(&Value) -> Finish,
        read: impl FnOnce(&Value) -> Result<(Message, Option<Value>), ReplyError>,
    ) -> Result<AgentReply, AgentError> {
        let post = Post {
            transport: &self.transport,
            url: &self.url,
            headers,
            request_id,
        };
        let exchange =
            settings::exchange(&post, &self.rejected, body, |reply| finish(reply).stop).await?;
        let sampling = settings::record(self.provider, &self.model, &self.sampling, &exchange);
        let value = &exchange.reply;
        read(value)
            .map(|(message, logprobs)| AgentReply {
                finish: Some(finish(value)),
                message,
                sampling: Some(sampling),
                logprobs,
                usage: exchange.usage,
            })
            .map_err(|e| self.unreadable(&e))
    }

    /// A reply that could not be read, as the backend's error (redacted).
    pub(crate) fn unreadable(&self, e: &dyn std::fmt::Display) -> AgentError {
        AgentError::backend(self.transport.redact(&format!("{}: {e}", self.describe)))
    }
}

/// What a model's reply lacks to be read as a message; `excerpt` is the
/// start of the reply ([`crate::http::excerpt`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReplyError {
    /// A chat-completions reply without `choices`.
    #[error("the reply has no `choices`: `{excerpt}`")]
    Choices { excerpt: String },
    /// A chat-completions choice without a `message`.
    #[error("the reply's choice has no `message`")]
    ChoiceMessage,
    /// A chat-completions tool call without a function name.
    #[error("a tool call has no function name")]
    FunctionName,
    /// A Messages API reply without `content`.
    #[error("the reply has no `content`: `{excerpt}`")]
    Content { excerpt: String },
    /// A Messages API `tool_use` block without a name.
    #[error("a tool_use block has no name")]
    ToolUseName,
}
