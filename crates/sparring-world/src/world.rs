//! The world's state and how it answers calls.

use crate::infer::{Operation, ToolModel, infer_all, participle};
use crate::result::{ErrorKind, ToolResult};
use serde_json::{Map, Value, json};
use sparring_types::{Spec, ToolSpec, id_keys, record_id, seed};
use std::collections::BTreeMap;

/// Statuses after which a record takes no further action.
const TERMINAL: &[&str] = &[
    "cancelled",
    "canceled",
    "refunded",
    "deleted",
    "closed",
    "returned",
    "removed",
    "voided",
];

/// Values that only echo a schema or a template, never real data.
const PLACEHOLDERS: &[&str] = &[
    "string",
    "user@example.com",
    "email@example.com",
    "example@example.com",
    "john doe",
    "jane doe",
    "first name",
    "last name",
    "full name",
    "xxx",
    "xxxx",
    "123",
    "1234",
    "12345",
    "example",
    "unknown",
    "n/a",
    "todo",
    "your_order_id",
    "order_id_here",
];

/// A sandbox world for one rollout.
#[derive(Clone, Debug)]
pub struct World {
    tools: Vec<ToolSpec>,
    models: Vec<ToolModel>,
    /// entity → id → record.
    records: BTreeMap<String, BTreeMap<String, Map<String, Value>>>,
    seed: u64,
    created: u64,
}

impl World {
    /// A world holding the spec's fixtures, with its own seed.
    pub fn new(spec: &Spec, seed: u64) -> Self {
        let mut records: BTreeMap<String, BTreeMap<String, Map<String, Value>>> = BTreeMap::new();
        for (entity, items) in &spec.fixtures {
            let keys = id_keys(entity);
            let store = records.entry(entity.clone()).or_default();
            for item in items {
                if let Some(fields) = item.as_object()
                    && let Some(id) = record_id(fields, &keys)
                {
                    store.insert(id, fields.clone());
                }
            }
        }
        Self {
            tools: spec.tools.clone(),
            models: infer_all(spec),
            records,
            seed,
            created: 0,
        }
    }

    /// The same world with another seed: what the seed drives (generated
    /// ids and records) changes, fixtures stay as given. Cheaper than
    /// building the world again for every rollout.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// What the world read out of each tool.
    pub fn models(&self) -> &[ToolModel] {
        &self.models
    }

