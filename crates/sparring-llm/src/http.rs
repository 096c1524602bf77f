//! The HTTP layer both backends share: one pooled client, a global limiter
//! (requests in flight, requests per minute), per-attempt timeouts, and
//! retries with exponential backoff and full jitter that honour
//! `Retry-After`.
//!
//! Retried: HTTP 408, 409, 429 and every 5xx; connection errors; timeouts;
//! a connection that breaks mid-reply. Not retried: other 4xx (bad request,
//! auth, not found), which are the caller's to handle (the temperature drop)
//! or report; a request that cannot be built (a key with a control
//! character). Every message that leaves this module has every credential
//! the transport knows removed: the key and the base URL's user and
//! password, as given, percent-decoded and in base64
//! (`sparring_types::secrets::Scrubber`).
//!
//! A base URL's user and password are never sent in the URL. They become an
//! HTTP Basic `Authorization` header only when the request carries no
//! `Authorization` of its own: with a Bearer key, the key alone is sent
//! (never two `Authorization` headers).

use crate::backend::{Secret, display_url};
use crate::defaults;
use serde_json::Value;
use sparring_types::secrets::{Scrubber, base64, percent_decode};
use sparring_types::seed::Stream;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::{Mutex, Semaphore};
use tokio::time::Instant;

/// Retry settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 never retries.
    pub retries: u32,
    /// First backoff ceiling (doubles per attempt).
    pub base: Duration,
    /// Largest backoff ceiling.
    pub cap: Duration,
    /// Longest `Retry-After` honoured; longer ones are cut to this.
    pub retry_after_cap: Duration,
}

impl RetryPolicy {
    /// The default shape with `retries` retries.
    pub fn with_retries(retries: u32) -> Self {
        Self {
            retries,
            base: defaults::RETRY_BASE,
            cap: defaults::RETRY_CAP,
            retry_after_cap: defaults::RETRY_AFTER_CAP,
        }
    }

    /// The wait before retry number `attempt + 1` (full jitter: a uniform
    /// draw below the exponential ceiling), drawn from a stream seeded by
    /// the request id so runs are reproducible.
    pub fn backoff(&self, request_id: &str, attempt: u32) -> Duration {
        let ceiling = self
            .base
            .saturating_mul(2u32.saturating_pow(attempt.min(30)))
            .min(self.cap);
        let mut stream = Stream::derive(0, "backoff", &[fnv(request_id), u64::from(attempt)]);
        ceiling.mul_f64(stream.unit())
    }
}

/// A small stable hash of a request id, to index its backoff stream.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The global limits on requests: at most `concurrency` in flight, and at
/// most `rpm` started per minute (evenly spaced). Clone it to share it
/// between backends: every clone draws from the same limits.
#[derive(Clone, Debug)]
pub struct Limiter {
    in_flight: Arc<Semaphore>,
    spacing: Option<Duration>,
    next_start: Arc<Mutex<Option<Instant>>>,
}

impl Limiter {
    /// At most `concurrency` requests in flight (at least 1, at most
    /// [`Semaphore::MAX_PERMITS`]) and, when given, `rpm` requests started
    /// per minute.
    pub fn new(concurrency: usize, rpm: Option<u32>) -> Self {
        Self {
            in_flight: Arc::new(Semaphore::new(concurrency.clamp(1, Semaphore::MAX_PERMITS))),
            spacing: rpm.filter(|r| *r > 0).map(|r| Duration::from_mins(1) / r),
            next_start: Arc::new(Mutex::new(None)),
        }
    }

    async fn acquire(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        let permit = self.in_flight.acquire().await.ok()?;
        if let Some(spacing) = self.spacing {
            let start = {
                let mut next = self.next_start.lock().await;
                let now = Instant::now();
                let start = next.map_or(now, |n| n.max(now));
                *next = Some(start + spacing);
                start
            };
            tokio::time::sleep_until(start).await;
        }
        Some(permit)
    }
}

/// How a request failed for good.
#[derive(Clone, Debug)]
pub(crate) enum Failure {
    /// A status that is not retried (most 4xx): the status and the body.
    Status {
        status: u16,
        body: Value,
        text: String,
    },
    /// Retries exhausted, or a reply that is not JSON: the message says which.
    Other(String),
}

