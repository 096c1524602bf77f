//! A run: tasks scheduled at the asked concurrency, rows out as they finish.

use crate::grade;
use crate::plan::{Task, plan};
pub use crate::rollout::{Clock, NoClock};
use crate::rollout::{Setup, Transcript, play};
use serde_json::{Value, json};
use sparring_types::hash::{sha256_hex, short_id};
use sparring_types::seed;
use sparring_types::{
    Agent, Counts, EndedBy, Lineage, Row, RunSummary, SCHEMA_VERSION, SimulateOptions, Spec,
};
use sparring_world::World;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{Semaphore, mpsc};

/// Where finished rows go. The sink must make a row durable (written and
/// flushed) before it returns, so a crash loses only rows in flight.
pub trait RowSink: Send {
    /// Stores one row.
    fn write(&mut self, row: &Row) -> Result<(), String>;
}

impl RowSink for Vec<Row> {
    fn write(&mut self, row: &Row) -> Result<(), String> {
        self.push(row.clone());
        Ok(())
    }
}

/// Progress of a run, reported after every row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Rows finished.
    pub done: u64,
    /// Rows the run will produce at most.
    pub total: u64,
    /// Graded rows that failed.
    pub failed: u64,
    /// Rows that ended in an agent error.
    pub errors: u64,
}

/// Why a run could not go on. Failed rollouts are rows, not errors.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The sink could not store a row; rows stored before it stay valid.
    #[error("could not store row {row}: {message}")]
    Sink {
        /// How many rows were stored before.
        row: u64,
        /// The sink's error.
        message: String,
    },
}

/// Everything a run needs.
pub struct RunConfig {
    /// The spec.
    pub spec: Arc<Spec>,
    /// Resolved options.
    pub options: SimulateOptions,
    /// The agent under test.
    pub agent: Arc<dyn Agent>,
    /// Timing source (metadata only).
    pub clock: Arc<dyn Clock>,
    /// Set to stop scheduling new rollouts (Ctrl-C); rollouts in flight finish.
    pub cancel: Arc<AtomicBool>,
}

/// After this many rows, all agent errors and not one agent reply, a run
/// stops: the agent is not working, and more rows would only repeat that.
pub const DEAD_AGENT_ROWS: u64 = 3;

struct Job {
    task: Arc<Task>,
    repeat: u32,
}

struct Done {
    task: Arc<Task>,
    repeat: u32,
    transcript: Transcript,
}

/// The run id: stable for the same spec, seed and options. Options of the
/// transport rather than the simulation (concurrency, the agent timeout,
/// retries, the request rate) are left out, so the same run at another
/// concurrency has the same id.
pub fn run_id(spec: &Spec, options: &SimulateOptions) -> String {
    let mut options = options.clone();
    options.concurrency = 0;
    options.agent_timeout = 0.0;
    options.retries = 0;
    options.rpm = None;
    let identity = json!({
        "spec": spec.name,
        "system_prompt": sha256_hex(spec.system_prompt.as_bytes()),
        "tools": spec.tools.iter().map(sparring_types::ToolSpec::to_openai).collect::<Vec<_>>(),
        "options": options,
    });
    short_id("run", &identity)
}