    /// The ids of an entity's records, sorted.
    pub fn ids(&self, entity: &str) -> Vec<String> {
        self.records
            .get(entity)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// One record, as it stands now.
    pub fn record(&self, entity: &str, id: &str) -> Option<&Map<String, Value>> {
        self.records.get(entity)?.get(id)
    }

    /// Answers one call and remembers its effect.
    pub fn call(&mut self, tool: &str, arguments: &Value) -> ToolResult {
        let Some(index) = self.tools.iter().position(|t| t.name == tool) else {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
            return ToolResult::err_hint(
                ErrorKind::UnknownTool,
                format!("no tool is named `{tool}`"),
                format!("available tools: {}", names.join(", ")),
            );
        };
        let spec = &self.tools[index];
        let Some(args) = arguments.as_object() else {
            return ToolResult::err(
                ErrorKind::InvalidArguments,
                format!("arguments must be a JSON object, got {arguments}"),
            );
        };
        if let Some(problem) = validate(spec, args) {
            return problem;
        }
        if let Some(refusal) = echo_refusal(spec, args) {
            return refusal;
        }
        let model = self.models[index].clone();
        self.perform(&model, args)
    }

    fn perform(&mut self, model: &ToolModel, args: &Map<String, Value>) -> ToolResult {
        let id = model
            .id_param
            .as_ref()
            .and_then(|p| args.get(p))
            .and_then(id_text);
        let Some(entity) = model.entity.clone() else {
            return ToolResult::Ok(json!({"status": "ok"}));
        };
        let singular = sparring_types::singular(&entity);
        match (&model.operation, id) {
            (Operation::Create, _) => self.create(&entity, args),
            (op, Some(id)) => {
                let has_fixtures = self.records.contains_key(&entity);
                let store = self.records.entry(entity.clone()).or_default();
                if !store.contains_key(&id) {
                    if has_fixtures {
                        let param = model.id_param.clone().unwrap_or_default();
                        return ToolResult::err_hint(
                            ErrorKind::NotFound,
                            format!("no {singular} has {param} `{id}`"),
                            format!("check the {param} with the customer"),
                        );
                    }
                    // An entity the spec gave no records for: every id exists,
                    // as a bare record, until the world generates them.
                    let mut fields = Map::new();
                    fields.insert(format!("{singular}_id"), Value::String(id.clone()));
                    store.insert(id.clone(), fields);
                }
                let Some(record) = store.get_mut(&id) else {
                    return ToolResult::err(ErrorKind::NotFound, format!("no {singular} `{id}`"));
                };
                let status = record
                    .get("status")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                match op {
                    Operation::Read | Operation::Other | Operation::Create => {
                        ToolResult::Ok(Value::Object(record.clone()))
                    }
                    Operation::StateChange(verb) => {
                        let done = participle(verb);
                        if let Some(status) = status {
                            if status == done {
                                return ToolResult::err(
                                    ErrorKind::Refused,
                                    format!("{singular} `{id}` is already {done}"),
                                );
                            }
                            if TERMINAL.contains(&status.as_str()) {
                                return ToolResult::err(
                                    ErrorKind::Refused,
                                    format!("{singular} `{id}` is {status} and cannot be {done}"),
                                );
                            }
                        }
                        record.insert("status".to_owned(), Value::String(done));
                        ToolResult::Ok(Value::Object(record.clone()))
                    }
                    Operation::Update => {
                        if let Some(status) = status
                            && TERMINAL.contains(&status.as_str())
                        {
                            return ToolResult::err(
                                ErrorKind::Refused,
                                format!("{singular} `{id}` is {status} and cannot be changed"),
                            );
                        }
                        for (k, v) in args {
                            if Some(k) != model.id_param.as_ref() {
                                record.insert(k.clone(), v.clone());
                            }
                        }
                        ToolResult::Ok(Value::Object(record.clone()))
                    }
                }
            }
            (Operation::Read, None) => self.search(&entity, args),
            (_, None) => ToolResult::Ok(json!({"status": "ok"})),
        }
    }

    fn search(&self, entity: &str, args: &Map<String, Value>) -> ToolResult {
        let Some(store) = self.records.get(entity) else {
            return ToolResult::Ok(json!([]));
        };
        let matches: Vec<Value> = store
            .values()
            .filter(|record| {
                args.iter().all(|(k, v)| match record.get(k) {
                    Some(field) => loosely_equal(field, v),
                    None => true,
                })
            })
            .map(|r| Value::Object(r.clone()))
            .collect();
        if matches.is_empty() && !args.is_empty() {
            let given: Vec<String> = args
                .iter()
                .map(|(k, v)| format!("{k} `{}`", plain(v)))
                .collect();
            return ToolResult::err(
                ErrorKind::NotFound,
                format!(
                    "no {} matches {}",
                    sparring_types::singular(entity),
                    given.join(", ")
                ),
            );
        }
        ToolResult::Ok(Value::Array(matches))
    }

    fn create(&mut self, entity: &str, args: &Map<String, Value>) -> ToolResult {
        let singular = sparring_types::singular(entity);
        let key = format!("{singular}_id");
        let n = seed::derive_u64(self.seed, "world/create", &[self.created]);
        self.created += 1;
        let id = format!(
            "{}{:08}",
            singular.chars().next().unwrap_or('x').to_ascii_uppercase(),
            n % 100_000_000
        );
        let mut record = args.clone();
        record.insert(key, Value::String(id.clone()));
        self.records
            .entry(entity.to_owned())
            .or_default()
            .insert(id, record.clone());
        ToolResult::Ok(Value::Object(record))
    }
}

fn id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn loosely_equal(field: &Value, given: &Value) -> bool {
    match (field, given) {
        (Value::String(a), Value::String(b)) => a.trim().eq_ignore_ascii_case(b.trim()),
        (a, b) => plain(a) == plain(b),
    }
}

/// Checks the arguments against the parts of the schema an agent most often
/// breaks: required properties, unknown properties, basic types and enums.
fn validate(spec: &ToolSpec, args: &Map<String, Value>) -> Option<ToolResult> {
    for name in spec.required() {
        if !args.contains_key(name) {
            return Some(ToolResult::err_hint(
                ErrorKind::InvalidArguments,
                format!("missing required argument `{name}`"),
                format!(
                    "`{}` takes: {}",
                    spec.name,
                    spec.parameter_names().join(", ")
                ),
            ));
        }
    }
    let closed = spec.parameters.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, value) in args {
        let Some(schema) = spec.parameter(name) else {
            if closed {
                return Some(ToolResult::err_hint(
                    ErrorKind::InvalidArguments,
                    format!("unknown argument `{name}`"),
                    format!(
                        "`{}` takes: {}",
                        spec.name,
                        spec.parameter_names().join(", ")
                    ),
                ));
            }
            continue;
        };
        if let Some(expected) = schema.get("type").and_then(Value::as_str)
            && !type_matches(expected, value)
        {
            return Some(ToolResult::err(
                ErrorKind::InvalidArguments,
                format!("argument `{name}` must be of type {expected}, got {value}"),
            ));
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array)
            && !options.contains(value)
        {
            let list: Vec<String> = options.iter().map(ToString::to_string).collect();
            return Some(ToolResult::err(
                ErrorKind::InvalidArguments,
                format!(
                    "argument `{name}` must be one of {}, got {value}",
                    list.join(", ")
                ),
            ));
        }
    }
    None
}

