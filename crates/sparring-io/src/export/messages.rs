//! Messages in the two tool-call dialects.
//!
//! OpenAI training files carry tool-call `arguments` as a JSON *string*;
//! Hugging Face chat templates need a JSON *object* (several templates
//! double-encode a string). Rows keep the string; these functions write
//! either shape.

use serde_json::{Map, Value, json};
use sparring_types::{Message, Role};

fn role(m: &Message) -> &'static str {
    match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// One message in the OpenAI fine-tuning shape. `weight` is written on
/// assistant messages only.
pub(crate) fn openai(m: &Message, weight: Option<bool>) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), Value::from(role(m)));
    match (&m.content, m.role) {
        (Some(c), _) => {
            out.insert("content".into(), Value::from(c.as_str()));
        }
        (None, Role::Assistant) => {
            out.insert("content".into(), Value::Null);
        }
        (None, _) => {
            out.insert("content".into(), Value::from(""));
        }
    }
    if !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                       "function": {"name": c.function.name, "arguments": c.function.arguments}})
            })
            .collect();
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if m.role == Role::Tool {
        out.insert(
            "tool_call_id".into(),
            Value::from(m.tool_call_id.clone().unwrap_or_default()),
        );
    }
    if m.role == Role::Assistant
        && let Some(w) = weight
    {
        out.insert("weight".into(), Value::from(u8::from(w)));
    }
    Value::Object(out)
}

/// Tool-call arguments as a JSON object for chat templates. Arguments that
/// are not a JSON object (an agent may send broken JSON) are kept under
/// `"_raw"` so nothing is lost and the column stays one type; the caller
/// counts them.
pub(crate) fn arguments_object(arguments: &str) -> (Value, bool) {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(o)) => (Value::Object(o), true),
        _ => (json!({"_raw": arguments}), false),
    }
}

/// One message in the Hugging Face chat-template shape. Returns the message
/// and how many of its tool calls had arguments that are not a JSON object.
pub(crate) fn hf(m: &Message) -> (Value, usize) {
    let mut out = Map::new();
    let mut broken = 0;
    out.insert("role".into(), Value::from(role(m)));
    out.insert("content".into(), Value::from(m.content_str()));
    if !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .map(|c| {
                let (args, ok) = arguments_object(&c.function.arguments);
                if !ok {
                    broken += 1;
                }
                json!({"id": c.id, "type": "function",
                       "function": {"name": c.function.name, "arguments": args}})
            })
            .collect();
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if m.role == Role::Tool {
        if let Some(id) = &m.tool_call_id {
            out.insert("tool_call_id".into(), Value::from(id.as_str()));
        }
        if let Some(name) = &m.name {
            out.insert("name".into(), Value::from(name.as_str()));
        }
    }
    (Value::Object(out), broken)
}

/// Many messages in the Hugging Face shape.
pub(crate) fn hf_all(messages: &[Message], broken: &mut usize) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|m| {
                let (v, b) = hf(m);
                *broken += b;
                v
            })
            .collect(),
    )
}

/// Many messages in the OpenAI shape, without weights.
pub(crate) fn openai_all(messages: &[Message]) -> Value {
    Value::Array(messages.iter().map(|m| openai(m, None)).collect())
}

/// The messages up to and including the last assistant message.
pub(crate) fn through_last_assistant(messages: &[Message]) -> &[Message] {
    match messages.iter().rposition(|m| m.role == Role::Assistant) {
        Some(i) => &messages[..=i],
        None => &messages[..0],
    }
}

/// Where a prompt shared by two conversations ends: `split` moved back past
/// agent messages, so the prompt ends at a person or tool message and each
/// completion starts with an agent turn.
pub(crate) fn prompt_end(messages: &[Message], split: usize) -> usize {
    let mut j = split.min(messages.len());
    while j > 0 && messages[j - 1].role == Role::Assistant {
        j -= 1;
    }
    j
}

/// Whether a message is an agent turn that says nothing: no text (or only
/// whitespace) and no tool call. Such a turn is never trained.
pub(crate) fn is_empty_agent(m: &Message) -> bool {
    m.role == Role::Assistant && m.content_str().trim().is_empty() && m.tool_calls.is_empty()
}

/// Index just past the first person message (system + opening ask).
pub(crate) fn opening_end(messages: &[Message]) -> usize {
    messages
        .iter()
        .position(|m| m.role == Role::User)
        .map_or(messages.len().min(1), |i| i + 1)
}
