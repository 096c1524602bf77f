//! A fake model server for tests and benchmarks: OpenAI-compatible chat
//! completions (`POST /v1/chat/completions`) and the Anthropic Messages API
//! (`POST /v1/messages`) on one loopback port.
//!
//! `GET /stats` answers `{"requests", "max_in_flight"}` and
//! `POST /stats/reset` zeroes them (for benchmarks).
//!
//! Replies come from a script (a queue of [`Reply`] values, consumed one per
//! request in arrival order) and, once the script is empty, from the default
//! [`Behaviour`]. The server records every request it received (path, the
//! credential headers, the JSON body) so tests can check what a client sent.
//!
//! Built-in misbehaviour, besides what a script injects:
//! - a model listed in [`FakeOptions::reject_temperature`] answers any request
//!   that carries `temperature` with OpenAI's 400 `unsupported_value` error;
//! - a parameter listed in [`FakeOptions::reject_params`] is refused (400)
//!   in any request that carries it, the way OpenAI says it (`error.param`)
//!   or, with [`FakeOptions::plain_errors`], the way vLLM and llama.cpp do
//!   (the name in the message only);
//! - with [`FakeOptions::room_needed`], a reply to a request whose token
//!   limit (`max_tokens` / `max_completion_tokens`) is below it is cut at
//!   the limit: OpenAI `finish_reason: length`, Anthropic `stop_reason:
//!   max_tokens`;
//! - [`Reply::Refusal`] answers with OpenAI's `message.refusal` / Anthropic's
//!   `stop_reason: refusal`, and [`Reply::Finished`] gives any reply a
//!   `finish_reason` / `stop_reason` of the script's choosing;
//! - `logprobs: true` in a chat-completions request adds a per-token
//!   `logprobs.content` list (tokens are the reply's words; the i-th token's
//!   log-probability is `-0.25 * (i + 1)`, so sums are easy to check);
//! - the Anthropic route refuses (400) requests without `x-api-key`,
//!   `anthropic-version` or `max_tokens`, and conversations that do not
//!   alternate user / assistant starting with the user, or whose
//!   `tool_result` blocks answer no `tool_use` of the previous message, as
//!   the real API does.

use crate::served::Served;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::collections::{HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A text answer.
    Text(String),
    /// Tool calls: `(name, arguments)`; several make a parallel call.
    ToolCalls(Vec<(String, Value)>),
    /// A 200 answer with exactly this JSON body (leniency tests).
    Raw(Value),
    /// An HTTP error: status, JSON body, optional `Retry-After` header value.
    Status {
        /// The HTTP status.
        code: u16,
        /// The body.
        body: Value,
        /// The `Retry-After` header, verbatim, if any.
        retry_after: Option<String>,
    },
    /// An HTTP error whose message quotes the credential the client sent
    /// (a badly behaved proxy): tests that the key never leaks.
    EchoKey(u16),
    /// Waits this long, then answers with the inner reply.
    Delayed(Duration, Box<Reply>),
    /// A refusal with this text: OpenAI `{"content": null, "refusal":
    /// text}` with `finish_reason: stop`; Anthropic the text with
    /// `stop_reason: refusal`.
    Refusal(String),
    /// The inner reply (text or tool calls) with this `finish_reason`
    /// (OpenAI) or `stop_reason` (Anthropic), verbatim: `length`,
    /// `content_filter`, `max_tokens` …
    Finished(Box<Reply>, String),
}

impl Reply {
    /// An OpenAI-style error body with this status.
    pub fn error(code: u16, message: &str) -> Self {
        Self::Status {
            code,
            body: json!({"error": {"message": message, "type": "server_error"}}),
            retry_after: None,
        }
    }

