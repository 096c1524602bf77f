//! The Anthropic Messages API (`POST {base}/messages`).
//!
//! Chat-format conversations map to the Messages shape and back:
//! - system messages become the top-level `system` text;
//! - an assistant message's text and tool calls become `text` and
//!   `tool_use` blocks (arguments parsed into the `input` object);
//! - tool messages become `tool_result` blocks in a user message;
//! - consecutive messages of one role merge into one message, because the
//!   API requires user and assistant to alternate;
//! - empty or whitespace-only text is left out (the API rejects empty text
//!   blocks); a message left empty is dropped, except a first or last one,
//!   which keeps the placeholder text `(empty)`;
//! - a reply's `text` blocks join into `content` and its `tool_use` blocks
//!   become tool calls; `thinking` and unknown blocks are skipped, and
//!   `stop_reason` may be any string: it is kept on the reply ([`Finish`]),
//!   and `refusal`, `max_tokens` and `model_context_window_exceeded` end the
//!   row (a reply cut at `max_tokens` is first asked once more with more
//!   room).
//!
//! `max_tokens` is always sent (the API requires it); the API has no seed
//! and no log-probabilities. `temperature` must lie from 0 to 1 (the API's
//! range, narrower than OpenAI's 0 to 2); a model that rejects `temperature`
//! or `top_p` (current models take only one of them) gets the request again
//! without it ([`crate::settings`]).

use crate::backend::Resolved;
use crate::client::{ModelClient, ReplyError};
use crate::defaults;
use crate::settings::{ANTHROPIC_ADJUSTABLE, BackendOptions};
use serde_json::{Map, Value, json};
use sparring_types::{
    Agent, AgentError, AgentReply, AgentRequest, BoxFuture, Finish, FunctionCall, Message, Role,
    Stop, ToolCall,
};

/// An agent that is a model behind the Anthropic Messages API.
#[derive(Debug)]
pub struct AnthropicAgent {
    client: ModelClient,
    max_tokens: u32,
}

impl AnthropicAgent {
    /// An agent for a resolved `anthropic:` endpoint. Asking it for
    /// log-probabilities is an error: the API has none.
    pub fn new(resolved: Resolved, options: BackendOptions) -> Result<Self, crate::Error> {
        let describe = resolved.endpoint.describe();
        if options.sampling.logprobs {
            return Err(crate::Error::Unsupported {
                spec: describe,
                message: "the Anthropic Messages API returns no log-probabilities; drop `logprobs` or use an openai: backend".to_owned(),
            });
        }
        if let Some(t) = options.sampling.temperature
            && !(0.0..=defaults::ANTHROPIC_TEMPERATURE_MAX).contains(&t)
        {
            return Err(crate::Error::Unsupported {
                spec: describe,
                message: format!(
                    "`temperature` {t} is out of range: the Anthropic Messages API takes 0 to {}",
                    defaults::ANTHROPIC_TEMPERATURE_MAX
                ),
            });
        }
        let max_tokens = options
            .sampling
            .max_tokens
            .unwrap_or(defaults::ANTHROPIC_MAX_TOKENS);
        Ok(Self {
            client: ModelClient::new(
                "anthropic",
                "messages",
                ANTHROPIC_ADJUSTABLE,
                resolved,
                options,
            )?,
            max_tokens,
        })
    }

    /// The body this agent sends first for `request` (before any parameter
    /// the server rejects is left out), without sending it: what the
    /// conformance test checks against the `anthropic` SDK's types.
    pub fn request_body(&self, request: &AgentRequest) -> Value {
        Value::Object(self.body(request))
    }

    /// The full request body; [`ModelClient::reply`] leaves out what
    /// the server rejects.
    fn body(&self, request: &AgentRequest) -> Map<String, Value> {
        let (system, messages) = to_messages(&request.messages);
        let mut body = Map::new();
        body.insert("model".into(), json!(self.client.model));
        body.insert("max_tokens".into(), json!(self.max_tokens));
        if !system.is_empty() {
            body.insert("system".into(), json!(system));
        }
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() {
            body.insert(
                "tools".into(),
                Value::Array(request.tools.iter().map(to_tool).collect()),
            );
        }
        self.client.insert_shared_sampling(&mut body);
        body
    }

    async fn ask(&self, request: AgentRequest) -> Result<AgentReply, AgentError> {
        let mut headers = vec![("anthropic-version", defaults::ANTHROPIC_VERSION.to_owned())];
        if let Some(key) = self.client.transport.key() {
            headers.push(("x-api-key", key.expose().to_owned()));
        }
        self.client
            .reply(
                &headers,
                &request.id,
                &self.body(&request),
                finish,
                |value| from_reply(value).map(|message| (message, None)),
            )
            .await
    }
}

