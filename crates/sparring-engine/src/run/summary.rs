//! What a run's rows add up to: the tally kept while it runs, and the
//! summary (`run.json`) at the end.

use super::Progress;
use crate::model_people::{ERRORS_KEPT, WriterReport, keep_error};
use crate::plan::Plan;
use sparring_types::hash::key64;
use sparring_types::{
    Agent, Coverage, Degraded, EndedBy, EndedOnQuestion, EvalRunLine, GoalKind, PairwiseCoverage,
    PersonRecord, PinnedRecord, RepeatsRecord, Row, RowCounter, RunSummary, SCHEMA_VERSION, Search,
    SimulateOptions, Soundness, Spec, StopReason, TierMix, WriterRecord, defaults,
};
use std::collections::{BTreeMap, BTreeSet};

/// What every row of a call adds to the summary. What it keeps grows with
/// the tasks, situations and distinct behaviours at most, never with the
/// rows: ids only counted or told apart are kept as
/// [`sparring_types::hash::key64`] keys (8 bytes, not the id), and the
/// model person's errors only as many as the summary shows.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) counter: RowCounter,
    /// The situations run, by key: the summary reports their number.
    pub(super) situations_run: BTreeSet<u64>,
    pub(super) grid_rows_run: BTreeSet<Vec<usize>>,
    pub(super) ended_on_question: u64,
    pub(super) user_left: u64,
    pub(super) tools_run: BTreeSet<String>,
    pub(super) agent_replied: bool,
    /// Rows with at least one agent reply.
    pub(super) replied_rows: u64,
    /// Rollouts dropped at an interrupt (not written).
    pub(super) dropped: u64,
    /// Indices (in the spec's `seeds`) of the seeds a row of which ran.
    pub(super) seeds_run: BTreeSet<usize>,
    pub(super) skipped: u64,
    /// Turns the model person's answer was replaced by the template's.
    pub(super) person_fallbacks: u64,
    /// The model person's last errors per rollout.
    pub(super) person_errors: PersonErrors,
    /// Rows about a tool; of them, those that called it and those whose
    /// person held every required argument.
    pub(super) goal_rows: u64,
    pub(super) goal_called: u64,
    pub(super) facts_complete: u64,
    /// Rows whose goal is `act` or `inform` (seeds left out); of them,
    /// those that called the goal's tool.
    pub(super) act_inform_rows: u64,
    pub(super) act_inform_called: u64,
    /// Rows that called any tool.
    pub(super) reached_tool: u64,
    pub(super) faults_scheduled: u64,
    pub(super) faults_fired: u64,
    pub(super) tools_called: BTreeSet<String>,
}

impl Tally {
    pub(super) fn add(&mut self, row: &Row, grid_row: &[usize], progress: &mut Progress) {
        if !grid_row.is_empty() {
            self.grid_rows_run.insert(grid_row.to_vec());
        }
        self.counter.add(row);
        if let Some(i) = row.situation.seed_index {
            self.seeds_run.insert(i);
        }
        self.situations_run.insert(key64(&row.scenario_id));
        if let Some(tool) = row.situation.axes.get("tool") {
            self.tools_run.insert(tool.clone());
        }
        self.add_soundness(row);
        if row.passed() == Some(false) {
            progress.failed += 1;
        }
        if row.ended_by.is_error() {
            progress.errors += 1;
        }
        let replied = row
            .messages
            .iter()
            .any(|m| m.role == sparring_types::Role::Assistant);
        if replied {
            self.replied_rows += 1;
        }
        self.agent_replied |= replied || row.timings.agent_requests > 0 && !row.ended_by.is_error();
        if let Some(last) = row.messages.last()
            && last.role == sparring_types::Role::Assistant
            && last.tool_calls.is_empty()
            && sparring_reading::text::asks_question(last.content_str())
        {
            self.ended_on_question += 1;
            if row.ended_by == EndedBy::UserLeft {
                self.user_left += 1;
            }
        }
        progress.done = self.counter.rows();
    }
}

/// A rollout: its eval run, task index and repeat.
type Rollout = (u32, usize, u32);

