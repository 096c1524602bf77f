//! The caller's world as an HTTP endpoint: each tool call is one `POST` to
//! the URL (`docs/world.md`, "The caller's world").
//!
//! The request body is `{"id", "tool", "arguments", "rollout": {"prompt",
//! "rollout_index", "seed"}}`; a `2xx` answer's JSON body is `{"result":
//! ANY}` or `{"error": {"kind", "message", "hint"}}` (the same replies a
//! command world prints, `ok` optional). Calls may run concurrently, one
//! HTTP request each. A connection error, a non-`2xx` status, a body that is
//! not JSON or a missed timeout fails that call: the agent sees a `fault`
//! and the run goes on. The URL's user, password and query never appear in
//! rows, logs or errors.

use crate::Error;
use serde_json::{Value, json};
use sparring_types::{BoxFuture, ExecuteError, ExecuteRequest, LogSink, ToolExecutor};
use std::sync::Arc;
use std::time::Duration;

/// A world behind an HTTP URL.
pub struct HttpWorld {
    client: reqwest::Client,
    url: reqwest::Url,
    display: String,
    timeout: Duration,
    log: Option<Arc<dyn LogSink>>,
    /// The URL's credentials, scrubbed from what a server quotes back.
    scrubber: sparring_types::secrets::Scrubber,
}

impl std::fmt::Debug for HttpWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpWorld")
            .field("url", &self.display)
            .finish_non_exhaustive()
    }
}

/// A URL without its user, password, query and fragment, for display.
fn display_url(url: &reqwest::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

impl HttpWorld {
    /// Checks the URL and proves the server answers (any HTTP status to a
    /// `GET`; the world's tools are never called for it).
    ///
    /// # Errors
    ///
    /// [`Error::World`] when the URL is not `http://` or `https://` with a
    /// host, or nothing answers there.
    pub async fn start(
        url: &str,
        timeout: Duration,
        log: Option<Arc<dyn LogSink>>,
    ) -> Result<Self, Error> {
        let parsed = reqwest::Url::parse(url.trim()).map_err(|e| Error::World {
            world: "<invalid url>".to_owned(),
            message: format!("not a URL: {e}"),
        })?;
        let display = display_url(&parsed);
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(Error::World {
                world: display,
                message: "must be an http:// or https:// URL with a host".to_owned(),
            });
        }
        // ring, not aws-lc (a slow C build); installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(crate::defaults::HTTP_WORLD_CONNECT_TIMEOUT)
            .tcp_nodelay(true)
            .build()
            .map_err(|e| Error::World {
                world: display.clone(),
                message: e.without_url().to_string().to_lowercase(),
            })?;
        let mut scrubber = sparring_types::secrets::Scrubber::default();
        scrubber.url(url);
        let world = Self {
            client,
            url: parsed,
            display,
            timeout,
            log,
            scrubber,
        };
        let probe = world.client.get(world.url.clone()).timeout(timeout).send();
        match probe.await {
            Ok(_) => {
                if let Some(log) = &world.log {
                    log.line(&format!("world: `{}` answers", world.display));
                }
                Ok(world)
            }
            Err(e) => Err(Error::World {
                world: world.display.clone(),
                message: format!("nothing answers there ({})", reason(&e)),
            }),
        }
    }

    async fn ask(&self, request: ExecuteRequest) -> Result<Value, ExecuteError> {
        let body = json!({
            "id": request.id,
            "tool": request.tool,
            "arguments": request.arguments,
            "rollout": request.rollout,
        });
        let result = self
            .post(&body)
            .await
            .map_err(|e| self.scrubber.scrub(&e.to_string()));
        if let (Err(reason), Some(log)) = (&result, &self.log) {
            log.line(&format!("world: call `{}` failed: {reason}", request.id));
        }
        result.map_err(ExecuteError)
    }

    async fn post(&self, body: &Value) -> Result<Value, CallError<'_>> {
        let world = self.display.as_str();
        let failed = |e: reqwest::Error| CallError::Request {
            world,
            reason: reason(&e),
        };
        let response = self
            .client
            .post(self.url.clone())
            .timeout(self.timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(failed)?;
        let status = response.status();
        let text = response.text().await.map_err(failed)?;
        let shown: String = text.chars().take(120).collect();
        if !status.is_success() {
            return Err(CallError::Status {
                world,
                status: status.as_u16(),
                shown,
            });
        }
        let Ok(value) = serde_json::from_str::<Value>(&text) else {
            return Err(CallError::NotJson { world, shown });
        };
        if !value.is_object() {
            return Err(CallError::NotObject { world, shown });
        }
        Ok(sparring_types::world_answer(&value))
    }
}

/// Why one call to the world failed; `world` is its URL for display,
/// `shown` the first 120 characters of what it answered.
#[derive(Debug, thiserror::Error)]
enum CallError<'a> {
    /// No answer: no connection, a timeout, a broken body.
    #[error("the world at `{world}`: {reason}")]
    Request { world: &'a str, reason: String },
    /// A status other than `2xx`.
    #[error("the world at `{world}` answered HTTP {status}: `{shown}`")]
    Status {
        world: &'a str,
        status: u16,
        shown: String,
    },
    /// A body that is not JSON.
    #[error("the world at `{world}` answered with a body that is not JSON: `{shown}`")]
    NotJson { world: &'a str, shown: String },
    /// JSON other than an object.
    #[error(
        "the world at `{world}` answered `{shown}`; expected an object with `result` or `error`"
    )]
    NotObject { world: &'a str, shown: String },
}

/// Why a request failed, without the URL (it may hold a secret).
fn reason(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "no answer within the timeout".to_owned()
    } else if e.is_connect() {
        "cannot connect".to_owned()
    } else {
        let mut text = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            text = format!("{text}: {s}");
            source = s.source();
        }
        // reqwest names the URL in its own message; never show it.
        text.replace(e.url().map_or("", reqwest::Url::as_str), "<url>")
            .to_lowercase()
    }
}

impl ToolExecutor for HttpWorld {
    fn execute(&self, request: ExecuteRequest) -> BoxFuture<'_, Result<Value, ExecuteError>> {
        Box::pin(self.ask(request))
    }

    fn describe(&self) -> String {
        format!("http:{}", self.display)
    }
}
