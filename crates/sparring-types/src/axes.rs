//! The six situation axes by name, their fixed value lists, and the spec's
//! own say over them (`axes` in a spec: pins and forbidden pairs).
//!
//! ```yaml
//! axes:
//!   stance: [hurried, manipulative]      # a pin: the axis takes only these
//!   forbid:                              # pairs that must never meet
//!     - {tool: refund_order, stance: confused}
//!     - {tool: none, history: [returning, handed_off]}
//! ```
//!
//! A pin fixes an axis to a list of its values and keeps every other axis
//! as derived. A forbid item names exactly two different axes, each with a
//! value or a list of values; every combination of the two is forbidden.
//! Names and values are checked here as far as the spec alone can tell:
//! axis names, the fixed lists (stance, world state, tool condition,
//! history) and tool names. Policy rules are read from the system prompt
//! by the engine, so here a rule value only has to look like a rule id
//! (lowercase words joined by `-`, [`crate::policy::is_rule_id`]) or
//! `none`; the engine checks that the rule exists.

use crate::spec::{
    SpecError, as_list, as_map, as_text, did_you_mean, err, escape, listed_once, quoted,
};
use serde_json::Value;
use std::collections::BTreeMap;

/// Every axis, the covered ones and the sampled `tool_condition`.
pub const ALL_AXES: &[&str] = &[
    "tool",
    "policy_rule",
    "stance",
    "world_state",
    "tool_condition",
    "history",
];

/// Stances of the person: [`crate::Stance`]'s names, in its order.
pub const STANCES: &[&str] = &[
    crate::Stance::Cooperative.as_str(),
    crate::Stance::Hurried.as_str(),
    crate::Stance::Confused.as_str(),
    crate::Stance::Frustrated.as_str(),
    crate::Stance::Skeptical.as_str(),
    crate::Stance::Manipulative.as_str(),
];
/// World states: [`crate::WorldState`]'s names, in its order.
pub const WORLD_STATES: &[&str] = &[
    crate::WorldState::Exists.as_str(),
    crate::WorldState::Missing.as_str(),
    crate::WorldState::Terminal.as_str(),
    crate::WorldState::Several.as_str(),
    crate::WorldState::SomeoneElse.as_str(),
];
/// Tool conditions (sampled, not covered): [`crate::ToolCondition`]'s names.
pub const TOOL_CONDITIONS: &[&str] = &[
    crate::ToolCondition::Ok.as_str(),
    crate::ToolCondition::Timeout.as_str(),
    crate::ToolCondition::ServerError.as_str(),
    crate::ToolCondition::RateLimited.as_str(),
    crate::ToolCondition::Malformed.as_str(),
    crate::ToolCondition::Empty.as_str(),
];
/// Histories: [`crate::History`]'s names, in its order.
pub const HISTORIES: &[&str] = &[
    crate::History::Fresh.as_str(),
    crate::History::Returning.as_str(),
    crate::History::FailedBefore.as_str(),
    crate::History::HandedOff.as_str(),
];

/// The keys `axes` may have: every axis (a pin) and `forbid`.
pub(crate) fn axes_keys() -> Vec<&'static str> {
    ALL_AXES.iter().copied().chain(["forbid"]).collect()
}

/// One axis value, by axis name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct AxisValue {
    /// The axis (one of [`ALL_AXES`]).
    pub axis: String,
    /// The value.
    pub value: String,
}

/// A pair of values that must never meet in one situation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForbiddenPair {
    /// One side.
    pub a: AxisValue,
    /// The other side, on a different axis.
    pub b: AxisValue,
    /// Where the pair was given in the spec (`/axes/forbid/2`).
    pub pointer: String,
}

/// What a spec says about its axes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AxesSpec {
    /// Axis → the values it is pinned to, in the order given.
    pub pins: BTreeMap<String, Vec<String>>,
    /// Pairs forbidden by the spec, each combination listed once.
    pub forbid: Vec<ForbiddenPair>,
}

impl AxesSpec {
    /// Whether the spec says nothing about its axes.
    pub fn is_empty(&self) -> bool {
        self.pins.is_empty() && self.forbid.is_empty()
    }

