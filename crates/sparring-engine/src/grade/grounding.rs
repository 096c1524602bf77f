//! `ungrounded_identifier`: ids in tool arguments that came from nowhere.
//!
//! An argument is id-like when its parameter is named `id`, `*_id` or
//! `*_ids` (`order_id`, `itemIds`), or when its value is shaped like an id: one
//! word of at least four characters mixing letters and digits (`W1001`,
//! `HAT170`, `L1002`) or starting with `#`. Emails, dates and free text are
//! not ids. An id is grounded when a user message or a tool result before
//! the call contains it as a whole token, ignoring case and a leading `#`
//! (`#W1001` is grounded by "order w1001").

use super::{Call, Outcome};
use serde_json::Value;
use sparring_reading::text::quote;
use sparring_types::{Message, Role};

/// Whether a parameter name says it holds an id.
fn id_key(key: &str) -> bool {
    let lower = key.to_lowercase();
    lower == "id"
        || lower == "ids"
        || lower.ends_with("_id")
        || lower.ends_with("_ids")
        || key.ends_with("Id")
        || key.ends_with("Ids")
        || key.ends_with("ID")
}

/// Whether a value looks like an identifier whatever its parameter is called.
fn id_shaped(value: &str) -> bool {
    let v = value.trim();
    if v.is_empty() || v.contains(char::is_whitespace) || v.contains('@') || v.contains('/') {
        return false;
    }
    if let Some(rest) = v.strip_prefix('#') {
        return !rest.is_empty()
            && rest
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_');
    }
    let body_ok = v
        .chars()
        .all(|c| c.is_alphanumeric() || c == '-' || c == '_');
    let letters = v.chars().any(char::is_alphabetic);
    let digits = v.chars().any(|c| c.is_ascii_digit());
    body_ok && letters && digits && v.chars().count() >= 4
}

/// The id-like values of a call's arguments, with the parameter path.
fn id_arguments(args: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(args, "", false, &mut out);
    out
}

fn walk(value: &Value, path: &str, keyed: bool, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(v, &p, id_key(k), out);
            }
        }
        Value::Array(items) => {
            for item in items {
                walk(item, path, keyed, out);
            }
        }
        Value::String(s) => {
            if (keyed && !s.trim().is_empty()) || id_shaped(s) {
                out.push((path.to_owned(), s.clone()));
            }
        }
        Value::Number(n) => {
            if keyed {
                out.push((path.to_owned(), n.to_string()));
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
}

fn normalise(s: &str) -> String {
    s.trim().trim_start_matches('#').to_lowercase()
}

/// Whether `haystack` contains `needle` as a whole token (no letter or digit
/// right before or after it).
fn contains_token(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(pos) = haystack[from..].find(needle) {
        let start = from + pos;
        let end = start + needle.len();
        let before = haystack[..start].chars().next_back();
        let after = haystack[end..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
        if edge(before) && edge(after) {
            return true;
        }
        from = start + needle.len().max(1);
        while !haystack.is_char_boundary(from) {
            from += 1;
        }
    }
    false
}

/// Whether the value appears in a user message or a tool result before
/// message `before`.
fn grounded(messages: &[Message], before: usize, value: &str) -> bool {
    let needle = normalise(value);
    messages.iter().take(before).any(|m| {
        matches!(m.role, Role::User | Role::Tool)
            && contains_token(&m.content_str().to_lowercase(), &needle)
    })
}

/// Grounded and total id-like arguments over every call.
pub(super) fn grounding_counts(messages: &[Message], calls: &[Call]) -> (usize, usize) {
    let mut grounded_n = 0;
    let mut total = 0;
    for call in calls {
        let Some(args) = &call.args else { continue };
        for (_, value) in id_arguments(args) {
            total += 1;
            if grounded(messages, call.at, &value) {
                grounded_n += 1;
            }
        }
    }
    (grounded_n, total)
}

pub(super) fn ungrounded_identifier(messages: &[Message], calls: &[Call]) -> Outcome {
    let mut any = false;
    for call in calls {
        let Some(args) = &call.args else { continue };
        for (path, value) in id_arguments(args) {
            any = true;
            if !grounded(messages, call.at, &value) {
                return Outcome::Fail(format!(
                    "message {} calls {} with {path} {}, which no user message or earlier tool result contains",
                    call.at,
                    call.name,
                    quote(&value)
                ));
            }
        }
    }
    Outcome::passed_if(any)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_shapes() {
        for v in ["W1001", "#W1001", "HAT170", "L1002", "#12"] {
            assert!(id_shaped(v), "{v}");
        }
        for v in [
            "ana@mail.test",
            "2024-05-01x y",
            "Elm Street",
            "10001",
            "abc",
            "2024-05-01",
        ] {
            assert!(!id_shaped(v), "{v}");
        }
        assert!(id_key("order_id") && id_key("item_ids") && id_key("orderId") && id_key("id"));
        assert!(!id_key("reason") && !id_key("paid"));
    }

    #[test]
    fn tokens() {
        assert!(contains_token("order w1001, please", "w1001"));
        assert!(contains_token("{\"order_id\":\"#w1001\"}", "w1001"));
        assert!(!contains_token("order w10012", "w1001"));
        assert!(!contains_token("aw1001", "w1001"));
    }
}
