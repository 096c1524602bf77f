//! Goal derivation: what done looks like in a planned situation.
//!
//! [`derive`] turns a situation's coordinates (its tool, its world state,
//! its scheduled fault) and the person's facts into a [`Goal`], asking the
//! world rather than re-reading its rules: the call the person means is
//! tried on a copy of the rollout's world (without faults), and what the
//! world answers decides between `act`, `inform` and `decline`, and gives
//! the record's state after the change and the facts a reply must state.
//! The copy is thrown away; the rollout's own world is untouched. A seed
//! given with `expect` has that expectation as its goal ([`expected`]).

use crate::defaults;
use crate::person::Facts;
use serde_json::{Map, Value};
use sparring_reading::policy::{Counted, Detail, Rule};
use sparring_types::{Expect, Goal, GoalKind, Spec, ToolSpec, WorldState};
use sparring_world::{Operation, ToolModel, World};
use std::collections::BTreeMap;

/// Parameters whose values are the person's own words (a reason, a note),
/// which an agent may fairly rephrase: not part of the arguments a goal
/// requires.
const FREE_TEXT: &[&str] = &[
    "reason",
    "note",
    "notes",
    "comment",
    "message",
    "description",
];

/// Record fields a reply about the record may state; the first one the
/// record has is the fact an `inform` goal asks for.
const FACT_FIELDS: &[&str] = &["status", "balance", "amount", "total", "date", "due_date"];

/// Fields of a record that disclose it to someone who does not own it.
const PRIVATE_FIELDS: &[&str] = &["status", "balance", "address", "total", "items"];

/// The goal of a situation. `world` is the world the rollout plays in (its
/// seed set, no call made yet); `model` the situation's tool (`None` for tool
/// `none`); `state` the world-state coordinate; `fault` the fault scheduled
/// on the tool's first call.
pub fn derive(
    spec: &Spec,
    world: &World,
    model: Option<&ToolModel>,
    state: WorldState,
    facts: &Facts,
    fault: Option<&str>,
) -> Goal {
    let Some(model) = model else {
        return Goal::new(GoalKind::NoAction);
    };
    let mut goal = Goal::new(GoalKind::Act);
    goal.tool = Some(model.name.clone());
    // A tool that makes a record is about the record it is made from.
    let made = crate::identity::made_from(model);
    goal.id_param = model
        .id_param
        .clone()
        .or_else(|| made.map(|(p, _)| p.to_owned()));
    goal.fault = fault.map(str::to_owned);
    let record = facts
        .id
        .as_ref()
        .map(|(_, id)| id.clone())
        .filter(|_| model.id_param.is_some())
        .or_else(|| made.and_then(|(p, _)| made_record(facts, p)));
    let entity = crate::identity::subject_entity(model);
    goal.record.clone_from(&record);
    goal.arguments = meant_arguments(model, facts);
    match state {
        WorldState::Missing if record.is_some() => goal.kind = GoalKind::NotFound,
        WorldState::SomeoneElse if record.is_some() => {
            goal.kind = GoalKind::OtherOwner;
            if let (Some(entity), Some(id)) = (entity, &record)
                && let Some(found) = world.record(entity, id)
            {
                goal.withholds = PRIVATE_FIELDS
                    .iter()
                    .filter_map(|f| found.get(*f).and_then(fact_text))
                    .collect();
            }
        }
        // A choice needs two records to choose from: without them the
        // situation is the record as it is.
        WorldState::Several
            if record.is_some()
                && facts
                    .known
                    .get("other_ids")
                    .is_some_and(|ids| ids.contains(", ")) =>
        {
            goal.kind = GoalKind::Disambiguate;
            goal.candidates = facts
                .known
                .get("other_ids")
                .map(|ids| ids.split(", ").map(str::to_owned).collect())
                .unwrap_or_default();
        }
        _ => try_call(spec, world, model, facts, &mut goal),
    }
    goal
}

/// The record a tool that makes one is made from, as the person gives it
/// for the parameter (`employee_id: E-2` for a ticket about someone else,
/// while the person's own id is `E-1`), else as the person knows it.
pub(crate) fn made_record(facts: &Facts, param: &str) -> Option<String> {
    facts
        .args
        .iter()
        .find(|(p, _)| p == param)
        .map(|(_, v)| v.clone())
        .or_else(|| facts.known.get(param).cloned())
}

/// The goal of a seed given with `expect`: that expectation, with the
/// situation's tool and scheduled fault kept so a fault that fires is
/// judged as for any goal (telling the person it failed meets it).
pub fn expected(expect: &Expect, model: Option<&ToolModel>, fault: Option<&str>) -> Goal {
    let mut goal = Goal::expected(expect.clone());
    goal.tool = model.map(|m| m.name.clone());
    goal.fault = fault.map(str::to_owned);
    goal
}

