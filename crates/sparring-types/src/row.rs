//! Rows: one per rollout, the contract between stages.
//!
//! `docs/rows.md` documents every field; `docs/row.schema.json` is checked
//! against rows the engine writes. Change all three together and bump
//! [`SCHEMA_VERSION`] when a field changes meaning or disappears.

use crate::Message;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Version of the row format. Readers refuse rows from a newer major version.
pub const SCHEMA_VERSION: u32 = 1;

/// The fields every row must have (the others have defaults). A line
/// missing some is named with all of them in one error; a test keeps this
/// list equal to what [`Row`]'s deserializer demands.
pub const REQUIRED_FIELDS: &[&str] = &[
    "schema_version",
    "row_id",
    "task_id",
    "scenario_id",
    "messages",
    "tools",
    "situation",
    "persona",
    "ended_by",
    "behavior_signature",
    "model_version",
    "writer_model",
    "user_model",
    "lineage",
    "seed",
    "timings",
];

/// What stands for the agent, the writer, the person and the search arm
/// of a conversation sparring did not produce (`docs/rows.md`, "Foreign
/// conversations").
pub const IMPORTED: &str = "imported";

/// The `task_id` of an imported conversation that has none: from its
/// system prompt and its first user message (the opening ask), so the
/// repeats of one ask under one policy are one task, on every machine.
pub fn imported_task_id(system_prompt: &str, opening_ask: &str) -> String {
    crate::hash::short_id(
        "task",
        &serde_json::json!({"imported": {"system": system_prompt, "ask": opening_ask}}),
    )
}

/// The `row_id` of an imported conversation that has none: from its task,
/// its messages and tools as given, and how many identical conversations
/// came before it in the file (0 for the first), so the same file gives the
/// same ids and two identical rollouts still get two.
pub fn imported_row_id(task_id: &str, messages: &Value, tools: &Value, occurrence: u64) -> String {
    crate::hash::short_id(
        "row",
        &serde_json::json!({"imported": {
            "task_id": task_id, "messages": messages, "tools": tools, "occurrence": occurrence
        }}),
    )
}

/// How a conversation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndedBy {
    /// The agent answered without asking the person anything more.
    AgentDone,
    /// The person walked away from a question (patience ran out).
    UserLeft,
    /// The conversation reached `max_turns` agent replies.
    MaxTurns,
    /// The agent made `max_tool_steps` requests in one turn without replying.
    ToolLimit,
    /// The agent failed: a crash, a bad reply, a timeout. `error` says which.
    AgentError,
    /// A model backend failed after its retries. `error` says how.
    BackendError,
    /// The model refused to answer (OpenAI `message.refusal`, Anthropic
    /// `stop_reason: refusal`). The row fails unless declining was its goal.
    Refused,
    /// The provider's content filter stopped the reply (OpenAI
    /// `finish_reason: content_filter`).
    ContentFilter,
    /// The reply was cut at the token limit, and again when asked once more
    /// with more room; its tool calls were not executed.
    Truncated,
}

impl EndedBy {
    /// Whether the conversation ended because the agent or its backend
    /// failed: such a row is a failure of the agent whatever it said before.
    pub fn is_error(self) -> bool {
        matches!(self, Self::AgentError | Self::BackendError)
    }

    /// The wire name (`agent_done` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AgentDone => "agent_done",
            Self::UserLeft => "user_left",
            Self::MaxTurns => "max_turns",
            Self::ToolLimit => "tool_limit",
            Self::AgentError => "agent_error",
            Self::BackendError => "backend_error",
            Self::Refused => "refused",
            Self::ContentFilter => "content_filter",
            Self::Truncated => "truncated",
        }
    }

    /// Whether the model's provider cut the agent's last reply short (a
    /// refusal, the content filter, the token limit): the conversation did
    /// not finish, and the grade fails it.
    pub fn is_cut_short(self) -> bool {
        matches!(self, Self::Refused | Self::ContentFilter | Self::Truncated)
    }

    /// Whether the conversation never finished on the agent's side: an
    /// error ([`EndedBy::is_error`]) or a reply cut short
    /// ([`EndedBy::is_cut_short`]). Such a row fails the grade.
    pub fn is_unfinished(self) -> bool {
        self.is_error() || self.is_cut_short()
    }
}

