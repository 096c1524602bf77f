//! The policy as data: what `sparring policy --json` prints and what
//! `sparring calibrate` hands its agents (docs/grading.md, "Calibration"),
//! one shape for both so the agents act on the reading the checks use.
//!
//! Each rule is `{id, class, check, text, tools, reads, detail}`: `reads`
//! says in words what its check reads, and `detail` says it as data, by
//! class:
//!
//! - `authenticate_first`: `{"via": [tool]}`, the tools that identify the
//!   person;
//! - `order`: `{"first": [tool], "then": [tool]}`;
//! - `never_reveal`: `{"fields": [name], "cards": bool}`;
//! - `limit`: `{"bounds": [bound]}`;
//! - `escalate`: `{"to": [tool], "triggers": [trigger], "bounds": [bound]}`,
//!   a trigger `{"human_request": times}` or `{"words": [word]}`;
//! - the others: `{}`.
//!
//! A bound is `{"counted", "max"}` with `tool`, `param` and `containing` as
//! its kind has them (`counted`: `argument`, `array_len`, `array_items`,
//! `calls_per_record`, `calls_per_message`).

use super::{Bound, Counted, Detail, Policy, Rule, Trigger};
use serde_json::{Value, json};
use std::collections::BTreeMap;

impl Policy {
    /// The policy as data, named by its spec (`sparring policy --json`):
    /// `{"spec", "rules": [rule], "classes": {class: count}}`.
    pub fn to_json(&self, spec: &str) -> Value {
        let mut classes: BTreeMap<&str, usize> = BTreeMap::new();
        for r in self.rules() {
            *classes.entry(r.class.as_str()).or_default() += 1;
        }
        let rules: Vec<Value> = self.rules().iter().map(Rule::to_json).collect();
        json!({"spec": spec, "rules": rules, "classes": classes})
    }
}

impl Detail {
    /// What a rule's check reads, as data.
    pub fn to_json(&self) -> Value {
        let bounds = |b: &[Bound]| b.iter().map(Bound::to_json).collect::<Vec<_>>();
        match self {
            Self::None => json!({}),
            Self::Auth { via } => json!({"via": via}),
            Self::Limit(b) => json!({"bounds": bounds(b)}),
            Self::Order { first, then } => json!({"first": first, "then": then}),
            Self::Reveal { fields, cards } => json!({"fields": fields, "cards": cards}),
            Self::Escalate {
                to,
                triggers,
                bounds: b,
            } => json!({
                "to": to,
                "triggers": triggers.iter().map(Trigger::to_json).collect::<Vec<_>>(),
                "bounds": bounds(b),
            }),
        }
    }
}

impl Bound {
    /// The bound as data: `{"counted": "argument", "tool", "param", "max"}`.
    pub fn to_json(&self) -> Value {
        let max = self.max;
        match &self.counted {
            Counted::CallsPerMessage => json!({"counted": "calls_per_message", "max": max}),
            Counted::CallsPerRecord { tool } => {
                json!({"counted": "calls_per_record", "tool": tool, "max": max})
            }
            Counted::Argument { tool, param } => {
                json!({"counted": "argument", "tool": tool, "param": param, "max": max})
            }
            Counted::ArrayLen { tool, param } => {
                json!({"counted": "array_len", "tool": tool, "param": param, "max": max})
            }
            Counted::ArrayItems {
                tool,
                param,
                containing,
            } => json!({"counted": "array_items", "tool": tool, "param": param,
                        "containing": containing, "max": max}),
        }
    }
}

impl Trigger {
    /// The trigger as data: `{"human_request": times}` or `{"words": [..]}`.
    pub fn to_json(&self) -> Value {
        match self {
            Self::HumanRequest { times } => json!({"human_request": times}),
            Self::Words(words) => json!({"words": words}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparring_types::ToolSpec;

    fn tool(name: &str, params: &[&str]) -> ToolSpec {
        let typed: Vec<(&str, &str)> = params
            .iter()
            .map(|p| (*p, if *p == "amount" { "number" } else { "string" }))
            .collect();
        ToolSpec::with_parameters(name, &typed)
    }

    /// The agents act on `detail`, so each class's is data, not words: the
    /// identifying tools, the order, the hand-off's tools and bound.
    #[test]
    fn each_rule_says_what_its_check_reads_as_data() {
        let tools = vec![
            tool("find_member_by_email", &["email"]),
            tool("get_pass", &["pass_id"]),
            tool("renew_pass", &["pass_id", "amount"]),
            tool("transfer_to_coach", &["summary"]),
        ];
        let policy = Policy::read(
            "# Gym desk\n\n- Always identify the member by email with `find_member_by_email` before you look at any pass.\n- Always look a pass up with `get_pass` before you renew it.\n- Never renew a pass for more than $300 yourself: transfer the member to a coach with transfer_to_coach instead.",
            &tools,
        );
        let data = policy.to_json("gym");
        assert_eq!(data["spec"], "gym");
        let rules = data["rules"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let detail = |class: &str| {
            rules
                .iter()
                .find(|r| r["class"] == class)
                .map(|r| r["detail"].clone())
        };
        assert_eq!(
            detail("authenticate_first"),
            Some(json!({"via": ["find_member_by_email"]}))
        );
        assert_eq!(
            detail("order"),
            Some(json!({"first": ["get_pass"], "then": ["renew_pass"]}))
        );
        assert_eq!(
            detail("escalate"),
            Some(json!({
                "to": ["transfer_to_coach"],
                "triggers": [],
                "bounds": [{"counted": "argument", "tool": "renew_pass", "param": "amount", "max": 300.0}],
            }))
        );
    }
}
