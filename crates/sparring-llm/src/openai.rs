//! OpenAI-compatible chat completions (`POST {base}/chat/completions`).
//!
//! Requests carry the conversation, the tools with `tool_choice: "auto"`,
//! the sampling settings that are set, a `seed` only when the run sets
//! `sampling_seed` (derived from it and the request id, so a re-run asks for
//! the same samples), and `logprobs` / `top_logprobs` when asked. The token
//! limit is `max_completion_tokens` for OpenAI itself (a base URL on
//! `api.openai.com` or `*.openai.azure.com`), which documents it and
//! deprecates `max_tokens`, and `max_tokens` for every other server (vLLM,
//! llama.cpp, Ollama know only that); a server that rejects the name gets the
//! other one ([`crate::settings`]).
//!
//! Replies are read leniently, from the JSON value rather than a strict
//! schema: unknown fields are ignored, `content` may be a string, a list of
//! parts or null, tool-call `arguments` a string or an object, a missing
//! tool-call id is left for the engine to fill, and `finish_reason` may be
//! any string or none. `finish_reason` and `message.refusal` are kept on the
//! reply ([`Finish`]): `length`, `content_filter` and a refusal end the row.

use crate::backend::Resolved;
use crate::client::{ModelClient, ReplyError};
use crate::settings::{BackendOptions, OPENAI_ADJUSTABLE};
use serde_json::{Map, Value, json};
use sparring_types::{
    Agent, AgentError, AgentReply, AgentRequest, BoxFuture, Finish, FunctionCall, Message, Role,
    Stop, ToolCall, seed,
};

/// An agent that is a model behind an OpenAI-compatible endpoint.
#[derive(Debug)]
pub struct OpenAiAgent {
    client: ModelClient,
    /// `max_completion_tokens` or `max_tokens` (module docs).
    max_tokens_param: &'static str,
}

impl OpenAiAgent {
    /// An agent for a resolved `openai:` endpoint.
    pub fn new(resolved: Resolved, options: BackendOptions) -> Result<Self, crate::Error> {
        let max_tokens_param = max_tokens_param(&resolved.base_url);
        Ok(Self {
            client: ModelClient::new(
                "openai",
                "chat/completions",
                OPENAI_ADJUSTABLE,
                resolved,
                options,
            )?,
            max_tokens_param,
        })
    }

    /// The body this agent sends first for `request` (before any parameter
    /// a server rejects is left out or renamed), without sending it: what
    /// the conformance test checks against OpenAI's API schema.
    pub fn request_body(&self, request: &AgentRequest) -> Value {
        Value::Object(self.body(request))
    }

    /// The full request body; [`ModelClient::reply`] leaves out or
    /// renames what the server rejects.
    fn body(&self, request: &AgentRequest) -> Map<String, Value> {
        let sampling = &self.client.sampling;
        let mut body = Map::new();
        body.insert("model".into(), json!(self.client.model));
        body.insert(
            "messages".into(),
            Value::Array(request.messages.iter().map(wire_message).collect()),
        );
        if !request.tools.is_empty() {
            body.insert("tools".into(), Value::Array(request.tools.to_vec()));
            body.insert("tool_choice".into(), json!("auto"));
        }
        self.client.insert_shared_sampling(&mut body);
        if let Some(m) = sampling.max_tokens {
            body.insert(self.max_tokens_param.into(), json!(m));
        }
        if let Some(s) = sampling.seed {
            body.insert("seed".into(), json!(request_seed(s, &request.id)));
        }
        if sampling.logprobs {
            body.insert("logprobs".into(), json!(true));
            if let Some(k) = sampling.top_logprobs {
                body.insert("top_logprobs".into(), json!(k));
            }
        }
        body
    }

    async fn ask(&self, request: AgentRequest) -> Result<AgentReply, AgentError> {
        let headers = self.client.transport.bearer();
        let logprobs = self.client.sampling.logprobs;
        self.client
            .reply(
                &headers,
                &request.id,
                &self.body(&request),
                finish,
                |value| parse_reply(value, logprobs),
            )
            .await
    }
}

/// The token limit's name for a base URL: `max_completion_tokens` for
/// OpenAI itself (`api.openai.com`, Azure's `*.openai.azure.com`), which
/// deprecates `max_tokens`; `max_tokens` for every other server.
pub(crate) fn max_tokens_param(base_url: &str) -> &'static str {
    let host = reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_lowercase))
        .unwrap_or_default();
    if host == "api.openai.com" || host.ends_with(".openai.azure.com") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