/// The situation a rollout was played in: coordinates on the grid's axes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Situation {
    /// Axis name → value (`tool`, `stance`, `world_state`, …).
    pub axes: BTreeMap<String, String>,
    /// Difficulty tier: `ordinary`, `complex`, `ambiguous`, `boundary`,
    /// `adversarial`, or `seed` for an ask kept word for word.
    pub tier: crate::Tier,
    /// Seed of the world the rollout ran in.
    pub world_seed: u64,
    /// The rollout's faults as the world recorded them: the scheduled ones
    /// (fired or not) and the others that fired. A planned situation holds
    /// only its scheduled ones, none fired yet.
    #[serde(default)]
    pub faults: Vec<crate::FaultRecord>,
    /// Index into the spec's `seeds` when the ask is a seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_index: Option<usize>,
    /// The text of the policy rule `axes.policy_rule` names, shortened
    /// ([`crate::policy::short_text`]); absent for `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_text: Option<String>,
    /// What done looks like here ([`crate::Goal`]); absent on rows from
    /// before goals existed and on imported traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<crate::Goal>,
}

impl Situation {
    /// The value of an axis, typed: none when the row does not name it or
    /// names a value this version does not know (a row from elsewhere).
    fn axis<T: crate::Vocabulary>(&self, name: &str) -> Option<T> {
        let value = self.axes.get(name)?;
        T::ALL.iter().copied().find(|t| t.as_str() == value)
    }

    /// The `world_state` axis.
    pub fn world_state(&self) -> Option<crate::WorldState> {
        self.axis("world_state")
    }

    /// The `stance` axis.
    pub fn stance(&self) -> Option<crate::Stance> {
        self.axis("stance")
    }

    /// The `history` axis.
    pub fn history(&self) -> Option<crate::History> {
        self.axis("history")
    }

    /// The `tool_condition` axis.
    pub fn tool_condition(&self) -> Option<crate::ToolCondition> {
        self.axis("tool_condition")
    }
}

/// Who the simulated person is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Persona {
    /// The person's name.
    pub name: String,
    /// Stance (`cooperative`, `hurried`, …); the same as the situation's axis.
    pub stance: crate::Stance,
    /// Writing style (`plain`, `lowercase`, `clipped`, …).
    pub style: String,
    /// `normal`, `short` or `endless`.
    pub patience: crate::Patience,
    /// The facts the person knows (field → value), and nothing else.
    #[serde(default)]
    pub knows: BTreeMap<String, String>,
    /// What the person wants, as a verb phrase (`cancel my order`); kept so
    /// a pinned re-run (`--tasks`) plays the same person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// The fields of `knows` the person wants set (values to give when the
    /// agent asks what to change).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wants: Vec<String>,
    /// The field of `knows` that identifies the person's record, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_field: Option<String>,
    /// The arguments of the situation's tool the person holds a value for
    /// (their values are in `knows`), in the schema's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The tool's required arguments the person holds no value for: a
    /// situation the person cannot fully state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lacks: Vec<String>,
    /// Who the person is: the owner of the situation's records
    /// (`customers/C-100`, `email/ana.lima@mail.test`, or `generated/…`
    /// when the world has no one to own them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// One answer of the simulated person to the agent's request to confirm
/// (`confirmations[]`, docs/people.md "Confirmation by stance and intent").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confirmation {
    /// The agent's reply that asked to confirm, counted from 1 over the
    /// replies it sent the person; the person's answer is the user message
    /// right after it.
    pub turn: u32,
    /// The person's stance (the same as `persona.stance`).
    pub stance: crate::Stance,
    /// How the person answered.
    pub answer: crate::ConfirmationKind,
    /// What the person corrected, when it said no to a wrong proposal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrected: Option<Correction>,
}

/// A wrong value in the agent's proposal and the person's own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Correction {
    /// The field the value is for (`amount`, `order_id`).
    pub field: String,
    /// What the agent proposed (`300`, `#W1009`).
    pub proposed: String,
    /// What the person holds (`250`, `#W1001`).
    pub actual: String,
}