/// One backend's HTTP transport.
#[derive(Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    limiter: Limiter,
    policy: RetryPolicy,
    timeout: Duration,
    key: Option<Secret>,
    label: String,
    scrubber: Scrubber,
}

impl Transport {
    /// A transport for requests under `base_url` (whose credentials, like
    /// the key, are scrubbed from every message).
    pub(crate) fn new(
        label: String,
        base_url: &str,
        key: Option<Secret>,
        timeout: Duration,
        policy: RetryPolicy,
        limiter: Limiter,
    ) -> Result<Self, crate::Error> {
        // ring, not aws-lc (a slow C build); installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(defaults::CONNECT_TIMEOUT)
            .pool_max_idle_per_host(defaults::POOL_MAX_IDLE_PER_HOST)
            .tcp_nodelay(true)
            // Redirects are not followed: reqwest would forward `x-api-key`
            // (it strips only `Authorization` and cookies) to another host.
            // A 3xx is then a failure with its status, not retried.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| crate::Error::Client(e.to_string()))?;
        let mut scrubber = Scrubber::default();
        scrubber.url(base_url);
        if let Some(k) = &key {
            scrubber.key(k.expose());
        }
        Ok(Self {
            client,
            limiter,
            policy,
            timeout,
            key,
            label,
            scrubber,
        })
    }

    pub(crate) fn key(&self) -> Option<&Secret> {
        self.key.as_ref()
    }

    /// `Authorization: Bearer` with the transport's key, when it has one.
    pub(crate) fn bearer(&self) -> Vec<(&'static str, String)> {
        self.key
            .iter()
            .map(|key| ("authorization", format!("Bearer {}", key.expose())))
            .collect()
    }

    /// Removes every credential the transport knows from any text that may
    /// leave the crate.
    pub(crate) fn redact(&self, text: &str) -> String {
        self.scrubber.scrub(text)
    }

    /// POSTs `body` to `url` with `headers`, retrying as the policy says.
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Value,
        request_id: &str,
    ) -> Result<Value, Failure> {
        let bytes = serde_json::to_vec(body).map_err(|e| Failure::Other(e.to_string()))?;
        let attempts = self.policy.retries.saturating_add(1);
        let mut last = String::new();
        for attempt in 0..attempts {
            let outcome = self.attempt(url, headers, &bytes).await;
            let wait = match outcome {
                Attempt::Done(value) => return Ok(value),
                Attempt::Fatal(failure) => return Err(self.redact_failure(failure)),
                Attempt::Retry { reason, after } => {
                    last = reason;
                    after.map_or_else(
                        || self.policy.backoff(request_id, attempt),
                        |a| a.min(self.policy.retry_after_cap),
                    )
                }
            };
            if attempt + 1 < attempts {
                tokio::time::sleep(wait).await;
            }
        }
        Err(Failure::Other(self.redact(&format!(
            "{}: {last}; gave up after {attempts} attempt{}",
            self.label,
            if attempts == 1 { "" } else { "s" }
        ))))
    }

    fn redact_failure(&self, failure: Failure) -> Failure {
        match failure {
            Failure::Status { status, body, text } => Failure::Status {
                status,
                body,
                text: self.redact(&text),
            },
            Failure::Other(m) => Failure::Other(self.redact(&m)),
        }
    }

    async fn attempt(&self, url: &str, headers: &[(&str, String)], bytes: &[u8]) -> Attempt {
        let Some(_permit) = self.limiter.acquire().await else {
            return Attempt::Fatal(Failure::Other(format!(
                "{}: the request limiter was closed",
                self.label
            )));
        };
        let (url, basic) = split_credentials(url);
        let mut request = self
            .client
            .post(url)
            .timeout(self.timeout)
            .header("content-type", "application/json")
            .body(bytes.to_vec());
        let has_authorization = headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
        if let (Some(basic), false) = (basic, has_authorization) {
            request = request.header("authorization", basic);
        }
        for (name, value) in headers {
            request = request.header(*name, value.as_str());
        }
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => return self.transport_error(&e),
        };
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers(), SystemTime::now());
        let body = match response.bytes().await {
            Ok(b) => b,
            Err(e) => return self.transport_error(&e),
        };
        let parsed = serde_json::from_slice::<Value>(&body);
        if (200..300).contains(&status) {
            return match parsed {
                Ok(v) => Attempt::Done(v),
                Err(_) => Attempt::Fatal(Failure::Other(format!(
                    "{}: HTTP {status} with a body that is not JSON: `{}`",
                    self.label,
                    excerpt(&String::from_utf8_lossy(&body))
                ))),
            };
        }
        let message = parsed
            .as_ref()
            .ok()
            .and_then(error_message)
            .unwrap_or_else(|| excerpt(&String::from_utf8_lossy(&body)));
        let text = format!("HTTP {status}: {message}");
        if matches!(status, 408 | 409 | 429) || status >= 500 {
            Attempt::Retry {
                reason: text,
                after: retry_after,
            }
        } else {
            Attempt::Fatal(Failure::Status {
                status,
                body: parsed.unwrap_or(Value::Null),
                text: format!("{}: {text}", self.label),
            })
        }
    }

    fn transport_error(&self, e: &reqwest::Error) -> Attempt {
        if e.is_builder() {
            // The request could not be built: retrying cannot help. The
            // usual cause is a key with a character a header cannot carry
            // (a control character such as a newline; bytes above ASCII are
            // sent as they are). reqwest's own message is not used, so no
            // value can leak.
            return Attempt::Fatal(Failure::Other(format!(
                "{}: the API key or a header value is not valid (a control character such as a newline?); the request was not sent",
                self.label
            )));
        }
        let reason = if out_of_descriptors(e) {
            // Not the server's fault, and not worth calling "cannot
            // connect": the fix is on this machine.
            OUT_OF_DESCRIPTORS.to_owned()
        } else if e.is_timeout() {
            format!(
                "no reply within {} s (request timeout)",
                self.timeout.as_secs_f64()
            )
        } else if e.is_connect() {
            "cannot connect".to_owned()
        } else {
            "the connection broke".to_owned()
        };
        Attempt::Retry {
            reason,
            after: None,
        }
    }
}

