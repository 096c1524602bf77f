//! Explicit expectations: a seed that says what done looks like.
//!
//! A seed is a plain ask, or an ask with what its conversation must achieve,
//! in tau2-bench's form:
//!
//! ```yaml
//! seeds:
//!   - "Where is my package? The order is #W1002."
//!   - ask: "Please cancel order #W1001, I ordered it by mistake."
//!     expect:
//!       calls: [{tool: cancel_order, arguments: {order_id: "#W1001"}}]
//!       state: {orders: {"#W1001": {status: cancelled}}}
//!       says: ["cancelled"]
//! ```
//!
//! `calls` are the calls that must succeed, in that order (reads between
//! them are free; a state-changing call beyond them fails the goal);
//! `state` the fields records must hold at the end, by entity and id;
//! `says` the facts the final reply must state. Each part is optional; at
//! least one is given. The seed's goal is then [`GoalKind::Expected`]
//! carrying the [`Expect`] (`docs/grading.md`, "Explicit expectations").
//!
//! Everything is checked against the spec when it is read: unknown keys
//! (with a did-you-mean), tools, parameters and entities, arguments that
//! break the tool's parameter schema, records the fixtures lack; each error
//! names its JSON pointer.
//!
//! [`GoalKind::Expected`]: crate::GoalKind::Expected

use crate::spec::{
    SpecError, as_list, as_text, check_keys, did_you_mean, err, escape, kind, object,
};
use crate::tool::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The keys a seed object may have.
pub(crate) const SEED_KEYS: &[&str] = &["ask", "expect"];
/// The keys of `expect`.
pub(crate) const EXPECT_KEYS: &[&str] = &["calls", "state", "says"];
/// The keys of one expected call.
pub(crate) const CALL_KEYS: &[&str] = &["tool", "arguments"];

/// Entity → record id → field → the value it must hold at the end.
pub type ExpectedState = BTreeMap<String, BTreeMap<String, BTreeMap<String, Value>>>;

/// What a seed's conversation must achieve (`seeds[].expect`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Calls that must succeed with these arguments, in this order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ExpectedCall>,
    /// Fields records must hold at the end, by entity and id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub state: ExpectedState,
    /// Facts the final reply must state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub says: Vec<String>,
}

/// One expected call: a tool and the arguments it must carry (arguments
/// not named are free).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCall {
    /// The tool's name.
    pub tool: String,
    /// Argument → the value it must have.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub arguments: BTreeMap<String, Value>,
}

/// A spec's seeds as read: the asks, and the expectations of those given
/// with one, by seed index.
pub(crate) type Seeds = (Vec<String>, BTreeMap<usize, Expect>);

/// Reads `seeds`: plain asks or `{ask, expect}` objects, checked against the
/// spec's tools and fixtures.
pub(crate) fn parse_seeds(
    value: &Value,
    tools: &[ToolSpec],
    fixtures: &BTreeMap<String, Vec<Value>>,
) -> Result<Seeds, SpecError> {
    let items = as_list(value, "/seeds", "must be a list of asks")?;
    let mut asks = Vec::with_capacity(items.len());
    let mut expects = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let pointer = format!("/seeds/{i}");
        match item {
            Value::String(s) if !s.trim().is_empty() => asks.push(s.clone()),
            Value::Object(map) => {
                check_keys(map, &pointer, SEED_KEYS)?;
                let at = format!("{pointer}/ask");
                let ask = map
                    .get("ask")
                    .ok_or_else(|| err(&at, "missing: a seed object needs its `ask`"))?;
                asks.push(non_empty_text(ask, at, "an ask must be non-empty text")?);
                if let Some(expect) = map.get("expect") {
                    let at = format!("{pointer}/expect");
                    expects.insert(i, parse_expect(expect, tools, fixtures, &at)?);
                }
            }
            other => {
                return Err(err(
                    pointer,
                    format!(
                        "a seed must be non-empty text or `{{ask, expect}}`, found {}",
                        found(other)
                    ),
                ));
            }
        }
    }
    Ok((asks, expects))
}