/// How a Messages API reply ended: its `stop_reason`; for a `refusal`, the
/// reply's text (if any) is the refusal's.
pub(crate) fn finish(value: &Value) -> Finish {
    let reason = value
        .get("stop_reason")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
        .map(str::to_owned);
    let stop = match reason.as_deref() {
        None | Some("end_turn" | "tool_use" | "stop_sequence") => Stop::Complete,
        Some("max_tokens" | "model_context_window_exceeded") => Stop::Truncated,
        Some("refusal") => Stop::Refused,
        Some(_) => Stop::Other,
    };
    let refusal = (stop == Stop::Refused)
        .then(|| from_reply(value).ok())
        .flatten()
        .map(|m| m.content_str().to_owned())
        .filter(|t| !t.trim().is_empty());
    Finish {
        reason,
        stop,
        refusal,
    }
}

impl Agent for AnthropicAgent {
    fn respond(&self, request: AgentRequest) -> BoxFuture<'_, Result<AgentReply, AgentError>> {
        Box::pin(self.ask(request))
    }

    fn describe(&self) -> String {
        self.client.describe.clone()
    }
}

/// An OpenAI function tool as an Anthropic tool.
fn to_tool(tool: &Value) -> Value {
    let f = tool.get("function").unwrap_or(tool);
    json!({
        "name": f.get("name").cloned().unwrap_or(Value::Null),
        "description": f.get("description").cloned().unwrap_or(json!("")),
        "input_schema": f.get("parameters").cloned().unwrap_or(json!({"type": "object"})),
    })
}

/// A text block, or none for empty or whitespace-only text, which the API
/// rejects with HTTP 400 (`text content blocks must be non-empty`).
fn text_block(text: &str) -> Option<Value> {
    (!text.trim().is_empty()).then(|| json!({"type": "text", "text": text}))
}