/// What a request failed with when sparring ran out of file descriptors.
pub(crate) const OUT_OF_DESCRIPTORS: &str = "sparring ran out of file descriptors (too many open files); raise `ulimit -n` or lower `--concurrency`";

/// Whether a request failed because this process ran out of file
/// descriptors (`EMFILE`, `ENFILE`), somewhere down its chain of causes.
fn out_of_descriptors(e: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && matches!(io.raw_os_error(), Some(23 | 24))
        {
            return true;
        }
        source = s.source();
    }
    false
}

/// The URL without its user and password, and those as the value of an
/// HTTP Basic `Authorization` header. A URL that does not parse is left to
/// reqwest to refuse.
fn split_credentials(url: &str) -> (String, Option<String>) {
    let Ok(mut parsed) = reqwest::Url::parse(url) else {
        return (url.to_owned(), None);
    };
    if parsed.username().is_empty() && parsed.password().is_none() {
        return (url.to_owned(), None);
    }
    let user = percent_decode(parsed.username());
    let password = parsed.password().map(percent_decode).unwrap_or_default();
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    let basic = format!("Basic {}", base64(format!("{user}:{password}").as_bytes()));
    (parsed.to_string(), Some(basic))
}

enum Attempt {
    Done(Value),
    Retry {
        reason: String,
        after: Option<Duration>,
    },
    Fatal(Failure),
}

/// `Retry-After` in seconds (integer or decimal) or as an HTTP-date (the
/// time left from `now` until then, zero when it has passed), or OpenAI's
/// `retry-after-ms`, which wins when both are sent. Absurd values (`1e30`)
/// are cut to [`defaults::RETRY_AFTER_READ_MAX`] rather than overflowing;
/// the policy's own cap applies after that.
fn retry_after(headers: &reqwest::header::HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let seconds = |v: &str| v.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0);
    let capped = |secs: f64| {
        Duration::try_from_secs_f64(secs).map_or(defaults::RETRY_AFTER_READ_MAX, |d| {
            d.min(defaults::RETRY_AFTER_READ_MAX)
        })
    };
    if let Some(ms) = text("retry-after-ms").and_then(seconds) {
        return Some(capped(ms / 1000.0));
    }
    let value = text("retry-after")?;
    if let Some(s) = seconds(value) {
        return Some(capped(s));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(
        date.duration_since(now)
            .unwrap_or(Duration::ZERO)
            .min(defaults::RETRY_AFTER_READ_MAX),
    )
}

