//! Chat-completions shaped messages.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The policy the agent works under.
    System,
    /// The simulated person (or a real one, in imported traces).
    User,
    /// The agent under test.
    #[default]
    Assistant,
    /// A tool result, answering one of the assistant's tool calls.
    Tool,
}

/// One turn of a conversation, in the chat-completions shape.
///
/// `content` is `None` for an assistant message that only calls tools. On
/// input, content given as a list of text parts is joined into one string.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The text, if any.
    #[serde(
        default,
        deserialize_with = "content_lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub content: Option<String>,
    /// Tool calls made by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For a tool message: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    /// A message with text and nothing else.
    pub fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }

    /// A tool result answering `call`.
    pub fn tool_result(call: &ToolCall, content: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(call.id.clone()),
            name: Some(call.function.name.clone()),
        }
    }

    /// The text content, or the empty string.
    pub fn content_str(&self) -> &str {
        self.content.as_deref().unwrap_or("")
    }
}

/// A call to a tool, as an assistant message carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id the tool message answers with. An agent may leave it out
    /// (empty); the engine fills it in.
    #[serde(default)]
    pub id: String,
    /// Always `"function"`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// Which tool, with what arguments.
    pub function: FunctionCall,
}

/// The tool and the arguments of one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool's name.
    pub name: String,
    /// The arguments as a JSON string (chat-completions convention). An object
    /// given on input is encoded to a string.
    #[serde(deserialize_with = "arguments_lenient", default = "empty_object")]
    pub arguments: String,
}

impl FunctionCall {
    /// The arguments parsed as JSON, or `None` when they are not valid JSON.
    pub fn parsed_arguments(&self) -> Option<Value> {
        serde_json::from_str(&self.arguments).ok()
    }
}

fn function_type() -> String {
    "function".to_owned()
}

fn empty_object() -> String {
    "{}".to_owned()
}

fn content_lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value = Option::<Value>::deserialize(d)?;
    Ok(match value {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => o.get("text").and_then(Value::as_str),
                    _ => None,
                })
                .collect();
            Some(texts.join("\n"))
        }
        Some(other) => Some(other.to_string()),
    })
}

fn arguments_lenient<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(match value {
        Value::String(s) => s,
        Value::Null => empty_object(),
        other => other.to_string(),
    })
}