    /// A 429 with a `Retry-After` header.
    pub fn rate_limited(retry_after: &str) -> Self {
        Self::Status {
            code: 429,
            body: json!({"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}),
            retry_after: Some(retry_after.to_owned()),
        }
    }

    /// A tool call of one tool.
    pub fn tool_call(name: &str, arguments: Value) -> Self {
        Self::ToolCalls(vec![(name.to_owned(), arguments)])
    }
}

/// What the server answers once the script is empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Behaviour {
    /// A tool-calling agent: calls the first tool (arguments `{}`) when the
    /// last message is not a tool result, else answers in text.
    #[default]
    Agent,
    /// Always the text "Done.".
    Text,
    /// Always this HTTP error status (an outage).
    Status(u16),
    /// Always this HTTP error status, quoting the credential it was sent.
    EchoKey(u16),
}

/// Answers a request from its JSON body; `None` leaves it to the default
/// [`Behaviour`]. Consulted after the script, so a script can still inject
/// faults first. Lets one server play several roles (a writer that reads
/// its prompt, a person, an agent).
#[derive(Clone)]
pub struct Responder(pub Arc<RespondFn>);

/// What a [`Responder`] runs.
pub type RespondFn = dyn Fn(&Value) -> Option<Reply> + Send + Sync;

impl Responder {
    /// A responder from a function.
    pub fn new(f: impl Fn(&Value) -> Option<Reply> + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder(..)")
    }
}

/// The text of every message of a chat-completions or Messages request,
/// joined by newlines (system prompt first), for responders to read.
pub fn request_text(request: &Value) -> String {
    let mut out = Vec::new();
    if let Some(system) = request.get("system").and_then(Value::as_str) {
        out.push(system.to_owned());
    }
    for m in request
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match m.get("content") {
            Some(Value::String(t)) => out.push(t.clone()),
            Some(Value::Array(parts)) => out.extend(
                parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str).map(str::to_owned)),
            ),
            _ => {}
        }
    }
    out.join("\n")
}

/// How the fake server behaves.
#[derive(Clone, Debug, Default)]
pub struct FakeOptions {
    /// Answers requests by their content once the script is empty.
    pub responder: Option<Responder>,
    /// Added before every answer.
    pub latency: Duration,
    /// Models that reject `temperature`.
    pub reject_temperature: Vec<String>,
    /// The answer once the script is empty.
    pub behaviour: Behaviour,
    /// Keep every request for [`FakeLlm::requests`] (off for benchmarks).
    pub record: bool,
    /// What the agent says after a tool result, in place of `Done.` (a
    /// question keeps the conversation going, for benchmarks).
    pub agent_text: Option<String>,
    /// Request parameters refused with HTTP 400 whenever sent, for every
    /// model (`top_p`, `max_tokens`, `max_completion_tokens`, `seed` …).
    pub reject_params: Vec<String>,
    /// Refuse parameters the way vLLM and llama.cpp do: the name in the
    /// message, no `error.param`.
    pub plain_errors: bool,
    /// Replies to a request whose token limit is below this are cut at the
    /// limit (`length` / `max_tokens`); requests without a limit are not.
    pub room_needed: Option<u64>,
}

/// A fake server on a runtime of its own, for tests that are not async
/// (the binary run end to end); it stops when dropped.
pub struct BackgroundFake {
    /// The server.
    pub server: FakeLlm,
    _runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for BackgroundFake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundFake")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl BackgroundFake {
    /// Starts a server with these options on `127.0.0.1:0`, served by one
    /// worker thread.
    pub fn start(options: FakeOptions) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let server = runtime.block_on(FakeLlm::with(options))?;
        Ok(Self {
            server,
            _runtime: runtime,
        })
    }
}

/// One request the server received.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The path (`/v1/chat/completions`).
    pub path: String,
    /// The `authorization` header, if sent (the first, when several were).
    pub authorization: Option<String>,
    /// Every `authorization` header sent, in order: a client that sends a
    /// Bearer key and a URL's Basic credentials sends two.
    pub authorizations: Vec<String>,
    /// The `x-api-key` header, if sent.
    pub api_key: Option<String>,
    /// The body.
    pub body: Value,
}

struct Inner {
    options: FakeOptions,
    script: Mutex<VecDeque<Reply>>,
    recorded: Mutex<Vec<Recorded>>,
    count: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    next_id: AtomicU64,
}

/// A running fake server; it stops when dropped.
pub struct FakeLlm {
    served: Served,
    inner: Arc<Inner>,
}

impl std::fmt::Debug for FakeLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.served.debug("FakeLlm", f)
    }
}

impl FakeLlm {
    /// Starts a server on `127.0.0.1:0` that records requests.
    pub async fn start() -> std::io::Result<Self> {
        Self::behaving(FakeOptions::default().behaviour).await
    }

