//! A run: tasks scheduled at the asked concurrency, rows out as they finish.

use crate::grade;
use crate::model_people::{ModelPerson, WriterReport, keep_error, write_asks};
use crate::plan::{Task, plan};
pub use crate::rollout::{Clock, NoClock};
use crate::rollout::{Setup, Transcript, play};
use serde_json::{Value, json};
use sparring_types::defaults;
use sparring_types::hash::{sha256_hex, short_id};
use sparring_types::seed;
use sparring_types::{
    Agent, Counts, EndedBy, Lineage, Row, RunSummary, SCHEMA_VERSION, SimulateOptions, Spec,
    ToolExecutor,
};
use sparring_world::World;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::task::JoinSet;

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
    /// The options contradict each other (a library caller's
    /// `SimulateOptions` that never went through `OptionsPatch::check`).
    #[error("invalid options: {0}")]
    Options(String),
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
    /// Set to stop scheduling new rollouts (Ctrl-C); rollouts in flight finish.
    pub cancel: Arc<AtomicBool>,
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
            done: BTreeMap::new(),
            executor: None,
            pinned: None,
            writer: None,
            person: None,
            written_asks: BTreeMap::new(),
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

/// After this many rows, all agent errors and not one agent reply, a run
/// stops: the agent is not working, and more rows would only repeat that.
pub const DEAD_AGENT_ROWS: u64 = 3;

#[derive(Clone)]
struct Job {
    task: Arc<Task>,
    repeat: u32,
}

struct Done {
    task: Arc<Task>,
    repeat: u32,
    transcript: Transcript,
}

/// What a row counts as for `repeat_policy: successive`: its reward when
/// graded, else its behaviour signature. An ask is unanimous when its first
/// rollouts all have the same outcome.
pub fn outcome(row: &Row) -> String {
    row.reward
        .map_or_else(|| row.behavior_signature.clone(), |r| format!("reward:{r}"))
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

/// Which rollouts come next: every task once, then every task again (a
/// small budget spreads over tasks). Under `repeat_policy: successive` only
/// the first [`defaults::SUCCESSIVE_FIRST`] rounds are queued up front; an
/// ask's later repeats join the queue when its first rollouts are in and
/// disagree. Tasks drawn during the run (unique situations) join at the
/// back. Only asks awaiting their decision keep state here, so memory
/// follows the work in flight, not the run's size.
struct Queue {
    tasks: Vec<Arc<Task>>,
    k: u32,
    first: u32,
    round: u32,
    cursor: usize,
    ready: VecDeque<Job>,
    extra: VecDeque<Job>,
    outcomes: BTreeMap<String, Vec<String>>,
    already: BTreeMap<String, u32>,
    /// Repeats skipped because the ask's first rollouts were unanimous.
    skipped: u64,
}

impl Queue {
    fn new(
        tasks: Vec<Arc<Task>>,
        options: &SimulateOptions,
        done: BTreeMap<String, Vec<String>>,
    ) -> Self {
        let k = options.repeats.max(1);
        let first = if options.repeat_policy == "successive" {
            defaults::SUCCESSIVE_FIRST.min(k)
        } else {
            k
        };
        let mut queue = Self {
            already: done
                .iter()
                .map(|(id, d)| {
                    (
                        id.clone(),
                        u32::try_from(d.len()).unwrap_or(u32::MAX).min(k),
                    )
                })
                .collect(),
            outcomes: if first < k { done } else { BTreeMap::new() },
            tasks,
            k,
            first,
            round: 0,
            cursor: 0,
            ready: VecDeque::new(),
            extra: VecDeque::new(),
            skipped: 0,
        };
        for t in 0..queue.tasks.len() {
            let task = Arc::clone(&queue.tasks[t]);
            if queue.done_before(&task) >= first {
                queue.decide(&task);
            }
        }
        queue
    }

    fn done_before(&self, task: &Task) -> u32 {
        self.already.get(&task.task_id).copied().unwrap_or(0)
    }

    fn next(&mut self) -> Option<Job> {
        while self.round < self.first {
            if self.cursor >= self.tasks.len() {
                self.round += 1;
                self.cursor = 0;
                continue;
            }
            let task = &self.tasks[self.cursor];
            self.cursor += 1;
            if self.round < self.done_before(task) {
                continue;
            }
            return Some(Job {
                task: Arc::clone(task),
                repeat: self.round,
            });
        }
        self.ready.pop_front().or_else(|| self.extra.pop_front())
    }

    /// Queues tasks drawn during the run: their first rounds, in order.
    fn append(&mut self, tasks: &[Arc<Task>]) {
        for repeat in 0..self.first {
            for task in tasks {
                self.extra.push_back(Job {
                    task: Arc::clone(task),
                    repeat,
                });
            }
        }
    }

    /// Records the outcome of a finished rollout; the ask's first rollouts
    /// all in, its later repeats are queued unless they agreed.
    fn record(&mut self, task: &Arc<Task>, repeat: u32, outcome: String) {
        if self.first >= self.k || repeat >= self.first {
            return;
        }
        let list = self.outcomes.entry(task.task_id.clone()).or_default();
        list.push(outcome);
        if list.len() == self.first as usize {
            self.decide(task);
        }
    }

    fn decide(&mut self, task: &Arc<Task>) {
        if self.first >= self.k {
            return;
        }
        let outcomes = self.outcomes.remove(&task.task_id).unwrap_or_default();
        let first = &outcomes[..(self.first as usize).min(outcomes.len())];
        let unanimous = first.windows(2).all(|w| w[0] == w[1]);
        let from = self.done_before(task).max(self.first);
        if unanimous {
            self.skipped += u64::from(self.k.saturating_sub(from));
            return;
        }
        for repeat in from..self.k {
            self.ready.push_back(Job {
                task: Arc::clone(task),
                repeat,
            });
        }
    }
}

/// Draws unique situations during the run, a piece at a time.
struct Drawer<'a> {
    spec: &'a Spec,
    options: &'a SimulateOptions,
    plan: &'a crate::plan::Plan,
    drawn: usize,
    next_index: usize,
    tier_mix: BTreeMap<String, u64>,
    /// Every drawn task, kept only when later eval runs replay them.
    keep: Option<Vec<Arc<Task>>>,
}

