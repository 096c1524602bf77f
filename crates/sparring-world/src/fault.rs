//! Faults: a tool that times out, fails, rate-limits, or answers garbage.

use crate::result::{ErrorKind, ToolResult};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sparring_types::WorldOptions;
use sparring_types::seed::Stream;

/// How a call breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// No answer within the time limit; the call is not performed.
    Timeout,
    /// The service failed (500); the call is not performed.
    ServerError,
    /// Too many requests (429), with a retry-after hint; not performed.
    RateLimited,
    /// The call is performed but its answer is cut short: not valid JSON.
    Malformed,
    /// The call is performed but its answer is empty.
    Empty,
}

impl FaultKind {
    /// Every kind, in the order weights are listed.
    pub const ALL: [Self; 5] = [
        Self::Timeout,
        Self::ServerError,
        Self::RateLimited,
        Self::Malformed,
        Self::Empty,
    ];

    /// The wire name (`timeout`, `server_error`, …), also the tool-condition
    /// axis value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::ServerError => "server_error",
            Self::RateLimited => "rate_limited",
            Self::Malformed => "malformed",
            Self::Empty => "empty",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    fn weight(self, o: &WorldOptions) -> f64 {
        match self {
            Self::Timeout => o.timeout_weight,
            Self::ServerError => o.server_error_weight,
            Self::RateLimited => o.rate_limited_weight,
            Self::Malformed => o.malformed_weight,
            Self::Empty => o.empty_weight,
        }
    }

    /// A kind drawn by the options' weights; `None` when every weight is 0.
    pub fn draw(options: &WorldOptions, stream: &mut Stream) -> Option<Self> {
        let total: f64 = Self::ALL.iter().map(|k| k.weight(options)).sum();
        if total <= 0.0 {
            return None;
        }
        let mut x = stream.unit() * total;
        for k in Self::ALL {
            let w = k.weight(options);
            if x < w {
                return Some(k);
            }
            x -= w;
        }
        Self::ALL
            .into_iter()
            .rev()
            .find(|k| k.weight(options) > 0.0)
    }

    /// Whether the fault stops the call before it is performed.
    pub fn blocks(self) -> bool {
        matches!(self, Self::Timeout | Self::ServerError | Self::RateLimited)
    }

    /// The answer of a blocking fault.
    pub fn error(self, tool: &str, options: &WorldOptions) -> ToolResult {
        let (message, hint) = match self {
            Self::Timeout => (
                format!(
                    "timeout: `{tool}` gave no answer within {} s",
                    options.timeout_secs
                ),
                "the call was not completed; it may be retried".to_owned(),
            ),
            Self::ServerError => (
                format!("server_error: `{tool}` failed with an internal error (500)"),
                "the service failed; retry once, and tell the customer if it keeps failing"
                    .to_owned(),
            ),
            Self::RateLimited => (
                format!("rate_limited: too many requests to `{tool}` (429)"),
                format!("retry after {} seconds", options.retry_after_secs),
            ),
            Self::Malformed | Self::Empty => {
                (format!("{}: `{tool}`", self.as_str()), String::new())
            }
        };
        ToolResult::failure(ErrorKind::Fault, message, Some(hint))
    }

    /// The answer of a non-blocking fault, made from the real answer.
    pub fn garble(self, answer: &ToolResult, options: &WorldOptions) -> ToolResult {
        match self {
            Self::Malformed => {
                let text = answer.to_content();
                let keep =
                    ((text.chars().count() as f64) * options.malformed_keep).floor() as usize;
                ToolResult::Raw(text.chars().take(keep.max(1)).collect())
            }
            Self::Empty => ToolResult::Ok(match answer {
                ToolResult::Ok(Value::Array(_)) => json!([]),
                ToolResult::Ok(Value::Object(_)) => json!({}),
                _ => Value::Null,
            }),
            other => other.error("tool", options),
        }
    }
}

/// A fault as the row records it (`situation.faults`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultRecord {
    /// The tool it hits.
    pub tool: String,
    /// How the call breaks.
    pub kind: FaultKind,
    /// `scheduled` (from the situation) or `random` (at `fault_rate`).
    pub source: String,
    /// Whether it happened (a scheduled fault on a tool never called did not).
    pub fired: bool,
    /// The 1-based index, among the rollout's calls, of the call it hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u64>,
    /// For a fault scheduled on any tool (`tool: "none"`), the tool whose
    /// call it hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fired_on: Option<String>,
}

impl FaultRecord {
    /// The record as JSON, for the row.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A scheduled fault in a situation: `{"tool": NAME, "kind": KIND}`.
pub fn parse_scheduled(value: &Value) -> Option<(String, FaultKind)> {
    let tool = value.get("tool")?.as_str()?;
    let kind = FaultKind::parse(value.get("kind")?.as_str()?)?;
    Some((tool.to_owned(), kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_pick_kinds() {
        let mut o = WorldOptions::default();
        let mut s = Stream::derive(0, "f", &[]);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            seen.insert(FaultKind::draw(&o, &mut s).unwrap());
        }
        assert_eq!(seen.len(), 5);
        o.timeout_weight = 0.0;
        o.server_error_weight = 0.0;
        o.malformed_weight = 0.0;
        o.empty_weight = 0.0;
        for _ in 0..50 {
            assert_eq!(FaultKind::draw(&o, &mut s), Some(FaultKind::RateLimited));
        }
        o.rate_limited_weight = 0.0;
        assert_eq!(FaultKind::draw(&o, &mut s), None);
    }

    #[test]
    fn garbling() {
        let o = WorldOptions::default();
        let answer = ToolResult::Ok(json!({"order_id": "A1", "status": "pending"}));
        let bad = FaultKind::Malformed.garble(&answer, &o);
        assert!(serde_json::from_str::<Value>(&bad.to_content()).is_err());
        let empty = FaultKind::Empty.garble(&answer, &o);
        assert_eq!(empty.to_content(), r#"{"ok":true,"result":{}}"#);
        let limited = FaultKind::RateLimited.error("get_order", &o).to_json();
        assert_eq!(limited["error"]["kind"], "fault");
        assert!(
            limited["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("retry after 2")
        );
    }
}