/// How the first choice ended: its `finish_reason`, and a refusal when
/// `message.refusal` holds text (which wins over `finish_reason: stop`).
pub(crate) fn finish(value: &Value) -> Finish {
    let choice = value.pointer("/choices/0");
    let reason = choice
        .and_then(|c| c.get("finish_reason"))
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
        .map(str::to_owned);
    let refusal = choice
        .and_then(|c| c.get("message").or_else(|| c.get("delta")))
        .and_then(|m| m.get("refusal"))
        .and_then(Value::as_str)
        .filter(|r| !r.trim().is_empty())
        .map(str::to_owned);
    let stop = if refusal.is_some() {
        Stop::Refused
    } else {
        match reason.as_deref() {
            None | Some("stop" | "tool_calls" | "function_call") => Stop::Complete,
            Some("length") => Stop::Truncated,
            Some("content_filter") => Stop::ContentFilter,
            Some(_) => Stop::Other,
        }
    };
    Finish {
        reason,
        stop,
        refusal,
    }
}

impl Agent for OpenAiAgent {
    fn respond(&self, request: AgentRequest) -> BoxFuture<'_, Result<AgentReply, AgentError>> {
        Box::pin(self.ask(request))
    }

    fn describe(&self) -> String {
        self.client.describe.clone()
    }
}

/// The sampling seed of a request: derived from the run's `sampling_seed`
/// and the request id, which the engine makes unique per run, rollout and
/// step, so a re-run asks for the same samples and repeats of one task ask
/// for different ones. Kept below 2^31 for servers that read it as a 32-bit
/// integer.
pub(crate) fn request_seed(sampling_seed: u64, request_id: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in request_id.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    seed::derive_u64(h, "sampling", &[sampling_seed]) & 0x7fff_ffff
}

/// A message in the chat-completions request shape (a tool message carries
/// only its call id, not the tool name, which OpenAI does not accept).
fn wire_message(m: &Message) -> Value {
    let mut o = Map::new();
    let role = match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    o.insert("role".into(), json!(role));
    o.insert("content".into(), json!(m.content));
    if !m.tool_calls.is_empty() {
        o.insert(
            "tool_calls".into(),
            Value::Array(
                m.tool_calls
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "type": "function",
                               "function": {"name": c.function.name, "arguments": c.function.arguments}})
                    })
                    .collect(),
            ),
        );
    }
    if let Some(id) = &m.tool_call_id {
        o.insert("tool_call_id".into(), json!(id));
    }
    Value::Object(o)
}

/// Reads a chat-completions reply: the first choice's message and, when
/// asked, its log-probabilities.
fn parse_reply(value: &Value, want_logprobs: bool) -> Result<(Message, Option<Value>), ReplyError> {
    let choice = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| ReplyError::Choices {
            excerpt: crate::http::excerpt(&value.to_string()),
        })?;
    let m = choice
        .get("message")
        .or_else(|| choice.get("delta"))
        .ok_or(ReplyError::ChoiceMessage)?;
    let content = match m.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| p.as_str().or_else(|| p.get("text").and_then(Value::as_str)))
                .collect::<Vec<_>>()
                .join(""),
        ),
        Some(other) => Some(other.to_string()),
    };
    let mut tool_calls = Vec::new();
    for call in m
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let function = call.get("function").unwrap_or(call);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .ok_or(ReplyError::FunctionName)?;
        let arguments = match function.get("arguments") {
            None | Some(Value::Null) => "{}".to_owned(),
            Some(Value::String(s)) if s.trim().is_empty() => "{}".to_owned(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        tool_calls.push(ToolCall {
            id: call
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            kind: "function".to_owned(),
            function: FunctionCall {
                name: name.to_owned(),
                arguments,
            },
        });
    }
    let content = if tool_calls.is_empty() {
        Some(content.unwrap_or_default())
    } else {
        content.filter(|c| !c.is_empty())
    };
    let message = Message {
        role: Role::Assistant,
        content,
        tool_calls,
        tool_call_id: None,
        name: None,
    };
    let logprobs = want_logprobs.then(|| logprobs_record(value, choice));
    Ok((message, logprobs))
}

