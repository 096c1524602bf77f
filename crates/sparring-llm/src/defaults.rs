//! Every constant of the model backends, named once.
//!
//! Run options that users set (retries, timeouts, sampling) have their
//! defaults in `sparring_types::defaults`; these are the protocol constants
//! and the backoff shape, documented in `docs/options.md`.

use std::time::Duration;

/// Base URL of `openai:` backends when the spec names none and
/// `OPENAI_BASE_URL` is unset.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Base URL of `anthropic:` backends when the spec names none.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";
/// The `anthropic-version` header sent with every Messages API request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` of an Anthropic request when the run sets none (the API
/// requires one).
pub const ANTHROPIC_MAX_TOKENS: u32 = 1024;
/// The highest `temperature` the Anthropic Messages API takes (its
/// documented range is 0 to 1; OpenAI's is 0 to 2).
pub const ANTHROPIC_TEMPERATURE_MAX: f64 = 1.0;
/// A reply cut at the token limit is asked once more with this many times
/// the limit; cut again, the row ends as `truncated`.
pub const TRUNCATION_ROOM_FACTOR: u64 = 2;
/// The text sent for an empty first or last message to the Anthropic API,
/// which rejects empty text blocks and needs the conversation to start and
/// end with a user turn (a trailing assistant turn is a prefill).
pub const ANTHROPIC_EMPTY_TEXT: &str = "(empty)";
/// Environment variable holding the OpenAI key, unless the spec names another.
pub const OPENAI_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// Environment variable holding the Anthropic key, unless the spec names another.
pub const ANTHROPIC_API_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// Environment variable overriding [`OPENAI_BASE_URL`].
pub const OPENAI_BASE_URL_ENV: &str = "OPENAI_BASE_URL";
/// First backoff ceiling: attempt `n` (from 0) waits a uniform draw in
/// `0..min(RETRY_CAP, RETRY_BASE * 2^n)` (full jitter).
pub const RETRY_BASE: Duration = Duration::from_millis(500);
/// Largest backoff ceiling.
pub const RETRY_CAP: Duration = Duration::from_secs(30);
/// A server's `Retry-After` is honoured up to this long.
pub const RETRY_AFTER_CAP: Duration = Duration::from_mins(2);
/// The longest `Retry-After` / `retry-after-ms` read from a reply before the
/// policy's cap applies; larger values (`1e30`, a date centuries ahead) are
/// read as this instead of overflowing.
pub const RETRY_AFTER_READ_MAX: Duration = Duration::from_hours(24);
/// Time to establish a TCP (and TLS) connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle connections kept per host, so a thousand requests in flight reuse
/// their connections instead of reconnecting.
pub const POOL_MAX_IDLE_PER_HOST: usize = 2048;
/// Characters of a server's error message kept in a row's `error`.
pub const ERROR_TEXT_CHARS: usize = 300;

/// How long an HTTP world (`execute http://…`) may take to accept a
/// connection; the whole call is bounded by `agent_timeout`.
pub const HTTP_WORLD_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
