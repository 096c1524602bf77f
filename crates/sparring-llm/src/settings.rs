//! What a backend is asked to do: sampling settings and HTTP behaviour, and
//! the one mechanism for parameters a server rejects.
//!
//! A backend builds the full request body; [`exchange`] sends it with the
//! parameters the server is known to reject left out or renamed. When a
//! server answers HTTP 400 or 422 naming a parameter it was sent
//! (`temperature`, `top_p`, `max_tokens`, `max_completion_tokens`, `seed`,
//! `tool_choice`), that parameter is dropped, or for the token limit renamed
//! (`max_completion_tokens` ↔ `max_tokens`, dropped when the other name is
//! rejected too), and the request goes once more; the agent remembers it,
//! so later requests are sent adjusted from the start, and every request's
//! `sampling` record says what was dropped or renamed. Each parameter is
//! adjusted at most once per request, so a request goes out at most once
//! more per parameter, and a second rejection of the same one is the
//! backend's error. A reply cut at the token limit is asked once more with
//! [`defaults::TRUNCATION_ROOM_FACTOR`] times the room; a server that
//! refuses the larger limit leaves the first, truncated reply.

use crate::defaults;
use crate::http::{Failure, Limiter, RetryPolicy, Transport};
use serde_json::{Map, Value, json};
use sparring_types::{AgentError, Stop, Usage};
use std::collections::BTreeMap;
use std::sync::Mutex;
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
    /// With a value, each OpenAI-compatible request carries a `seed`
    /// derived from it and the request id; without, no `seed` is sent
    /// (OpenAI deprecates it). The Anthropic API has none.
    pub seed: Option<u64>,
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

/// A request parameter a server may reject.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Param {
    Temperature,
    TopP,
    MaxTokens,
    MaxCompletionTokens,
    Seed,
    ToolChoice,
}

impl Param {
    const ALL: [Self; 6] = [
        Self::Temperature,
        Self::TopP,
        Self::MaxTokens,
        Self::MaxCompletionTokens,
        Self::Seed,
        Self::ToolChoice,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Temperature => "temperature",
            Self::TopP => "top_p",
            Self::MaxTokens => "max_tokens",
            Self::MaxCompletionTokens => "max_completion_tokens",
            Self::Seed => "seed",
            Self::ToolChoice => "tool_choice",
        }
    }

    /// The other name of the token limit.
    fn renamed(self) -> Option<Self> {
        match self {
            Self::MaxTokens => Some(Self::MaxCompletionTokens),
            Self::MaxCompletionTokens => Some(Self::MaxTokens),
            _ => None,
        }
    }
}

/// What was done to the parameters a server rejected: dropped ones, and
/// the token limit's new name.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Adjust {
    dropped: Vec<Param>,
    renamed: Option<(Param, Param)>,
}

impl Adjust {
    /// The body as sent: dropped parameters removed, the token limit
    /// renamed.
    fn apply(&self, body: &Map<String, Value>) -> Map<String, Value> {
        let mut out = body.clone();
        if let Some((from, to)) = self.renamed
            && let Some(v) = out.remove(from.name())
        {
            out.insert(to.name().into(), v);
        }
        for p in &self.dropped {
            out.remove(p.name());
        }
        out
    }

    /// Drops or renames `param`, the one the server rejected.
    fn adjust(&mut self, param: Param) {
        match (param.renamed(), self.renamed) {
            // The token limit is renamed once; when its other name is
            // rejected too, it is dropped.
            (Some(to), None) => self.renamed = Some((param, to)),
            // Renamed first, the new name is the one dropped.
            _ => self.dropped.push(param),
        }
    }

    fn dropped(&self, p: Param) -> bool {
        self.dropped.contains(&p)
    }
}

/// The parameters the agent found its server rejects, shared by its
/// requests.
#[derive(Debug)]
pub(crate) struct Rejected {
    adjust: Mutex<Adjust>,
    /// The parameters this backend may adjust.
    adjustable: &'static [Param],
}

impl Rejected {
    pub(crate) fn new(adjustable: &'static [Param]) -> Self {
        Self {
            adjust: Mutex::new(Adjust::default()),
            adjustable,
        }
    }

    fn get(&self) -> Adjust {
        self.adjust.lock().map(|a| a.clone()).unwrap_or_default()
    }

    fn set(&self, adjust: &Adjust) {
        if let Ok(mut a) = self.adjust.lock() {
            *a = adjust.clone();
        }
    }
}

/// Every parameter, for OpenAI-compatible servers.
pub(crate) const OPENAI_ADJUSTABLE: &[Param] = &Param::ALL;
/// The Anthropic Messages API requires `max_tokens` and takes no seed.
pub(crate) const ANTHROPIC_ADJUSTABLE: &[Param] =
    &[Param::Temperature, Param::TopP, Param::ToolChoice];

