//! A finished rollout made a row: ids, lineage, grade, signature.

use super::{Done, Shared};
use crate::grade;
use crate::plan::Task;
use serde_json::{Value, json};
use sparring_types::hash::{sha256_hex, short_id};
use sparring_types::seed;
use sparring_types::{Lineage, Row};

pub(super) fn make_row(done: &Done, shared: &Shared, eval_run: u32) -> Row {
    let options = &shared.options;
    let run_id = shared.run_id.as_str();
    let task = &done.task;
    let (scenario_id, task_id) = (task.scenario_id.clone(), task.task_id.clone());
    let row_id = if eval_run == 0 {
        short_id(
            "row",
            &json!({"run": run_id, "task": task_id, "repeat": done.repeat}),
        )
    } else {
        short_id(
            "row",
            &json!({"run": run_id, "task": task_id, "repeat": done.repeat, "eval_run": eval_run}),
        )
    };
    let t = &done.transcript;
    let markers = grade::markers(&t.messages);
    let mut row = Row {
        tools: sparring_types::Tools::from(std::sync::Arc::clone(&shared.tools)),
        situation: sparring_types::Situation {
            faults: t.faults.clone(),
            ..task.situation.clone()
        },
        persona: task.persona.clone(),
        error: t.error.clone(),
        markers,
        sampling: t.agent_log.sampling.clone(),
        logprobs: (!t.agent_log.logprobs.is_empty())
            .then(|| Value::Array(t.agent_log.logprobs.clone())),
        usage: t.agent_log.usage.map(|(u, requests)| {
            json!({
                "requests": requests,
                "input_tokens": u.input_tokens,
                "output_tokens": u.output_tokens,
            })
        }),
        requests: (!t.agent_log.requests.is_empty())
            .then(|| Value::Array(t.agent_log.requests.clone())),
        model_version: shared.agent_name.clone(),
        writer_model: task.writer.clone(),
        user_model: t.user_model.clone(),
        lineage: Lineage {
            run_id: run_id.to_owned(),
            arm: task.arm,
            parent: None,
            eval_run,
            replayed_from_run: shared
                .replayed_from
                .clone()
                .or_else(|| (eval_run > 0).then(|| run_id.to_owned())),
            scoring_run_id: None,
        },
        seed: rollout_seed(options.seed, &task.task_id, done.repeat),
        turn_cap: t.turn_cap,
        confirmations: t.confirmations.clone(),
        timings: t.timings.clone(),
        ..Row::new(row_id, task_id, scenario_id, t.messages.clone(), t.ended_by)
    };
    if options.grade {
        apply_grade(&mut row, run_id, shared.reading.policy());
    }
    row.behavior_signature = behavior_signature(&row);
    row
}

/// The scenario id and the task id of a task: stable across runs of the
/// same spec and seed, so a resumed or pinned run finds its tasks again.
pub fn task_ids(task: &Task) -> (String, String) {
    (task.scenario_id.clone(), task.task_id.clone())
}

/// Grades a row with the conduct checks against the spec's policy (read
/// once per run, its `policy_rules` applied), in place: the one grading path
/// `sparring grade` takes too ([`crate::stages::grade_conduct`]). A row that
/// did not finish on the agent's side is a failure of the agent: reward 0
/// with the error as the reason.
pub fn apply_grade(row: &mut Row, scoring_run_id: &str, policy: &sparring_reading::policy::Policy) {
    crate::stages::grade_conduct(row, Some(policy), &format!("conduct-{scoring_run_id}"));
}

/// A hash of what the agent did: tools called in order with their outcome
/// class, how the conversation ended, and the grade class.
pub fn behavior_signature(row: &Row) -> String {
    let mut steps: Vec<String> = Vec::new();
    for m in &row.messages {
        if m.role == sparring_types::Role::Tool {
            let outcome = serde_json::from_str::<Value>(m.content_str())
                .ok()
                .and_then(|v| {
                    v.pointer("/error/kind")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .unwrap_or_else(|| {
                    if grade::tool_failed(m.content_str()) {
                        "error".into()
                    } else {
                        "ok".into()
                    }
                });
            steps.push(format!("{}:{outcome}", m.name.as_deref().unwrap_or("?")));
        }
    }
    let grade = match row.passed() {
        Some(true) => "pass".to_owned(),
        Some(false) => row.failure_class.clone().unwrap_or_else(|| "fail".into()),
        None => "ungraded".to_owned(),
    };
    short_id(
        "sig",
        &json!({"steps": steps, "ended_by": row.ended_by.as_str(), "grade": grade}),
    )
}

/// What a row counts as for `repeat_policy: successive`: its reward when
/// graded, else its behaviour signature. An ask is unanimous when its first
/// rollouts all have the same outcome.
pub fn outcome(row: &Row) -> String {
    row.reward
        .map_or_else(|| row.behavior_signature.clone(), |r| format!("reward:{r}"))
}

/// The seed of a rollout's streams (the person's draws): from the run seed,
/// the task's id and the repeat, so a pinned re-run of the same task at the
/// same seed meets the same person.
pub fn rollout_seed(run_seed: u64, task_id: &str, repeat: u32) -> u64 {
    let digest = sha256_hex(task_id.as_bytes());
    let key = u64::from_str_radix(digest.get(..16).unwrap_or("0"), 16).unwrap_or(0);
    seed::derive_u64(run_seed, "rollout", &[key, u64::from(repeat)])
}