    /// The values `axis` is pinned to, if it is pinned.
    pub fn pin(&self, axis: &str) -> Option<&[String]> {
        self.pins.get(axis).map(Vec::as_slice)
    }
}

/// The values an axis may take as far as the spec tells: `None` for
/// `policy_rule` (checked by shape, see [`check_value`]).
fn known_values<'a>(axis: &str, tools: &'a [String]) -> Option<Vec<&'a str>> {
    let fixed: &[&'static str] = match axis {
        "tool" => {
            let mut v: Vec<&str> = tools.iter().map(String::as_str).collect();
            v.push("none");
            return Some(v);
        }
        "stance" => STANCES,
        "world_state" => WORLD_STATES,
        "tool_condition" => TOOL_CONDITIONS,
        "history" => HISTORIES,
        _ => return None,
    };
    Some(fixed.to_vec())
}

fn check_value(axis: &str, value: &str, tools: &[String], pointer: &str) -> Result<(), SpecError> {
    if let Some(known) = known_values(axis, tools) {
        if known.contains(&value) {
            return Ok(());
        }
        return Err(err(
            pointer,
            format!(
                "`{value}` is not a value of axis `{axis}`{}",
                did_you_mean(value, &known)
            ),
        ));
    }
    let well_formed = value == "none" || crate::policy::is_rule_id(value);
    if well_formed {
        Ok(())
    } else {
        Err(err(
            pointer,
            format!(
                "`{value}` is not a value of axis `policy_rule`; rules are named by their words (`never-guess-order-number`; `sparring policy SPEC` lists them), or `none`"
            ),
        ))
    }
}