/// The model person's errors of each rollout that had any, keyed by
/// rollout `(eval run, task, repeat)`. The summary shows the last
/// [`ERRORS_KEPT`] of them in key order, so an entry whose errors are all
/// before those of later keys is dropped as soon as the later ones hold
/// that many: at most [`ERRORS_KEPT`] entries are kept, and the summary is
/// the same as from every entry.
#[derive(Default)]
pub(super) struct PersonErrors {
    by_rollout: BTreeMap<Rollout, Vec<String>>,
    /// Errors held in `by_rollout`.
    held: usize,
}

impl PersonErrors {
    /// The errors of one rollout.
    pub(super) fn insert(&mut self, rollout: Rollout, errors: Vec<String>) {
        self.held += errors.len();
        if let Some(old) = self.by_rollout.insert(rollout, errors) {
            self.held -= old.len();
        }
        while let Some(first) = self.by_rollout.values().next().map(Vec::len) {
            if self.held - first < ERRORS_KEPT {
                break;
            }
            self.by_rollout.pop_first();
            self.held -= first;
        }
    }

    /// The last [`ERRORS_KEPT`] errors, in rollout order.
    fn last(self) -> Vec<String> {
        let mut errors = Vec::new();
        for e in self.by_rollout.into_values().flatten() {
            keep_error(&mut errors, e);
        }
        errors
    }
}

impl Tally {
    fn add_soundness(&mut self, row: &Row) {
        let called: BTreeSet<&str> = row
            .messages
            .iter()
            .flat_map(|m| m.tool_calls.iter().map(|c| c.function.name.as_str()))
            .collect();
        if !called.is_empty() {
            self.reached_tool += 1;
        }
        self.tools_called
            .extend(called.iter().map(|c| (*c).to_owned()));
        let tool = row
            .situation
            .axes
            .get("tool")
            .map_or("none", String::as_str);
        if tool != "none" && row.lineage.arm != sparring_types::Arm::Seed {
            self.goal_rows += 1;
            self.goal_called += u64::from(called.contains(tool));
            self.facts_complete += u64::from(row.persona.lacks.is_empty());
        }
        if let Some(goal) = row.situation.goal.as_ref()
            && matches!(goal.kind, GoalKind::Act | GoalKind::Inform)
            && row.lineage.arm != sparring_types::Arm::Seed
        {
            self.act_inform_rows += 1;
            self.act_inform_called +=
                u64::from(goal.tool.as_deref().is_some_and(|t| called.contains(t)));
        }
        for fault in row.situation.faults.iter().filter(|f| f.is_scheduled()) {
            self.faults_scheduled += 1;
            self.faults_fired += u64::from(fault.has_fired());
        }
    }
}

/// The soundness figures and the warnings they call for: a spec whose
/// rows rarely reach a tool, or whose person rarely holds what the tool
/// needs, measures little.
fn soundness(tally: &Tally, rows: u64, spec: &Spec, warnings: &mut Vec<String>) -> Soundness {
    let share = |n: u64, of: u64| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    let s = Soundness {
        facts_complete: share(tally.facts_complete, tally.goal_rows),
        faults_fired: tally.faults_fired,
        faults_scheduled: tally.faults_scheduled,
        goal_tool_called: share(tally.goal_called, tally.goal_rows),
        goal_rows: tally.goal_rows,
        act_inform_goal_tool_called: share(tally.act_inform_called, tally.act_inform_rows),
        act_inform_rows: tally.act_inform_rows,
        reached_a_tool: share(tally.reached_tool, rows),
        tools_called: tally.tools_called.iter().cloned().collect(),
        tools_never_called: spec
            .tools
            .iter()
            .map(|t| t.name.clone())
            .filter(|n| !tally.tools_called.contains(n))
            .collect(),
    };
    let pct = |x: f64| (x * 100.0).round();
    if rows >= defaults::SOUNDNESS_MIN_ROWS && tally.agent_replied {
        if s.reached_a_tool < defaults::SOUNDNESS_WARN_BELOW {
            warnings.push(format!(
                "{} % of rows never reached a tool: the agent may not get what it needs from the person, or may not use its tools (see run.json `soundness`)",
                pct(1.0 - s.reached_a_tool)
            ));
        }
        if s.goal_rows > 0 && s.facts_complete < defaults::SOUNDNESS_WARN_BELOW {
            warnings.push(format!(
                "in {} % of rows about a tool the person lacked a required argument of it (`persona.lacks`): the tool asks for what a customer would not know",
                pct(1.0 - s.facts_complete)
            ));
        }
    }
    s
}