    /// Starts a server on `127.0.0.1:0` that records requests and answers
    /// with `behaviour`.
    pub async fn behaving(behaviour: Behaviour) -> std::io::Result<Self> {
        Self::with(FakeOptions {
            behaviour,
            record: true,
            ..FakeOptions::default()
        })
        .await
    }

    /// Starts a server with these options on `127.0.0.1:0`.
    pub async fn with(options: FakeOptions) -> std::io::Result<Self> {
        Self::bind(options, Served::LOOPBACK).await
    }

    /// Starts a server with these options on `addr`.
    pub async fn bind(options: FakeOptions, addr: SocketAddr) -> std::io::Result<Self> {
        let inner = Arc::new(Inner {
            options,
            script: Mutex::new(VecDeque::new()),
            recorded: Mutex::new(Vec::new()),
            count: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            next_id: AtomicU64::new(0),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/messages", post(messages))
            .route("/stats", get(stats))
            .route("/stats/reset", post(reset))
            .with_state(Arc::clone(&inner));
        let served = Served::bind(addr, app).await?;
        Ok(Self { served, inner })
    }

    /// The base URL clients use: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr())
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.served.addr()
    }

    /// Appends replies to the script.
    pub fn push(&self, replies: impl IntoIterator<Item = Reply>) {
        if let Ok(mut s) = self.inner.script.lock() {
            s.extend(replies);
        }
    }

    /// Every request received so far, in arrival order (when recording).
    pub fn requests(&self) -> Vec<Recorded> {
        self.inner
            .recorded
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// Requests received so far.
    pub fn count(&self) -> usize {
        self.inner.count.load(Ordering::SeqCst)
    }

    /// The most requests that were being answered at once.
    pub fn max_in_flight(&self) -> usize {
        self.inner.max_in_flight.load(Ordering::SeqCst)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    OpenAi,
    Anthropic,
}

async fn chat(State(inner): State<Arc<Inner>>, headers: HeaderMap, body: Bytes) -> Response {
    serve(&inner, Api::OpenAi, &headers, &body).await
}

async fn messages(State(inner): State<Arc<Inner>>, headers: HeaderMap, body: Bytes) -> Response {
    serve(&inner, Api::Anthropic, &headers, &body).await
}

/// `GET /stats`: requests served and the most in flight at once.
async fn stats(State(inner): State<Arc<Inner>>) -> Response {
    axum::Json(json!({
        "requests": inner.count.load(Ordering::SeqCst),
        "max_in_flight": inner.max_in_flight.load(Ordering::SeqCst),
    }))
    .into_response()
}

/// `POST /stats/reset`: zero the counters.
async fn reset(State(inner): State<Arc<Inner>>) -> Response {
    inner.count.store(0, Ordering::SeqCst);
    inner.max_in_flight.store(0, Ordering::SeqCst);
    axum::Json(json!({"ok": true})).into_response()
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

struct InFlight<'a>(&'a Inner);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn serve(inner: &Inner, api: Api, headers: &HeaderMap, body: &[u8]) -> Response {
    inner.count.fetch_add(1, Ordering::SeqCst);
    let now = inner.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    inner.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let _guard = InFlight(inner);
    let Ok(request) = serde_json::from_slice::<Value>(body) else {
        return status(
            400,
            &json!({"error": {"message": "body is not JSON"}}),
            None,
        );
    };
    let authorization = header(headers, "authorization");
    let authorizations: Vec<String> = headers
        .get_all("authorization")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_owned))
        .collect();
    let api_key = header(headers, "x-api-key");
    if inner.options.record
        && let Ok(mut r) = inner.recorded.lock()
    {
        r.push(Recorded {
            path: match api {
                Api::OpenAi => "/v1/chat/completions".to_owned(),
                Api::Anthropic => "/v1/messages".to_owned(),
            },
            authorization: authorization.clone(),
            authorizations: authorizations.clone(),
            api_key: api_key.clone(),
            body: request.clone(),
        });
    }
    if !inner.options.latency.is_zero() {
        tokio::time::sleep(inner.options.latency).await;
    }
    if api == Api::Anthropic
        && let Err(invalid) = anthropic_valid(headers, &request)
    {
        let message = invalid.to_string();
        return status(
            400,
            &json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}),
            None,
        );
    }
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("fake");
    if request.get("temperature").is_some()
        && inner.options.reject_temperature.iter().any(|m| m == model)
    {
        return status(
            400,
            &json!({"error": {
                "message": "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.",
                "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}),
            None,
        );
    }
    if let Some(param) = inner
        .options
        .reject_params
        .iter()
        .find(|p| request.get(p.as_str()).is_some())
    {
        let message = format!("Unsupported parameter: '{param}' is not supported with this model.");
        let body = if inner.options.plain_errors {
            json!({"object": "error", "message": message, "type": "BadRequestError", "param": null, "code": 400})
        } else {
            json!({"error": {"message": message, "type": "invalid_request_error",
                             "param": param, "code": "unsupported_parameter"}})
        };
        return status(400, &body, None);
    }
    let scripted = inner.script.lock().ok().and_then(|mut s| s.pop_front());
    let mut reply = scripted
        .or_else(|| {
            inner
                .options
                .responder
                .as_ref()
                .and_then(|r| (r.0)(&request))
        })
        .unwrap_or_else(|| {
            default_reply(
                inner.options.behaviour,
                inner.options.agent_text.as_deref(),
                &request,
            )
        });
    loop {
        match reply {
            Reply::Delayed(delay, then) => {
                tokio::time::sleep(delay).await;
                reply = *then;
            }
            Reply::Status {
                code,
                body,
                retry_after,
            } => return status(code, &body, retry_after.as_deref()),
            Reply::EchoKey(code) => {
                // Every credential the client sent, as a careless proxy
                // would quote them.
                let mut sent = authorizations.clone();
                sent.extend(api_key.clone());
                let key = sent.join(", ");
                return status(
                    code,
                    &json!({"error": {"message": format!("Incorrect API key provided: {key}")}}),
                    None,
                );
            }
            Reply::Raw(body) => return (StatusCode::OK, axum::Json(body)).into_response(),
            Reply::Text(_) | Reply::ToolCalls(_) | Reply::Refusal(_) | Reply::Finished(..) => {
                break;
            }
        }
    }
    let limit = request
        .get("max_completion_tokens")
        .or_else(|| request.get("max_tokens"))
        .and_then(Value::as_u64);
    if let (Some(needed), Some(limit)) = (inner.options.room_needed, limit)
        && limit < needed
        && !matches!(reply, Reply::Refusal(_) | Reply::Finished(..))
    {
        let word = match api {
            Api::OpenAi => "length",
            Api::Anthropic => "max_tokens",
        };
        reply = Reply::Finished(Box::new(cut(reply)), word.to_owned());
    }
    let n = inner.next_id.fetch_add(1, Ordering::SeqCst);
    let body = match api {
        Api::OpenAi => openai_body(&reply, &request, model, n),
        Api::Anthropic => anthropic_body(&reply, model, n),
    };
    (StatusCode::OK, axum::Json(body)).into_response()
}

fn status(code: u16, body: &Value, retry_after: Option<&str>) -> Response {
    let code = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (code, axum::Json(body.clone())).into_response();
    if let Some(value) = retry_after
        && let Ok(v) = value.parse()
    {
        response.headers_mut().insert("retry-after", v);
    }
    response
}

fn default_reply(behaviour: Behaviour, agent_text: Option<&str>, request: &Value) -> Reply {
    let done = || Reply::Text(agent_text.unwrap_or("Done.").to_owned());
    match behaviour {
        Behaviour::Text => return done(),
        Behaviour::Status(code) => return Reply::error(code, "the fake server is down"),
        Behaviour::EchoKey(code) => return Reply::EchoKey(code),
        Behaviour::Agent => {}
    }
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let last_is_result = messages.last().is_some_and(|m| {
        m.get("role").and_then(Value::as_str) == Some("tool")
            || m.get("content").and_then(Value::as_array).is_some_and(|c| {
                c.iter()
                    .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            })
    });
    let first_tool = request
        .get("tools")
        .and_then(Value::as_array)
        .and_then(|t| t.first())
        .and_then(|t| {
            t.pointer("/function/name")
                .or_else(|| t.get("name"))
                .and_then(Value::as_str)
        });
    match first_tool {
        Some(name) if !last_is_result => Reply::tool_call(name, json!({})),
        _ => done(),
    }
}

/// A reply cut at its token limit: half its text, or a tool call whose
/// arguments stop mid-way.
fn cut(reply: Reply) -> Reply {
    match reply {
        Reply::Text(t) => {
            let half: String = t.chars().take(t.chars().count() / 2).collect();
            Reply::Text(half)
        }
        Reply::ToolCalls(calls) => Reply::ToolCalls(
            calls
                .into_iter()
                .take(1)
                .map(|(name, args)| {
                    let text = args.to_string();
                    (
                        name,
                        Value::String(text.chars().take(text.len() / 2).collect()),
                    )
                })
                .collect(),
        ),
        other => other,
    }
}

fn tokens_of(reply: &Reply) -> Vec<String> {
    match reply {
        Reply::Text(t) => t.split_whitespace().map(str::to_owned).collect(),
        Reply::ToolCalls(calls) => calls
            .iter()
            .flat_map(|(n, a)| [n.clone(), a.to_string()])
            .collect(),
        _ => Vec::new(),
    }
}

/// A tool call's arguments as the wire carries them: a cut call's text as
/// it is (no longer JSON), whole ones as JSON text.
fn arguments_text(args: &Value) -> String {
    match args {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn openai_message(reply: &Reply, n: u64) -> (Value, String) {
    match reply {
        Reply::ToolCalls(calls) => (
            json!({"role": "assistant", "content": null, "refusal": null, "tool_calls": calls.iter().enumerate().map(|(i, (name, args))| json!({
                "id": format!("call_{n}_{i}"), "type": "function",
                "function": {"name": name, "arguments": arguments_text(args)}})).collect::<Vec<_>>()}),
            "tool_calls".to_owned(),
        ),
        Reply::Text(text) => (
            json!({"role": "assistant", "content": text, "refusal": null}),
            "stop".to_owned(),
        ),
        Reply::Refusal(text) => (
            json!({"role": "assistant", "content": null, "refusal": text}),
            "stop".to_owned(),
        ),
        Reply::Finished(inner, reason) => (openai_message(inner, n).0, reason.clone()),
        _ => (
            json!({"role": "assistant", "content": ""}),
            "stop".to_owned(),
        ),
    }
}

fn openai_body(reply: &Reply, request: &Value, model: &str, n: u64) -> Value {
    let (message, finish) = openai_message(reply, n);
    let logprobs = if request.get("logprobs").and_then(Value::as_bool) == Some(true) {
        let top = request
            .get("top_logprobs")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let content: Vec<Value> = tokens_of(reply)
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let lp = -0.25 * (i as f64 + 1.0);
                let alternatives: Vec<Value> = (0..top)
                    .map(|k| json!({"token": format!("{t}~{k}"), "logprob": lp - k as f64, "bytes": null}))
                    .collect();
                json!({"token": t, "logprob": lp, "bytes": null, "top_logprobs": alternatives})
            })
            .collect();
        json!({"content": content})
    } else {
        Value::Null
    };
    json!({
        "id": format!("chatcmpl-{n}"),
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": logprobs}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        "service_tier": "default",
    })
}

fn anthropic_content(reply: &Reply, n: u64) -> (Vec<Value>, String) {
    match reply {
        Reply::ToolCalls(calls) => (
            calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    json!({"type": "tool_use", "id": format!("toolu_{n}_{i}"), "name": name, "input": args})
                })
                .collect::<Vec<_>>(),
            "tool_use".to_owned(),
        ),
        Reply::Text(text) => (
            vec![json!({"type": "text", "text": text})],
            "end_turn".to_owned(),
        ),
        Reply::Refusal(text) => (
            vec![json!({"type": "text", "text": text})],
            "refusal".to_owned(),
        ),
        Reply::Finished(inner, reason) => (anthropic_content(inner, n).0, reason.clone()),
        _ => (Vec::new(), "end_turn".to_owned()),
    }
}

