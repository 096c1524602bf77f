//! A run: tasks scheduled at the asked concurrency, rows out as they finish.
//!
//! [`run`] is three named steps: `prepare` (the plan or the pinned tasks,
//! the model writer's asks, the world and everything rollouts share),
//! [`execute::execute`] once per eval run (the queue of jobs, rollouts in
//! flight, rows to the sink), and `summarise` (the typed `run.json`).
//! [`search`] decides which rollout comes next and when to stop looking:
//! it holds the [`queue`] of planned tasks and their repeats and the arms
//! that propose more ([`drawer`] draws unique situations during the run);
//! [`row`] makes a finished rollout a row, and [`summary`] adds the rows up.

mod drawer;
mod execute;
mod queue;
mod row;
mod search;
mod summary;

pub use row::{apply_grade, behavior_signature, outcome, rollout_seed, task_ids};

use crate::ground::Ground;
use crate::model_people::{ModelPerson, WriterReport, write_asks};
use crate::plan::{Plan, Task};
use crate::rollout::Transcript;
pub use crate::rollout::{Clock, NoClock};
use drawer::Drawer;
use execute::{Out, execute};
use queue::Queue;
use serde_json::{Value, json};
use sparring_types::hash::{sha256_hex, short_id};
use sparring_types::{
    Agent, EvalRunLine, Grader, Row, RowSink, RunSummary, SimulateOptions, Spec, StopReason,
    ToolExecutor,
};
use sparring_world::World;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Progress of a run, reported after every row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Rows finished.
    pub done: u64,
    /// Rows the run will produce at most.
    pub total: u64,
    /// Graded rows that failed.
    pub failed: u64,
    /// Rows that ended in an error of the agent or its backend
    /// (`agent_error`, `backend_error`).
    pub errors: u64,
}

/// Stops a run at once (a second Ctrl-C, SIGTERM): no rollout starts, the
/// rollouts in flight are dropped, not written (a `--resume` runs them
/// again), and the run ends `interrupted` with its summary as usual. Where
/// [`RunConfig::cancel`] lets the rollouts in flight finish, this does not
/// wait for them.
#[derive(Debug, Default)]
pub struct Abort {
    set: AtomicBool,
    notify: tokio::sync::Notify,
}

impl Abort {
    /// Not yet set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stops the run now.
    pub fn abort(&self) {
        self.set.store(true, Ordering::SeqCst);
        // A permit is kept when nobody waits yet, so the next wait ends.
        self.notify.notify_one();
    }

    /// Whether the run was told to stop now.
    pub fn is_aborted(&self) -> bool {
        self.set.load(Ordering::SeqCst)
    }

    /// Returns once [`Abort::abort`] was called.
    pub(crate) async fn wait(&self) {
        while !self.is_aborted() {
            self.notify.notified().await;
        }
    }
}

/// Why a run could not go on. Failed rollouts are rows, not errors.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The options contradict each other (a library caller's
    /// `SimulateOptions` that never went through `OptionsPatch::check`).
    #[error("invalid options: {0}")]
    Options(sparring_types::OptionError),
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
    /// Timing source (metadata, and `time_budget`).
    pub clock: Arc<dyn Clock>,
    /// Set to stop scheduling new rollouts (Ctrl-C); rollouts in flight
    /// finish, except those that end in an error of the agent or its
    /// backend once it is set: such a rollout may have been cut by the same
    /// interrupt (a signal that reached the agent too), so it is dropped,
    /// not written, and a `--resume` runs it again.
    pub cancel: Arc<AtomicBool>,
    /// Set to stop at once, dropping the rollouts in flight ([`Abort`]).
    pub abort: Arc<Abort>,
    /// Rows already written, when resuming: per `(eval_run, task_id)` the
    /// outcome of each (see [`outcome`]). That many repeats of the task are
    /// not run again, they count against the budget, and their outcomes
    /// count towards `repeat_policy: successive`.
    pub done: BTreeMap<(u32, String), Vec<String>>,
    /// The caller's world (`execute`), answering tool calls in place of the
    /// sandbox; faults still come from the sandbox first.
    pub executor: Option<Arc<dyn ToolExecutor>>,
    /// A previous run's tasks to run again instead of planning new ones
    /// (`--tasks`).
    pub pinned: Option<Pinned>,
    /// A model writing the asks (`writer`); the template writer otherwise,
    /// and for every situation the model fails.
    pub writer: Option<Arc<dyn Agent>>,
    /// A model playing the person (`person`); the template person
    /// otherwise, and for every turn the model fails.
    pub person: Option<Arc<dyn Agent>>,
    /// When resuming with a model writer: scenario id → the asks the model
    /// wrote in the earlier attempt (read from its rows), kept so the tasks
    /// on disk keep their ids.
    pub written_asks: BTreeMap<String, Vec<String>>,
    /// A grader hook (`grader=` of the Python package) whose verdict every
    /// row gets as it finishes, after the conduct checks when `grade` is
    /// set: inside the rollout's task, so [`crate::context::current_rollout`]
    /// names the rollout, and before the row counts towards `successive`
    /// repeats and progress.
    pub grader: Option<Arc<dyn Grader>>,
    /// The spec read already (the caller checked its axes with it); the
    /// run reads the spec itself when `None`. Either way a run reads its
    /// spec once.
    pub reading: Option<Arc<sparring_reading::SpecReading>>,
}