impl Drawer<'_> {
    fn left(&self) -> usize {
        self.plan.unique_left.saturating_sub(self.drawn)
    }

    fn draw(&mut self, count: usize) -> Result<Vec<Arc<Task>>, RunError> {
        let count = count.min(self.left());
        let (tasks, tiers) = crate::plan::draw_unique(
            self.spec,
            self.options,
            self.plan,
            self.drawn,
            count,
            self.next_index,
        )?;
        self.drawn += count;
        self.next_index += tasks.len();
        for (tier, n) in tiers {
            *self.tier_mix.entry(tier).or_default() += n;
        }
        let tasks: Vec<Arc<Task>> = tasks.into_iter().map(Arc::new).collect();
        if let Some(keep) = &mut self.keep {
            keep.extend(tasks.iter().cloned());
        }
        Ok(tasks)
    }
}

/// What every row of a call adds to the summary.
#[derive(Default)]
struct Tally {
    counts: Counts,
    task_ids: BTreeSet<String>,
    situations_run: BTreeSet<String>,
    grid_rows_run: BTreeSet<Vec<usize>>,
    ended_on_question: u64,
    user_left: u64,
    tools_run: BTreeSet<String>,
    agent_replied: bool,
    signatures: BTreeSet<String>,
    since_new_signature: u64,
    skipped: u64,
    /// Turns the model person's answer was replaced by the template's.
    person_fallbacks: u64,
    /// The model person's last errors per rollout.
    person_errors: BTreeMap<(u32, usize, u32), Vec<String>>,
}