/// Where a row came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Lineage {
    /// The run that produced the row.
    pub run_id: String,
    /// The search arm that chose the situation (`structured`, `seed`).
    pub arm: crate::Arm,
    /// The row this one was mutated from, if any.
    #[serde(default)]
    pub parent: Option<String>,
    /// Replay index within one call (0 for a single run).
    #[serde(default)]
    pub eval_run: u32,
    /// The run whose tasks this row replays, if any.
    #[serde(default)]
    pub replayed_from_run: Option<String>,
    /// The grading pass that set `reward`, if graded.
    #[serde(default)]
    pub scoring_run_id: Option<String>,
}

/// Timing metadata. Never used in a decision; excluded from reproducibility
/// comparisons.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// Wall time of the whole rollout, in milliseconds.
    pub rollout_ms: f64,
    /// Time spent waiting for the agent, in milliseconds.
    pub agent_ms: f64,
    /// Requests made to the agent.
    pub agent_requests: u32,
}

/// A row's `tools` (OpenAI function schemas), behind an `Arc`: every row of
/// a run carries the same list, so the run hands each row its one copy and
/// a rows reader keeps one copy per distinct list ([`Tools::share`])
/// instead of one per row (the list is often the largest part of a row).
/// Reads as a slice of tools; in JSON a plain array.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tools(std::sync::Arc<Vec<Value>>);

impl Tools {
    /// Tools of their own.
    pub fn new(tools: Vec<Value>) -> Self {
        Self(std::sync::Arc::new(tools))
    }

    /// Makes these tools the same copy as the first of `kept` equal to them,
    /// or keeps them in `kept` when none is and there is room (at most
    /// `limit` lists): the rows of one file then share their lists.
    pub fn share(&mut self, kept: &mut Vec<Self>, limit: usize) {
        if let Some(same) = kept.iter().find(|k| **k == *self) {
            self.clone_from(same);
        } else if kept.len() < limit {
            kept.push(self.clone());
        }
    }

    /// Adds one tool (a copy of the list when others share it).
    pub fn push(&mut self, tool: Value) {
        std::sync::Arc::make_mut(&mut self.0).push(tool);
    }
}

impl std::ops::Deref for Tools {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.0
    }
}

impl From<Vec<Value>> for Tools {
    fn from(tools: Vec<Value>) -> Self {
        Self::new(tools)
    }
}

impl From<std::sync::Arc<Vec<Value>>> for Tools {
    fn from(tools: std::sync::Arc<Vec<Value>>) -> Self {
        Self(tools)
    }
}

impl Serialize for Tools {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter())
    }
}

impl<'de> Deserialize<'de> for Tools {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Value>::deserialize(deserializer).map(Self::new)
    }
}