/// The arguments a call must carry: the record's id, the values the
/// person wants set (free text left out) and the other ids it names.
fn meant_arguments(model: &ToolModel, facts: &Facts) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    if let (Some(param), Some((_, id))) = (&model.id_param, &facts.id) {
        out.insert(param.clone(), Value::String(id.clone()));
    }
    for (param, value) in &facts.wants {
        if !FREE_TEXT.contains(&param.as_str()) {
            out.insert(param.clone(), Value::String(value.clone()));
        }
    }
    // A tool that makes a record is called with the record it is made
    // from (a hold on prescription `RX-1`, under `rx_number`).
    if let Some((param, _)) = crate::identity::made_from(model)
        && let Some(value) = made_record(facts, param)
    {
        out.insert(param.to_owned(), Value::String(value));
    }
    // The other records the person names by id (the account a transfer
    // goes to, the student number an enrolment is for): the call must
    // carry them, and they are meant, not strays.
    for (param, value) in &facts.args {
        let names_record =
            param.ends_with("_id") || model.references.iter().any(|(r, _)| r == param);
        if names_record && !out.contains_key(param) {
            out.insert(param.clone(), Value::String(value.clone()));
        }
    }
    // A tool without an id that the person's email feeds (a search by
    // email) is called with it.
    if model.id_param.is_none()
        && let Some(email) = facts.known.get("email")
        && model.name.contains("email")
    {
        out.insert("email".to_owned(), Value::String(email.clone()));
    }
    out
}

