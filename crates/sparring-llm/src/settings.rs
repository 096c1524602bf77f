//! What a backend is asked to do: sampling settings and HTTP behaviour.

use crate::http::{Limiter, RetryPolicy};
use serde_json::{Map, Value, json};
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
