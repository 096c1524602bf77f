//! Backend spec strings, parsed in one place.
//!
//! Everywhere a model is named (the agent today; the writer, person and judge
//! later) it is named by one string:
//!
//! | spec | meaning |
//! |---|---|
//! | `openai:MODEL` | an OpenAI-compatible chat-completions endpoint at `OPENAI_BASE_URL`, else the public API |
//! | `openai:MODEL@http://host:port/v1` | the same at that base URL (vLLM, llama.cpp, Ollama, a proxy) |
//! | `anthropic:MODEL` | the Anthropic Messages API (`anthropic:MODEL@URL` for another base URL) |
//! | `command:CMD`, or plain `CMD` | a command speaking agent protocol v1 |
//!
//! A base URL has no query or fragment (`?api-version=…` is refused: the
//! request path is appended to it).
//!
//! A model spec may end in `#key=VAR` to read its key from the environment
//! variable `VAR` instead of `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`
//! (`openai:llama3@http://gpu:8000/v1#key=VLLM_KEY`). The key itself never
//! appears in a spec, so specs are safe to record.

use crate::Error;
use crate::defaults;
use sparring_types::closest;
use std::fmt;

/// The kinds of model backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Provider {
    /// OpenAI-compatible chat completions.
    OpenAi,
    /// The Anthropic Messages API.
    Anthropic,
}

impl Provider {
    /// The spec prefix without the colon (`openai`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
        }
    }

    fn key_env(self) -> &'static str {
        match self {
            Self::OpenAi => defaults::OPENAI_API_KEY_ENV,
            Self::Anthropic => defaults::ANTHROPIC_API_KEY_ENV,
        }
    }
}

/// A model endpoint as a spec names it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint {
    /// Which API.
    pub provider: Provider,
    /// The model name sent to the server.
    pub model: String,
    /// The base URL (ending before `/chat/completions` or `/messages`), when
    /// the spec gives one; without a trailing slash.
    pub base_url: Option<String>,
    /// The environment variable holding the key, when the spec names one.
    pub key_env: Option<String>,
}

/// What plays a role: a model endpoint or a command.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BackendSpec {
    /// A model behind an HTTP API.
    Model(Endpoint),
    /// A command line speaking agent protocol v1.
    Command(String),
}

const KINDS: &[&str] = &["openai", "anthropic", "command"];

impl BackendSpec {
    /// Parses a spec string. A string without a known `kind:` prefix is a
    /// command line, unless its first word looks like a misspelt kind
    /// (`opneai:gpt-4o`), which is an error naming the closest kind.
    pub fn parse(spec: &str) -> Result<Self, Error> {
        let err = |message: String| Error::Spec {
            spec: redact_urls(spec),
            message: redact_urls(&message),
        };
        let trimmed = spec.trim();
        if let Some(command) = trimmed.strip_prefix("command:") {
            if command.trim().is_empty() {
                return Err(err("the command is empty".to_owned()));
            }
            return Ok(Self::Command(command.trim().to_owned()));
        }
        let provider = if let Some(rest) = trimmed.strip_prefix("openai:") {
            Some((Provider::OpenAi, rest))
        } else {
            trimmed
                .strip_prefix("anthropic:")
                .map(|rest| (Provider::Anthropic, rest))
        };
        let Some((provider, rest)) = provider else {
            let first = trimmed.split_whitespace().next().unwrap_or("");
            if let Some((kind, _)) = first.split_once(':')
                && !kind.is_empty()
                && kind
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && let Some(close) = closest(kind, KINDS)
            {
                return Err(err(format!(
                    "unknown backend kind `{kind}`; did you mean `{close}:`?"
                )));
            }
            if trimmed.is_empty() {
                return Err(err("the spec is empty".to_owned()));
            }
            return Ok(Self::Command(trimmed.to_owned()));
        };
        let (rest, key_env) = match rest.rsplit_once('#') {
            Some((head, fragment)) => {
                if fragment.contains(['@', '/', ':']) {
                    // Most likely a `#` inside a URL's password: do not echo it.
                    return Err(err(
                        "a `#` starts a `#key=ENV_VAR` suffix; write a `#` inside a URL as `%23`"
                            .to_owned(),
                    ));
                }
                let Some(var) = fragment.strip_prefix("key=") else {
                    return Err(err(format!(
                        "unknown suffix `#{fragment}`; the only suffix is `#key=ENV_VAR`"
                    )));
                };
                if !sparring_types::words::is_identifier(var) {
                    return Err(err(format!(
                        "`{var}` is not an environment variable name (letters, digits and `_`, not starting with a digit)"
                    )));
                }
                (head, Some(var.to_owned()))
            }
            None => (rest, None),
        };
        let (model, base_url) =
            if let Some(at) = rest.find("@http://").or_else(|| rest.find("@https://")) {
                let url = check_url(&rest[at + 1..]).map_err(|e| err(e.to_string()))?;
                (&rest[..at], Some(url))
            } else if let Some(message) = unschemed_url(rest) {
                return Err(err(message));
            } else {
                (rest, None)
            };
        if model.is_empty() {
            return Err(err(format!(
                "no model; expected `{}:MODEL` or `{}:MODEL@http://host:port/v1`",
                provider.as_str(),
                provider.as_str()
            )));
        }
        if model.chars().any(char::is_whitespace) {
            return Err(err(format!("model `{model}` contains whitespace")));
        }
        Ok(Self::Model(Endpoint {
            provider,
            model: model.to_owned(),
            base_url,
            key_env,
        }))
    }