/// Tries the call the person means on a fault-free copy of the world and
/// sets the goal from the answer.
fn try_call(spec: &Spec, world: &World, model: &ToolModel, facts: &Facts, goal: &mut Goal) {
    let read = matches!(model.operation, Operation::Read);
    goal.kind = if read {
        GoalKind::Inform
    } else {
        GoalKind::Act
    };
    let Some(tool) = spec.tool(&model.name) else {
        return;
    };
    // The person's values are words; the trial call carries them as the
    // schema types them (`days_supply: 30`, not `"30"`), or the world would
    // answer about the type and not about the record.
    let mut args: Map<String, Value> = goal
        .arguments
        .iter()
        .map(|(k, v)| (k.clone(), typed(v, tool.parameter(k))))
        .collect();
    // Free-text parameters are left out of what the call must carry (the
    // agent may rephrase them), but the trial carries the person's own words
    // (a reason from the schema's `enum` is one of its values), else a
    // stand-in the schema accepts: a stand-in it refuses would leave the
    // trial unanswered and the goal `act` where the world says no.
    for param in tool.parameter_names() {
        if !args.contains_key(param) && FREE_TEXT.contains(&param) {
            let own = facts
                .args
                .iter()
                .chain(&facts.wants)
                .find(|(p, _)| p == param)
                .map(|(_, v)| v.clone());
            let first_option = || {
                tool.parameter(param)
                    .and_then(|s| s.get("enum"))
                    .and_then(Value::as_array)
                    .and_then(|o| o.first())
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            let text = own
                .or_else(first_option)
                .unwrap_or_else(|| "the customer asked".to_owned());
            args.insert(param.to_owned(), Value::String(text));
        }
    }
    if model.id_param.is_some() && goal.record.is_none() {
        // The person holds no id: the goal is the action on whatever record
        // the agent finds for them; nothing to try.
        return;
    }
    // A required list of ids the person would not recite (`item_ids`) is,
    // for the trial, the ids the record lists of that kind, so the world
    // answers about the record (its status) and not about a missing
    // argument.
    if let Some(record) = record_of(world, model, goal.record.as_deref()) {
        for param in tool.required() {
            let Some(single) = param.strip_suffix("_ids") else {
                continue;
            };
            if args.contains_key(param) {
                continue;
            }
            let key = format!("{}_id", single.trim_start_matches("new_"));
            let ids: Vec<Value> = record
                .values()
                .filter_map(Value::as_array)
                .flatten()
                .filter_map(|item| item.get(&key).cloned())
                .collect();
            if !ids.is_empty() {
                args.insert(param.to_owned(), Value::Array(ids));
            }
        }
    }
    // A copy without random faults, fresh at the same seed: the trial
    // must not fault, and a plan derives one goal per situation.
    let mut trial = world
        .clone()
        .without_random_faults()
        .with_seed(world.seed());
    let before = record_of(&trial, model, goal.record.as_deref());
    let answer = trial
        .call(&model.name, &Value::Object(args.clone()))
        .to_json();
    let ok = answer.get("ok") == Some(&Value::Bool(true));
    if !ok {
        let kind = answer
            .pointer("/error/kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        // Arguments the person cannot give (a new time it was never told)
        // leave the trial unanswered; then a value past the schema's bounds
        // is the reason the world would say no, else the record's own state
        // (for a tool that makes a record, the rules on the call as the
        // person would make it).
        let refused_by_state = (kind == "invalid_arguments")
            .then(|| {
                past_schema_limit(tool, &goal.arguments).or_else(|| {
                    if crate::identity::made_from(model).is_some() {
                        world.create_refuses_with(&model.name, &args)
                    } else {
                        goal.record
                            .as_deref()
                            .and_then(|id| world.state_refuses(&model.name, id))
                    }
                })
            })
            .flatten();
        goal.kind = match kind {
            "not_found" => GoalKind::NotFound,
            "refused" => GoalKind::Decline,
            _ if refused_by_state.is_some() => GoalKind::Decline,
            _ => goal.kind,
        };
        if goal.kind == GoalKind::Decline {
            goal.because = refused_by_state.or_else(|| {
                answer
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
            goal.says = before
                .as_ref()
                .and_then(|r| r.get("status"))
                .and_then(fact_text)
                .into_iter()
                .collect();
        }
        return;
    }
    let result = answer.get("result").cloned().unwrap_or(Value::Null);
    if read {
        goal.says = facts_of(&result, goal.id_param.as_deref(), model.entity.as_deref());
    } else {
        let after = record_of(&trial, model, goal.record.as_deref());
        if let (Some(before), Some(after)) = (before, after) {
            goal.state = after
                .iter()
                .filter(|(k, v)| before.get(*k) != Some(*v) && !FREE_TEXT.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
        }
    }
}

/// A value the person asks for past what the tool's schema takes (a
/// goodwill credit of 120 where `amount` has `maximum: 25`): the world
/// cannot do it, so the goal is to say no.
fn past_schema_limit(tool: &ToolSpec, arguments: &BTreeMap<String, Value>) -> Option<String> {
    arguments.iter().find_map(|(param, value)| {
        let schema = tool.parameter(param)?;
        let n = match value {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => sparring_reading::text::plain_number(s).parse().ok(),
            _ => None,
        }?;
        let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
        if let Some(max) = bound("maximum").filter(|max| n > *max) {
            return Some(format!(
                "`{}` takes {param} at most {max}; {n} was asked for",
                tool.name
            ));
        }
        if let Some(min) = bound("minimum").filter(|min| n < *min) {
            return Some(format!(
                "`{}` takes {param} at least {min}; {n} was asked for",
                tool.name
            ));
        }
        None
    })
}

/// The record a call is about, as the world holds it.
fn record_of(world: &World, model: &ToolModel, id: Option<&str>) -> Option<Map<String, Value>> {
    let (entity, id) = (model.entity.as_ref()?, id?);
    world.record(entity, id)
}

/// The facts a read answers: the first fact field of a record, or the ids
/// of a list's records.
fn facts_of(result: &Value, id_param: Option<&str>, entity: Option<&str>) -> Vec<String> {
    match result {
        Value::Object(record) => FACT_FIELDS
            .iter()
            .find_map(|f| record.get(*f).and_then(fact_text))
            .into_iter()
            .collect(),
        Value::Array(items) => items
            .iter()
            .filter_map(|item| {
                let record = item.as_object()?;
                // Each item's own id (`prescription_id` of a list of
                // prescriptions), not the owner's the list was asked by
                // (`patient_id`, the same on every item).
                let own = entity.map(|e| format!("{}_id", sparring_types::singular(e)));
                let value = own
                    .as_deref()
                    .and_then(|k| record.get(k))
                    .or_else(|| record.get("id"))
                    .or_else(|| {
                        record
                            .iter()
                            .find(|(k, _)| k.ends_with("_id") && Some(k.as_str()) != id_param)
                            .map(|(_, v)| v)
                    })
                    .or_else(|| id_param.and_then(|p| record.get(p)))?;
                fact_text(value)
            })
            .collect(),
        other => fact_text(other).into_iter().collect(),
    }
}

/// A field's value as a reply would state it; `None` for empty values and
/// nested objects.
fn fact_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().filter_map(fact_text).collect();
            (!parts.is_empty()).then(|| parts.join(", "))
        }
        _ => None,
    }
}

/// `value` as the parameter's schema types it: a number or a boolean said
/// in words becomes one; anything else stays as it is.
fn typed(value: &Value, schema: Option<&Value>) -> Value {
    let (Value::String(text), Some(kind)) = (value, schema.and_then(|s| s.get("type"))) else {
        return value.clone();
    };
    let plain = sparring_reading::text::plain_number(text);
    let parsed = match kind.as_str() {
        Some("integer") => plain.parse::<i64>().ok().map(Value::from),
        Some("number") => plain
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        Some("boolean") => plain.parse::<bool>().ok().map(Value::Bool),
        _ => None,
    };
    parsed.unwrap_or_else(|| value.clone())
}

/// A bound an `escalate` rule puts on a tool's numeric argument, past
/// which the action is handed off: what a situation asking past it holds,
/// and the goal it makes.
#[derive(Clone, Debug, PartialEq)]
pub struct PastBound {
    /// The bounded parameter of the situation's tool.
    pub param: String,
    /// The most the agent may do itself.
    pub max: f64,
    /// The rule's hand-off tools.
    pub to: Vec<String>,
    /// The rule's text.
    pub rule: String,
}

/// The bound `rule` puts on `tool`, when it is an `escalate` rule that hands
/// the tool's action off past a bound on one of its numeric arguments.
pub fn past_bound(rule: &Rule, tool: &str) -> Option<PastBound> {
    let Detail::Escalate { to, bounds, .. } = &rule.detail else {
        return None;
    };
    if to.is_empty() {
        return None;
    }
    bounds.iter().find_map(|b| match &b.counted {
        Counted::Argument { tool: t, param } if t == tool => Some(PastBound {
            param: param.clone(),
            max: b.max,
            to: to.clone(),
            rule: rule.text.clone(),
        }),
        _ => None,
    })
}

/// A value past `max`: `max` times [`defaults::PAST_BOUND_FACTOR`], rounded up to two
/// significant figures, and always above `max`.
fn past(max: f64) -> String {
    let target = (max * defaults::PAST_BOUND_FACTOR).max(max + 1.0);
    let magnitude = 10f64.powi(target.abs().log10().floor() as i32 - 1).max(1.0);
    sparring_reading::text::fmt_number((target / magnitude).ceil() * magnitude)
}

impl PastBound {
    /// The value a person asking past the bound holds.
    pub fn value(&self) -> String {
        past(self.max)
    }

    /// Whether the value `facts` hold for the parameter is past the bound.
    pub fn crossed_by(&self, facts: &Facts) -> bool {
        facts
            .known
            .get(&self.param)
            .and_then(|v| sparring_reading::text::plain_number(v).parse::<f64>().ok())
            .is_some_and(|v| v > self.max)
    }

    /// The goal past the bound: when the world would let the action through
    /// (`act`), the agent must hand off instead. A goal the world already
    /// decides otherwise (a refusal, a missing record) stays.
    pub fn hand_off(self, goal: &mut Goal) {
        if goal.kind != GoalKind::Act {
            return;
        }
        goal.kind = GoalKind::HandOff;
        goal.hand_off = self.to;
        goal.because = Some(self.rule);
        goal.state.clear();
        goal.says.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::{facts_of, past, typed};
    use serde_json::json;

    #[test]
    fn the_persons_words_are_typed_as_the_schema_says() {
        let int = json!({"type": "integer"});
        let num = json!({"type": "number"});
        assert_eq!(typed(&json!("30"), Some(&int)), json!(30));
        assert_eq!(typed(&json!("$7,500"), Some(&num)), json!(7500.0));
        assert_eq!(
            typed(&json!("true"), Some(&json!({"type": "boolean"}))),
            json!(true)
        );
        // Words that are no number, and strings, stay as they are.
        assert_eq!(typed(&json!("thirty"), Some(&int)), json!("thirty"));
        assert_eq!(
            typed(&json!("RX-4001"), Some(&json!({"type": "string"}))),
            json!("RX-4001")
        );
        assert_eq!(typed(&json!("30"), None), json!("30"));
    }

    #[test]
    fn a_list_is_stated_by_its_items_own_ids_not_the_owner_it_was_asked_by() {
        let list = json!([
            {"patient_id": "PA-304", "prescription_id": "RX-4006", "status": "filled"},
            {"patient_id": "PA-304", "prescription_id": "RX-4007", "status": "active"},
        ]);
        assert_eq!(
            facts_of(&list, Some("patient_id"), Some("prescriptions")),
            ["RX-4006", "RX-4007"]
        );
        // No entity known: the first id that is not the one asked by.
        assert_eq!(
            facts_of(&list, Some("patient_id"), None),
            ["RX-4006", "RX-4007"]
        );
        let orders = json!([{"id": "W1", "customer_id": "C1"}]);
        assert_eq!(facts_of(&orders, None, Some("orders")), ["W1"]);
    }

    #[test]
    fn past_a_bound_is_half_again_rounded_up() {
        assert_eq!(past(5000.0), "7500");
        assert_eq!(past(1000.0), "1500");
        assert_eq!(past(250.0), "380");
        assert_eq!(past(1.0), "2");
        assert_eq!(past(0.0), "1");
    }
}