/// What was found instead of non-empty text.
fn found(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "empty text",
        other => kind(other),
    }
}

/// `value` as non-empty text, or the error at `pointer` that it must be
/// (`expected`, found …).
fn non_empty_text(value: &Value, pointer: String, expected: &str) -> Result<String, SpecError> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
        other => Err(err(pointer, format!("{expected}, found {}", found(other)))),
    }
}

fn parse_expect(
    value: &Value,
    tools: &[ToolSpec],
    fixtures: &BTreeMap<String, Vec<Value>>,
    pointer: &str,
) -> Result<Expect, SpecError> {
    let map = object(value, pointer, "`expect`")?;
    check_keys(map, pointer, EXPECT_KEYS)?;
    if map.is_empty() {
        return Err(err(
            pointer,
            "is empty: give at least one of `calls`, `state`, `says`",
        ));
    }
    let mut expect = Expect::default();
    if let Some(calls) = map.get("calls") {
        let at = format!("{pointer}/calls");
        let items = as_list(calls, &at, "must be a list of `{tool, arguments}`")?;
        for (i, call) in items.iter().enumerate() {
            expect
                .calls
                .push(parse_call(call, tools, &format!("{at}/{i}"))?);
        }
    }
    if let Some(state) = map.get("state") {
        expect.state = parse_state(state, tools, fixtures, &format!("{pointer}/state"))?;
    }
    if let Some(says) = map.get("says") {
        let at = format!("{pointer}/says");
        let items = as_list(says, &at, "must be a list of texts")?;
        for (i, s) in items.iter().enumerate() {
            let fact = non_empty_text(s, format!("{at}/{i}"), "must be non-empty text")?;
            expect.says.push(fact);
        }
    }
    if expect.calls.is_empty() && expect.state.is_empty() && expect.says.is_empty() {
        return Err(err(
            pointer,
            "expects nothing: give at least one call, state field or fact to say",
        ));
    }
    Ok(expect)
}

fn parse_call(value: &Value, tools: &[ToolSpec], pointer: &str) -> Result<ExpectedCall, SpecError> {
    let map = object(value, pointer, "an expected call")?;
    check_keys(map, pointer, CALL_KEYS)?;
    let at = format!("{pointer}/tool");
    let name = map
        .get("tool")
        .ok_or_else(|| err(&at, "missing: an expected call names its `tool`"))?;
    let name = as_text(name, &at, "must be a tool name")?;
    let Some(tool) = tools.iter().find(|t| &t.name == name) else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        return Err(err(
            at,
            format!("no tool is named `{name}`{}", did_you_mean(name, &names)),
        ));
    };
    let at = format!("{pointer}/arguments");
    let arguments = match map.get("arguments") {
        None => serde_json::Map::new(),
        Some(v) => object(v, &at, "`arguments`")?.clone(),
    };
    let params = tool.parameter_names();
    for key in arguments.keys() {
        if !params.contains(&key.as_str()) {
            return Err(err(
                format!("{at}/{}", escape(key)),
                format!(
                    "`{name}` has no parameter `{key}`{}",
                    did_you_mean(key, &params)
                ),
            ));
        }
    }
    let instance = Value::Object(arguments.clone());
    if let Ok(validator) = crate::arguments_validator(&tool.parameters)
        && let Some(error) = validator.iter_errors(&instance).next()
    {
        return Err(err(
            format!("{at}{}", error.instance_path()),
            format!("the arguments break `{name}`'s parameter schema: {error}"),
        ));
    }
    Ok(ExpectedCall {
        tool: name.clone(),
        arguments: arguments.into_iter().collect(),
    })
}

