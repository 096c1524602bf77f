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
    ToolExecutor,
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
    /// The situations could not be planned.
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
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
    /// Rows already written per task id, when resuming: the first that many
    /// repeats of each task are not run again, and they count against the
    /// budget.
    pub done: BTreeMap<String, u32>,
    /// The caller's world (`execute`), answering tool calls in place of the
    /// sandbox; faults still come from the sandbox first.
    pub executor: Option<Arc<dyn ToolExecutor>>,
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
    let planned_run = plan(&spec, &options)?;
    let tasks: Vec<Arc<Task>> = planned_run.tasks.iter().cloned().map(Arc::new).collect();
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
    // Every task once, then every task again: a small budget spreads over
    // tasks. When resuming, the repeats already on disk are skipped.
    let already = &config.done;
    let jobs: Vec<Job> = (0..options.repeats)
        .flat_map(|repeat| {
            tasks.iter().map(move |t| Job {
                task: Arc::clone(t),
                repeat,
            })
        })
        .take(total as usize)
        .filter(|job| {
            let (_, task_id) = task_ids(&spec, &job.task);
            already.get(&task_id).is_none_or(|n| job.repeat >= *n)
        })
        .collect();
    let resumed = total - jobs.len() as u64;
    let total = jobs.len() as u64;
    let run_id = run_id(&spec, &options);
    let tools: Arc<Vec<Value>> = Arc::new(
        spec.tools
            .iter()
            .map(sparring_types::ToolSpec::to_openai)
            .collect(),
    );
    let base_world = World::with_options(&spec, 0, options.world.clone());

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
        let executor = config.executor.clone();
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
                let executor = executor.clone();
                tokio::spawn(async move {
                    let rollout_seed = rollout_seed(&options, &job);
                    let prefix = format!("{run_id}-{}-{}", job.task.index, job.repeat);
                    let mut world = world.with_seed(job.task.situation.world_seed);
                    world.schedule_all(&job.task.situation.faults);
                    let transcript = play(
                        Setup {
                            task: &job.task,
                            system_prompt: &spec.system_prompt,
                            options: &options,
                            rollout_seed,
                            rollout_index: job.task.index as u64 * u64::from(options.repeats)
                                + u64::from(job.repeat),
                            request_prefix: &prefix,
                            executor: executor.as_deref(),
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
    let mut grid_rows_run: BTreeSet<Vec<usize>> = BTreeSet::new();
    let (mut ended_on_question, mut user_left) = (0u64, 0u64);
    let mut tools_run = BTreeSet::new();
    let mut agent_replied = false;
    let mut stopped_because = None;
    let mut failure = None;
    while let Some(done) = rx.recv().await {
        grid_rows_run.insert(done.task.grid_row.clone());
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
        if let Some(last) = row.messages.last()
            && last.role == sparring_types::Role::Assistant
            && last.tool_calls.is_empty()
            && crate::text::asks_question(last.content_str())
        {
            ended_on_question += 1;
            if row.ended_by == EndedBy::UserLeft {
                user_left += 1;
            }
        }
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
    let rows_written = counts.rows;
    let stopped_because = stopped_because.map_or_else(
        || {
            if config.cancel.load(Ordering::SeqCst) && counts.rows < total {
                "interrupted".to_owned()
            } else if total + resumed < planned {
                "budget_spent".to_owned()
            } else {
                "situations_exhausted".to_owned()
            }
        },
        str::to_owned,
    );
    let mut coverage = BTreeMap::new();
    let axes = &planned_run.axes;
    let ran: Vec<Vec<usize>> = grid_rows_run.into_iter().collect();
    if let Ok(c) = sparring_grid::coverage(&axes.levels(), &axes.forbidden, &ran) {
        coverage.insert(
            "pairwise".to_owned(),
            json!({"pairs_planned": c.pairs_planned, "pairs_covered": c.pairs_covered, "fraction": c.fraction}),
        );
    }
    coverage.insert("grid_rows".to_owned(), json!(planned_run.array.rows.len()));
    coverage.insert(
        "axes".to_owned(),
        json!(
            crate::axes::AXIS_NAMES
                .iter()
                .zip(&axes.values)
                .map(|(n, v)| (n.to_string(), v.clone()))
                .collect::<BTreeMap<_, _>>()
        ),
    );
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
        search: {
            let mut search = search_record(&planned_run, &options, &spec, total);
            let n = rows_written;
            search.insert(
                "ended_on_question".to_owned(),
                json!({
                    "share": if n == 0 { 0.0 } else { ended_on_question as f64 / n as f64 },
                    "n": n,
                    "user_left": user_left,
                }),
            );
            search
        },
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

fn make_row(
    done: &Done,
    spec: &Spec,
    options: &SimulateOptions,
    run_id: &str,
    tools: &[Value],
    agent: &str,
) -> Row {
    let task = &done.task;
    let (scenario_id, task_id) = task_ids(spec, task);
    let row_id = short_id(
        "row",
        &json!({"run": run_id, "task": task_id, "repeat": done.repeat}),
    );
    let t = &done.transcript;
    let markers = grade::markers(&t.messages);
    let mut row = Row {
        schema_version: SCHEMA_VERSION,
        row_id,
        task_id,
        scenario_id,
        messages: t.messages.clone(),
        tools: tools.to_vec(),
        situation: sparring_types::Situation {
            faults: t.faults.clone(),
            ..task.situation.clone()
        },
        persona: task.persona.clone(),
        ended_by: t.ended_by,
        error: t.error.clone(),
        reward: None,
        reason: None,
        failure_class: None,
        conduct_checks: None,
        judge_meta: None,
        grades: None,
        gold_reward: None,
        gold_author: None,
        gold_kind: None,
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

/// The scenario id and the task id of a task: stable across runs of the
/// same spec and seed, so a resumed or pinned run finds its tasks again.
pub fn task_ids(spec: &Spec, task: &Task) -> (String, String) {
    let scenario_id = short_id(
        "scn",
        &json!({"axes": task.situation.axes, "tier": task.situation.tier, "knows": task.persona.knows}),
    );
    let task_id = short_id(
        "task",
        &json!({"spec": spec.name, "scenario": scenario_id, "ask": task.ask}),
    );
    (scenario_id, task_id)
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

/// The run's `search` record: what the plan drew and what the budget dropped.
fn search_record(
    plan: &crate::plan::Plan,
    options: &SimulateOptions,
    spec: &Spec,
    total: u64,
) -> BTreeMap<String, Value> {
    let mut search = BTreeMap::new();
    let situations: u64 = plan.tier_mix.values().sum();
    let structured: u64 = plan
        .tier_mix
        .iter()
        .filter(|(t, _)| t.as_str() != "seed")
        .map(|(_, n)| n)
        .sum();
    let hard: u64 = plan
        .tier_mix
        .iter()
        .filter(|(t, _)| crate::writer::HARD_TIERS.contains(&t.as_str()))
        .map(|(_, n)| n)
        .sum();
    search.insert(
        "tier_mix".to_owned(),
        json!({
            "hard_share_asked": options.hard_share,
            "hard_share_drawn": if structured == 0 { 0.0 } else { hard as f64 / structured as f64 },
            "situations": situations,
            "tiers": plan.tier_mix,
        }),
    );
    let paid = (total / u64::from(options.repeats.max(1))) as usize;
    let seed_tasks: Vec<&Task> = plan.tasks.iter().filter(|t| t.arm == "seed").collect();
    let dropped: Vec<&str> = seed_tasks
        .iter()
        .skip(paid)
        .filter(|t| t.phrasing == 0)
        .filter_map(|t| {
            t.situation
                .seed_index
                .and_then(|i| spec.seeds.get(i))
                .map(String::as_str)
        })
        .collect();
    search.insert("seeds_dropped".to_owned(), json!(dropped));
    search
}
