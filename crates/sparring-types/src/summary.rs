//! The summary of a run (`run.json`): counts, why it stopped, what was
//! weaker than asked, coverage and the search record, as typed values whose
//! JSON is the documented contract (`docs/rows.md`, "run.json").
//!
//! Struct fields that were once map keys are declared in the order the keys
//! sort, so `run.json` keeps its bytes.

use crate::options::SimulateOptions;
use crate::row::Row;
use crate::values::RepeatPolicy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Row counts of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Rows written.
    pub rows: u64,
    /// Distinct tasks among them.
    pub tasks: u64,
    /// Rows with a reward.
    pub graded: u64,
    /// Graded rows with `reward >= 0.5`.
    pub passed: u64,
    /// `ended_by` value → rows.
    pub ended_by: BTreeMap<String, u64>,
}

/// Counts rows as they come, the one way every part of sparring counts them
/// (the run's summary, `run.json` of a rows file, a resumed run).
#[derive(Clone, Debug, Default)]
pub struct RowCounter {
    counts: Counts,
    /// The tasks seen, by [`crate::hash::key64`] of their ids: only their
    /// number is reported, so 8 bytes a task are enough.
    tasks: std::collections::BTreeSet<u64>,
}

impl RowCounter {
    /// Counts one row.
    pub fn add(&mut self, row: &Row) {
        let c = &mut self.counts;
        c.rows += 1;
        self.tasks.insert(crate::hash::key64(&row.task_id));
        *c.ended_by
            .entry(row.ended_by.as_str().to_owned())
            .or_default() += 1;
        if let Some(passed) = row.passed() {
            c.graded += 1;
            c.passed += u64::from(passed);
        }
    }

    /// Rows counted so far.
    pub fn rows(&self) -> u64 {
        self.counts.rows
    }

    /// The counts so far.
    pub fn counts(&self) -> Counts {
        Counts {
            tasks: self.tasks.len() as u64,
            ..self.counts.clone()
        }
    }

    /// The counts of `rows`.
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Counts {
        let mut counter = Self::default();
        for row in rows {
            counter.add(row);
        }
        counter.counts()
    }
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every situation had all its rollouts.
    #[default]
    SituationsExhausted,
    /// Every pinned task had its rollouts (`--tasks`).
    TasksDone,
    /// The row budget was spent with work left.
    BudgetSpent,
    /// `time_budget` ran out; no rollout started after it.
    TimeBudget,
    /// Unique situations stopped giving new behaviour signatures.
    Saturated,
    /// Stopped on request (Ctrl-C, a cancel flag).
    Interrupted,
    /// The agent failed every request and never replied.
    AgentUnavailable,
}

impl StopReason {
    /// The wire name (`budget_spent` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SituationsExhausted => "situations_exhausted",
            Self::TasksDone => "tasks_done",
            Self::BudgetSpent => "budget_spent",
            Self::TimeBudget => "time_budget",
            Self::Saturated => "saturated",
            Self::Interrupted => "interrupted",
            Self::AgentUnavailable => "agent_unavailable",
        }
    }

    /// Whether a run stopping this way ends the call (later eval runs do
    /// not start).
    pub fn ends_the_call(self) -> bool {
        matches!(
            self,
            Self::Interrupted | Self::AgentUnavailable | Self::TimeBudget | Self::Saturated
        )
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A named way a run was weaker than asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Degraded {
    /// A model writer failed on some situations, which kept the templates'
    /// asks.
    GeneratorFallback,
    /// A model person failed on some turns, which the template person
    /// answered.
    PersonFallback,
    /// One backend played two roles (agent, writer, person, judge).
    SameModel,
}

impl Degraded {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GeneratorFallback => "generator_fallback",
            Self::PersonFallback => "person_fallback",
            Self::SameModel => "same_model",
        }
    }
}

impl std::fmt::Display for Degraded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Pairwise coverage of the rows that ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PairwiseCoverage {
    /// `pairs_covered / pairs_planned`.
    pub fraction: f64,
    /// Pairs of axis values some row that ran holds.
    pub pairs_covered: u64,
    /// Pairs of axis values the grid can hold.
    pub pairs_planned: u64,
}

/// Coverage of the situation space by the rows that ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// Axis name → its values.
    pub axes: BTreeMap<String, Vec<String>>,
    /// Rows of the covering array, when the run planned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid_rows: Option<u64>,
    /// Pairwise coverage, when it could be computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairwise: Option<PairwiseCoverage>,
    /// The rules read from the policy (the `policy_rule` axis's values):
    /// id, class, text (shortened) and the tools each covers.
    #[serde(default)]
    pub policy_rules: Vec<crate::policy::PolicyRule>,
    /// Distinct situations the run planned.
    pub situations_planned: u64,
    /// Distinct situations some row ran.
    pub situations_run: u64,
    /// Tools of the spec no situation that ran was about.
    pub tools_never_run: Vec<String>,
    /// Tools some situation that ran was about.
    pub tools_run: Vec<String>,
}

/// Of the rows, how many ended on the agent's question.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EndedOnQuestion {
    /// Rows counted.
    pub n: u64,
    /// Share of them whose last agent turn asks a question.
    pub share: f64,
    /// Of those, how many the person left.
    pub user_left: u64,
}

