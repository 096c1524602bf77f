//! Goals: what done looks like in a situation.
//!
//! Every planned situation carries a [`Goal`] on `situation.goal`, derived by
//! the engine from the situation's coordinates and the world (no model): the
//! kind of outcome that is right ([`GoalKind`]) and the facts that outcome is
//! checked against (the record, the arguments the person means, the record's
//! fields after the change, the facts a reply must state, the refusal the
//! world gives), or, for a seed given with `expect`, that expectation. The grade's `goal` check compares a conversation with it;
//! `docs/grading.md` ("Goals") defines each kind.

use crate::{Expect, GoalKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// What done looks like in one situation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Goal {
    /// Which outcome is right.
    pub kind: GoalKind,
    /// The situation's tool (absent for `no_action`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The id parameter that names the person's record, if the tool has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_param: Option<String>,
    /// The id of the record the situation is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// The arguments a call must carry to do what the person means (the id
    /// and the values the person wants set; free-text reasons excluded).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub arguments: BTreeMap<String, Value>,
    /// `act`: the record's fields the action changes, with their values
    /// after it, as the world computes them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub state: BTreeMap<String, Value>,
    /// `inform`: the facts the final reply must state, as the world holds
    /// them; `decline`: the record's state the refusal turns on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub says: Vec<String>,
    /// `other_owner`: facts of the record no reply may disclose.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withholds: Vec<String>,
    /// `decline`: the world's refusal of the action, in its words;
    /// `hand_off`: the rule that hands the action on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub because: Option<String>,
    /// `hand_off`: the tools that hand the person on (one must succeed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hand_off: Vec<String>,
    /// `disambiguate`: every record the person could mean.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// The fault scheduled on the tool's first call, if any: when it fires
    /// and the goal is not reached, telling the person it failed (without
    /// claiming success) meets the goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// `expected`: the seed's own expectation (`seeds[].expect`), the
    /// calls, end state and facts the goal check compares with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
}

impl Goal {
    /// A goal of this kind and nothing else known.
    pub fn new(kind: GoalKind) -> Self {
        Self {
            kind,
            tool: None,
            id_param: None,
            record: None,
            arguments: BTreeMap::new(),
            state: BTreeMap::new(),
            says: Vec::new(),
            withholds: Vec::new(),
            because: None,
            hand_off: Vec::new(),
            candidates: Vec::new(),
            fault: None,
            expect: None,
        }
    }

    /// The goal a seed's expectation states (kind `expected`).
    pub fn expected(expect: Expect) -> Self {
        Self {
            expect: Some(expect),
            ..Self::new(GoalKind::Expected)
        }
    }

    /// The name the report groups the goal under: its kind, or `fault`
    /// when a fault is scheduled (the goal may then be met honestly).
    pub fn group(&self) -> &'static str {
        if self.fault.is_some() {
            "fault"
        } else {
            self.kind.as_str()
        }
    }
}