/// `{sum, tokens, content, policy_version}` for one turn. `policy_version`
/// is the server's `system_fingerprint`, else the model it says answered;
/// `sum` is null when any token's `logprob` is.
fn logprobs_record(value: &Value, choice: &Value) -> Value {
    let policy_version = value
        .get("system_fingerprint")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .or_else(|| value.get("model").and_then(Value::as_str));
    let content = choice
        .pointer("/logprobs/content")
        .and_then(Value::as_array);
    let Some(content) = content else {
        return json!({"sum": null, "tokens": 0, "content": [], "policy_version": policy_version, "missing": true});
    };
    // A token without a numeric `logprob` is recorded as null, and then the
    // sum is unknown (null) rather than counting that token as certain.
    let mut sum = Some(0.0);
    let tokens: Vec<Value> = content
        .iter()
        .map(|t| {
            let lp = t.get("logprob").and_then(Value::as_f64);
            sum = sum.zip(lp).map(|(s, l)| s + l);
            let mut entry = json!({"token": t.get("token").cloned().unwrap_or(Value::Null), "logprob": lp});
            if let Some(top) = t.get("top_logprobs").and_then(Value::as_array)
                && !top.is_empty()
            {
                entry["top_logprobs"] = Value::Array(
                    top.iter()
                        .map(|a| json!({"token": a.get("token").cloned().unwrap_or(Value::Null),
                                        "logprob": a.get("logprob").cloned().unwrap_or(Value::Null)}))
                        .collect(),
                );
            }
            entry
        })
        .collect();
    json!({"sum": sum, "tokens": tokens.len(), "content": tokens, "policy_version": policy_version})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_replies() {
        let v = json!({"choices": [{"message": {"content": [{"type": "text", "text": "hi"}, " there"],
            "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}},
                           {"id": "c2", "function": {"name": "g", "arguments": ""}}]},
            "finish_reason": ""}], "weird": 1});
        let (m, lp) = parse_reply(&v, false).unwrap();
        assert_eq!(m.content.as_deref(), Some("hi there"));
        assert_eq!(m.tool_calls[0].function.arguments, r#"{"a":1}"#);
        assert_eq!(m.tool_calls[0].id, "");
        assert_eq!(m.tool_calls[1].function.arguments, "{}");
        assert!(lp.is_none());
        let v = json!({"choices": [{"message": {"role": "assistant", "content": null}, "finish_reason": null}]});
        assert_eq!(
            parse_reply(&v, false).unwrap().0.content.as_deref(),
            Some("")
        );
        assert!(parse_reply(&json!({"object": "error"}), false).is_err());
    }

    #[test]
    fn a_token_without_logprob_makes_the_sum_unknown() {
        let v = json!({"choices": [{"message": {"content": "ab"},
            "logprobs": {"content": [{"token": "a", "logprob": -0.5},
                                     {"token": "b", "logprob": null},
                                     {"token": "c"}]}}]});
        let lp = parse_reply(&v, true).unwrap().1.unwrap();
        assert_eq!(lp["sum"], Value::Null, "{lp}");
        assert_eq!(lp["tokens"], 3);
        assert_eq!(lp["content"][0]["logprob"], -0.5);
        assert_eq!(lp["content"][1]["logprob"], Value::Null, "{lp}");
        assert_eq!(lp["content"][2]["logprob"], Value::Null, "{lp}");
        let v = json!({"choices": [{"message": {"content": "ab"},
            "logprobs": {"content": [{"token": "a", "logprob": -0.5},
                                     {"token": "b", "logprob": -0.25}]}}]});
        let lp = parse_reply(&v, true).unwrap().1.unwrap();
        assert_eq!(lp["sum"], -0.75, "{lp}");
    }

    #[test]
    fn finish_reasons_and_refusals() {
        let at = |choice: Value| finish(&json!({"choices": [choice]}));
        let f = at(
            json!({"message": {"content": null, "refusal": "I can't help with that."}, "finish_reason": "stop"}),
        );
        assert_eq!(
            (f.stop, f.refusal.as_deref()),
            (Stop::Refused, Some("I can't help with that."))
        );
        assert_eq!(f.reason.as_deref(), Some("stop"));
        assert_eq!(
            at(json!({"message": {"content": "a"}, "finish_reason": "length"})).stop,
            Stop::Truncated
        );
        assert_eq!(
            at(json!({"message": {"content": ""}, "finish_reason": "content_filter"})).stop,
            Stop::ContentFilter
        );
        assert_eq!(
            at(json!({"message": {"content": "a"}, "finish_reason": "tool_calls"})).stop,
            Stop::Complete
        );
        assert_eq!(
            at(json!({"message": {"content": "a", "refusal": null}})).stop,
            Stop::Complete
        );
        let odd = at(json!({"message": {"content": "a"}, "finish_reason": "eos"}));
        assert_eq!(
            (odd.stop, odd.reason.as_deref()),
            (Stop::Other, Some("eos"))
        );
    }

    #[test]
    fn the_token_limit_is_named_by_the_base_url() {
        assert_eq!(
            max_tokens_param("https://api.openai.com/v1"),
            "max_completion_tokens"
        );
        assert_eq!(
            max_tokens_param("https://me.openai.azure.com/openai/v1"),
            "max_completion_tokens"
        );
        for other in [
            "http://127.0.0.1:8000/v1",
            "http://localhost:11434/v1",
            "https://api.openai.com.evil.example/v1",
        ] {
            assert_eq!(max_tokens_param(other), "max_tokens", "{other}");
        }
    }

    #[test]
    fn seeds_differ_per_request_and_repeat() {
        assert_eq!(request_seed(0, "run-1-0-1"), request_seed(0, "run-1-0-1"));
        assert_ne!(request_seed(0, "run-1-0-1"), request_seed(0, "run-1-1-1"));
        assert_ne!(request_seed(0, "run-1-0-1"), request_seed(1, "run-1-0-1"));
        assert!(request_seed(0, "x") < 1 << 31);
    }
}