fn parse_state(
    value: &Value,
    tools: &[ToolSpec],
    fixtures: &BTreeMap<String, Vec<Value>>,
    pointer: &str,
) -> Result<ExpectedState, SpecError> {
    let entities = object(value, pointer, "`state` (entity → id → fields)")?;
    let known: Vec<&str> = fixtures.keys().map(String::as_str).collect();
    let mut out = ExpectedState::new();
    for (entity, records) in entities {
        let at = format!("{pointer}/{}", escape(entity));
        let Some(fixture) = fixtures.get(entity) else {
            let hint = if known.is_empty() {
                "; the spec has no `fixtures` to expect a state of".to_owned()
            } else {
                did_you_mean(entity, &known)
            };
            return Err(err(at, format!("unknown entity `{entity}`{hint}")));
        };
        let id_field = crate::keys::id_fields(tools, fixtures)
            .0
            .remove(entity)
            .unwrap_or_else(|| crate::IdField::default_for(entity));
        let ids: Vec<String> = fixture
            .iter()
            .filter_map(|r| r.as_object())
            .filter_map(|r| id_field.id_of(r))
            .collect();
        let records = object(records, &at, "an entity's expected records (id → fields)")?;
        let mut by_id = BTreeMap::new();
        for (id, fields) in records {
            let rat = format!("{at}/{}", escape(id));
            if !ids.contains(id) {
                let names: Vec<&str> = ids.iter().map(String::as_str).collect();
                return Err(err(
                    rat,
                    format!(
                        "no `{entity}` fixture has id `{id}`{}",
                        did_you_mean(id, &names)
                    ),
                ));
            }
            let fields = object(fields, &rat, "a record's expected fields")?;
            if fields.is_empty() {
                return Err(err(rat, "is empty: name the fields the record must hold"));
            }
            by_id.insert(
                id.clone(),
                fields.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            );
        }
        out.insert(entity.clone(), by_id);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::Spec;
    use serde_json::{Value, json};

    fn doc(seeds: &Value) -> Value {
        json!({
            "name": "t", "system_prompt": "Help.",
            "tools": [
                {"name": "get_order", "inputSchema": {"type": "object",
                    "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}},
                {"name": "cancel_order", "inputSchema": {"type": "object",
                    "properties": {"order_id": {"type": "string"},
                                   "reason": {"type": "string", "enum": ["mistake", "no_longer_needed"]}},
                    "required": ["order_id"]}},
            ],
            "fixtures": {"orders": [{"order_id": "#W1001", "status": "pending"}]},
            "seeds": seeds,
        })
    }

    fn error(seeds: &Value) -> String {
        Spec::from_value(&doc(seeds)).unwrap_err().to_string()
    }

    #[test]
    fn a_seed_with_an_expectation_reads_beside_plain_ones() {
        let spec = Spec::from_value(&doc(&json!([
            "Where is #W1001?",
            {"ask": "Cancel #W1001, please.", "expect": {
                "calls": [{"tool": "cancel_order", "arguments": {"order_id": "#W1001", "reason": "mistake"}}],
                "state": {"orders": {"#W1001": {"status": "cancelled"}}},
                "says": ["cancelled"]}},
            {"ask": "Hello."},
        ])))
        .unwrap();
        assert_eq!(
            spec.seeds,
            ["Where is #W1001?", "Cancel #W1001, please.", "Hello."]
        );
        assert_eq!(spec.seed_expects.keys().copied().collect::<Vec<_>>(), [1]);
        let e = &spec.seed_expects[&1];
        assert_eq!(e.calls[0].tool, "cancel_order");
        assert_eq!(e.calls[0].arguments["reason"], "mistake");
        assert_eq!(e.state["orders"]["#W1001"]["status"], "cancelled");
        assert_eq!(e.says, ["cancelled"]);
    }

    #[test]
    fn each_mistake_is_one_line_naming_its_pointer() {
        let cases = [
            (
                json!([{"ask": "x", "expct": {}}]),
                "at `/seeds/0/expct`: unknown key `expct`; did you mean `expect`?",
            ),
            (
                json!([{"expect": {"says": ["a"]}}]),
                "at `/seeds/0/ask`: missing: a seed object needs its `ask`",
            ),
            (
                json!([3]),
                "at `/seeds/0`: a seed must be non-empty text or `{ask, expect}`, found a number",
            ),
            (
                json!([{"ask": "x", "expect": {"call": []}}]),
                "at `/seeds/0/expect/call`: unknown key `call`; did you mean `calls`?",
            ),
            (
                json!([{"ask": "x", "expect": {}}]),
                "at `/seeds/0/expect`: is empty: give at least one of `calls`, `state`, `says`",
            ),
            (
                json!([{"ask": "x", "expect": {"calls": [], "says": []}}]),
                "at `/seeds/0/expect`: expects nothing: give at least one call, state field or fact to say",
            ),
            (
                json!([{"ask": "x", "expect": {"calls": [{"tool": "cancel_ordr"}]}}]),
                "at `/seeds/0/expect/calls/0/tool`: no tool is named `cancel_ordr`; did you mean `cancel_order`?",
            ),
            (
                json!([{"ask": "x", "expect": {"calls": [{"tool": "cancel_order", "args": {}}]}}]),
                "at `/seeds/0/expect/calls/0/args`: unknown key `args`; expected one of `tool`, `arguments`",
            ),
            (
                json!([{"ask": "x", "expect": {"calls": [{"tool": "cancel_order", "argument": {}}]}}]),
                "at `/seeds/0/expect/calls/0/argument`: unknown key `argument`; did you mean `arguments`?",
            ),
            (
                json!([{"ask": "x", "expect": {"calls": [{"tool": "cancel_order", "arguments": {"ordr_id": "#W1001"}}]}}]),
                "at `/seeds/0/expect/calls/0/arguments/ordr_id`: `cancel_order` has no parameter `ordr_id`; did you mean `order_id`?",
            ),
            (
                json!([{"ask": "x", "expect": {"calls": [{"tool": "cancel_order", "arguments": {"order_id": 1001}}]}}]),
                "at `/seeds/0/expect/calls/0/arguments/order_id`: the arguments break `cancel_order`'s parameter schema: 1001 is not of type \"string\"",
            ),
            (
                json!([{"ask": "x", "expect": {"calls": [{"tool": "cancel_order", "arguments": {"order_id": "#W1001", "reason": "bored"}}]}}]),
                "at `/seeds/0/expect/calls/0/arguments/reason`: the arguments break `cancel_order`'s parameter schema: \"bored\" is not one of \"mistake\" or \"no_longer_needed\"",
            ),
            (
                json!([{"ask": "x", "expect": {"calls": [{"tool": "get_order", "arguments": {}}]}}]),
                "at `/seeds/0/expect/calls/0/arguments`: the arguments break `get_order`'s parameter schema: \"order_id\" is a required property",
            ),
            (
                json!([{"ask": "x", "expect": {"state": {"order": {"#W1001": {"status": "cancelled"}}}}}]),
                "at `/seeds/0/expect/state/order`: unknown entity `order`; did you mean `orders`?",
            ),
            (
                json!([{"ask": "x", "expect": {"state": {"orders": {"#W1002": {"status": "cancelled"}}}}}]),
                "at `/seeds/0/expect/state/orders/#W1002`: no `orders` fixture has id `#W1002`; did you mean `#W1001`?",
            ),
            (
                json!([{"ask": "x", "expect": {"state": {"orders": {"#W1001": {}}}}}]),
                "at `/seeds/0/expect/state/orders/#W1001`: is empty: name the fields the record must hold",
            ),
            (
                json!([{"ask": "x", "expect": {"says": ["ok", ""]}}]),
                "at `/seeds/0/expect/says/1`: must be non-empty text, found empty text",
            ),
        ];
        for (seeds, want) in cases {
            assert_eq!(error(&seeds), want, "{seeds}");
        }
    }

    #[test]
    fn state_needs_fixtures() {
        let mut d =
            doc(&json!([{"ask": "x", "expect": {"state": {"orders": {"#W1": {"status": "x"}}}}}]));
        d.as_object_mut().unwrap().remove("fixtures");
        assert_eq!(
            Spec::from_value(&d).unwrap_err().to_string(),
            "at `/seeds/0/expect/state/orders`: unknown entity `orders`; the spec has no `fixtures` to expect a state of"
        );
    }
}