fn anthropic_body(reply: &Reply, model: &str, n: u64) -> Value {
    let (content, stop) = anthropic_content(reply, n);
    json!({
        "id": format!("msg_{n}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    })
}

/// What the real Messages API refuses in a request, in its words (the
/// fake's 400 answer); `index` is the message's, or the tool's.
#[derive(Debug, thiserror::Error)]
enum Invalid<'a> {
    /// A header the API needs.
    #[error("{0} header is required")]
    Header(&'static str),
    /// A top-level field the API needs.
    #[error("{0}: Field required")]
    Field(&'static str),
    /// A tool without its name or input schema.
    #[error("tools.{index}: name and input_schema are required")]
    Tool { index: usize },
    /// A message out of the user / assistant turn order.
    #[error(
        "messages.{index}: roles must alternate between \"user\" and \"assistant\" starting with \"user\""
    )]
    Turn { index: usize },
    /// A message without content.
    #[error("messages.{index}.content: Field required")]
    Content { index: usize },
    /// A `tool_use` block whose input is not an object.
    #[error("messages.{index}: tool_use.input must be an object")]
    ToolUseInput { index: usize },
    /// A `tool_result` block answering no `tool_use` of the message before.
    #[error(
        "messages.{index}: tool_result block(s) provided without a matching tool_use `{id}` in the previous message"
    )]
    UnmatchedToolResult { index: usize, id: &'a str },
    /// A block of an unknown type.
    #[error("messages.{index}: unknown block type {kind:?}")]
    BlockType { index: usize, kind: Option<&'a str> },
}

/// The checks the real Messages API makes that a client can get wrong.
fn anthropic_valid<'a>(headers: &HeaderMap, request: &'a Value) -> Result<(), Invalid<'a>> {
    if header(headers, "x-api-key").is_none() {
        return Err(Invalid::Header("x-api-key"));
    }
    if header(headers, "anthropic-version").is_none() {
        return Err(Invalid::Header("anthropic-version"));
    }
    if request.get("max_tokens").and_then(Value::as_u64).is_none() {
        return Err(Invalid::Field("max_tokens"));
    }
    if let Some(tools) = request.get("tools").and_then(Value::as_array) {
        for (index, t) in tools.iter().enumerate() {
            if t.get("name").is_none() || t.get("input_schema").is_none() {
                return Err(Invalid::Tool { index });
            }
        }
    }
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .ok_or(Invalid::Field("messages"))?;
    let mut expected = "user";
    let mut open_calls: HashSet<String> = HashSet::new();
    for (index, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        if role != expected {
            return Err(Invalid::Turn { index });
        }
        let blocks: &[Value] = match m.get("content") {
            Some(Value::String(_)) => &[],
            Some(Value::Array(b)) => b,
            _ => return Err(Invalid::Content { index }),
        };
        let mut calls = HashSet::new();
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    if !b.get("input").is_some_and(Value::is_object) {
                        return Err(Invalid::ToolUseInput { index });
                    }
                    if let Some(id) = b.get("id").and_then(Value::as_str) {
                        calls.insert(id.to_owned());
                    }
                }
                Some("tool_result") => {
                    let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                    if !open_calls.contains(id) {
                        return Err(Invalid::UnmatchedToolResult { index, id });
                    }
                }
                Some("text") => {}
                kind => return Err(Invalid::BlockType { index, kind }),
            }
        }
        open_calls = calls;
        expected = if role == "user" { "assistant" } else { "user" };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_anthropic_request_is_worded_as_the_api_words_it() {
        let mut headers = HeaderMap::new();
        let said = |h: &HeaderMap, r: &Value| anthropic_valid(h, r).map_err(|e| e.to_string());
        assert_eq!(
            said(&headers, &json!({})),
            Err("x-api-key header is required".to_owned())
        );
        headers.insert("x-api-key", "k".parse().unwrap());
        headers.insert("anthropic-version", "v".parse().unwrap());
        assert_eq!(
            said(&headers, &json!({"max_tokens": 8})),
            Err("messages: Field required".to_owned())
        );
        let turns = json!({"max_tokens": 8, "messages": [{"role": "assistant", "content": "hi"}]});
        assert_eq!(
            said(&headers, &turns),
            Err("messages.0: roles must alternate between \"user\" and \"assistant\" starting with \"user\"".to_owned())
        );
        let block = json!({"max_tokens": 8, "messages": [{"role": "user", "content": [{"type": "image"}]}]});
        assert_eq!(
            said(&headers, &block),
            Err("messages.0: unknown block type Some(\"image\")".to_owned())
        );
        let ok = json!({"max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(said(&headers, &ok), Ok(()));
    }
}