/// One rollout: a conversation with its situation, outcome and grade.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Row format version, [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Unique id of this rollout.
    pub row_id: String,
    /// One distinct prompt in one situation; stable across runs.
    pub task_id: String,
    /// The situation (without the wording); stable across runs.
    pub scenario_id: String,
    /// The conversation, system message first.
    pub messages: Vec<Message>,
    /// The tools the agent had, in the OpenAI function format.
    pub tools: Tools,
    /// Where on the grid the rollout was played.
    pub situation: Situation,
    /// The simulated person.
    pub persona: Persona,
    /// How the conversation ended.
    pub ended_by: EndedBy,
    /// The error text when `ended_by` is an error.
    #[serde(default)]
    pub error: Option<String>,
    /// 0..=1 once graded; `None` when ungraded.
    #[serde(default)]
    pub reward: Option<f64>,
    /// Why the grade is what it is.
    #[serde(default)]
    pub reason: Option<String>,
    /// The first failed check or the grader's class, when it failed.
    #[serde(default)]
    pub failure_class: Option<String>,
    /// Conduct check name → passed, for the checks that applied.
    #[serde(default)]
    pub conduct_checks: Option<BTreeMap<String, bool>>,
    /// Who judged the row and how, when a judge did.
    #[serde(default)]
    pub judge_meta: Option<Value>,
    /// Every grading stage's verdict, in the order they ran (`conduct`,
    /// `grader`, `judge`); the last one's reward is `reward`. Absent until
    /// `sparring grade` runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grades: Option<Vec<StageVerdict>>,
    /// A gold label: the reward a person (or another trusted source) gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_reward: Option<f64>,
    /// Who gave the gold label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_author: Option<String>,
    /// What kind of source the gold label is (`human`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_kind: Option<String>,
    /// Numeric markers riding on the row (`turns`, `tool_calls`, …).
    #[serde(default)]
    pub markers: BTreeMap<String, f64>,
    /// Hash of what the agent did: tools in order, their outcomes, the end.
    pub behavior_signature: String,
    /// Sampling settings as the agent's backend resolved them, if known.
    #[serde(default)]
    pub sampling: Option<Value>,
    /// Log-probabilities of the agent's turns, when asked for.
    #[serde(default)]
    pub logprobs: Option<Value>,
    /// Tokens the agent's backend reported, summed over its requests:
    /// `requests` (how many reported), `input_tokens`, `output_tokens`.
    #[serde(default)]
    pub usage: Option<Value>,
    /// One entry per agent request its backend described: `message` (index
    /// of the assistant message it produced), `sampling` (as sent, seed
    /// included), `usage`.
    #[serde(default)]
    pub requests: Option<Value>,
    /// The agent (`command:python3 agent.py`, `openai:gpt-4o`).
    pub model_version: String,
    /// Who wrote the ask (`template` offline).
    pub writer_model: String,
    /// Who played the person (`template` offline).
    pub user_model: String,
    /// Where the row came from.
    pub lineage: Lineage,
    /// Seed of this rollout's random streams.
    pub seed: u64,
    /// The turn cap this rollout drew when `avg_turns` is set: agent
    /// replies before a conversation still asking is cut off. Absent
    /// otherwise (the cap is then `max_turns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_cap: Option<u32>,
    /// How the person answered each of the agent's requests to confirm, in
    /// order; absent when the agent asked for none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confirmations: Vec<Confirmation>,
    /// Timing metadata.
    pub timings: Timings,
}

/// One grading stage's verdict on a row.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageVerdict {
    /// `conduct`, `grader` or `judge`.
    pub stage: crate::Stage,
    /// Who graded: `conduct`, the grader command, the judge's backend.
    pub by: String,
    /// 0..=1, or `None` when the stage could not grade the row.
    pub reward: Option<f64>,
    /// Why, in the stage's words.
    #[serde(default)]
    pub reason: Option<String>,
    /// The stage's failure class, when it failed the row.
    #[serde(default)]
    pub failure_class: Option<String>,
    /// Why the stage could not grade the row (a crash, a timeout, an
    /// unparseable verdict); `None` when it graded.
    #[serde(default)]
    pub error: Option<String>,
}