/// Chat-format messages as `(system, messages)` in the Messages shape.
///
/// Empty text is left out. A message left with no blocks is dropped, and
/// its neighbours (then of one role) merge, so roles still alternate; but
/// an empty first or last message is kept with the text
/// [`defaults::ANTHROPIC_EMPTY_TEXT`], because the conversation must start
/// with the user and a trailing assistant message would be read as a
/// prefill for the model to continue.
pub(crate) fn to_messages(messages: &[Message]) -> (String, Vec<Value>) {
    let mut system: Vec<&str> = Vec::new();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in messages {
        let (role, blocks) = match m.role {
            Role::System => {
                system.push(m.content_str());
                continue;
            }
            Role::User => ("user", text_block(m.content_str()).into_iter().collect()),
            Role::Tool => (
                "user",
                vec![json!({"type": "tool_result",
                            "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
                            "content": m.content_str()})],
            ),
            Role::Assistant => {
                let mut blocks: Vec<Value> = text_block(m.content_str()).into_iter().collect();
                for c in &m.tool_calls {
                    let input = match c.function.parsed_arguments() {
                        Some(v @ Value::Object(_)) => v,
                        _ => json!({"_arguments": c.function.arguments}),
                    };
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.function.name, "input": input}));
                }
                ("assistant", blocks)
            }
        };
        turns.push((role, blocks));
    }
    let last = turns.len().saturating_sub(1);
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for (i, (role, mut blocks)) in turns.into_iter().enumerate() {
        if blocks.is_empty() {
            if i != 0 && i != last {
                continue;
            }
            blocks.push(json!({"type": "text", "text": defaults::ANTHROPIC_EMPTY_TEXT}));
        }
        match out.last_mut() {
            Some((previous, existing)) if *previous == role => existing.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    let messages = out
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    (system.join("\n\n"), messages)
}

/// A Messages API reply as an assistant message.
pub(crate) fn from_reply(value: &Value) -> Result<Message, ReplyError> {
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ReplyError::Content {
            excerpt: crate::http::excerpt(&value.to_string()),
        })?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(b.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => {
                let name = b
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or(ReplyError::ToolUseName)?;
                let arguments = match b.get("input") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) if !v.is_null() => v.to_string(),
                    _ => "{}".to_owned(),
                };
                tool_calls.push(ToolCall {
                    id: b.get("id").and_then(Value::as_str).unwrap_or("").to_owned(),
                    kind: "function".to_owned(),
                    function: FunctionCall {
                        name: name.to_owned(),
                        arguments,
                    },
                });
            }
            _ => {}
        }
    }
    let content = if tool_calls.is_empty() || !text.is_empty() {
        Some(text)
    } else {
        None
    };
    Ok(Message {
        role: Role::Assistant,
        content,
        tool_calls,
        tool_call_id: None,
        name: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_without_content_or_a_tool_name_is_unreadable() {
        assert!(matches!(
            from_reply(&json!({"type": "error"})),
            Err(ReplyError::Content { .. })
        ));
        let nameless = json!({"content": [{"type": "tool_use", "id": "t1", "input": {}}]});
        assert_eq!(
            from_reply(&nameless).unwrap_err().to_string(),
            "a tool_use block has no name"
        );
    }

    #[test]
    fn tool_round_trip_alternates() {
        let call = ToolCall {
            id: "t1".into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "get_order".into(),
                arguments: r##"{"order_id":"#W1"}"##.into(),
            },
        };
        let call2 = ToolCall {
            id: "t2".into(),
            ..call.clone()
        };
        let mut assistant = Message::text(Role::Assistant, "Looking.");
        assistant.tool_calls = vec![call.clone(), call2.clone()];
        let msgs = vec![
            Message::text(Role::System, "Be kind."),
            Message::text(Role::User, "Where is #W1?"),
            assistant,
            Message::tool_result(&call, "{\"ok\":true}"),
            Message::tool_result(&call2, "{\"ok\":true}"),
        ];
        let (system, out) = to_messages(&msgs);
        assert_eq!(system, "Be kind.");
        assert_eq!(out.len(), 3, "{out:?}");
        assert_eq!(out[1]["content"][1]["input"]["order_id"], "#W1");
        assert_eq!(out[2]["role"], "user");
        assert_eq!(out[2]["content"].as_array().unwrap().len(), 2);
        assert_eq!(out[2]["content"][1]["tool_use_id"], "t2");
        let reply = json!({"content": [{"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Sure."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"order_id": "#W1"}}],
            "stop_reason": "something_new"});
        let m = from_reply(&reply).unwrap();
        assert_eq!(m.content.as_deref(), Some("Sure."));
        assert_eq!(
            m.tool_calls[0].function.arguments,
            r##"{"order_id":"#W1"}"##
        );
    }

    fn texts(out: &[Value]) -> Vec<(String, String)> {
        out.iter()
            .flat_map(|m| {
                let role = m["role"].as_str().unwrap().to_owned();
                m["content"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .map(move |b| (role.clone(), b["text"].as_str().unwrap().to_owned()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn empty_text_is_never_sent() {
        let call = ToolCall {
            id: "t1".into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "f".into(),
                arguments: "{}".into(),
            },
        };
        let mut calling = Message::text(Role::Assistant, "  ");
        calling.tool_calls = vec![call.clone()];
        let msgs = vec![
            Message::text(Role::User, "Hi"),
            Message::text(Role::Assistant, ""),
            Message::text(Role::User, " \n "),
            calling,
            Message::tool_result(&call, "{}"),
            Message::text(Role::User, ""),
            Message::text(Role::Assistant, "Done."),
            Message::text(Role::User, "Thanks"),
        ];
        let (_, out) = to_messages(&msgs);
        for m in &out {
            let blocks = m["content"].as_array().unwrap();
            assert!(!blocks.is_empty(), "{out:?}");
            for b in blocks {
                if b["type"] == "text" {
                    assert!(!b["text"].as_str().unwrap().trim().is_empty(), "{out:?}");
                }
            }
        }
        let roles: Vec<&str> = out.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(
            roles,
            ["user", "assistant", "user", "assistant", "user"],
            "{out:?}"
        );
        // The empty assistant and the blank user message are dropped, and
        // the two user turns around them merge.
        assert_eq!(out[0]["content"].as_array().unwrap().len(), 1, "{out:?}");
        assert_eq!(out[1]["content"][0]["type"], "tool_use");
        assert_eq!(out[2]["content"][0]["type"], "tool_result");
        assert_eq!(
            texts(&out),
            [
                ("user".to_owned(), "Hi".to_owned()),
                ("assistant".to_owned(), "Done.".to_owned()),
                ("user".to_owned(), "Thanks".to_owned())
            ]
        );
    }

    #[test]
    fn an_empty_first_or_last_message_keeps_a_placeholder() {
        let msgs = vec![
            Message::text(Role::System, "S"),
            Message::text(Role::User, ""),
            Message::text(Role::Assistant, "Hello?"),
            Message::text(Role::User, "   "),
        ];
        let (_, out) = to_messages(&msgs);
        assert_eq!(
            texts(&out),
            [
                ("user".to_owned(), defaults::ANTHROPIC_EMPTY_TEXT.to_owned()),
                ("assistant".to_owned(), "Hello?".to_owned()),
                ("user".to_owned(), defaults::ANTHROPIC_EMPTY_TEXT.to_owned())
            ]
        );
    }
}
