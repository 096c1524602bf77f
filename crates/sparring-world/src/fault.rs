//! How a faulted call is answered: a blocking fault's error, a non-blocking
//! fault's garbled answer. The fault types themselves ([`FaultKind`],
//! [`sparring_types::FaultRecord`]) live in `sparring_types`, since rows
//! carry them.

use crate::result::{ErrorKind, ToolResult};
use serde_json::{Value, json};
use sparring_types::{FaultKind, WorldOptions};

/// The answer of a blocking fault ([`FaultKind::blocks`]) on `tool`.
pub fn fault_error(kind: FaultKind, tool: &str, options: &WorldOptions) -> ToolResult {
    let (message, hint) = match kind {
        FaultKind::Timeout => (
            format!(
                "timeout: `{tool}` gave no answer within {} s",
                options.timeout_secs
            ),
            "the call was not completed; it may be retried".to_owned(),
        ),
        FaultKind::ServerError => (
            format!("server_error: `{tool}` failed with an internal error (500)"),
            "the service failed; retry once, and tell the customer if it keeps failing".to_owned(),
        ),
        FaultKind::RateLimited => (
            format!("rate_limited: too many requests to `{tool}` (429)"),
            format!("retry after {} seconds", options.retry_after_secs),
        ),
        FaultKind::Malformed | FaultKind::Empty => {
            (format!("{}: `{tool}`", kind.as_str()), String::new())
        }
    };
    ToolResult::failure(ErrorKind::Fault, message, Some(hint))
}

/// The answer of a non-blocking fault, made from the real answer.
pub fn fault_garble(kind: FaultKind, answer: &ToolResult, options: &WorldOptions) -> ToolResult {
    match kind {
        FaultKind::Malformed => {
            let text = answer.to_content();
            let keep = ((text.chars().count() as f64) * options.malformed_keep).floor() as usize;
            ToolResult::Raw(text.chars().take(keep.max(1)).collect())
        }
        FaultKind::Empty => ToolResult::Ok(match answer {
            ToolResult::Ok(Value::Array(_)) => json!([]),
            ToolResult::Records(r) if r.is_list() => json!([]),
            ToolResult::Ok(Value::Object(_)) | ToolResult::Records(_) => json!({}),
            _ => Value::Null,
        }),
        other => fault_error(other, "tool", options),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbling() {
        let o = WorldOptions::default();
        let answer = ToolResult::Ok(json!({"order_id": "A1", "status": "pending"}));
        let bad = fault_garble(FaultKind::Malformed, &answer, &o);
        assert!(serde_json::from_str::<Value>(&bad.to_content()).is_err());
        let empty = fault_garble(FaultKind::Empty, &answer, &o);
        assert_eq!(empty.to_content(), r#"{"ok":true,"result":{}}"#);
        let limited = fault_error(FaultKind::RateLimited, "get_order", &o).to_json();
        assert_eq!(limited["error"]["kind"], "fault");
        assert!(
            limited["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("retry after 2")
        );
    }
}