impl RunConfig {
    /// A run of `agent` on `spec` with `options` and nothing else: no clock
    /// ([`NoClock`]: timings are zero and `time_budget` never fires), not
    /// cancelled, nothing done before, the sandbox world, planned tasks,
    /// the template writer and person. Set the other fields for more, e.g.
    /// `RunConfig { person: Some(model), ..RunConfig::new(spec, options, agent) }`.
    pub fn new(spec: Arc<Spec>, options: SimulateOptions, agent: Arc<dyn Agent>) -> Self {
        Self {
            spec,
            options,
            agent,
            clock: Arc::new(NoClock),
            cancel: Arc::new(AtomicBool::new(false)),
            abort: Arc::new(Abort::new()),
            done: BTreeMap::new(),
            executor: None,
            pinned: None,
            writer: None,
            person: None,
            written_asks: BTreeMap::new(),
            grader: None,
            reading: None,
        }
    }
}

/// The task set of a previous run, pinned for a re-run: see
/// [`crate::plan::pinned_tasks`].
#[derive(Clone, Debug)]
pub struct Pinned {
    /// The run the tasks come from (`lineage.replayed_from_run`).
    pub from_run: String,
    /// The tasks, one per distinct `task_id`, each with the writer of its
    /// ask (`writer_model` of its row: a model writer may have fallen back
    /// to the templates for some situations).
    pub tasks: Vec<Task>,
}

impl Pinned {
    /// Pins the distinct tasks of a previous run's rows. Returns the pin and
    /// the most rollouts any task had in one eval run (the pinned k).
    pub fn from_rows(rows: &[Row]) -> Option<(Self, u32)> {
        let first = rows.first()?;
        let (tasks, k) = crate::plan::pinned_tasks(rows);
        Some((
            Self {
                from_run: first.lineage.run_id.clone(),
                tasks,
            },
            k,
        ))
    }
}

/// After this many rows, all errors of the agent or its backend
/// (`agent_error`, `backend_error`) and not one agent reply, a run stops
/// (`agent_unavailable`): the agent is not working, and more rows would only
/// repeat that. A command agent that never starts answering and a model
/// endpoint nobody serves stop the same way.
pub const DEAD_AGENT_ROWS: u64 = 3;

/// A finished rollout.
struct Done {
    task: Arc<Task>,
    repeat: u32,
    transcript: Transcript,
    /// The row, already graded by the run's grader hook, when it has one.
    graded: Option<Row>,
}

/// The run id: stable for the same spec, seed and options. Options of the
/// transport rather than the simulation (concurrency, the agent timeout,
/// retries, the request rate, batching, the time budget) are left out, so
/// the same run at another concurrency has the same id.
pub fn run_id(spec: &Spec, options: &SimulateOptions) -> String {
    run_id_pinned(spec, options, None)
}