/// The parameter a 400 / 422 reply rejects, among those sent: the one OpenAI
/// names in `error.param`, else the one the message names first (as a whole
/// word: vLLM, llama.cpp, Ollama and Anthropic say it in the text).
pub(crate) fn rejected_param(
    body: &Value,
    text: &str,
    sent: &Map<String, Value>,
    adjustable: &[Param],
) -> Option<Param> {
    let candidates: Vec<Param> = adjustable
        .iter()
        .copied()
        .filter(|p| sent.contains_key(p.name()))
        .collect();
    let error = body.get("error").unwrap_or(body);
    if let Some(named) = error.get("param").and_then(Value::as_str) {
        return candidates.iter().copied().find(|p| p.name() == named);
    }
    let said = if body.is_null() {
        text.to_lowercase()
    } else {
        body.to_string().to_lowercase()
    };
    candidates
        .into_iter()
        .filter_map(|p| word_at(&said, p.name()).map(|at| (at, p)))
        .min()
        .map(|(_, p)| p)
}

/// Where `word` first appears in `text` as a whole word (not inside a
/// longer identifier).
fn word_at(text: &str, word: &str) -> Option<usize> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(i) = text[from..].find(word) {
        let at = from + i;
        let end = at + word.len();
        let before = text[..at].chars().next_back().is_none_or(|c| !ident(c));
        let after = text[end..].chars().next().is_none_or(|c| !ident(c));
        if before && after {
            return Some(at);
        }
        from = end;
    }
    None
}

/// A request answered: the reply, the body as last sent, what was adjusted,
/// and the room retry when there was one.
pub(crate) struct Exchange {
    pub(crate) reply: Value,
    pub(crate) sent: Map<String, Value>,
    adjust: Adjust,
    /// The token limit before and after the room retry.
    more_room: Option<(u64, u64)>,
    /// Tokens of every request of the exchange, summed.
    pub(crate) usage: Option<Usage>,
}

/// Where one request of an exchange goes: every body of it (the first, one
/// per rejected parameter, one with more room) is posted the same way.
pub(crate) struct Post<'a> {
    pub(crate) transport: &'a Transport,
    pub(crate) url: &'a str,
    pub(crate) headers: &'a [(&'a str, String)],
    pub(crate) request_id: &'a str,
}

impl Post<'_> {
    async fn send(&self, body: &Map<String, Value>) -> Result<Value, Failure> {
        self.transport
            .post(
                self.url,
                self.headers,
                &Value::Object(body.clone()),
                self.request_id,
            )
            .await
    }
}

/// Sends `body`, adjusting the parameters the server rejects (module
/// docs), and asks once more with more room when the reply was cut at the
/// token limit (`stop` reads a reply's end). A failure is the backend's
/// error, already redacted.
pub(crate) async fn exchange(
    post: &Post<'_>,
    rejected: &Rejected,
    body: &Map<String, Value>,
    stop: impl Fn(&Value) -> Stop,
) -> Result<Exchange, AgentError> {
    let (reply, sent, adjust) = post_adjusting(post, rejected, body).await?;
    let mut usage = Usage::from_response(&reply);
    if stop(&reply) == Stop::Truncated
        && let Some((key, limit)) = token_limit(&sent)
    {
        let room = limit.saturating_mul(defaults::TRUNCATION_ROOM_FACTOR);
        let mut roomier = sent.clone();
        roomier.insert(key.to_owned(), json!(room));
        // A server that refuses the larger limit (past the model's own
        // maximum) leaves the first, truncated reply in place.
        if let Ok(again) = post.send(&roomier).await {
            usage = sum_usage(usage, Usage::from_response(&again));
            return Ok(Exchange {
                reply: again,
                sent: roomier,
                adjust,
                more_room: Some((limit, room)),
                usage,
            });
        }
    }
    Ok(Exchange {
        reply,
        sent,
        adjust,
        more_room: None,
        usage,
    })
}

fn sum_usage(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Usage {
            input_tokens: a.input_tokens + b.input_tokens,
            output_tokens: a.output_tokens + b.output_tokens,
        }),
        (a, b) => a.or(b),
    }
}

/// The token limit a body carries, under either name.
fn token_limit(sent: &Map<String, Value>) -> Option<(&'static str, u64)> {
    [Param::MaxCompletionTokens, Param::MaxTokens]
        .into_iter()
        .find_map(|p| {
            sent.get(p.name())
                .and_then(Value::as_u64)
                .map(|v| (p.name(), v))
        })
}

async fn post_adjusting(
    post: &Post<'_>,
    rejected: &Rejected,
    body: &Map<String, Value>,
) -> Result<(Value, Map<String, Value>, Adjust), AgentError> {
    let mut adjust = rejected.get();
    let mut tried: Vec<Param> = Vec::new();
    loop {
        let sent = adjust.apply(body);
        match post.send(&sent).await {
            Ok(v) => return Ok((v, sent, adjust)),
            Err(Failure::Status {
                status: 400 | 422,
                body: error,
                text,
            }) => {
                let param = rejected_param(&error, &text, &sent, rejected.adjustable)
                    .filter(|p| !tried.contains(p));
                let Some(param) = param else {
                    return Err(AgentError::backend(text));
                };
                tried.push(param);
                adjust.adjust(param);
                rejected.set(&adjust);
            }
            Err(Failure::Status { text, .. } | Failure::Other(text)) => {
                return Err(AgentError::backend(text));
            }
        }
    }
}

