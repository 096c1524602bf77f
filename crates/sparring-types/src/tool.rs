//! Tool schemas, normalised from the OpenAI and MCP formats.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One tool the agent may call.
///
/// Specs give tools in the OpenAI function format
/// (`{"type":"function","function":{name, description, parameters}}`) or the
/// MCP format (`{name, description, inputSchema}`); both become this.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name, unique within a spec.
    pub name: String,
    /// What the tool does, as the agent reads it.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments; always an object schema.
    pub parameters: Value,
    /// JSON Schema of the result, when the spec gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

impl ToolSpec {
    /// The tool in the OpenAI function format, as agents receive it.
    pub fn to_openai(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }

    /// The names of the tool's parameters, in schema order.
    pub fn parameter_names(&self) -> Vec<&str> {
        self.parameters
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// The schema of one parameter.
    pub fn parameter(&self, name: &str) -> Option<&Value> {
        self.parameters.get("properties")?.get(name)
    }

    /// The names listed under `required`.
    pub fn required(&self) -> Vec<&str> {
        self.parameters
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}