    /// The spec as recorded on rows and in `run.json`: canonical, and
    /// without credentials (a base URL's user and password are dropped).
    pub fn describe(&self) -> String {
        match self {
            Self::Command(c) => format!("command:{c}"),
            Self::Model(e) => e.describe(),
        }
    }
}

impl fmt::Display for BackendSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Endpoint {
    /// `openai:MODEL[@URL][#key=VAR]`, with credentials dropped from the URL.
    pub fn describe(&self) -> String {
        let mut s = format!("{}:{}", self.provider.as_str(), self.model);
        if let Some(url) = &self.base_url {
            s.push('@');
            s.push_str(&display_url(url));
        }
        if let Some(var) = &self.key_env {
            s.push_str("#key=");
            s.push_str(var);
        }
        s
    }

    /// Resolves the base URL and the key from the environment, given as a
    /// lookup function (the CLI passes `std::env::var`; tests pass a map).
    ///
    /// A key is required for the Anthropic API, when the spec names a key
    /// variable, and for the public OpenAI API; a local OpenAI-compatible
    /// server (any other base URL) may run without one.
    pub fn resolve(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Resolved, Error> {
        let base_url = match (&self.base_url, self.provider) {
            (Some(url), _) => url.clone(),
            (None, Provider::OpenAi) => match env(defaults::OPENAI_BASE_URL_ENV) {
                Some(url) if !url.trim().is_empty() => {
                    check_url(url.trim()).map_err(|e| Error::Spec {
                        spec: redact_urls(&format!("{}={url}", defaults::OPENAI_BASE_URL_ENV)),
                        message: redact_urls(&e.to_string()),
                    })?
                }
                _ => defaults::OPENAI_BASE_URL.to_owned(),
            },
            (None, Provider::Anthropic) => defaults::ANTHROPIC_BASE_URL.to_owned(),
        };
        let variable = self
            .key_env
            .clone()
            .unwrap_or_else(|| self.provider.key_env().to_owned());
        let key = env(&variable).filter(|k| !k.trim().is_empty());
        let required = self.key_env.is_some()
            || self.provider == Provider::Anthropic
            || base_url == defaults::OPENAI_BASE_URL;
        if key.is_none() && required {
            return Err(Error::MissingKey {
                spec: self.describe(),
                variable,
            });
        }
        Ok(Resolved {
            endpoint: self.clone(),
            base_url,
            key: key.map(|k| Secret(k.trim().to_owned())),
        })
    }
}

/// An endpoint with its base URL and key resolved.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The endpoint as the spec named it.
    pub endpoint: Endpoint,
    /// The base URL requests go to.
    pub base_url: String,
    /// The key, if any.
    pub key: Option<Secret>,
}

/// A credential. Its `Debug` shows `***`; only this crate reads it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// What is after a model's `@` when it is meant as a base URL that is not
/// `http(s)://` (`llama@localhost:8000/v1`, `m@ftp://h/v1`, `m@file:///x`),
/// said as an error: such a spec must not fall back to the public API with
/// `llama@localhost:8000/v1` as the model name. A model name may hold an
/// `@` followed by a plain version (`claude-3-5-sonnet@20240620`).
fn unschemed_url(rest: &str) -> Option<String> {
    if let Some(sep) = rest.find("://")
        && let Some(at) = rest[..sep].rfind('@')
    {
        return Some(format!(
            "base URL `{}` has scheme `{}`; a base URL must be http:// or https://",
            &rest[at + 1..],
            &rest[at + 1..sep]
        ));
    }
    let (_, after) = rest.rsplit_once('@')?;
    let host = after.split(['/', ':']).next().unwrap_or("");
    let looks_like_host = after.contains(['/', ':'])
        || host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::Ipv4Addr>().is_ok();
    looks_like_host.then(|| {
        format!(
            "base URL `{after}` has no scheme; a base URL must be http:// or https://\nhint: write `@http://{after}`"
        )
    })
}