/// The `sampling` record of one request, from the body as sent.
pub(crate) fn record(
    provider: &str,
    model: &str,
    sampling: &Sampling,
    exchange: &Exchange,
) -> Value {
    let sent = &exchange.sent;
    let adjust = &exchange.adjust;
    let mut m = Map::new();
    m.insert("backend".into(), json!(provider));
    m.insert("model".into(), json!(model));
    for key in ["temperature", "top_p"] {
        m.insert(key.into(), sent.get(key).cloned().unwrap_or(Value::Null));
    }
    let limit = token_limit(sent);
    m.insert("max_tokens".into(), json!(limit.map(|(_, v)| v)));
    if let Some((key, _)) = limit {
        m.insert("max_tokens_param".into(), json!(key));
    }
    m.insert(
        "seed".into(),
        sent.get("seed").cloned().unwrap_or(Value::Null),
    );
    if sampling.logprobs {
        m.insert("logprobs".into(), json!(true));
        m.insert("top_logprobs".into(), json!(sampling.top_logprobs));
    }
    let requested: BTreeMap<&str, Value> = adjust
        .dropped
        .iter()
        .filter_map(|p| requested(sampling, *p).map(|v| (p.name(), v)))
        .collect();
    if !requested.is_empty() {
        m.insert(
            "dropped".into(),
            json!(requested.keys().collect::<Vec<_>>()),
        );
        m.insert("requested".into(), json!(requested));
    }
    if let Some((from, to)) = adjust.renamed
        && !adjust.dropped(to)
        && limit.is_some()
    {
        m.insert("renamed".into(), json!({from.name(): to.name()}));
    }
    if let Some((from, to)) = exchange.more_room {
        m.insert("more_room".into(), json!({"from": from, "to": to}));
    }
    if adjust.dropped(Param::Temperature) && sampling.temperature.is_some() {
        m.insert("temperature_dropped".into(), json!(true));
        m.insert("temperature_requested".into(), json!(sampling.temperature));
    }
    Value::Object(m)
}

/// The value asked for of a parameter, when the run set it.
fn requested(sampling: &Sampling, p: Param) -> Option<Value> {
    match p {
        Param::Temperature => sampling.temperature.map(|t| json!(t)),
        Param::TopP => sampling.top_p.map(|t| json!(t)),
        Param::MaxTokens | Param::MaxCompletionTokens => sampling.max_tokens.map(|t| json!(t)),
        Param::Seed => sampling.seed.map(|s| json!(s)),
        Param::ToolChoice => Some(json!("auto")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(keys: &[&str]) -> Map<String, Value> {
        keys.iter().map(|k| ((*k).to_owned(), json!(1))).collect()
    }

    #[test]
    fn the_rejected_parameter_is_read_from_param_or_the_message() {
        let all = OPENAI_ADJUSTABLE;
        let s = sent(&["temperature", "top_p", "max_tokens", "seed"]);
        let openai = json!({"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "param": "max_tokens", "code": "unsupported_parameter"}});
        assert_eq!(rejected_param(&openai, "", &s, all), Some(Param::MaxTokens));
        let vllm = json!({"object": "error", "message": "top_p must be in (0, 1], got 5.0.", "type": "BadRequestError", "param": null});
        assert_eq!(rejected_param(&vllm, "", &s, all), Some(Param::TopP));
        let anthropic = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "`temperature` and `top_p` cannot both be specified for this model. Please use only one."}});
        assert_eq!(
            rejected_param(&anthropic, "", &s, all),
            Some(Param::Temperature)
        );
        // A name inside a longer word is not a mention; nor is a parameter
        // that was not sent.
        let other = json!({"error": {"message": "seeds_per_request and max_tokens_total are unknown; tool_choice too"}});
        assert_eq!(rejected_param(&other, "", &s, all), None);
        let fastapi =
            json!({"detail": [{"loc": ["body", "seed"], "msg": "extra fields not permitted"}]});
        assert_eq!(rejected_param(&fastapi, "", &s, all), Some(Param::Seed));
        assert_eq!(
            rejected_param(&Value::Null, "HTTP 400: bad `top_p`", &s, all),
            Some(Param::TopP)
        );
        // Anthropic never adjusts `max_tokens`, which its API requires.
        let limit = json!({"error": {"message": "max_tokens: 99999 > 64000"}});
        assert_eq!(rejected_param(&limit, "", &s, ANTHROPIC_ADJUSTABLE), None);
    }

    #[test]
    fn the_token_limit_is_renamed_then_dropped() {
        let body = sent(&["max_completion_tokens", "top_p"]);
        let mut a = Adjust::default();
        a.adjust(Param::MaxCompletionTokens);
        let once = a.apply(&body);
        assert!(once.contains_key("max_tokens") && !once.contains_key("max_completion_tokens"));
        a.adjust(Param::MaxTokens);
        let twice = a.apply(&body);
        assert!(!twice.contains_key("max_tokens") && !twice.contains_key("max_completion_tokens"));
        a.adjust(Param::TopP);
        assert_eq!(a.apply(&body).len(), 0);
    }
}
