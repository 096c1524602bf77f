//! [`Simulation`]: a spec, an agent and options in; rows, `run.json` and the
//! run's summary out.
//!
//! It owns the whole workflow `sparring simulate` runs: options layered over
//! the spec's, checked together; the agent, a model writer or person and the
//! caller's world built or started; `resume` and `--tasks` pinning; one
//! limiter shared by every model backend; every warning and degraded flag;
//! the rows streamed to `rows.jsonl` (or kept in memory) and `run.json`
//! written at the end. A library caller gets exactly the CLI's summary.

use crate::backends::{self, Env, ModelSettings};
use crate::error::{Error, ErrorKind, Result};
use crate::log_slot::LogSlot;
use sparring_engine::plan::PlanError;
use sparring_engine::run::{self as engine, Abort, Clock, Pinned, Progress, RunConfig};
use sparring_io::lock::RunLock;
use sparring_io::log::RunLog;
use sparring_io::rows::{RowWriter, count_file, read_rows, repair_torn_line, write_summary};
use sparring_io::spec_file::load_spec;
use sparring_llm::{BackendSpec, Limiter, Sampling};
use sparring_types::values::Repeats;
use sparring_types::{
    Agent, Degraded, Grader, OptionError, OptionsPatch, Row, RowCounter, RowSink, RunSummary,
    SimulateOptions, Spec, ToolExecutor,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Stops a run, which then ends with `stopped_because: interrupted` and
/// its `run.json` as usual. [`Cancel::cancel`]: no new rollout starts and
/// the ones in flight finish and are written (the first Ctrl-C);
/// [`Cancel::abort`]: the ones in flight are dropped, not written (a second
/// Ctrl-C, SIGTERM). Either way a rollout that ends in an error of the
/// agent or its backend after the stop is dropped rather than kept as a
/// failure, and `--resume` runs whatever was dropped. Clones share one
/// flag.
#[derive(Clone, Debug, Default)]
pub struct Cancel {
    stop: Arc<AtomicBool>,
    abort: Arc<Abort>,
}

impl Cancel {
    /// A flag not yet set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the run to stop once the rollouts in flight are in.
    pub fn cancel(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Stops the run now, dropping the rollouts in flight.
    pub fn abort(&self) {
        self.cancel();
        self.abort.abort();
    }

    /// Whether the run was asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Whether the run was told to stop now.
    pub fn is_aborted(&self) -> bool {
        self.abort.is_aborted()
    }
}

/// Where the rows go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// A run directory: `rows.jsonl`, `run.json`, `run.log`.
    Dir(PathBuf),
    /// The directory `sparring simulate` uses when `--out` is not given:
    /// the spec's `options.out`, else `runs/<spec name>`.
    Default,
    /// In memory: the rows come back in [`SimulationResult::rows`]; nothing
    /// is written.
    Memory,
}

enum AgentChoice {
    /// A backend spec or a command line, as `--agent` takes it.
    Spec(String),
    /// An agent of the caller's.
    Given(Arc<dyn Agent>),
}

enum WorldChoice {
    Spec(String),
    Given(Arc<dyn ToolExecutor>),
}

type OnProgress = Box<dyn FnMut(&Progress) + Send>;

/// A simulation to run: build it, then [`Simulation::run`] (async) or
/// [`Simulation::run_blocking`].
///
/// ```no_run
/// use sparring::Simulation;
///
/// let result = Simulation::from_file("examples/support-desk/spec.yaml")?
///     .agent("python3 examples/support-desk/agent.py")
///     .out("runs/demo")
///     .run_blocking()?;
/// for w in &result.summary.warnings {
///     eprintln!("warning: {w}");
/// }
/// # Ok::<(), sparring::Error>(())
/// ```
pub struct Simulation {
    spec: Spec,
    spec_path: Option<PathBuf>,
    options: OptionsPatch,
    agent: Option<AgentChoice>,
    output: Output,
    resume: bool,
    force: bool,
    tasks: Option<PathBuf>,
    execute: Option<WorldChoice>,
    cancel: Cancel,
    on_progress: Option<OnProgress>,
    env: Env,
    grader: Option<Arc<dyn Grader>>,
    log_slot: Option<LogSlot>,
}

impl std::fmt::Debug for Simulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("spec", &self.spec.name)
            .field("output", &self.output)
            .field("resume", &self.resume)
            .finish_non_exhaustive()
    }
}