/// The run id of a run, pinned or not: a pinned run's identity adds the run
/// it pins and its task ids.
pub fn run_id_pinned(spec: &Spec, options: &SimulateOptions, pinned: Option<&Pinned>) -> String {
    let mut options = options.clone();
    options.concurrency = 0;
    options.agent_timeout = 0.0;
    options.retries = 0;
    options.rpm = None;
    options.reproducible = false;
    options.time_budget = None;
    let mut identity = json!({
        "spec": spec.name,
        "system_prompt": sha256_hex(spec.system_prompt.as_bytes()),
        "tools": spec.tools.iter().map(sparring_types::ToolSpec::to_openai).collect::<Vec<_>>(),
        "options": options,
    });
    if let Some(p) = pinned {
        identity["pinned"] = json!({
            "from_run": p.from_run,
            "tasks": p.tasks.iter().map(|t| t.task_id.as_str()).collect::<Vec<_>>(),
        });
    }
    short_id("run", &identity)
}

/// What is shared by every rollout of a call.
struct Shared {
    spec: Arc<Spec>,
    options: SimulateOptions,
    agent: Arc<dyn Agent>,
    clock: Arc<dyn Clock>,
    executor: Option<Arc<dyn ToolExecutor>>,
    tools: Arc<Vec<Value>>,
    world: World,
    run_id: String,
    agent_name: String,
    replayed_from: Option<String>,
    person_model: Option<Arc<ModelPerson>>,
    /// The spec's reading, made once: `grade` checks rows against its
    /// policy.
    reading: Arc<sparring_reading::SpecReading>,
    grader: Option<Arc<dyn Grader>>,
}