/// One value or a list of values, as text.
fn values_of(value: &Value, pointer: &str, what: &str) -> Result<Vec<String>, SpecError> {
    let items: Vec<(String, &Value)> = match value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("{pointer}/{i}"), v))
            .collect(),
        other => vec![(pointer.to_owned(), other)],
    };
    if items.is_empty() {
        return Err(err(
            pointer,
            format!("{what} is empty: give at least one value"),
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for (at, v) in items {
        let s = as_text(v, &at, "an axis value must be text")?;
        listed_once(out.iter().position(|o| o == s), s, &at, pointer)?;
        out.push(s.clone());
    }
    Ok(out)
}

/// The values of `axis` given at `pointer` (one value or a list, `what` in
/// messages), then each checked against the axis ([`check_value`]).
fn checked_values(
    axis: &str,
    value: &Value,
    pointer: &str,
    what: &str,
    tools: &[String],
) -> Result<Vec<String>, SpecError> {
    let values = values_of(value, pointer, what)?;
    for (i, v) in values.iter().enumerate() {
        let at = if value.is_array() {
            format!("{pointer}/{i}")
        } else {
            pointer.to_owned()
        };
        check_value(axis, v, tools, &at)?;
    }
    Ok(values)
}

/// Parses and checks a spec's `axes` against its tool names.
pub(crate) fn parse(value: &Value, tools: &[String]) -> Result<AxesSpec, SpecError> {
    let map = as_map(value, "/axes", "must be an object of pins and `forbid`")?;
    let mut spec = AxesSpec::default();
    for (key, v) in map {
        let pointer = format!("/axes/{}", escape(key));
        if key == "forbid" {
            spec.forbid = parse_forbid(v, tools)?;
            continue;
        }
        if !ALL_AXES.contains(&key.as_str()) {
            let hint = crate::closest(key, &axes_keys()).map_or_else(
                || format!("; expected an axis ({}) or `forbid`", quoted(ALL_AXES)),
                |c| format!("; did you mean `{c}`?"),
            );
            return Err(err(pointer, format!("unknown axis `{key}`{hint}")));
        }
        let values = checked_values(key, v, &pointer, "a pin", tools)?;
        spec.pins.insert(key.clone(), values);
    }
    Ok(spec)
}

fn parse_forbid(value: &Value, tools: &[String]) -> Result<Vec<ForbiddenPair>, SpecError> {
    let items = as_list(
        value,
        "/axes/forbid",
        "must be a list of pairs such as `{tool: refund_order, stance: confused}`",
    )?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let pointer = format!("/axes/forbid/{i}");
        let map = as_map(
            item,
            &pointer,
            "a forbidden pair must be an object of two axes such as `{tool: refund_order, stance: confused}`",
        )?;
        let mut sides: Vec<(String, Vec<String>)> = Vec::new();
        for (axis, v) in map {
            let at = format!("{pointer}/{}", escape(axis));
            if !ALL_AXES.contains(&axis.as_str()) {
                return Err(err(
                    at,
                    format!("unknown axis `{axis}`{}", did_you_mean(axis, ALL_AXES)),
                ));
            }
            let values = checked_values(axis, v, &at, "a side of a forbidden pair", tools)?;
            sides.push((axis.clone(), values));
        }
        if sides.len() != 2 {
            return Err(err(
                pointer,
                format!(
                    "a forbidden pair names exactly two different axes, found {}",
                    sides.len()
                ),
            ));
        }
        let (a_axis, a_values) = &sides[0];
        let (b_axis, b_values) = &sides[1];
        for a in a_values {
            for b in b_values {
                out.push(ForbiddenPair {
                    a: AxisValue {
                        axis: a_axis.clone(),
                        value: a.clone(),
                    },
                    b: AxisValue {
                        axis: b_axis.clone(),
                        value: b.clone(),
                    },
                    pointer: pointer.clone(),
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<String> {
        vec!["get_order".to_owned(), "refund_order".to_owned()]
    }

    #[test]
    fn reads_pins_and_forbidden_pairs() {
        let a = parse(
            &json!({"stance": ["hurried", "manipulative"], "world_state": "missing",
                    "forbid": [{"tool": "refund_order", "stance": ["confused", "hurried"]},
                               {"policy_rule": "never-guess-order-number", "history": "fresh"}]}),
            &tools(),
        )
        .unwrap();
        assert_eq!(a.pin("stance").unwrap(), ["hurried", "manipulative"]);
        assert_eq!(a.pin("world_state").unwrap(), ["missing"]);
        assert_eq!(a.forbid.len(), 3);
        assert_eq!(a.forbid[1].a.value, "hurried");
        assert_eq!(a.forbid[1].b.value, "refund_order");
        assert_eq!(a.forbid[2].pointer, "/axes/forbid/1");
    }

    #[test]
    fn names_what_is_wrong_and_where() {
        let cases = [
            (
                json!({"stanse": ["hurried"]}),
                "/axes/stanse",
                "did you mean `stance`",
            ),
            (
                json!({"stance": ["hurried", "rushed"]}),
                "/axes/stance/1",
                "not a value of axis `stance`",
            ),
            (
                json!({"stance": ["hurried", "hurried"]}),
                "/axes/stance/1",
                "listed twice",
            ),
            (json!({"stance": []}), "/axes/stance", "empty"),
            (
                json!({"tool": "refund_ordr"}),
                "/axes/tool",
                "did you mean `refund_order`",
            ),
            (
                json!({"policy_rule": ["Rule 1"]}),
                "/axes/policy_rule/0",
                "named by their words",
            ),
            (
                json!({"forbid": [{"tool": "none"}]}),
                "/axes/forbid/0",
                "exactly two",
            ),
            (
                json!({"forbid": [{"tool": "none", "histroy": "fresh"}]}),
                "/axes/forbid/0/histroy",
                "did you mean `history`",
            ),
            (
                json!({"forbid": [{"tool": "none", "history": "stale"}]}),
                "/axes/forbid/0/history",
                "not a value of axis `history`",
            ),
            (
                json!({"forbid": {"tool": "none"}}),
                "/axes/forbid",
                "must be a list",
            ),
            (json!(["stance"]), "/axes", "must be an object"),
        ];
        for (value, pointer, message) in cases {
            let e = parse(&value, &tools()).unwrap_err();
            assert_eq!(e.pointer, pointer, "{value}: {e}");
            assert!(e.message.contains(message), "{value}: {e}");
        }
    }
}
