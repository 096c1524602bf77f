//! What a backend is asked to do: sampling settings and HTTP behaviour.

use crate::http::{Failure, Limiter, RetryPolicy, Transport};
use serde_json::{Map, Value, json};
use sparring_types::AgentError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Sampling settings sent with every request. `None` leaves the server's
/// default; `sampling` on rows records what was sent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sampling {
    /// Temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling mass.
    pub top_p: Option<f64>,
    /// Most tokens per reply.
    pub max_tokens: Option<u32>,
    /// Ask for per-token log-probabilities (OpenAI-compatible only).
    pub logprobs: bool,
    /// Alternatives per token with `logprobs`.
    pub top_logprobs: Option<u32>,
}

/// Everything a backend needs besides its endpoint.
#[derive(Clone, Debug)]
pub struct BackendOptions {
    /// Sampling settings.
    pub sampling: Sampling,
    /// Time one HTTP attempt may take, reply included.
    pub timeout: Duration,
    /// Retries and backoff.
    pub retry: RetryPolicy,
    /// The global limits, shared by every backend of a run.
    pub limiter: Limiter,
}

/// Whether the model was found to reject `temperature`; once it has, no
/// later request sends it.
#[derive(Debug, Default)]
pub(crate) struct TemperatureState(AtomicBool);

impl TemperatureState {
    pub(crate) fn dropped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    pub(crate) fn drop_it(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Posts a request built by `body(send_temperature)`, dropping
/// `temperature` once and retrying when the server rejects it (and for every
/// later request once it has). Gives the reply and whether `temperature` was
/// left out of it; a failure is the backend's error, already redacted.
pub(crate) async fn post_with_temperature(
    transport: &Transport,
    state: &TemperatureState,
    wants_temperature: bool,
    url: &str,
    headers: &[(&str, String)],
    request_id: &str,
    body: impl Fn(bool) -> Value,
) -> Result<(Value, bool), AgentError> {
    let mut dropped = state.dropped();
    let mut retried_without = false;
    loop {
        let send_temperature = wants_temperature && !dropped;
        match transport
            .post(url, headers, &body(send_temperature), request_id)
            .await
        {
            Ok(v) => return Ok((v, dropped && wants_temperature)),
            Err(Failure::Status {
                status: 400,
                body,
                text,
            }) if send_temperature && !retried_without && rejects_temperature(&body, &text) => {
                state.drop_it();
                dropped = true;
                retried_without = true;
            }
            Err(Failure::Status { text, .. } | Failure::Other(text)) => {
                return Err(AgentError::backend(text));
            }
        }
    }
}

/// Whether a 400 reply is a rejection of `temperature`: OpenAI names the
/// parameter in `error.param`; other servers say it in the message.
pub(crate) fn rejects_temperature(body: &Value, text: &str) -> bool {
    let error = body.get("error").unwrap_or(body);
    error.get("param").and_then(Value::as_str) == Some("temperature")
        || text.to_lowercase().contains("temperature")
}

/// The `sampling` record of one request, as sent.
pub(crate) fn record(
    provider: &str,
    model: &str,
    sampling: &Sampling,
    max_tokens: Option<u32>,
    seed: Option<u64>,
    temperature_dropped: bool,
) -> Value {
    let mut m = Map::new();
    m.insert("backend".into(), json!(provider));
    m.insert("model".into(), json!(model));
    m.insert(
        "temperature".into(),
        json!(if temperature_dropped {
            None
        } else {
            sampling.temperature
        }),
    );
    m.insert("top_p".into(), json!(sampling.top_p));
    m.insert("max_tokens".into(), json!(max_tokens));
    m.insert("seed".into(), json!(seed));
    if sampling.logprobs {
        m.insert("logprobs".into(), json!(true));
        m.insert("top_logprobs".into(), json!(sampling.top_logprobs));
    }
    if temperature_dropped {
        m.insert("temperature_dropped".into(), json!(true));
        m.insert("temperature_requested".into(), json!(sampling.temperature));
    }
    Value::Object(m)
}