/// Everything the summary is made of, once the last eval run ended.
pub(super) struct Ending<'a> {
    pub(super) spec: &'a Spec,
    pub(super) options: &'a SimulateOptions,
    pub(super) prepared: &'a super::Prepared,
    pub(super) tally: Tally,
    /// The tiers drawn, unique situations included.
    pub(super) tier_mix: Option<BTreeMap<String, u64>>,
    pub(super) eval_runs: Vec<EvalRunLine>,
    pub(super) stopped_because: StopReason,
    pub(super) warnings: Vec<String>,
    pub(super) person: Option<&'a dyn Agent>,
    /// The seeds no rollout of which ran.
    pub(super) seeds_dropped: Vec<String>,
}

/// The run's summary (`run.json`), but for the agent's name and the
/// seconds, which the caller knows.
pub(super) fn summarise(end: Ending<'_>) -> RunSummary {
    let Ending {
        spec,
        options,
        prepared,
        tally,
        tier_mix,
        eval_runs,
        stopped_because,
        warnings,
        person,
        seeds_dropped,
    } = end;
    let mut warnings = warnings;
    let figures = soundness(&tally, tally.counter.rows(), spec, &mut warnings);
    let Tally {
        counter,
        situations_run,
        grid_rows_run,
        ended_on_question,
        user_left,
        tools_run,
        skipped,
        person_fallbacks,
        person_errors,
        ..
    } = tally;
    let counts = counter.counts();
    let axes = &prepared.axes;
    let ran: Vec<Vec<usize>> = grid_rows_run.into_iter().collect();
    let pairwise = sparring_grid::coverage(&axes.levels(), &axes.forbidden, &ran)
        .ok()
        .map(|c| PairwiseCoverage {
            fraction: c.fraction,
            pairs_covered: c.pairs_covered,
            pairs_planned: c.pairs_planned,
        });
    let situations_planned: BTreeSet<&str> = prepared
        .tasks
        .iter()
        .map(|t| t.scenario_id.as_str())
        .collect();
    let coverage = Coverage {
        axes: crate::axes::AXIS_NAMES
            .iter()
            .zip(&axes.values)
            .map(|(n, v)| ((*n).to_owned(), v.clone()))
            .collect(),
        grid_rows: prepared.plan.as_ref().map(|p| p.array.rows.len() as u64),
        pairwise,
        policy_rules: sparring_reading::policy::rule_records(&axes.rules),
        situations_planned: situations_planned.len() as u64
            + prepared.plan.as_ref().map_or(0, |p| p.beyond_budget as u64),
        situations_run: situations_run.len() as u64,
        tools_never_run: spec
            .tools
            .iter()
            .map(|t| t.name.clone())
            .filter(|n| !tools_run.contains(n))
            .collect(),
        tools_run: tools_run.into_iter().filter(|t| t != "none").collect(),
    };
    let rows = counts.rows;
    let tier_mix = match (&prepared.plan, tier_mix) {
        (Some(_), Some(tiers)) => Some(tier_record(&tiers, options)),
        _ => None,
    };
    let (writer, writer_errors) = writer_record(prepared.writer_report.as_ref());
    let errors = person_errors.last();
    let search = Search {
        budget_per_run: options.budget,
        ended_on_question: EndedOnQuestion {
            n: rows,
            share: if rows == 0 {
                0.0
            } else {
                ended_on_question as f64 / rows as f64
            },
            user_left,
        },
        eval_runs,
        person: PersonRecord {
            fallbacks: person_fallbacks,
            model: person.map_or_else(|| defaults::TEMPLATE.to_owned(), Agent::describe),
        },
        person_errors: errors,
        pinned: prepared.pinned_from.as_ref().map(|from| PinnedRecord {
            from_run: from.clone(),
            repeats: options.repeats,
            tasks: prepared.tasks.len() as u64,
        }),
        repeats: RepeatsRecord {
            k: options.repeats,
            policy: options.repeat_policy,
            skipped_unanimous: skipped,
        },
        seeds_dropped,
        tier_mix,
        writer,
        writer_errors,
    };
    let mut degraded = Vec::new();
    if prepared
        .writer_report
        .as_ref()
        .is_some_and(|r| r.fallbacks > 0)
    {
        degraded.push(Degraded::GeneratorFallback);
    }
    if person_fallbacks > 0 {
        degraded.push(Degraded::PersonFallback);
    }
    RunSummary {
        schema_version: SCHEMA_VERSION,
        sparring_version: env!("CARGO_PKG_VERSION").to_owned(),
        run_id: prepared.run_id.clone(),
        spec: spec.name.clone(),
        agent: String::new(),
        counts,
        stopped_because,
        warnings,
        degraded,
        coverage,
        search,
        soundness: figures,
        options: Some(options.clone()),
        seconds: 0.0,
    }
}