/// What a finished run gives back.
#[derive(Clone, Debug)]
pub struct SimulationResult {
    /// The summary, as `run.json` holds it: counts, why it stopped,
    /// warnings, degraded flags, coverage, the search record, the options.
    pub summary: RunSummary,
    /// The run directory, unless the rows were kept in memory.
    pub out: Option<PathBuf>,
    /// The rows, when kept in memory ([`Output::Memory`]); empty otherwise
    /// (read `rows.jsonl`).
    pub rows: Vec<Row>,
    /// Rows this call wrote (`summary.counts` describes the whole file,
    /// which with `resume` also holds the earlier attempt's rows).
    pub written: u64,
    /// Rows kept from the earlier attempt (`resume`); 0 otherwise.
    pub kept: u64,
}

impl SimulationResult {
    /// `rows.jsonl` of the run directory.
    pub fn rows_path(&self) -> Option<PathBuf> {
        self.out.as_ref().map(|d| d.join("rows.jsonl"))
    }
}

impl Simulation {
    /// A simulation of `spec`, with the spec's own options and nothing else
    /// set: the agent must still be given ([`Simulation::agent`]) unless the
    /// spec names one in `options.agent`.
    pub fn new(spec: Spec) -> Self {
        Self {
            spec,
            spec_path: None,
            options: OptionsPatch::default(),
            agent: None,
            output: Output::Default,
            resume: false,
            force: false,
            tasks: None,
            execute: None,
            cancel: Cancel::new(),
            on_progress: None,
            env: Env::process(),
            grader: None,
            log_slot: None,
        }
    }