impl Tally {
    fn add(&mut self, row: &Row, grid_row: &[usize], progress: &mut Progress) {
        if !grid_row.is_empty() {
            self.grid_rows_run.insert(grid_row.to_vec());
        }
        self.counts.rows += 1;
        *self
            .counts
            .ended_by
            .entry(row.ended_by.as_str().to_owned())
            .or_default() += 1;
        self.task_ids.insert(row.task_id.clone());
        self.situations_run.insert(row.scenario_id.clone());
        if let Some(tool) = row.situation.axes.get("tool") {
            self.tools_run.insert(tool.clone());
        }
        if let Some(passed) = row.passed() {
            self.counts.graded += 1;
            if passed {
                self.counts.passed += 1;
            } else {
                progress.failed += 1;
            }
        }
        if row.ended_by == EndedBy::AgentError {
            progress.errors += 1;
        }
        self.agent_replied |= row.timings.agent_requests > 0 && row.ended_by != EndedBy::AgentError
            || row.messages.len() > 2;
        if let Some(last) = row.messages.last()
            && last.role == sparring_types::Role::Assistant
            && last.tool_calls.is_empty()
            && crate::text::asks_question(last.content_str())
        {
            self.ended_on_question += 1;
            if row.ended_by == EndedBy::UserLeft {
                self.user_left += 1;
            }
        }
        if self.signatures.insert(row.behavior_signature.clone()) {
            self.since_new_signature = 0;
        } else {
            self.since_new_signature += 1;
        }
        progress.done = self.counts.rows;
    }
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
    /// The spec's policy, read once, that `grade` checks rows against.
    policy: crate::policy::Policy,
}

