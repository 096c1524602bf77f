//! HTTP graders (`--grader URL`): one `POST` per row.
//!
//! The body is `{"id": row_id, "row": {…}}`, the same line a command grader
//! reads; the reply is the same object a command grader writes
//! (`{"reward", "reason", "markers", "failure_class"}` or `{"error"}`).
//! Requests go through the shared transport: a per-attempt timeout, retries
//! with backoff on 408, 409, 429, 5xx and connection failures, and the run's
//! limiter. A grader that fails for good costs the row it was grading (the
//! error is recorded on that row), never the pass. A URL may end in
//! `#key=VAR` to send `Authorization: Bearer` with the key in `VAR`; the key
//! never appears in any message.

use crate::backend::{Secret, display_url, redact_urls};
use crate::http::{Failure, Limiter, RetryPolicy, Transport};
use serde_json::json;
use sparring_types::{BoxFuture, Grader, GraderError, GraderVerdict, Row};
use std::time::Duration;

/// A grader behind an HTTP endpoint.
pub struct HttpGrader {
    url: String,
    display: String,
    transport: Transport,
}

impl std::fmt::Debug for HttpGrader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpGrader")
            .field("url", &self.display)
            .finish_non_exhaustive()
    }
}

impl HttpGrader {
    /// A grader at `spec` (`http(s)://host/path[#key=VAR]`), reading a key
    /// variable from `env` when named.
    pub fn new(
        spec: &str,
        env: &dyn Fn(&str) -> Option<String>,
        timeout: Duration,
        retry: RetryPolicy,
        limiter: Limiter,
    ) -> Result<Self, crate::Error> {
        let err = |message: String| crate::Error::Spec {
            spec: display_url(spec.split('#').next().unwrap_or(spec)),
            message: redact_urls(&message),
        };
        let (url, key_env) = match spec.rsplit_once('#') {
            Some((_, fragment)) if fragment.contains(['@', '/', ':']) => {
                // Most likely a `#` inside the URL's password: do not echo it.
                return Err(err(
                    "a `#` starts a `#key=ENV_VAR` suffix; write a `#` inside a URL as `%23`"
                        .to_owned(),
                ));
            }
            Some((url, fragment)) => {
                let var = fragment.strip_prefix("key=").ok_or_else(|| {
                    err(format!(
                        "unknown suffix `#{fragment}`; the only suffix is `#key=ENV_VAR`"
                    ))
                })?;
                (url, Some(var))
            }
            None => (spec, None),
        };
        let parsed = reqwest::Url::parse(url).map_err(|e| err(format!("not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(err("must be http:// or https:// with a host".to_owned()));
        }
        let key = match key_env {
            None => None,
            Some(var) => Some(Secret::new(
                env(var)
                    .filter(|k| !k.trim().is_empty())
                    .ok_or_else(|| crate::Error::MissingKey {
                        spec: display_url(url),
                        variable: var.to_owned(),
                    })?
                    .trim()
                    .to_owned(),
            )),
        };
        let display = display_url(url);
        let transport = Transport::new(
            format!("grader at {display}"),
            url,
            key,
            timeout,
            retry,
            limiter,
        )?;
        Ok(Self {
            url: url.to_owned(),
            display,
            transport,
        })
    }

    async fn ask(&self, row: &Row) -> Result<GraderVerdict, GraderError> {
        let headers = self.transport.bearer();
        let body = json!({"id": row.row_id, "row": row});
        let value = self
            .transport
            .post(&self.url, &headers, &body, &row.row_id)
            .await
            .map_err(|f| match f {
                Failure::Status { text, .. } | Failure::Other(text) => GraderError(text),
            })?;
        if let Some(got) = value.get("id").and_then(serde_json::Value::as_str)
            && got != row.row_id
        {
            return Err(GraderError(format!(
                "the grader answered id `{got}` while grading `{}`",
                row.row_id
            )));
        }
        GraderVerdict::from_reply(&value)
            .map_err(|e| GraderError(self.transport.redact(&e.to_string())))
    }
}

impl Grader for HttpGrader {
    fn grade<'a>(&'a self, row: &'a Row) -> BoxFuture<'a, Result<GraderVerdict, GraderError>> {
        Box::pin(self.ask(row))
    }

    fn describe(&self) -> String {
        self.display.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_never_reaches_grader_spec_errors() {
        let none = |_: &str| None;
        for spec in [
            "http://u:pw#secret@h:1/grade",
            "http://u:pwsecret@h:1/grade#token=X",
            "http://u:pwsecret@h:99999/grade",
        ] {
            let e = HttpGrader::new(
                spec,
                &none,
                Duration::from_secs(1),
                RetryPolicy::with_retries(0),
                Limiter::new(1, None),
            )
            .unwrap_err()
            .to_string();
            assert!(!e.contains("secret"), "{spec}: {e}");
        }
    }
}