impl Row {
    /// A row with these ids and this conversation, ended `ended_by`, and
    /// every other field empty: no tools, a default situation and person,
    /// ungraded, no markers, no model recorded. Set what else is known
    /// field by field (`Row { tools, ..Row::new(…) }`).
    pub fn new(
        row_id: impl Into<String>,
        task_id: impl Into<String>,
        scenario_id: impl Into<String>,
        messages: Vec<Message>,
        ended_by: EndedBy,
    ) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            row_id: row_id.into(),
            task_id: task_id.into(),
            scenario_id: scenario_id.into(),
            messages,
            tools: Tools::default(),
            situation: Situation::default(),
            persona: Persona::default(),
            ended_by,
            error: None,
            reward: None,
            reason: None,
            failure_class: None,
            conduct_checks: None,
            judge_meta: None,
            grades: None,
            gold_reward: None,
            gold_author: None,
            gold_kind: None,
            markers: BTreeMap::new(),
            behavior_signature: String::new(),
            sampling: None,
            logprobs: None,
            usage: None,
            requests: None,
            model_version: String::new(),
            writer_model: String::new(),
            user_model: String::new(),
            lineage: Lineage::default(),
            seed: 0,
            turn_cap: None,
            confirmations: Vec::new(),
            timings: Timings::default(),
        }
    }

    /// Whether the row is graded and passed (`reward >= 0.5`).
    pub fn passed(&self) -> Option<bool> {
        self.reward.map(|r| r >= 0.5)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn full_row() -> Value {
        let row = Row {
            reward: Some(1.0),
            grades: Some(Vec::new()),
            gold_reward: Some(1.0),
            gold_author: Some("a".into()),
            gold_kind: Some("human".into()),
            behavior_signature: "sig".into(),
            model_version: "m".into(),
            writer_model: "w".into(),
            user_model: "u".into(),
            turn_cap: Some(1),
            confirmations: vec![Confirmation {
                turn: 1,
                stance: crate::Stance::Skeptical,
                answer: crate::ConfirmationKind::Correct,
                corrected: Some(Correction {
                    field: "amount".into(),
                    proposed: "300".into(),
                    actual: "250".into(),
                }),
            }],
            ..Row::new(
                "row_1",
                "task_1",
                "scn_1",
                vec![Message::text(crate::Role::User, "hi")],
                EndedBy::AgentDone,
            )
        };
        serde_json::to_value(row).unwrap()
    }

    #[test]
    fn required_fields_are_exactly_those_the_deserializer_demands() {
        let full = full_row();
        let fields = crate::introspect::field_names::<Row>();
        for name in &fields {
            let mut v = full.clone();
            v.as_object_mut().unwrap().remove(*name);
            let parses = serde_json::from_value::<Row>(v).is_ok();
            assert_eq!(
                parses,
                !REQUIRED_FIELDS.contains(name),
                "`{name}`: REQUIRED_FIELDS is out of date"
            );
        }
        for name in REQUIRED_FIELDS {
            assert!(fields.contains(name), "`{name}` is not a field of Row");
        }
    }

    #[test]
    fn rows_of_every_fault_shape_read_and_write_back_unchanged() {
        let mut row = full_row();
        // Today's shape, and the two older ones: before `fired`, and before
        // `source` (a situation's scheduled fault as the plan wrote it).
        let today = serde_json::json!([
            {"tool": "none", "kind": "server_error", "source": "scheduled", "fired": true, "call": 1, "fired_on": "get_order"},
            {"tool": "get_order", "kind": "empty", "source": "random", "fired": true, "call": 2},
            {"tool": "get_order", "kind": "timeout", "source": "execute", "fired": true, "call": 3},
            {"tool": "cancel_order", "kind": "timeout", "source": "scheduled", "fired": false},
        ]);
        row["situation"]["faults"] = today.clone();
        let read: Row = serde_json::from_value(row.clone()).unwrap();
        assert_eq!(
            read.situation.faults[0].fired_on.as_deref(),
            Some("get_order")
        );
        assert_eq!(serde_json::to_value(&read).unwrap(), row);
        row["situation"]["faults"] = serde_json::json!([
            {"tool": "get_order", "kind": "timeout", "source": "scheduled"},
            {"tool": "get_order", "kind": "rate_limited"},
        ]);
        let old: Row = serde_json::from_value(row).unwrap();
        let faults = &old.situation.faults;
        assert!(faults.iter().all(|f| f.is_scheduled() && f.fired.is_none()));
        assert_eq!(faults[1].kind, crate::FaultKind::RateLimited);
    }

    #[test]
    fn imported_ids_are_stable_and_tell_repeats_apart() {
        let t = imported_task_id("policy", "where is my order?");
        assert_eq!(t, imported_task_id("policy", "where is my order?"));
        assert_ne!(t, imported_task_id("policy", "where is my refund?"));
        assert!(t.starts_with("task_"));
        let m = serde_json::json!([{"role": "user", "content": "hi"}]);
        let tools = serde_json::json!([]);
        let a = imported_row_id(&t, &m, &tools, 0);
        assert_eq!(a, imported_row_id(&t, &m, &tools, 0));
        assert_ne!(a, imported_row_id(&t, &m, &tools, 1));
    }
}