/// One eval run of a call (`runs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalRunLine {
    /// Its index (`lineage.eval_run`).
    pub eval_run: u32,
    /// Rows it holds.
    pub rows: u64,
    /// Why it stopped.
    pub stopped_because: StopReason,
}

/// Who played the person, and how often a model person fell back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PersonRecord {
    /// Turns the template person answered for a failed model person.
    pub fallbacks: u64,
    /// `template`, or the model person's backend.
    pub model: String,
}

/// The task set a pinned run re-ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PinnedRecord {
    /// The run the tasks come from.
    pub from_run: String,
    /// Rollouts per task (k) as resolved.
    pub repeats: u32,
    /// Tasks pinned.
    pub tasks: u64,
}

/// Repeats as resolved and what `successive` skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RepeatsRecord {
    /// Rollouts per ask.
    pub k: u32,
    /// The repeat policy.
    pub policy: RepeatPolicy,
    /// Repeats skipped because an ask's first rollouts agreed.
    pub skipped_unanimous: u64,
}

/// The tiers the plan drew, against the share asked for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TierMix {
    /// `hard_share` as asked.
    pub hard_share_asked: f64,
    /// The share of hard tiers among the structured situations drawn.
    pub hard_share_drawn: f64,
    /// Situations drawn.
    pub situations: u64,
    /// Tier → situations.
    pub tiers: BTreeMap<String, u64>,
}

/// Who wrote the asks, and what a model writer did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WriterRecord {
    /// Situations a model writer was asked to write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<u64>,
    /// Situations that kept the templates' asks because it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallbacks: Option<u64>,
    /// `template`, or the model writer's backend.
    pub model: String,
    /// Situations it wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<u64>,
}

/// What the search drew and what the budget dropped.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Search {
    /// The row budget of each eval run, as given.
    pub budget_per_run: Option<u64>,
    /// Rows that ended on the agent's question.
    pub ended_on_question: EndedOnQuestion,
    /// Each eval run's rows and stop reason.
    pub eval_runs: Vec<EvalRunLine>,
    /// Who played the person.
    pub person: PersonRecord,
    /// A model person's last errors.
    pub person_errors: Vec<String>,
    /// The pinned task set, for a `--tasks` re-run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<PinnedRecord>,
    /// Repeats as resolved.
    pub repeats: RepeatsRecord,
    /// Seeds the budget could not pay for.
    pub seeds_dropped: Vec<String>,
    /// The tiers drawn, for a planned run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier_mix: Option<TierMix>,
    /// Who wrote the asks.
    pub writer: WriterRecord,
    /// A model writer's last errors.
    pub writer_errors: Vec<String>,
}

/// Whether a run's simulation could measure anything: whether the agent
/// reached the tools its situations are about, and whether the person could
/// say what those tools need (docs/people.md, "Soundness").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Soundness {
    /// Share of `act_inform_rows` in which the agent called the goal's
    /// tool: issue 18's figure (docs/people.md, "Measured").
    #[serde(default)]
    pub act_inform_goal_tool_called: f64,
    /// Rows whose goal is `act` or `inform` (seeds left out): the agent
    /// must call the goal's tool to reach them.
    #[serde(default)]
    pub act_inform_rows: u64,
    /// Share of `goal_rows` whose person held every required argument of the
    /// situation's tool (`persona.lacks` empty).
    pub facts_complete: f64,
    /// Scheduled faults that fired.
    pub faults_fired: u64,
    /// Faults the situations scheduled.
    pub faults_scheduled: u64,
    /// Share of `goal_rows` in which the agent called the situation's tool
    /// (every goal kind: a `decline` or `other_owner` row may rightly not).
    pub goal_tool_called: f64,
    /// Rows whose situation is about a tool (not `none`, not a seed).
    pub goal_rows: u64,
    /// Share of all rows in which the agent called any tool.
    pub reached_a_tool: f64,
    /// Tools some row actually called, sorted.
    pub tools_called: Vec<String>,
    /// Tools of the spec no row called (the planned-only `tools_never_run`
    /// says which no situation was about).
    pub tools_never_called: Vec<String>,
}

/// The summary of a run, written to `run.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Row format version of the run's rows.
    pub schema_version: u32,
    /// The sparring release that made the run.
    pub sparring_version: String,
    /// The run's id (also on every row's `lineage.run_id`).
    pub run_id: String,
    /// The spec's `name`.
    pub spec: String,
    /// The agent, described without secrets.
    pub agent: String,
    /// Row counts.
    pub counts: Counts,
    /// Why the run stopped.
    pub stopped_because: StopReason,
    /// Things the user should read before any number.
    pub warnings: Vec<String>,
    /// Named ways the run was weaker than asked (`generator_fallback`, …).
    pub degraded: Vec<Degraded>,
    /// Coverage of the situation space by the rows that ran.
    pub coverage: Coverage,
    /// What the search drew: `tier_mix`, `seeds_dropped`.
    #[serde(default)]
    pub search: Search,
    /// Whether the simulation could measure anything.
    #[serde(default)]
    pub soundness: Soundness,
    /// Options as resolved.
    pub options: Option<SimulateOptions>,
    /// Wall time of the run in seconds (metadata).
    pub seconds: f64,
}

impl RunSummary {
    /// Adds a degraded flag unless it is there.
    pub fn degrade(&mut self, flag: Degraded) {
        if !self.degraded.contains(&flag) {
            self.degraded.push(flag);
        }
    }
}
