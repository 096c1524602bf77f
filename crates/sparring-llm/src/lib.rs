//! Model backends: the agent, the writer, the person and the judge as a
//! model behind an HTTP API, and HTTP grader hooks. The only sparring crate that does network IO.
//!
//! - [`BackendSpec`]: the one parser of backend spec strings
//!   (`openai:MODEL`, `openai:MODEL@http://host:port/v1`, `anthropic:MODEL`,
//!   `command:CMD`, optional `#key=ENV_VAR`). [`Endpoint::resolve`] finds the
//!   base URL and the key in an environment the caller passes in.
//! - [`OpenAiAgent`] and [`AnthropicAgent`]: `sparring_types::Agent`
//!   implementations. The engine runs the tool loop; an agent turns the
//!   conversation and tools into one request and the reply into one
//!   assistant message, with `sampling` as sent and, when asked,
//!   `logprobs`. A request that fails for good is an
//!   `AgentError::backend`, which ends the row as `backend_error`.
//! - [`Limiter`], [`RetryPolicy`], [`BackendOptions`], [`Sampling`]: the
//!   global concurrency and requests-per-minute limits, retries with
//!   exponential backoff and full jitter honouring `Retry-After`,
//!   per-attempt timeouts, and sampling settings. A server that rejects a
//!   parameter (`temperature`, `top_p`, `max_tokens`,
//!   `max_completion_tokens`, `seed`, `tool_choice`) gets the request again
//!   without it, or with the token limit's other name, once per parameter,
//!   and the row's `sampling` says what was dropped or renamed. A reply cut
//!   at the token limit is asked once more with twice the room.
//! - Every reply carries its [`sparring_types::Finish`]: the provider's
//!   `finish_reason` / `stop_reason` and a refusal's text, which the engine
//!   records per request and acts on (a refusal, the content filter or a
//!   truncated reply ends the row).
//! - [`roles::same_model`]: flags one backend playing two roles.
//! - [`model_agent`]: a spec's endpoint to a ready `Arc<dyn Agent>`.
//! - [`HttpGrader`]: a grader hook behind a URL (`--grader URL`), one `POST`
//!   per row over the same transport.
//!
//! Keys live in [`Secret`] (its `Debug` prints `***`), go only into request
//! headers, and are scrubbed from every message this crate produces, even
//! when a server echoes them back.
//!
//! ```no_run
//! # async fn demo() -> Result<(), sparring_llm::Error> {
//! use sparring_llm::{BackendOptions, BackendSpec, Limiter, RetryPolicy, Sampling, model_agent};
//! let BackendSpec::Model(endpoint) = BackendSpec::parse("openai:llama3@http://127.0.0.1:8000/v1")? else {
//!     unreachable!()
//! };
//! let resolved = endpoint.resolve(&|name| std::env::var(name).ok())?;
//! let agent = model_agent(resolved, BackendOptions {
//!     sampling: Sampling { temperature: Some(0.7), ..Sampling::default() },
//!     timeout: std::time::Duration::from_secs(60),
//!     retry: RetryPolicy::with_retries(5),
//!     limiter: Limiter::new(32, None),
//! })?;
//! println!("{}", agent.describe());
//! # Ok(()) }
//! ```

mod anthropic;
mod backend;
mod client;
pub mod defaults;
mod error;
mod grader;
mod http;
mod http_world;
mod openai;
pub mod roles;
mod settings;

pub use anthropic::AnthropicAgent;
pub use backend::{BackendSpec, Endpoint, Provider, Resolved, Secret};
pub use error::Error;
pub use grader::HttpGrader;
pub use http::{Limiter, RetryPolicy};
pub use http_world::HttpWorld;
pub use openai::OpenAiAgent;
pub use settings::{BackendOptions, Sampling};

use sparring_types::Agent;
use std::sync::Arc;

/// The agent for a resolved endpoint.
pub fn model_agent(resolved: Resolved, options: BackendOptions) -> Result<Arc<dyn Agent>, Error> {
    Ok(match resolved.endpoint.provider {
        Provider::OpenAi => Arc::new(OpenAiAgent::new(resolved, options)?),
        Provider::Anthropic => Arc::new(AnthropicAgent::new(resolved, options)?),
    })
}