/// Plays every task (seeds first) `repeats` times, up to `budget` rows,
/// handing each row to `sink` as it finishes.
pub async fn run(
    config: RunConfig,
    sink: &mut dyn RowSink,
    on_progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<RunSummary, RunError> {
    let started = config.clock.millis();
    let options = config.options.clone();
    let spec = Arc::clone(&config.spec);
    let tasks: Vec<Arc<Task>> = plan(&spec, &options).into_iter().map(Arc::new).collect();
    let planned = tasks.len() as u64 * u64::from(options.repeats);
    let total = options.budget.map_or(planned, |b| b.min(planned));
    let mut warnings = Vec::new();
    if spec.seeds.len() as u64 * u64::from(options.repeats) > total {
        let dropped = spec.seeds.len() as u64 - total / u64::from(options.repeats.max(1));
        warnings.push(format!(
            "budget {total} cannot pay for every seed: {dropped} seed(s) dropped; raise --budget to at least {}",
            spec.seeds.len() as u64 * u64::from(options.repeats)
        ));
    }
    // Every task once, then every task again: a small budget spreads over tasks.
    let jobs: Vec<Job> = (0..options.repeats)
        .flat_map(|repeat| {
            tasks.iter().map(move |t| Job {
                task: Arc::clone(t),
                repeat,
            })
        })
        .take(total as usize)
        .collect();
    let run_id = run_id(&spec, &options);
    let tools: Arc<Vec<Value>> = Arc::new(
        spec.tools
            .iter()
            .map(sparring_types::ToolSpec::to_openai)
            .collect(),
    );
    let base_world = World::new(&spec, 0);

    let (tx, mut rx) = mpsc::channel::<Done>(options.concurrency.max(1));
    let semaphore = Arc::new(Semaphore::new(options.concurrency.max(1)));
    let scheduler = {
        let semaphore = Arc::clone(&semaphore);
        let cancel = Arc::clone(&config.cancel);
        let agent = Arc::clone(&config.agent);
        let clock = Arc::clone(&config.clock);
        let spec = Arc::clone(&spec);
        let options = options.clone();
        let tools = Arc::clone(&tools);
        let run_id = run_id.clone();
        tokio::spawn(async move {
            for job in jobs {
                let Ok(permit) = Arc::clone(&semaphore).acquire_owned().await else {
                    break;
                };
                if cancel.load(Ordering::SeqCst) || tx.is_closed() {
                    break;
                }
                let tx = tx.clone();
                let agent = Arc::clone(&agent);
                let clock = Arc::clone(&clock);
                let spec = Arc::clone(&spec);
                let options = options.clone();
                let tools = Arc::clone(&tools);
                let world = base_world.clone();
                let run_id = run_id.clone();
                tokio::spawn(async move {
                    let rollout_seed = rollout_seed(&options, &job);
                    let prefix = format!("{run_id}-{}-{}", job.task.index, job.repeat);
                    let mut world = world;
                    world_reseed(&mut world, job.task.situation.world_seed);
                    let transcript = play(
                        Setup {
                            task: &job.task,
                            system_prompt: &spec.system_prompt,
                            options: &options,
                            rollout_seed,
                            request_prefix: &prefix,
                        },
                        world,
                        tools,
                        agent.as_ref(),
                        clock.as_ref(),
                    )
                    .await;
                    drop(permit);
                    let _ = tx
                        .send(Done {
                            task: job.task,
                            repeat: job.repeat,
                            transcript,
                        })
                        .await;
                });
            }
        })
    };

    let mut progress = Progress {
        total,
        ..Progress::default()
    };
    let mut counts = Counts::default();
    let mut task_ids = BTreeSet::new();
    let mut situations_run = BTreeSet::new();
    let mut tools_run = BTreeSet::new();
    let mut agent_replied = false;
    let mut stopped_because = None;
    let mut failure = None;
    while let Some(done) = rx.recv().await {
        let row = make_row(
            &done,
            &spec,
            &options,
            &run_id,
            &tools,
            &config.agent.describe(),
        );
        if let Err(message) = sink.write(&row) {
            failure = Some(RunError::Sink {
                row: counts.rows,
                message,
            });
            rx.close();
            break;
        }
        counts.rows += 1;
        *counts
            .ended_by
            .entry(row.ended_by.as_str().to_owned())
            .or_default() += 1;
        task_ids.insert(row.task_id.clone());
        situations_run.insert(row.scenario_id.clone());
        if let Some(tool) = row.situation.axes.get("tool") {
            tools_run.insert(tool.clone());
        }
        if let Some(passed) = row.passed() {
            counts.graded += 1;
            if passed {
                counts.passed += 1;
            } else {
                progress.failed += 1;
            }
        }
        if row.ended_by == EndedBy::AgentError {
            progress.errors += 1;
        }
        agent_replied |= row.timings.agent_requests > 0 && row.ended_by != EndedBy::AgentError
            || row.messages.len() > 2;
        progress.done = counts.rows;
        on_progress(&progress);
        if !agent_replied && progress.errors >= DEAD_AGENT_ROWS {
            stopped_because = Some("agent_unavailable");
            warnings.push(format!(
                "stopped after {} rows: the agent failed every request and never replied (last error: {})",
                counts.rows,
                row.error.as_deref().unwrap_or("unknown")
            ));
            config.cancel.store(true, Ordering::SeqCst);
            rx.close();
        }
    }
    // Let the scheduler notice the closed channel and stop.
    let _ = scheduler.await;
    if let Some(e) = failure {
        return Err(e);
    }
    counts.tasks = task_ids.len() as u64;
    let stopped_because = stopped_because.map_or_else(
        || {
            if config.cancel.load(Ordering::SeqCst) && counts.rows < total {
                "interrupted".to_owned()
            } else if total < planned {
                "budget_spent".to_owned()
            } else {
                "situations_exhausted".to_owned()
            }
        },
        str::to_owned,
    );
    let mut coverage = BTreeMap::new();
    coverage.insert("situations_planned".to_owned(), json!(tasks.len()));
    coverage.insert("situations_run".to_owned(), json!(situations_run.len()));
    coverage.insert(
        "tools_run".to_owned(),
        json!(
            tools_run
                .iter()
                .filter(|t| t.as_str() != "none")
                .collect::<Vec<_>>()
        ),
    );
    coverage.insert(
        "tools_never_run".to_owned(),
        json!(
            spec.tools
                .iter()
                .map(|t| &t.name)
                .filter(|n| !tools_run.contains(*n))
                .collect::<Vec<_>>()
        ),
    );
    Ok(RunSummary {
        schema_version: SCHEMA_VERSION,
        sparring_version: env!("CARGO_PKG_VERSION").to_owned(),
        run_id,
        spec: spec.name.clone(),
        agent: config.agent.describe(),
        counts,
        stopped_because,
        warnings,
        degraded: Vec::new(),
        coverage,
        options: Some(options),
        seconds: (config.clock.millis() - started) / 1000.0,
    })
}

fn rollout_seed(options: &SimulateOptions, job: &Job) -> u64 {
    seed::derive_u64(
        options.seed,
        "rollout",
        &[job.task.index as u64, u64::from(job.repeat)],
    )
}

fn world_reseed(world: &mut World, world_seed: u64) {
    *world = world.clone().with_seed(world_seed);
}

fn make_row(
    done: &Done,
    spec: &Spec,
    options: &SimulateOptions,
    run_id: &str,
    tools: &[Value],
    agent: &str,
) -> Row {
    let task = &done.task;
    let scenario_id = short_id(
        "scn",
        &json!({"axes": task.situation.axes, "tier": task.situation.tier, "knows": task.persona.knows}),
    );
    let task_id = short_id(
        "task",
        &json!({"spec": spec.name, "scenario": scenario_id, "ask": task.ask}),
    );
    let row_id = short_id(
        "row",
        &json!({"run": run_id, "task": task_id, "repeat": done.repeat}),
    );
    let t = &done.transcript;
    let mut markers = BTreeMap::new();
    let tool_calls: usize = t.messages.iter().map(|m| m.tool_calls.len()).sum();
    let agent_turns = t
        .messages
        .iter()
        .filter(|m| m.role == sparring_types::Role::Assistant && m.tool_calls.is_empty())
        .count();
    markers.insert("tool_calls".to_owned(), tool_calls as f64);
    markers.insert("turns".to_owned(), agent_turns as f64);
    let mut row = Row {
        schema_version: SCHEMA_VERSION,
        row_id,
        task_id,
        scenario_id,
        messages: t.messages.clone(),
        tools: tools.to_vec(),
        situation: task.situation.clone(),
        persona: task.persona.clone(),
        ended_by: t.ended_by,
        error: t.error.clone(),
        reward: None,
        reason: None,
        failure_class: None,
        conduct_checks: None,
        judge_meta: None,
        markers,
        behavior_signature: String::new(),
        sampling: t.sampling.clone(),
        logprobs: (!t.logprobs.is_empty()).then(|| Value::Array(t.logprobs.clone())),
        model_version: agent.to_owned(),
        writer_model: "template".to_owned(),
        user_model: "template".to_owned(),
        lineage: Lineage {
            run_id: run_id.to_owned(),
            arm: task.arm.clone(),
            parent: None,
            eval_run: 0,
            replayed_from_run: None,
            scoring_run_id: None,
        },
        seed: seed::derive_u64(
            options.seed,
            "rollout",
            &[task.index as u64, u64::from(done.repeat)],
        ),
        timings: t.timings.clone(),
    };
    if options.grade {
        apply_grade(&mut row, run_id);
    }
    row.behavior_signature = behavior_signature(&row);
    row
}

/// Grades a row with the conduct checks, in place. An agent error is a
/// failure of the agent: reward 0 with the error as the reason.
pub fn apply_grade(row: &mut Row, scoring_run_id: &str) {
    if row.ended_by == EndedBy::AgentError {
        row.reward = Some(0.0);
        row.reason = Some(format!(
            "agent_error: {}",
            row.error.as_deref().unwrap_or("unknown")
        ));
        row.failure_class = Some("agent_error".to_owned());
        row.conduct_checks = None;
    } else {
        let verdict = grade::conduct(&row.messages, &row.tools);
        row.reward = Some(verdict.reward);
        row.reason = Some(verdict.reason);
        row.failure_class = verdict.failure_class;
        row.conduct_checks = Some(verdict.checks);
    }
    row.lineage.scoring_run_id = Some(format!("conduct-{scoring_run_id}"));
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