/// The message of an OpenAI (`{"error": {"message"}}`) or Anthropic
/// (`{"type": "error", "error": {"message"}}`) error body.
fn error_message(body: &Value) -> Option<String> {
    let error = body.get("error").unwrap_or(body);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| error.as_str().map(str::to_owned))?;
    Some(excerpt(&message))
}

/// One line of at most [`defaults::ERROR_TEXT_CHARS`] characters.
pub(crate) fn excerpt(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > defaults::ERROR_TEXT_CHARS {
        let cut: String = line.chars().take(defaults::ERROR_TEXT_CHARS).collect();
        format!("{cut}…")
    } else {
        line
    }
}

/// `openai gpt-4o at https://host/v1`: how messages name a backend.
pub(crate) fn label(provider: &str, model: &str, base_url: &str) -> String {
    format!("{provider} `{model}` at {}", display_url(base_url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_full_jitter_under_a_doubling_ceiling() {
        let p = RetryPolicy::with_retries(5);
        for attempt in 0..8 {
            let ceiling = (p.base * 2u32.pow(attempt)).min(p.cap);
            for id in ["a", "b", "c", "d"] {
                let w = p.backoff(id, attempt);
                assert!(w <= ceiling, "{attempt} {w:?} {ceiling:?}");
            }
        }
        assert_eq!(p.backoff("x", 3), p.backoff("x", 3), "reproducible");
        let draws: Vec<Duration> = (0..20).map(|i| p.backoff(&i.to_string(), 4)).collect();
        assert!(
            draws.iter().any(|d| *d < p.base * 4),
            "jitter spreads: {draws:?}"
        );
    }

    #[test]
    fn retry_after_forms() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "7".parse().unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(7)));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::from_millis(250)));
        // An HTTP-date is the time left until then, zero once it has passed.
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:42 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(42)));
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:27:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h, now), Some(Duration::ZERO));
        h.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&h, now), None);
    }

    #[test]
    fn huge_retry_after_is_capped_not_a_panic() {
        let now = SystemTime::UNIX_EPOCH;
        for (name, value) in [
            ("retry-after-ms", "1e30"),
            ("retry-after-ms", "1e300"),
            ("retry-after", "1e30"),
            ("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT"),
        ] {
            let mut h = reqwest::header::HeaderMap::new();
            h.insert(name, value.parse().unwrap());
            assert_eq!(
                retry_after(&h, now),
                Some(defaults::RETRY_AFTER_READ_MAX),
                "{name}: {value}"
            );
        }
    }

    #[test]
    fn any_concurrency_makes_a_limiter() {
        for c in [
            0,
            1,
            Semaphore::MAX_PERMITS,
            Semaphore::MAX_PERMITS + 1,
            usize::MAX,
        ] {
            let l = Limiter::new(c, None);
            assert_eq!(
                l.in_flight.available_permits(),
                c.clamp(1, Semaphore::MAX_PERMITS)
            );
        }
    }

    #[test]
    fn url_credentials_leave_the_url() {
        let (url, basic) = split_credentials("http://al%40ice:pw@h:1/v1/chat/completions");
        assert_eq!(url, "http://h:1/v1/chat/completions");
        assert_eq!(basic.as_deref(), Some("Basic YWxAaWNlOnB3"));
        let (url, basic) = split_credentials("https://h/v1/messages");
        assert_eq!((url.as_str(), basic), ("https://h/v1/messages", None));
    }

    #[test]
    fn error_messages_are_found_and_cut() {
        let v = serde_json::json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert_eq!(error_message(&v).as_deref(), Some("Overloaded"));
        let long = "x".repeat(1000);
        assert!(excerpt(&long).chars().count() <= defaults::ERROR_TEXT_CHARS + 1);
    }
}