fn type_matches(expected: &str, value: &Value) -> bool {
    match expected {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// Refuses a string argument that only repeats the schema or a template.
fn echo_refusal(spec: &ToolSpec, args: &Map<String, Value>) -> Option<ToolResult> {
    for (name, value) in args {
        let Value::String(text) = value else { continue };
        let lower = text.trim().to_lowercase();
        let schema = spec.parameter(name);
        let title = schema
            .and_then(|s| s.get("title"))
            .and_then(Value::as_str)
            .map(str::to_lowercase);
        let spaced = name.replace('_', " ");
        let echoes = lower == name.to_lowercase()
            || lower == spaced
            || title.as_deref() == Some(lower.as_str())
            || PLACEHOLDERS.contains(&lower.as_str())
            || (lower.starts_with('<') && lower.ends_with('>'))
            || (lower.starts_with('{') && lower.ends_with('}') && !lower.contains('"'));
        if echoes {
            return Some(ToolResult::err_hint(
                ErrorKind::Refused,
                format!(
                    "`{name}` is `{text}`, which repeats the schema rather than giving a real value"
                ),
                format!("ask the customer for their real {spaced}"),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shop() -> Spec {
        Spec::from_value(&json!({
            "name": "shop", "system_prompt": "",
            "tools": [
                {"name": "get_order", "inputSchema": {"type": "object",
                    "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}},
                {"name": "refund_order", "inputSchema": {"type": "object",
                    "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
                    "required": ["order_id"], "additionalProperties": false}},
                {"name": "update_address", "inputSchema": {"type": "object",
                    "properties": {"order_id": {"type": "string"}, "address": {"type": "string"}},
                    "required": ["order_id", "address"]}},
                {"name": "find_orders", "inputSchema": {"type": "object",
                    "properties": {"email": {"type": "string"}}}},
            ],
            "fixtures": {"orders": [
                {"order_id": "A1", "status": "delivered", "email": "ann@shop.test"},
                {"order_id": "A2", "status": "cancelled", "email": "bob@shop.test"},
            ]},
        }))
        .unwrap()
    }

    #[test]
    fn remembers_state_changes() {
        let mut w = World::new(&shop(), 1);
        assert!(w.call("refund_order", &json!({"order_id": "A1"})).is_ok());
        let read = w.call("get_order", &json!({"order_id": "A1"}));
        assert_eq!(read.to_json()["result"]["status"], "refunded");
        let again = w.call("refund_order", &json!({"order_id": "A1"}));
        assert_eq!(again.error_kind(), Some("refused"));
        let cancelled = w.call("refund_order", &json!({"order_id": "A2"}));
        assert_eq!(cancelled.error_kind(), Some("refused"));
    }

    #[test]
    fn says_no() {
        let mut w = World::new(&shop(), 1);
        assert_eq!(
            w.call("get_order", &json!({"order_id": "Z9"})).error_kind(),
            Some("not_found")
        );
        assert_eq!(
            w.call("get_order", &json!({})).error_kind(),
            Some("invalid_arguments")
        );
        assert_eq!(
            w.call("get_order", &json!({"order_id": 5})).error_kind(),
            Some("invalid_arguments")
        );
        assert_eq!(
            w.call("refund_order", &json!({"order_id": "A1", "amount": 3}))
                .error_kind(),
            Some("invalid_arguments")
        );
        assert_eq!(
            w.call("get_order", &json!({"order_id": "<order_id>"}))
                .error_kind(),
            Some("refused")
        );
        assert_eq!(
            w.call("get_order", &json!({"order_id": "order id"}))
                .error_kind(),
            Some("refused")
        );
        assert_eq!(
            w.call("nope", &json!({})).error_kind(),
            Some("unknown_tool")
        );
    }

    #[test]
    fn updates_and_searches() {
        let mut w = World::new(&shop(), 1);
        let r = w.call(
            "update_address",
            &json!({"order_id": "A1", "address": "1 Main St"}),
        );
        assert_eq!(r.to_json()["result"]["address"], "1 Main St");
        let found = w.call("find_orders", &json!({"email": "BOB@shop.test"}));
        assert_eq!(found.to_json()["result"][0]["order_id"], "A2");
        let none = w.call("find_orders", &json!({"email": "zed@shop.test"}));
        assert_eq!(none.error_kind(), Some("not_found"));
        assert!(
            w.call("find_orders", &json!({"email": "ann@shop.test"}))
                .is_ok()
        );
    }

    #[test]
    fn same_calls_same_answers() {
        let run = || {
            let mut w = World::new(&shop(), 9);
            ["A1", "A2", "Q"]
                .iter()
                .map(|id| {
                    w.call("refund_order", &json!({"order_id": id}))
                        .to_json()
                        .to_string()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}