/// Who wrote the asks, and a model writer's last errors.
fn writer_record(writer: Option<&WriterReport>) -> (WriterRecord, Vec<String>) {
    match writer {
        None => (
            WriterRecord {
                model: defaults::TEMPLATE.to_owned(),
                ..WriterRecord::default()
            },
            Vec::new(),
        ),
        Some(r) => (
            WriterRecord {
                asked: Some(r.asked),
                fallbacks: Some(r.fallbacks),
                model: r.model.clone(),
                written: Some(r.written),
            },
            r.errors.clone(),
        ),
    }
}

/// The tiers drawn against the share asked for.
fn tier_record(tiers: &BTreeMap<String, u64>, options: &SimulateOptions) -> TierMix {
    let situations: u64 = tiers.values().sum();
    let structured: u64 = tiers
        .iter()
        .filter(|(t, _)| t.as_str() != "seed")
        .map(|(_, n)| n)
        .sum();
    let hard: u64 = tiers
        .iter()
        .filter(|(t, _)| crate::writer::HARD_TIERS.contains(&t.as_str()))
        .map(|(_, n)| n)
        .sum();
    TierMix {
        hard_share_asked: options.hard_share,
        hard_share_drawn: if structured == 0 {
            0.0
        } else {
            hard as f64 / structured as f64
        },
        situations,
        tiers: tiers.clone(),
    }
}

/// The seeds of the plan no rollout of which ran (`ran`: indices into the
/// spec's `seeds`), in the spec's order: the budget could not pay for them,
/// or the run stopped first.
pub(super) fn seeds_dropped(plan: &Plan, spec: &Spec, ran: &BTreeSet<usize>) -> Vec<String> {
    let planned: BTreeSet<usize> = plan
        .tasks
        .iter()
        .filter(|t| t.arm == sparring_types::Arm::Seed)
        .filter_map(|t| t.situation.seed_index)
        .collect();
    planned
        .difference(ran)
        .filter_map(|i| spec.seeds.get(*i).cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary's errors from every rollout's, as before they were
    /// bounded: all kept, the last `ERRORS_KEPT` in key order shown.
    fn unbounded(entries: &[(Rollout, Vec<String>)]) -> Vec<String> {
        let all: BTreeMap<_, _> = entries.iter().cloned().collect();
        let mut errors = Vec::new();
        for e in all.into_values().flatten() {
            keep_error(&mut errors, e);
        }
        errors
    }

    #[test]
    fn person_errors_keep_only_what_the_summary_shows() {
        // Rollouts finish out of key order, with one to three errors each.
        let mut entries = Vec::new();
        for i in 0..200u32 {
            let task = (i as usize * 37) % 61;
            let n = 1 + (i as usize % 3);
            let errors: Vec<String> = (0..n).map(|j| format!("t{task} r{i} e{j}")).collect();
            entries.push(((i % 2, task, i / 61), errors));
        }
        let mut kept = PersonErrors::default();
        for (at, (key, errors)) in entries.iter().enumerate() {
            kept.insert(*key, errors.clone());
            assert!(
                kept.by_rollout.len() <= ERRORS_KEPT,
                "{}",
                kept.by_rollout.len()
            );
            assert_eq!(
                kept.held,
                kept.by_rollout.values().map(Vec::len).sum::<usize>()
            );
            if at % 17 == 0 {
                assert_eq!(kept.clone_last(), unbounded(&entries[..=at]));
            }
        }
        assert_eq!(kept.last(), unbounded(&entries));
    }

    impl PersonErrors {
        fn clone_last(&self) -> Vec<String> {
            Self {
                by_rollout: self.by_rollout.clone(),
                held: self.held,
            }
            .last()
        }
    }
}