    /// Reads and validates a spec file (YAML, JSON or TOML).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] naming the file and the JSON pointer of what is
    /// wrong; [`ErrorKind::Io`] when it cannot be read.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let spec = load_spec(path)?;
        Ok(Self {
            spec_path: Some(path.to_owned()),
            ..Self::new(spec)
        })
    }

    /// The spec, as read and validated.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The agent as `sparring simulate --agent` takes it: `openai:MODEL[@URL]`,
    /// `anthropic:MODEL`, or a command speaking agent protocol v1
    /// (`command:` prefix optional).
    #[must_use]
    pub fn agent(mut self, backend: impl Into<String>) -> Self {
        self.agent = Some(AgentChoice::Spec(backend.into()));
        self
    }

    /// An agent of the caller's: a closure through
    /// [`sparring_types::agent_fn`], or any [`Agent`].
    #[must_use]
    pub fn agent_impl(mut self, agent: Arc<dyn Agent>) -> Self {
        self.agent = Some(AgentChoice::Given(agent));
        self
    }

    /// Pins situation axes over the spec's own `axes` (the seeds'
    /// `dimensions`): `{"stance": ["hurried"]}` pins that axis and keeps the
    /// others; `forbid` pairs are added.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] naming the axis or value at fault.
    pub fn dimensions(mut self, value: &serde_json::Value) -> Result<Self> {
        self.spec.pin_axes(value).map_err(|e| {
            let at = e.pointer.trim_start_matches("/axes");
            Error::input(format!("dimensions at `{at}`: {}", e.message))
        })?;
        Ok(self)
    }

    /// Options over the spec's `options` (what is set here wins).
    #[must_use]
    pub fn options(mut self, options: OptionsPatch) -> Self {
        self.options = options;
        self
    }

    /// The run directory (`rows.jsonl`, `run.json`, `run.log`).
    #[must_use]
    pub fn out(mut self, dir: impl Into<PathBuf>) -> Self {
        self.output = Output::Dir(dir.into());
        self
    }

    /// Where the rows go.
    #[must_use]
    pub fn output(mut self, output: Output) -> Self {
        self.output = output;
        self
    }

    /// Continues the run in the output directory: its rows are kept (a torn
    /// last line is repaired) and no task runs again beyond its repeats.
    #[must_use]
    pub fn resume(mut self, resume: bool) -> Self {
        self.resume = resume;
        self
    }

    /// Replaces a run already in the output directory. Without it a
    /// directory holding a run (its `run.json`, or rows of one that did not
    /// finish) is refused before anything is written; with it the old
    /// files are replaced only once the new run's agent (and writer,
    /// person, world) started, so a typo in the agent's command still
    /// loses nothing.
    #[must_use]
    pub fn force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }

    /// Re-runs the tasks of a previous run (its directory or rows file) on
    /// their own situations, faults and world seeds.
    #[must_use]
    pub fn tasks(mut self, previous: impl Into<PathBuf>) -> Self {
        self.tasks = Some(previous.into());
        self
    }

    /// The caller's world as `--execute` takes it: a command speaking JSON
    /// lines, or an `http(s)://` URL.
    #[must_use]
    pub fn execute(mut self, world: impl Into<String>) -> Self {
        self.execute = Some(WorldChoice::Spec(world.into()));
        self
    }

    /// A world of the caller's, answering every tool call (faults first).
    #[must_use]
    pub fn executor(mut self, world: Arc<dyn ToolExecutor>) -> Self {
        self.execute = Some(WorldChoice::Given(world));
        self
    }

    /// The flag that stops the run (Ctrl-C in the CLI).
    #[must_use]
    pub fn cancel_with(mut self, cancel: Cancel) -> Self {
        self.cancel = cancel;
        self
    }

    /// Called after every row with the run's progress.
    #[must_use]
    pub fn on_progress(mut self, f: impl FnMut(&Progress) + Send + 'static) -> Self {
        self.on_progress = Some(Box::new(f));
        self
    }

    /// A grader hook whose verdict every row gets as it finishes (after the
    /// conduct checks when `grade` is set); see `docs/grading.md`.
    #[must_use]
    pub fn grader(mut self, grader: Arc<dyn Grader>) -> Self {
        self.grader = Some(grader);
        self
    }

    /// A slot the run fills with its log (`run.log`) once it is open, so
    /// the caller's own agent, grader or world can write lines there.
    #[must_use]
    pub fn log_slot(mut self, slot: LogSlot) -> Self {
        self.log_slot = Some(slot);
        self
    }

    /// Where API keys are looked up ([`Env::process`] by default).
    #[must_use]
    pub fn env(mut self, env: Env) -> Self {
        self.env = env;
        self
    }

    /// Runs it on a runtime of its own.
    ///
    /// # Errors
    ///
    /// As [`Simulation::run`].
    pub fn run_blocking(self) -> Result<SimulationResult> {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                Error::new(
                    ErrorKind::Failed,
                    format!("cannot start the async runtime: {e}"),
                )
            })?
            .block_on(self.run())
    }

    /// Runs it. Inside a tokio runtime with IO and time enabled.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] for bad input, found before anything is written
    /// (options, backends, keys, a command that cannot start, a run to
    /// resume that is another run); [`ErrorKind::Io`] when a file cannot be
    /// written. A rollout that fails is a row, not an error.
    pub async fn run(self) -> Result<SimulationResult> {
        let prepared = self.prepare()?;
        prepared.execute().await
    }

    /// Everything that can fail on bad input, before any file is written
    /// (but for the run directory and its lock).
    fn prepare(self) -> Result<Prepared> {
        let Self {
            spec,
            spec_path,
            options: given,
            agent,
            output,
            resume,
            force,
            tasks,
            execute,
            cancel,
            on_progress,
            env,
            grader,
            log_slot,
        } = self;
        let where_ = spec_path
            .as_ref()
            .map_or_else(|| spec.name.clone(), |p| p.display().to_string());
        // The spec's `axes` are checked against the rules read from its
        // prompt before anything starts.
        // The spec is read here, once: the run takes this reading.
        let reading = Arc::new(
            sparring_reading::SpecReading::of(&spec)
                .map_err(|e| Error::input(format!("`{where_}`: {e}")))?,
        );
        sparring_engine::axes::Axes::check_rules(&spec, &reading)
            .map_err(|e| Error::input(format!("`{where_}`: {e}")))?;
        given.validate().map_err(|(at, m)| {
            Error::input(format!("option `{}`: {m}", at.trim_start_matches('/')))
        })?;
        // Only a seed of the caller's overrides a pinned run's; a spec's
        // `seed` is part of what an A/B edits, not of the tasks.
        let explicit_seed = given.seed;
        let mut patch = given.over(spec.options.clone());
        // The writer and the person are recorded as canonical specs (no
        // credentials); `template` stays as it is.
        let writer_spec = backends::role_spec("writer", patch.writer.as_deref())?;
        let person_spec = backends::role_spec("person", patch.person.as_deref())?;
        patch.writer = writer_spec.as_ref().map(BackendSpec::describe);
        patch.person = person_spec.as_ref().map(BackendSpec::describe);
        patch.check().map_err(|e| {
            let hint = match e {
                OptionError::TopLogprobsWithoutLogprobs => "add --logprobs",
                OptionError::AvgTurns { .. } => {
                    "set --avg-turns from 1 to --max-turns, or raise --max-turns"
                }
                _ => "add --budget N or --situations N",
            };
            Error::input(format!("{e}\nhint: {hint}"))
        })?;
        let explicit_repeats = patch.repeats;
        let pinned = tasks
            .as_deref()
            .map(|prev| pin(prev, &spec, &where_))
            .transpose()?;
        let agent = match agent {
            Some(a) => a,
            None => AgentChoice::Spec(patch.agent.clone().ok_or_else(|| {
                Error::input("no agent: pass --agent CMD or set `options.agent` in the spec\nhint: the example agent runs as --agent \"python3 examples/support-desk/agent.py\"")
            })?),
        };
        let out = match output {
            Output::Dir(d) => Some(d),
            Output::Default => Some(
                patch
                    .out
                    .clone()
                    .map_or_else(|| Path::new("runs").join(slug(&spec.name)), PathBuf::from),
            ),
            Output::Memory => None,
        };
        if resume && out.is_none() {
            return Err(Error::input(
                "resume needs a run directory; rows kept in memory cannot be resumed",
            ));
        }
        if resume && force {
            return Err(Error::input(
                "--resume continues the run in the output directory and --force replaces it; give one of them",
            ));
        }
        let (backend, given_agent) = match agent {
            AgentChoice::Spec(s) => (
                Some(BackendSpec::parse(&s).map_err(|e| Error::input(e.to_string()))?),
                None,
            ),
            AgentChoice::Given(a) => (None, Some(a)),
        };
        let mut warnings = Vec::new();
        let any_model = [backend.as_ref(), writer_spec.as_ref(), person_spec.as_ref()]
            .into_iter()
            .flatten()
            .any(|b| matches!(b, BackendSpec::Model(_)));
        let agent_is_model = matches!(backend, Some(BackendSpec::Model(_)));
        if !agent_is_model {
            let ignored: Vec<&str> = patch
                .model_options_set()
                .into_iter()
                // Transport limits apply to a model writer or person too.
                .filter(|o| !(any_model && matches!(*o, "rpm" | "retries")))
                .collect();
            if !ignored.is_empty() {
                let who = if given_agent.is_some() {
                    "the caller's agent"
                } else {
                    "the command agent"
                };
                warnings.push(format!(
                    "{} only apply to model agents (openai:, anthropic:); {who} ignores them",
                    ignored
                        .iter()
                        .map(|o| format!("`{o}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        let mut options = patch.resolve();
        // A pinned re-run runs at this call's k when given, else the pinned
        // run's (never the mode's), and at the pinned run's seed unless the
        // caller gives one, so the same people meet the same worlds.
        let pinned = pinned.map(|(pinned, k, seed)| {
            options.repeats = explicit_repeats.map_or(k.max(1), Repeats::get);
            if explicit_seed.is_none()
                && let Some(seed) = seed
            {
                options.seed = seed;
            }
            pinned
        });
        let timeout = Duration::from_secs_f64(options.agent_timeout);
        let agent_name = backend.as_ref().map_or_else(
            || {
                given_agent
                    .as_ref()
                    .map_or_else(String::new, |a| a.describe())
            },
            BackendSpec::describe,
        );
        // One backend playing two roles is named, with the option to change.
        let roles = sparring_llm::roles::same_model(
            &[
                ("agent", agent_name),
                ("writer", options.writer.clone()),
                ("person", options.person.clone()),
            ]
            .into_iter()
            .map(|(r, s)| (r.to_owned(), s))
            .collect(),
        );
        warnings.extend(roles.warnings.iter().cloned());
        // Model backends are built (keys found, settings checked) before any
        // file is written, so bad input leaves nothing behind. Every backend
        // of the run shares one limiter.
        let limiter = Limiter::new(options.concurrency, options.rpm);
        let settings = ModelSettings {
            timeout,
            retries: options.retries,
            limiter: &limiter,
            env: &env,
        };
        let agent_sampling = Sampling {
            temperature: options.temperature,
            top_p: options.top_p,
            max_tokens: options.max_tokens,
            logprobs: options.logprobs,
            top_logprobs: options.top_logprobs,
            seed: options.sampling_seed,
        };
        let model = match &backend {
            Some(b) => backends::build_model("agent", b, agent_sampling, &settings)?,
            None => None,
        };
        // The writer and the person sample at the server's defaults.
        let writer_model = match &writer_spec {
            Some(b) => backends::build_model("writer", b, Sampling::default(), &settings)?,
            None => None,
        };
        let person_model = match &person_spec {
            Some(b) => backends::build_model("person", b, Sampling::default(), &settings)?,
            None => None,
        };
        // One process per run directory; then a run already there is
        // never replaced unless asked to.
        let lock = out.as_deref().map(RunLock::acquire).transpose()?;
        if let Some(dir) = &out
            && !resume
            && !force
        {
            refuse_to_replace(dir)?;
        }
        let (done, written_asks) = match (&out, resume) {
            (Some(dir), true) => resume_state(
                &dir.join("rows.jsonl"),
                &engine::run_id_pinned(&spec, &options, pinned.as_ref()),
            )?,
            _ => (BTreeMap::new(), BTreeMap::new()),
        };
        Ok(Prepared {
            spec,
            reading,
            where_,
            options,
            out,
            lock,
            resume,
            pinned,
            done,
            written_asks,
            agent: match (given_agent, backend) {
                (Some(a), _) => Starting::Ready(a),
                (None, Some(spec)) => Starting::Backend(spec, model),
                (None, None) => return Err(Error::input("no agent")),
            },
            writer: writer_spec.map(|s| (s, writer_model)),
            person: person_spec.map(|s| (s, person_model)),
            execute,
            timeout,
            warnings,
            degraded: roles.degraded,
            cancel,
            on_progress,
            grader,
            log_slot,
        })
    }
}

enum Starting {
    Ready(Arc<dyn Agent>),
    Backend(BackendSpec, Option<Arc<dyn Agent>>),
}

/// A simulation whose input is checked: what is left can only fail on IO.
struct Prepared {
    spec: Spec,
    /// The spec's reading, made once for the whole call.
    reading: Arc<sparring_reading::SpecReading>,
    where_: String,
    options: SimulateOptions,
    out: Option<PathBuf>,
    /// Held until the run ends.
    lock: Option<RunLock>,
    resume: bool,
    pinned: Option<Pinned>,
    done: Done,
    written_asks: WrittenAsks,
    agent: Starting,
    writer: Option<(BackendSpec, Option<Arc<dyn Agent>>)>,
    person: Option<(BackendSpec, Option<Arc<dyn Agent>>)>,
    execute: Option<WorldChoice>,
    timeout: Duration,
    warnings: Vec<String>,
    degraded: Vec<Degraded>,
    cancel: Cancel,
    on_progress: Option<OnProgress>,
    grader: Option<Arc<dyn Grader>>,
    log_slot: Option<LogSlot>,
}

struct Wall(Instant);

impl Clock for Wall {
    fn millis(&self) -> f64 {
        self.0.elapsed().as_secs_f64() * 1000.0
    }
}

/// Where the run's rows go while it runs.
enum Sink {
    File(RowWriter),
    Memory(Vec<Row>),
}

impl RowSink for Sink {
    fn write(&mut self, row: &Row) -> std::result::Result<(), sparring_types::SinkError> {
        match self {
            Self::File(w) => RowSink::write(w, row),
            Self::Memory(rows) => RowSink::write(rows, row),
        }
    }
}

impl Prepared {
    /// Starts the backends, runs, and writes the summary.
    async fn execute(self) -> Result<SimulationResult> {
        let Self {
            spec,
            reading,
            where_,
            options,
            out,
            lock,
            resume,
            pinned,
            done,
            written_asks,
            agent,
            writer,
            person,
            execute,
            timeout,
            mut warnings,
            degraded,
            cancel,
            on_progress,
            grader,
            log_slot,
        } = self;
        // A new run logs into `run.log.new` until its agent, writer, person
        // and world have started; only then are the old run's files
        // replaced, so a run that cannot start leaves them as they were.
        let log = match &out {
            Some(dir) => Some(if resume {
                RunLog::append(&dir.join("run.log"))?
            } else {
                RunLog::create(&dir.join(NEW_LOG))?
            }),
            None => None,
        };
        if let (Some(slot), Some(log)) = (&log_slot, &log) {
            slot.fill(log.sink());
        }
        let started = start_all(agent, writer, person, execute, timeout, log.as_ref()).await;
        let (agent, writer_agent, person_agent, executor) = match started {
            Ok(s) => s,
            Err(e) => {
                if let (Some(dir), false) = (&out, resume) {
                    let _ = std::fs::remove_file(dir.join(NEW_LOG));
                }
                return Err(e);
            }
        };
        let rows_path = out.as_ref().map(|d| d.join("rows.jsonl"));
        let mut sink = match (&rows_path, &out) {
            (Some(path), _) if resume => Sink::File(RowWriter::append(path)?),
            (Some(path), Some(dir)) => {
                let replace = |from: &Path, to: &Path| {
                    std::fs::rename(from, to).map_err(|e| {
                        Error::new(
                            ErrorKind::Io,
                            format!(
                                "cannot write `{}`: {}",
                                to.display(),
                                e.to_string().to_lowercase()
                            ),
                        )
                    })
                };
                replace(&dir.join(NEW_LOG), &dir.join("run.log"))?;
                // A replaced run's summary would describe the old rows.
                let old = dir.join("run.json");
                if old.exists() {
                    std::fs::remove_file(&old).map_err(|e| {
                        Error::new(
                            ErrorKind::Io,
                            format!(
                                "cannot remove `{}`: {}",
                                old.display(),
                                e.to_string().to_lowercase()
                            ),
                        )
                    })?;
                }
                Sink::File(RowWriter::create(path)?)
            }
            _ => Sink::Memory(Vec::new()),
        };
        let mut on_progress = on_progress;
        let mut report = |p: &Progress| {
            if let Some(f) = on_progress.as_mut() {
                f(p);
            }
        };
        let kept: u64 = done.values().map(|d| d.len() as u64).sum();
        // Kept to ask, once the run ends, what went wrong that cost no row.
        let players: Vec<Arc<dyn Agent>> =
            [Some(&agent), writer_agent.as_ref(), person_agent.as_ref()]
                .into_iter()
                .flatten()
                .cloned()
                .collect();
        let config = RunConfig {
            spec: Arc::new(spec),
            options,
            agent,
            clock: Arc::new(Wall(Instant::now())),
            cancel: Arc::clone(&cancel.stop),
            abort: Arc::clone(&cancel.abort),
            done,
            executor,
            writer: writer_agent,
            person: person_agent,
            written_asks,
            pinned,
            grader,
            reading: Some(reading),
        };
        let mut summary =
            engine::run(config, &mut sink, &mut report)
                .await
                .map_err(|e| match e {
                    // The spec's axes and seeds admit no grid: the user's input.
                    engine::RunError::Plan(plan @ (PlanError::Grid(_) | PlanError::Axes(_))) => {
                        Error::input(format!("`{where_}`: {plan}"))
                    }
                    other => Error::new(ErrorKind::Failed, other.to_string()),
                })?;
        // The engine counted the rows this call wrote.
        let written = summary.counts.rows;
        summary.warnings.append(&mut warnings);
        summary
            .warnings
            .extend(players.iter().flat_map(|p| p.warnings()));
        for d in degraded {
            summary.degrade(d);
        }
        fallback_warnings(&mut summary);
        let rows = match sink {
            Sink::Memory(rows) => rows,
            Sink::File(_) => Vec::new(),
        };
        // The summary describes the whole rows file, rows of earlier
        // attempts included.
        summary.counts = match (&rows_path, &out) {
            (Some(path), Some(dir)) => {
                let counts = count_file(path)?;
                summary.counts = counts;
                write_summary(dir, &summary)?;
                summary.counts.clone()
            }
            _ => RowCounter::of(&rows),
        };
        drop(lock);
        Ok(SimulationResult {
            summary,
            out,
            rows,
            written,
            kept,
        })
    }
}

/// The log a new run writes until it has started, beside the old run's.
const NEW_LOG: &str = "run.log.new";

/// What a run plays against, started.
type Started = (
    Arc<dyn Agent>,
    Option<Arc<dyn Agent>>,
    Option<Arc<dyn Agent>>,
    Option<Arc<dyn ToolExecutor>>,
);

/// Starts the agent, a model writer and person, and the caller's world.
async fn start_all(
    agent: Starting,
    writer: Option<(BackendSpec, Option<Arc<dyn Agent>>)>,
    person: Option<(BackendSpec, Option<Arc<dyn Agent>>)>,
    execute: Option<WorldChoice>,
    timeout: Duration,
    log: Option<&RunLog>,
) -> Result<Started> {
    let agent = match agent {
        Starting::Ready(a) => a,
        Starting::Backend(spec, model) => {
            backends::start("agent", &spec, model, timeout, log).await?
        }
    };
    let writer = match writer {
        Some((spec, model)) => Some(backends::start("writer", &spec, model, timeout, log).await?),
        None => None,
    };
    let person = match person {
        Some((spec, model)) => Some(backends::start("person", &spec, model, timeout, log).await?),
        None => None,
    };
    let executor = match execute {
        None => None,
        Some(WorldChoice::Given(w)) => Some(w),
        Some(WorldChoice::Spec(s)) => Some(backends::start_world(&s, timeout, log).await?),
    };
    Ok((agent, writer, person, executor))
}

/// Refuses to replace the run in `dir`: a finished one (its `run.json`),
/// or the rows of one that did not finish.
fn refuse_to_replace(dir: &Path) -> Result<()> {
    let summary = dir.join("run.json");
    if let Ok(text) = std::fs::read_to_string(&summary) {
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let rows = v
            .pointer("/counts/rows")
            .and_then(serde_json::Value::as_u64)
            .map_or_else(String::new, |n| format!("{n} rows, "));
        let run = v
            .get("run_id")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("of unknown id");
        return Err(Error::input(format!(
            "`{}` holds a finished run ({rows}run `{run}`); nothing was changed\nhint: pass --force to replace it, --resume to continue it, or choose another --out",
            dir.display()
        )));
    }
    let rows = dir.join("rows.jsonl");
    if std::fs::metadata(&rows).is_ok_and(|m| m.len() > 0) {
        return Err(Error::input(format!(
            "`{}` holds the rows of a run that did not finish (no run.json); nothing was changed\nhint: pass --resume to finish it, --force to replace it, or choose another --out",
            dir.display()
        )));
    }
    Ok(())
}

/// Warnings for a model writer or person that fell back to the templates.
fn fallback_warnings(summary: &mut RunSummary) {
    let search = &summary.search;
    let mut more = Vec::new();
    if summary.degraded.contains(&Degraded::GeneratorFallback) {
        more.push(format!(
            "the model writer failed on {} situation(s), which kept the template writer's asks; `search.writer_errors` in run.json says why",
            search.writer.fallbacks.unwrap_or_default()
        ));
    }
    if summary.degraded.contains(&Degraded::PersonFallback) {
        more.push(format!(
            "the model person failed on {} turn(s), which the template person answered; `search.person_errors` in run.json says why",
            search.person.fallbacks
        ));
    }
    summary.warnings.extend(more);
}

/// Scenario id → asks a model writer wrote for it.
type WrittenAsks = BTreeMap<String, Vec<String>>;

/// Rows already written: per `(eval_run, task_id)` the outcome of each.
type Done = BTreeMap<(u32, String), Vec<String>>;

/// Repairs a torn last line of an interrupted run's rows and counts the rows
/// each task already has. The rows must come from the same run (spec, seed
/// and options), or resuming would mix two runs in one file. Also returns
/// the asks a model writer wrote, per scenario, so they are kept.
fn resume_state(rows_path: &Path, run_id: &str) -> Result<(Done, WrittenAsks)> {
    if !rows_path.exists() {
        return Err(Error::input(format!(
            "nothing to resume: `{}` does not exist\nhint: run without --resume to start the run",
            rows_path.display()
        )));
    }
    if repair_torn_line(rows_path)? {
        eprintln!(
            "repaired `{}`: dropped an incomplete last line",
            rows_path.display()
        );
    }
    let mut written: WrittenAsks = BTreeMap::new();
    let mut done: Done = BTreeMap::new();
    if std::fs::metadata(rows_path).map_or(0, |m| m.len()) == 0 {
        return Ok((done, written));
    }
    for row in read_rows(rows_path)? {
        if row.lineage.run_id != run_id {
            return Err(Error::input(format!(
                "`{}` holds rows of run `{}`, but this spec and these options make run `{run_id}`; resume with the same spec and options, or choose another --out",
                rows_path.display(),
                row.lineage.run_id
            )));
        }
        if row.writer_model != sparring_types::defaults::TEMPLATE
            && let Some(ask) = row.messages.get(1)
        {
            let asks = written.entry(row.scenario_id.clone()).or_default();
            if !asks.iter().any(|a| a == ask.content_str()) {
                asks.push(ask.content_str().to_owned());
            }
        }
        let outcome = engine::outcome(&row);
        done.entry((row.lineage.eval_run, row.task_id))
            .or_default()
            .push(outcome);
    }
    Ok((done, written))
}

/// A previous run's tasks, from its directory or rows file: the pin, the
/// pinned k (the previous run's resolved `repeats` when its `run.json` says,
/// else the most rollouts any task had) and the run's seed when its
/// `run.json` says. Tasks of another spec (its `run.json` names another
/// spec, or its rows carry other tools) are refused: they would run with
/// tools this spec does not have.
fn pin(prev: &Path, spec: &Spec, where_: &str) -> Result<(Pinned, u32, Option<u64>)> {
    let (rows_path, summary_path) = if prev.is_dir() {
        (prev.join("rows.jsonl"), prev.join("run.json"))
    } else {
        (
            prev.to_path_buf(),
            prev.parent().unwrap_or(Path::new(".")).join("run.json"),
        )
    };
    if !rows_path.exists() {
        return Err(Error::input(format!(
            "--tasks `{}`: no rows there (expected a run directory with rows.jsonl, or a rows file)",
            prev.display()
        )));
    }
    let rows = read_rows(&rows_path)?;
    let Some((pinned, k)) = Pinned::from_rows(&rows) else {
        return Err(Error::input(format!(
            "--tasks `{}`: the rows file is empty; there are no tasks to re-run",
            rows_path.display()
        )));
    };
    // The previous run's summary, when it is the summary of these rows.
    let summary = std::fs::read_to_string(&summary_path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .filter(|v| {
            v.get("run_id").and_then(serde_json::Value::as_str) == Some(pinned.from_run.as_str())
        });
    let field = |pointer: &str| summary.as_ref().and_then(|v| v.pointer(pointer));
    let their_spec = field("/spec").and_then(serde_json::Value::as_str);
    if let Some(name) = their_spec
        && name != spec.name
    {
        return Err(Error::input(format!(
            "--tasks `{}`: its tasks come from spec `{name}`, but this run's spec is `{}` (`{where_}`); a pinned re-run replays tasks under the spec that made them\nhint: pin a run of `{}`, or run without --tasks",
            prev.display(),
            spec.name,
            spec.name
        )));
    }
    let theirs: std::collections::BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| r.tools.iter())
        .filter_map(|t| {
            t.pointer("/function/name")
                .and_then(serde_json::Value::as_str)
        })
        .collect();
    let ours: std::collections::BTreeSet<&str> =
        spec.tools.iter().map(|t| t.name.as_str()).collect();
    if !theirs.is_empty() && theirs != ours {
        let names = |set: std::collections::BTreeSet<&&str>| {
            set.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let extra = names(theirs.difference(&ours).collect());
        let missing = names(ours.difference(&theirs).collect());
        let mut differ = Vec::new();
        if !extra.is_empty() {
            differ.push(format!(
                "its rows have tools spec `{}` lacks: {extra}",
                spec.name
            ));
        }
        if !missing.is_empty() {
            differ.push(format!(
                "spec `{}` has tools its rows lack: {missing}",
                spec.name
            ));
        }
        return Err(Error::input(format!(
            "--tasks `{}`: its tasks were made with other tools than spec `{}` (`{where_}`) has: {}; a pinned re-run replays tasks under the spec that made them\nhint: pin a run of `{}`, or run without --tasks",
            prev.display(),
            spec.name,
            differ.join("; "),
            spec.name
        )));
    }
    let seed = field("/options/seed").and_then(serde_json::Value::as_u64);
    let k = field("/options/repeats")
        .and_then(serde_json::Value::as_u64)
        .and_then(|r| u32::try_from(r).ok())
        .filter(|r| *r > 0)
        .unwrap_or(k);
    Ok((pinned, k, seed))
}

/// A directory-safe version of a name.
fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() { "run".to_owned() } else { s }
}