/// Plays every task (seeds first) `repeats` times, up to `budget` rows, and
/// again for each of `runs`, handing each row to `sink` as it finishes.
#[allow(clippy::too_many_lines)]
pub async fn run(
    config: RunConfig,
    sink: &mut dyn RowSink,
    on_progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<RunSummary, RunError> {
    let started = config.clock.millis();
    let options = config.options.clone();
    if let Some(avg) = options.avg_turns {
        sparring_types::check_avg_turns(avg, options.max_turns).map_err(RunError::Options)?;
    }
    let spec = Arc::clone(&config.spec);
    let pinned = config.pinned;
    let (mut tasks, mut planned_run) = if let Some(p) = &pinned {
        let axes = crate::axes::Axes::of(&spec).map_err(crate::plan::PlanError::from)?;
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
        let planned = plan(&spec, &options)?;
        let tasks = planned.tasks.iter().cloned().map(Arc::new).collect();
        (tasks, Some(planned))
    };
    let k = u64::from(options.repeats.max(1));
    let unique_tasks = planned_run.as_ref().map_or(0, |p| {
        p.unique_left as u64 * u64::from(options.phrasings.max(1))
    });
    let planned = (tasks.len() as u64 + unique_tasks) * k;
    let per_run = options.budget.map_or(planned, |b| b.min(planned));
    let mut warnings = Vec::new();
    if pinned.is_none() && spec.seeds.len() as u64 * k > per_run {
        let dropped = spec.seeds.len() as u64 - per_run / k;
        warnings.push(format!(
            "budget {per_run} cannot pay for every seed: {dropped} seed(s) dropped; raise --budget to at least {}",
            spec.seeds.len() as u64 * k
        ));
    }
    if options.reproducible && options.time_budget.is_some() {
        warnings.push(
            "`time_budget` with `reproducible`: where the clock stops the run depends on timing, so the rows before it may differ between runs".to_owned(),
        );
    }
    let run_id = run_id_pinned(&spec, &options, pinned.as_ref());
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
        world: World::with_options(&spec, 0, options.world.clone()),
        spec: Arc::clone(&spec),
        options: options.clone(),
        agent: Arc::clone(&config.agent),
        clock: Arc::clone(&config.clock),
        executor: config.executor.clone(),
        run_id: run_id.clone(),
        agent_name: config.agent.describe(),
        replayed_from: pinned.as_ref().map(|p| p.from_run.clone()),
        person_model,
        policy: crate::policy::Policy::of_spec(&spec).map_err(|e| {
            crate::plan::PlanError::from(crate::axes::AxesError {
                pointer: e.pointer,
                message: e.message,
            })
        })?,
    });
    let runs = options.runs.max(1);
    let resumed: u64 = config.done.values().map(|d| d.len() as u64).sum();
    let mut progress = Progress {
        total: (per_run * u64::from(runs)).saturating_sub(resumed),
        ..Progress::default()
    };
    let mut tally = Tally::default();
    let mut eval_runs = Vec::new();
    let mut stopped_because = String::new();
    let deadline = options.time_budget.map(|s| started + s * 1000.0);
    let mut drawer = planned_run.as_ref().map(|p| Drawer {
        spec: &spec,
        options: &options,
        plan: p,
        drawn: 0,
        next_index: tasks.len(),
        tier_mix: p.tier_mix.clone(),
        keep: (runs > 1).then(Vec::new),
    });
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
            tasks.extend(kept);
            if let Some(d) = drawer.as_mut() {
                d.drawn = d.plan.unique_left;
            }
        }
        let mut queue = Queue::new(tasks.clone(), &options, done);
        let limit = per_run.saturating_sub(resumed_here);
        let before = tally.counts.rows;
        let stop = execute(
            &shared,
            eval_run,
            &mut queue,
            drawer.as_mut(),
            limit,
            deadline,
            &config.cancel,
            sink,
            &mut tally,
            &mut progress,
            on_progress,
            &mut warnings,
        )
        .await?;
        tally.skipped += queue.skipped;
        let stop = stop.unwrap_or(if pinned.is_some() {
            "tasks_done"
        } else {
            "situations_exhausted"
        });
        eval_runs.push(json!({
            "eval_run": eval_run,
            "rows": tally.counts.rows - before + resumed_here,
            "stopped_because": stop,
        }));
        stop.clone_into(&mut stopped_because);
        if matches!(
            stop,
            "interrupted" | "agent_unavailable" | "time_budget" | "saturated"
        ) {
            break;
        }
    }
    let Tally {
        mut counts,
        task_ids,
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
    counts.tasks = task_ids.len() as u64;
    let rows_written = counts.rows;
    let mut coverage = BTreeMap::new();
    let axes = planned_run.as_ref().map_or_else(
        || crate::axes::Axes::of(&spec).map_err(crate::plan::PlanError::from),
        |p| Ok(p.axes.clone()),
    )?;
    let ran: Vec<Vec<usize>> = grid_rows_run.into_iter().collect();
    if let Ok(c) = sparring_grid::coverage(&axes.levels(), &axes.forbidden, &ran) {
        coverage.insert(
            "pairwise".to_owned(),
            json!({"pairs_planned": c.pairs_planned, "pairs_covered": c.pairs_covered, "fraction": c.fraction}),
        );
    }
    if let Some(p) = &planned_run {
        coverage.insert("grid_rows".to_owned(), json!(p.array.rows.len()));
    }
    coverage.insert(
        "policy_rules".to_owned(),
        crate::policy::summary(&axes.rules),
    );
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
    let situations_planned: BTreeSet<&str> = tasks.iter().map(|t| t.scenario_id.as_str()).collect();
    coverage.insert(
        "situations_planned".to_owned(),
        json!(situations_planned.len()),
    );
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
    let mut search = match &planned_run {
        Some(p) => {
            let mut p = p.clone();
            if let Some(d) = &drawer {
                p.tier_mix.clone_from(&d.tier_mix);
            }
            search_record(&p, &options, &spec, per_run)
        }
        None => BTreeMap::new(),
    };
    if let Some(p) = &pinned {
        search.insert(
            "pinned".to_owned(),
            json!({"from_run": p.from_run, "tasks": tasks.len(), "repeats": options.repeats}),
        );
        search.insert("seeds_dropped".to_owned(), json!([]));
    }
    search.insert(
        "ended_on_question".to_owned(),
        json!({
            "share": if rows_written == 0 { 0.0 } else { ended_on_question as f64 / rows_written as f64 },
            "n": rows_written,
            "user_left": user_left,
        }),
    );
    people_record(
        &mut search,
        writer_report.as_ref(),
        config.person.as_deref(),
        person_fallbacks,
        person_errors,
    );
    search.insert("eval_runs".to_owned(), json!(eval_runs));
    search.insert("budget_per_run".to_owned(), json!(options.budget));
    search.insert(
        "repeats".to_owned(),
        json!({"k": options.repeats, "policy": options.repeat_policy, "skipped_unanimous": skipped}),
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
        degraded: {
            let mut degraded = Vec::new();
            if writer_report.as_ref().is_some_and(|r| r.fallbacks > 0) {
                degraded.push("generator_fallback".to_owned());
            }
            if person_fallbacks > 0 {
                degraded.push("person_fallback".to_owned());
            }
            degraded
        },
        coverage,
        search,
        options: Some(options),
        seconds: (config.clock.millis() - started) / 1000.0,
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

/// Runs one eval run's queue. Returns the reason it stopped early, or
/// `None` when every queued rollout ran.
#[allow(clippy::too_many_arguments, clippy::too_many_lines)]
async fn execute(
    shared: &Arc<Shared>,
    eval_run: u32,
    queue: &mut Queue,
    mut drawer: Option<&mut Drawer<'_>>,
    limit: u64,
    deadline: Option<f64>,
    cancel: &Arc<AtomicBool>,
    sink: &mut dyn RowSink,
    tally: &mut Tally,
    progress: &mut Progress,
    on_progress: &mut (dyn FnMut(&Progress) + Send),
    warnings: &mut Vec<String>,
) -> Result<Option<&'static str>, RunError> {
    let options = &shared.options;
    let concurrency = options.concurrency.max(1);
    let mut in_flight: JoinSet<(u64, Done)> = JoinSet::new();
    let mut scheduled = 0u64;
    let mut seq = 0u64;
    let mut stop: Option<&'static str> = None;
    let mut budget_hit = false;
    loop {
        // Fill: up to `concurrency` in flight (a whole batch when
        // reproducible, and only once the last batch is consumed).
        let may_fill = !options.reproducible || in_flight.is_empty();
        while may_fill && stop.is_none() && in_flight.len() < concurrency {
            if cancel.load(Ordering::SeqCst) {
                stop = Some("interrupted");
                break;
            }
            if deadline.is_some_and(|d| shared.clock.millis() >= d) {
                stop = Some("time_budget");
                break;
            }
            // Saturation stops drawing new situations; replays draw none.
            if options.unique_situations
                && eval_run == 0
                && tally.since_new_signature >= defaults::SATURATION_ROWS
            {
                stop = Some("saturated");
                break;
            }
            if scheduled >= limit {
                budget_hit = true;
                break;
            }
            let Some(job) = queue.next() else {
                match drawer.as_deref_mut() {
                    Some(d) if d.left() > 0 => {
                        let more = d.draw(concurrency.max(defaults::UNIQUE_DRAW))?;
                        queue.append(&more);
                        continue;
                    }
                    _ => break,
                }
            };
            scheduled += 1;
            let shared = Arc::clone(shared);
            let n = seq;
            seq += 1;
            in_flight.spawn(async move { (n, play_job(&shared, eval_run, job).await) });
        }
        if in_flight.is_empty() {
            break;
        }
        let mut finished = Vec::new();
        if options.reproducible {
            while let Some(joined) = in_flight.join_next().await {
                if let Ok(done) = joined {
                    finished.push(done);
                }
            }
            // Consumed in submission order, whatever order they finished in.
            finished.sort_by_key(|(n, _)| *n);
        } else if let Some(Ok(done)) = in_flight.join_next().await {
            finished.push(done);
        }
        for (_, done) in finished {
            tally.person_fallbacks += u64::from(done.transcript.person_fallbacks);
            if !done.transcript.person_errors.is_empty() {
                tally.person_errors.insert(
                    (eval_run, done.task.index, done.repeat),
                    done.transcript.person_errors.clone(),
                );
            }
            let row = make_row(&done, shared, eval_run);
            if let Err(message) = sink.write(&row) {
                in_flight.abort_all();
                return Err(RunError::Sink {
                    row: tally.counts.rows,
                    message,
                });
            }
            tally.add(&row, &done.task.grid_row, progress);
            queue.record(&done.task, done.repeat, outcome(&row));
            on_progress(progress);
            if !tally.agent_replied && progress.errors >= DEAD_AGENT_ROWS && stop.is_none() {
                stop = Some("agent_unavailable");
                warnings.push(format!(
                    "stopped after {} rows: the agent failed every request and never replied (last error: {})",
                    tally.counts.rows,
                    row.error.as_deref().unwrap_or("unknown")
                ));
                cancel.store(true, Ordering::SeqCst);
            }
        }
    }
    let more = queue.next().is_some() || drawer.is_some_and(|d| d.left() > 0);
    if stop.is_none() && budget_hit && more {
        stop = Some("budget_spent");
    }
    if stop == Some("interrupted") && !more {
        stop = None;
    }
    Ok(stop)
}

async fn play_job(shared: &Shared, eval_run: u32, job: Job) -> Done {
    let options = &shared.options;
    let rollout_seed = rollout_seed(options.seed, &job.task.task_id, job.repeat);
    // Replays keep the person and the world but not the agent's sampling
    // seeds: a model agent samples afresh in each eval run.
    let prefix = if eval_run == 0 {
        format!("{}-{}-{}", shared.run_id, job.task.index, job.repeat)
    } else {
        format!(
            "{}-{}-{}-{eval_run}",
            shared.run_id, job.task.index, job.repeat
        )
    };
    let mut world = shared
        .world
        .clone()
        .with_seed(job.task.situation.world_seed);
    world.schedule_all(&job.task.situation.faults);
    let transcript = play(
        Setup {
            task: &job.task,
            system_prompt: &shared.spec.system_prompt,
            options,
            rollout_seed,
            rollout_index: job.task.index as u64 * u64::from(options.repeats)
                + u64::from(job.repeat),
            request_prefix: &prefix,
            executor: shared.executor.as_deref(),
            person_model: shared.person_model.as_deref(),
        },
        world,
        Arc::clone(&shared.tools),
        shared.agent.as_ref(),
        shared.clock.as_ref(),
    )
    .await;
    Done {
        task: job.task,
        repeat: job.repeat,
        transcript,
    }
}

/// The seed of a rollout's streams (the person's draws): from the run seed,
/// the task's id and the repeat, so a pinned re-run of the same task at the
/// same seed meets the same person.
pub fn rollout_seed(run_seed: u64, task_id: &str, repeat: u32) -> u64 {
    let digest = sha256_hex(task_id.as_bytes());
    let key = u64::from_str_radix(digest.get(..16).unwrap_or("0"), 16).unwrap_or(0);
    seed::derive_u64(run_seed, "rollout", &[key, u64::from(repeat)])
}

fn make_row(done: &Done, shared: &Shared, eval_run: u32) -> Row {
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
        schema_version: SCHEMA_VERSION,
        row_id,
        task_id,
        scenario_id,
        messages: t.messages.clone(),
        tools: shared.tools.to_vec(),
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
            arm: task.arm.clone(),
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
        timings: t.timings.clone(),
    };
    if options.grade {
        apply_grade(&mut row, run_id, &shared.policy);
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
/// once per run, its `policy_rules` applied), in place. An agent error is a
/// failure of the agent: reward 0 with the error as the reason.
pub fn apply_grade(row: &mut Row, scoring_run_id: &str, policy: &crate::policy::Policy) {
    if row.ended_by == EndedBy::AgentError {
        row.reward = Some(0.0);
        row.reason = Some(format!(
            "agent_error: {}",
            row.error.as_deref().unwrap_or("unknown")
        ));
        row.failure_class = Some("agent_error".to_owned());
        row.conduct_checks = None;
    } else {
        let verdict = grade::conduct_with(&row.messages, &row.tools, policy);
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

/// The model roles' part of the `search` record: who wrote and who played
/// the person, how often the model failed, and its last errors.
fn people_record(
    search: &mut BTreeMap<String, Value>,
    writer: Option<&WriterReport>,
    person: Option<&dyn Agent>,
    person_fallbacks: u64,
    person_errors: BTreeMap<(u32, usize, u32), Vec<String>>,
) {
    let template = sparring_types::defaults::TEMPLATE;
    search.insert(
        "writer".to_owned(),
        writer.map_or_else(
            || json!({"model": template}),
            |r| json!({"model": r.model, "asked": r.asked, "written": r.written, "fallbacks": r.fallbacks}),
        ),
    );
    search.insert(
        "writer_errors".to_owned(),
        json!(writer.map(|r| r.errors.clone()).unwrap_or_default()),
    );
    let mut errors = Vec::new();
    for e in person_errors.into_values().flatten() {
        keep_error(&mut errors, e);
    }
    search.insert(
        "person".to_owned(),
        json!({"model": person.map_or_else(|| template.to_owned(), Agent::describe), "fallbacks": person_fallbacks}),
    );
    search.insert("person_errors".to_owned(), json!(errors));
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