/// Plays every task (seeds first) `repeats` times, up to `budget` rows, and
/// again for each of `runs`, handing each row to `sink` as it finishes.
pub async fn run(
    config: RunConfig,
    sink: &mut dyn RowSink,
    on_progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<RunSummary, RunError> {
    let started = config.clock.millis();
    let mut prepared = prepare(&config).await?;
    let options = &prepared.shared.options;
    let runs = options.runs.max(1);
    let k = u64::from(options.repeats.max(1));
    let resumed: u64 = config.done.values().map(|d| d.len() as u64).sum();
    let mut out = Out {
        shared: Arc::clone(&prepared.shared),
        cancel: Arc::clone(&config.cancel),
        abort: Arc::clone(&config.abort),
        deadline: options.time_budget.map(|s| started + s * 1000.0),
        sink,
        tally: summary::Tally::default(),
        progress: Progress {
            total: (prepared.per_run * u64::from(runs)).saturating_sub(resumed),
            ..Progress::default()
        },
        on_progress,
        warnings: std::mem::take(&mut prepared.warnings),
    };
    let spec = Arc::clone(&config.spec);
    let options = prepared.shared.options.clone();
    let mut drawer = prepared.plan.as_ref().map(|p| Drawer {
        spec: &spec,
        options: &options,
        plan: p,
        drawn: 0,
        next_index: prepared.tasks.len(),
        tier_mix: p.tier_mix.clone(),
        keep: (runs > 1).then(Vec::new),
    });
    let mut eval_runs = Vec::new();
    let mut stopped_because = StopReason::default();
    for eval_run in 0..runs {
        let done: BTreeMap<String, Vec<String>> = config
            .done
            .range((eval_run, String::new())..(eval_run + 1, String::new()))
            .map(|((_, id), d)| (id.clone(), d.clone()))
            .collect();
        let resumed_here: u64 = done.values().map(|d| (d.len() as u64).min(k)).sum();
        if eval_run > 0
            && let Some(kept) = drawer.as_mut().and_then(|d| d.keep.take())
        {
            // Later runs replay every task run 0 drew, and draw nothing.
            prepared.tasks.extend(kept);
            if let Some(d) = drawer.as_mut() {
                d.drawn = d.plan.unique_left;
            }
        }
        // The spec's seeds lead a planned run's tasks; a pinned run keeps
        // its tasks' order.
        let seeds = if prepared.plan.is_some() {
            prepared
                .tasks
                .iter()
                .take_while(|t| t.arm == sparring_types::Arm::Seed)
                .count()
        } else {
            0
        };
        let queue = Queue::new(prepared.tasks.clone(), seeds, &options, done);
        let limit = prepared.per_run.saturating_sub(resumed_here);
        let arms: Vec<&mut dyn search::Arm> = match drawer.as_mut() {
            Some(d) => vec![d],
            None => Vec::new(),
        };
        // Saturation stops drawing new situations; replays draw none.
        let saturation = options.unique_situations && eval_run == 0;
        let mut search = search::Search::new(queue, arms, limit, saturation);
        let before = out.tally.counter.rows();
        let stop = execute(&mut out, eval_run, &mut search).await?;
        out.tally.skipped += search.skipped();
        let stop = stop.unwrap_or(if config.pinned.is_some() {
            StopReason::TasksDone
        } else {
            StopReason::SituationsExhausted
        });
        eval_runs.push(EvalRunLine {
            eval_run,
            rows: out.tally.counter.rows() - before + resumed_here,
            stopped_because: stop,
        });
        stopped_because = stop;
        if stop.ends_the_call() {
            break;
        }
    }
    let tier_mix = drawer.map(|d| d.tier_mix);
    let seeds_dropped = match &prepared.plan {
        Some(p) => {
            let mut ran = std::mem::take(&mut out.tally.seeds_run);
            // Rows kept from an earlier attempt ran too.
            for t in &p.tasks {
                if let Some(i) = t.situation.seed_index
                    && config.done.keys().any(|(_, id)| *id == t.task_id)
                {
                    ran.insert(i);
                }
            }
            summary::seeds_dropped(p, &spec, &ran)
        }
        None => Vec::new(),
    };
    let seed_rows = prepared.plan.as_ref().map_or(0, |p| {
        p.tasks
            .iter()
            .filter(|t| t.arm == sparring_types::Arm::Seed)
            .count() as u64
            * k
    });
    if seed_rows > prepared.per_run {
        out.warnings.push(format!(
            "budget {} cannot pay for every seed: its {} seed task(s) take {k} rollouts each ({seed_rows} rows); {} seed(s) dropped (`search.seeds_dropped` in run.json); raise --budget to at least {seed_rows}",
            prepared.per_run,
            seed_rows / k.max(1),
            seeds_dropped.len()
        ));
    } else if !seeds_dropped.is_empty() {
        out.warnings.push(format!(
            "{} seed(s) did not run before the run stopped ({stopped_because}); `search.seeds_dropped` in run.json lists them",
            seeds_dropped.len()
        ));
    }
    if out.tally.dropped > 0 {
        out.warnings.push(format!(
            "interrupted: {} rollout(s) in flight were dropped, not written; `--resume` runs them",
            out.tally.dropped
        ));
    }
    let Out {
        tally, warnings, ..
    } = out;
    let mut summary = summary::summarise(summary::Ending {
        spec: &spec,
        options: &options,
        prepared: &prepared,
        tally,
        tier_mix,
        eval_runs,
        stopped_because,
        warnings,
        person: config.person.as_deref(),
        seeds_dropped,
    });
    summary.agent = config.agent.describe();
    summary.seconds = (config.clock.millis() - started) / 1000.0;
    Ok(summary)
}

/// What `prepare` makes ready: the tasks, the plan they came from (none
/// for a pinned run), what every rollout shares, and the numbers the loop
/// needs.
struct Prepared {
    shared: Arc<Shared>,
    /// The axes the tasks lie on: the plan's, or for pinned tasks this
    /// spec's.
    axes: crate::axes::Axes,
    tasks: Vec<Arc<Task>>,
    plan: Option<Plan>,
    writer_report: Option<WriterReport>,
    /// Rows each eval run produces at most.
    per_run: u64,
    warnings: Vec<String>,
    run_id: String,
    pinned_from: Option<String>,
}

/// The plan (or the pinned tasks), the model writer's asks, the world and
/// the warnings a run knows before its first rollout.
async fn prepare(config: &RunConfig) -> Result<Prepared, RunError> {
    let options = config.options.clone();
    if let Some(avg) = options.avg_turns {
        sparring_types::check_avg_turns(avg, options.max_turns).map_err(RunError::Options)?;
    }
    let spec = Arc::clone(&config.spec);
    let ground = match &config.reading {
        Some(reading) => Ground::with_reading(&spec, Arc::clone(reading), options.world.clone()),
        None => Ground::new(&spec, options.world.clone()).map_err(crate::plan::PlanError::from)?,
    };
    let pinned = config.pinned.as_ref();
    let mut pinned_axes = None;
    let (mut tasks, mut planned_run) = if let Some(p) = pinned {
        let axes = crate::axes::Axes::on(&spec, &ground).map_err(crate::plan::PlanError::from)?;
        pinned_axes = Some(axes.clone());
        let tasks = p
            .tasks
            .iter()
            .map(|t| {
                let mut t = t.clone();
                t.grid_row = grid_row_of(&axes, &t.situation.axes);
                Arc::new(t)
            })
            .collect::<Vec<_>>();
        (tasks, None)
    } else {
        let planned = crate::plan::plan_on(&spec, &ground, &options)?;
        let tasks = planned.tasks.iter().cloned().map(Arc::new).collect();
        (tasks, Some(planned))
    };
    let k = u64::from(options.repeats.max(1));
    let unique_tasks = planned_run.as_ref().map_or(0, |p| {
        p.unique_left as u64 * u64::from(options.phrasings.max(1))
    });
    let planned = (tasks.len() as u64 + unique_tasks) * k;
    let per_run = options.budget.map_or(planned, |b| b.min(planned));
    let mut warnings: Vec<String> = planned_run
        .as_ref()
        .map(|p| p.warnings.clone())
        .unwrap_or_default();
    if options.reproducible && options.time_budget.is_some() {
        warnings.push(
            "`time_budget` with `reproducible`: where the clock stops the run depends on timing, so the rows before it may differ between runs".to_owned(),
        );
    }
    let run_id = run_id_pinned(&spec, &options, pinned);
    // A model writer rewrites the asks of the situations the budget pays
    // for; a rewritten ask is a new task id.
    let writer_report = match (&config.writer, planned_run.as_mut()) {
        (Some(writer), Some(p)) => {
            let needed: BTreeSet<usize> = (0..p.tasks.len())
                .take(usize::try_from(per_run).unwrap_or(usize::MAX))
                .collect();
            let report = write_asks(
                p,
                &spec,
                writer.as_ref(),
                &needed,
                &config.written_asks,
                options.concurrency,
                &run_id,
            )
            .await;
            for t in &mut p.tasks {
                t.task_id = crate::plan::task_id_of(&spec, &t.scenario_id, &t.ask);
            }
            tasks = p.tasks.iter().cloned().map(Arc::new).collect();
            Some(report)
        }
        _ => None,
    };
    let person_model = match &config.person {
        None => None,
        Some(backend) => Some(Arc::new(
            ModelPerson::new(Arc::clone(backend))
                .map_err(|e| RunError::Plan(crate::plan::PlanError::Templates(e)))?,
        )),
    };
    let shared = Arc::new(Shared {
        tools: Arc::new(
            spec.tools
                .iter()
                .map(sparring_types::ToolSpec::to_openai)
                .collect(),
        ),
        world: ground.world().clone(),
        spec: Arc::clone(&spec),
        options,
        agent: Arc::clone(&config.agent),
        clock: Arc::clone(&config.clock),
        executor: config.executor.clone(),
        run_id: run_id.clone(),
        agent_name: config.agent.describe(),
        replayed_from: pinned.map(|p| p.from_run.clone()),
        person_model,
        reading: Arc::clone(ground.reading()),
        grader: config.grader.clone(),
    });
    let axes = match (pinned_axes, &planned_run) {
        (Some(axes), _) => axes,
        (None, Some(p)) => p.axes.clone(),
        (None, None) => {
            crate::axes::Axes::on(&spec, &ground).map_err(crate::plan::PlanError::from)?
        }
    };
    Ok(Prepared {
        shared,
        axes,
        tasks,
        plan: planned_run,
        writer_report,
        per_run,
        warnings,
        run_id,
        pinned_from: pinned.map(|p| p.from_run.clone()),
    })
}

/// The covering-array row a situation's axes name, when every value is one
/// of this spec's levels (a pinned task from another spec may not be).
fn grid_row_of(axes: &crate::axes::Axes, named: &BTreeMap<String, String>) -> Vec<usize> {
    let mut row = Vec::new();
    for (name, values) in crate::axes::AXIS_NAMES.iter().zip(&axes.values) {
        let Some(v) = named.get(*name) else {
            return Vec::new();
        };
        let Some(i) = values.iter().position(|x| x == v) else {
            return Vec::new();
        };
        row.push(i);
    }
    row
}