/// Why a base URL cannot be used; `url` is as given (the caller redacts
/// the message).
#[derive(Debug, thiserror::Error)]
enum UrlError<'a> {
    /// Not a URL: the parser's reason.
    #[error("base URL `{url}`: {reason}")]
    Unparsable { url: &'a str, reason: String },
    /// Not `http(s)://` with a host.
    #[error("base URL `{url}` must be http:// or https:// with a host")]
    NotHttp { url: &'a str },
    /// A query or fragment, which would come before the request path.
    #[error(
        "base URL `{}` has a query or fragment (`?…`, `#…`), which would end up before the request path; give the bare base URL, e.g. http://host:port/v1",
        display_url(.url)
    )]
    QueryOrFragment { url: &'a str },
}

fn check_url(url: &str) -> Result<String, UrlError<'_>> {
    let parsed = reqwest::Url::parse(url).map_err(|e| UrlError::Unparsable {
        url,
        reason: e.to_string(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(UrlError::NotHttp { url });
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(UrlError::QueryOrFragment { url });
    }
    Ok(url.trim_end_matches('/').to_owned())
}

/// `text` with the credentials of every URL in it hidden, for error
/// messages that quote a spec or URL as given: `scheme://user:pass@host`
/// becomes `scheme://***@host` and a query `?…` becomes `?***`. A URL ends
/// at whitespace, a quote or a backtick; everything up to its last `@` is
/// hidden, so a password holding `/`, `?` or `#` is hidden whole.
pub(crate) fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '"'))
            .unwrap_or(tail.len());
        let (url, after) = tail.split_at(end);
        let url = match url.rfind('@') {
            Some(i) => {
                out.push_str("***");
                &url[i..]
            }
            None => url,
        };
        match url.find('?') {
            Some(q) => {
                out.push_str(&url[..=q]);
                out.push_str("***");
                if let Some(f) = url[q..].find('#') {
                    out.push_str(&url[q + f..]);
                }
            }
            None => out.push_str(url),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A URL without its user, password, query and fragment, for display.
pub(crate) fn display_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.as_str().trim_end_matches('/').to_owned()
        }
        Err(_) => "<invalid url>".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(s: &str) -> Endpoint {
        match BackendSpec::parse(s).unwrap() {
            BackendSpec::Model(e) => e,
            BackendSpec::Command(c) => unreachable!("parsed as command `{c}`"),
        }
    }

    #[test]
    fn forms() {
        let e = model("openai:gpt-4o");
        assert_eq!((e.provider, e.model.as_str()), (Provider::OpenAi, "gpt-4o"));
        assert_eq!(e.base_url, None);
        let e = model("openai:meta-llama/Llama-3.1-8B:q4@http://127.0.0.1:8000/v1/");
        assert_eq!(e.model, "meta-llama/Llama-3.1-8B:q4");
        assert_eq!(e.base_url.as_deref(), Some("http://127.0.0.1:8000/v1"));
        let e = model("anthropic:claude-sonnet-4-5#key=MY_KEY");
        assert_eq!(e.provider, Provider::Anthropic);
        assert_eq!(e.key_env.as_deref(), Some("MY_KEY"));
        // An `@` and a version is a model name, not a URL.
        let e = model("anthropic:claude-3-5-sonnet@20240620");
        assert_eq!(e.model, "claude-3-5-sonnet@20240620");
        assert_eq!(e.base_url, None);
        assert_eq!(
            BackendSpec::parse("command:python3 a.py").unwrap(),
            BackendSpec::Command("python3 a.py".into())
        );
        assert_eq!(
            BackendSpec::parse("python3 a.py --x=y:z").unwrap(),
            BackendSpec::Command("python3 a.py --x=y:z".into())
        );
    }

    #[test]
    fn bad_specs_say_what() {
        for (spec, needle) in [
            ("openai:", "no model"),
            ("openai:@http://h:1/v1", "no model"),
            ("openai:m@http://", "base URL"),
            ("openai:llama@localhost:8000/v1", "has no scheme"),
            ("openai:llama@127.0.0.1", "has no scheme"),
            ("openai:llama@gpu/v1", "has no scheme"),
            ("openai:m@ftp://h/v1", "scheme `ftp`"),
            ("openai:m@file:///etc/passwd", "scheme `file`"),
            ("openai:m@ftp://u:pw@h/v1", "scheme `ftp`"),
            ("anthropic:c@localhost:1/v1", "has no scheme"),
            ("openai:m#token=X", "unknown suffix"),
            ("openai:m#key=1X", "not an environment variable"),
            ("opneai:gpt-4o", "did you mean `openai:`"),
            ("antropic:claude", "did you mean `anthropic:`"),
            ("command:", "empty"),
            ("", "empty"),
        ] {
            let e = BackendSpec::parse(spec).unwrap_err().to_string();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }

    #[test]
    fn a_bad_base_url_says_why() {
        assert!(matches!(
            check_url("http://h:99999/v1"),
            Err(UrlError::Unparsable { .. })
        ));
        assert_eq!(
            check_url("ftp://h/v1").unwrap_err().to_string(),
            "base URL `ftp://h/v1` must be http:// or https:// with a host"
        );
        assert_eq!(
            check_url("http://h/v1?k=1").unwrap_err().to_string(),
            "base URL `http://h/v1` has a query or fragment (`?…`, `#…`), which would end up before the request path; give the bare base URL, e.g. http://host:port/v1"
        );
        assert_eq!(check_url("http://h/v1/").unwrap(), "http://h/v1");
    }

    #[test]
    fn a_base_url_with_a_query_is_refused() {
        for spec in [
            "openai:m@http://h:1/v1?api-version=x",
            "openai:m@http://h:1/v1?",
            "anthropic:c@https://h/v1/?key=zzz",
        ] {
            let e = BackendSpec::parse(spec).unwrap_err().to_string();
            assert!(e.contains("query or fragment"), "{spec}: {e}");
            assert!(!e.contains("zzz"), "a query may hold a key: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let env = |k: &str| (k == "OPENAI_BASE_URL").then(|| "http://h:1/v1#frag".to_owned());
        let e = model("openai:m").resolve(&env).unwrap_err().to_string();
        assert!(
            e.contains("OPENAI_BASE_URL") && e.contains("query or fragment"),
            "{e}"
        );
    }

    #[test]
    fn url_credentials_never_reach_spec_errors() {
        for spec in [
            "openai:m@http://u:pw@h:99999/v1",
            "openai:m@http://u:pw@h:1/v1?q=1",
            "openai:m@http://u:pw@h:1/v1#token=X",
            "openai:m@http://u:pw@h:1/v1#key=1X",
            "openai: m x@http://u:pw@h:1/v1",
            "openai:m@http://u:p/w@h:99999/v1",
            "openai:m@http://u:p#w@h:1/v1",
            "anthropic:@https://u:pw@h/v1",
            "anthropic:c@http://u:pw@/v1",
        ] {
            let e = BackendSpec::parse(spec).unwrap_err().to_string();
            assert!(
                !e.contains("pw") && !e.contains("p/w") && !e.contains("p#w"),
                "{spec}: {e}"
            );
            assert!(e.contains("***@"), "{spec}: {e}");
        }
        let env = |k: &str| (k == "OPENAI_BASE_URL").then(|| "http://u:pw@h:99999/v1".to_owned());
        let e = model("openai:m").resolve(&env).unwrap_err().to_string();
        assert!(!e.contains("pw") && e.contains("OPENAI_BASE_URL"), "{e}");
    }

    #[test]
    fn redaction_keeps_what_is_not_secret() {
        assert_eq!(
            redact_urls("`openai:m@https://u:p@w@h:1/v1?k=zzz#key=K` and http://h/v1"),
            "`openai:m@https://***@h:1/v1?***#key=K` and http://h/v1"
        );
        assert_eq!(redact_urls("no url here"), "no url here");
    }

    #[test]
    fn describe_drops_credentials() {
        let e = model("openai:m@http://user:hunter2@h:1/v1");
        let d = e.describe();
        assert!(!d.contains("hunter2"), "{d}");
        assert!(d.starts_with("openai:m@http://h:1/v1"), "{d}");
    }

    #[test]
    fn keys_come_from_the_environment() {
        let env = |k: &str| (k == "OPENAI_API_KEY").then(|| "sk-test".to_owned());
        let r = model("openai:gpt-4o").resolve(&env).unwrap();
        assert_eq!(r.key.unwrap().expose(), "sk-test");
        assert_eq!(r.base_url, defaults::OPENAI_BASE_URL);
        let none = |_: &str| None;
        let e = model("openai:gpt-4o").resolve(&none).unwrap_err();
        assert!(e.to_string().contains("`OPENAI_API_KEY` is not set"), "{e}");
        // A local server needs no key.
        let r = model("openai:m@http://127.0.0.1:9/v1")
            .resolve(&none)
            .unwrap();
        assert!(r.key.is_none());
        // A named variable must be set.
        let e = model("openai:m@http://127.0.0.1:9/v1#key=VLLM")
            .resolve(&none)
            .unwrap_err();
        assert!(e.to_string().contains("`VLLM` is not set"), "{e}");
        let e = model("anthropic:c").resolve(&none).unwrap_err();
        assert!(e.to_string().contains("ANTHROPIC_API_KEY"), "{e}");
        let base = |k: &str| (k == "OPENAI_BASE_URL").then(|| "http://10.0.0.1:8000/v1".to_owned());
        let r = model("openai:m").resolve(&base).unwrap();
        assert_eq!(r.base_url, "http://10.0.0.1:8000/v1");
        assert!(format!("{:?}", Secret::new("sk-x")).contains("***"));
    }
}
