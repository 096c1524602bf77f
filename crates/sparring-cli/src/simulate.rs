//! `sparring simulate`.

use crate::UsageError;
use anyhow::{Context as _, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sparring_engine::plan::PlanError;
use sparring_engine::run::{self as engine, Clock, Pinned, Progress, RowSink, RunConfig};
use sparring_io::command_agent::CommandAgent;
use sparring_io::command_world::CommandWorld;
use sparring_io::http_world::HttpWorld;
use sparring_io::log::RunLog;
use sparring_io::rows::{RowWriter, count_file, read_rows, repair_torn_line, write_summary};
use sparring_io::score::input::read_score_rows;
use sparring_io::score::report::{ReportOptions, render, report};
use sparring_io::spec_file::load_spec;
use sparring_llm::{BackendOptions, BackendSpec, Limiter, RetryPolicy, Sampling, model_agent};
use sparring_types::{
    Agent, MODES, OptionsPatch, REPEAT_POLICIES, Row, ToolExecutor, check_choice,
    check_temperature, check_top_logprobs, check_top_p,
};
use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec: YAML, JSON or TOML
    spec: PathBuf,
    /// The agent: `openai:MODEL[@URL]`, `anthropic:MODEL`, or a command speaking agent
    /// protocol v1 (`command:` prefix optional); `#key=VAR` names the key's variable
    #[arg(long)]
    agent: Option<String>,
    /// Directory for rows.jsonl, run.json and run.log [default: runs/<spec name>]
    #[arg(long)]
    out: Option<PathBuf>,
    /// Rows to produce at most [default: every situation, `repeats` times]
    #[arg(long)]
    budget: Option<u64>,
    /// Run seed [default: 0]
    #[arg(long)]
    seed: Option<u64>,
    /// Rollouts in flight at once [default: 32]
    #[arg(long)]
    concurrency: Option<usize>,
    /// Agent replies to the person before a conversation is cut off [default: 10]
    #[arg(long)]
    max_turns: Option<u32>,
    /// Mean turn cap, from 1 to --max-turns: each rollout draws its own cap, 1 +
    /// Binomial(max_turns - 1, p), averaging this; rows record it as `turn_cap`
    /// [default: every cap is --max-turns]
    #[arg(long)]
    avg_turns: Option<f64>,
    /// Agent requests within one turn before it is cut off [default: 8]
    #[arg(long)]
    max_tool_steps: Option<u32>,
    /// Seconds the agent may take per request (per HTTP attempt for models) [default: 60]
    #[arg(long)]
    agent_timeout: Option<f64>,
    /// Wordings written per situation (n) [default: 1]
    #[arg(long, visible_alias = "n")]
    phrasings: Option<u32>,
    /// Share of situations from the hard tiers: ambiguous, boundary, adversarial [default: 0.4]
    #[arg(long)]
    hard_share: Option<f64>,
    /// Effort of the covering-array optimiser, a multiple of its default [default: 1]
    #[arg(long)]
    grid_effort: Option<f64>,
    /// Model agents: sampling temperature, 0 to 2 [default: the server's]
    #[arg(long)]
    temperature: Option<f64>,
    /// Model agents: nucleus sampling mass, above 0 and at most 1 [default: the server's]
    #[arg(long)]
    top_p: Option<f64>,
    /// Model agents: most tokens per reply [default: the server's; 1024 for anthropic:]
    #[arg(long)]
    max_tokens: Option<u32>,
    /// Model agents: record per-token log-probabilities on every agent turn
    #[arg(long)]
    logprobs: bool,
    /// Model agents: alternatives per token with --logprobs, 0 to 20
    #[arg(long)]
    top_logprobs: Option<u32>,
    /// Model agents: requests started per minute at most [default: no limit]
    #[arg(long)]
    rpm: Option<u32>,
    /// Model agents: retries of a failed request (429, 5xx, timeouts) [default: 5]
    #[arg(long)]
    retries: Option<u32>,
    /// Who writes the asks: `template` (offline), or a backend spec
    /// (`openai:MODEL[@URL]`, `anthropic:MODEL`, `command:CMD`) [default: template]
    #[arg(long)]
    writer: Option<String>,
    /// Who plays the person: `template` (offline), or a backend spec [default: template]
    #[arg(long, visible_alias = "user-model")]
    person: Option<String>,
    /// Rollouts per ask (k) [default: 1; the mode's]
    #[arg(long, visible_alias = "rollouts-per-request")]
    repeats: Option<u32>,
    /// A preset of counts: eval (k=1), rl (k=8, successive), sft (n=3, k=2); explicit options win
    #[arg(long)]
    mode: Option<String>,
    /// fixed (every ask gets all k) or successive (stop repeating an ask once its first
    /// rollouts agree) [default: fixed; the mode's]
    #[arg(long)]
    repeat_policy: Option<String>,
    /// Distinct situations (N) at most; the run stops when each has all its rollouts
    #[arg(long)]
    situations: Option<u64>,
    /// Keep drawing new situations (fresh worlds) past the covering array; needs
    /// --budget or --situations
    #[arg(long, visible_alias = "unique")]
    unique_situations: bool,
    /// Seconds the run may take; no rollout starts after it (in-flight ones finish)
    #[arg(long)]
    time_budget: Option<f64>,
    /// Results independent of completion order at any concurrency: rollouts go in
    /// batches, each finished before the next is chosen
    #[arg(long)]
    reproducible: bool,
    /// Re-run the tasks of a previous run (its directory or rows file) on their own
    /// situations, faults and world seeds; nothing new is generated
    #[arg(long, value_name = "PREV")]
    tasks: Option<PathBuf>,
    /// Run the task set this many times (replays, `lineage.eval_run` 0..R-1);
    /// --budget is per run [default: 1]
    #[arg(long)]
    runs: Option<u32>,
    /// How long the person keeps answering: normal, short or endless [default: normal]
    #[arg(long)]
    patience: Option<String>,
    /// Grade each row with the conduct checks
    #[arg(long)]
    grade: bool,
    /// Answer tool calls with your own world: a command speaking JSON lines, or
    /// an http(s):// URL taking one POST per call (docs/world.md); faults still
    /// come from the sandbox first
    #[arg(long)]
    execute: Option<String>,
    /// Continue the run in --out after a crash or Ctrl-C: its rows are kept (a
    /// torn last line is repaired) and no task runs again beyond its repeats
    #[arg(long)]
    resume: bool,
    /// No progress bar and no summary line
    #[arg(long, short)]
    quiet: bool,
}

struct Wall(Instant);

impl Clock for Wall {
    fn millis(&self) -> f64 {
        self.0.elapsed().as_secs_f64() * 1000.0
    }
}

struct Sink(RowWriter);

impl RowSink for Sink {
    fn write(&mut self, row: &Row) -> Result<(), String> {
        self.0.write(row).map_err(|e| e.to_string())
    }
}

fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let spec = load_spec(&args.spec)?;
    // The spec's `axes` are checked against the rules read from its prompt
    // before anything starts.
    sparring_engine::axes::Axes::of(&spec)
        .map_err(|e| usage(format!("`{}`: {e}", args.spec.display())))?;
    let cli = OptionsPatch {
        agent: args.agent.clone(),
        out: args.out.as_ref().map(|p| p.display().to_string()),
        budget: args.budget,
        seed: args.seed,
        concurrency: args.concurrency,
        max_turns: args.max_turns,
        avg_turns: args.avg_turns,
        repeats: args.repeats,
        grade: args.grade.then_some(true),
        patience: args.patience.clone(),
        max_tool_steps: args.max_tool_steps,
        agent_timeout: args.agent_timeout,
        phrasings: args.phrasings,
        hard_share: args.hard_share,
        grid_effort: args.grid_effort,
        world: None,
        temperature: args.temperature,
        top_p: args.top_p,
        max_tokens: args.max_tokens,
        logprobs: args.logprobs.then_some(true),
        top_logprobs: args.top_logprobs,
        rpm: args.rpm,
        retries: args.retries,
        writer: args.writer.clone(),
        person: args.person.clone(),
        mode: args.mode.clone(),
        repeat_policy: args.repeat_policy.clone(),
        situations: args.situations,
        unique_situations: args.unique_situations.then_some(true),
        time_budget: args.time_budget,
        reproducible: args.reproducible.then_some(true),
        runs: args.runs,
    };
    for (flag, what, value, choices) in [
        (
            "--patience",
            "patience",
            &cli.patience,
            &["normal", "short", "endless"][..],
        ),
        ("--mode", "mode", &cli.mode, MODES),
        (
            "--repeat-policy",
            "repeat policy",
            &cli.repeat_policy,
            REPEAT_POLICIES,
        ),
    ] {
        if let Some(v) = value {
            check_choice(what, v, choices).map_err(|m| usage(format!("{flag}: {m}")))?;
        }
    }
    if cli.time_budget.is_some_and(|t| t.is_nan() || t <= 0.0) {
        return Err(usage(
            "--time-budget must be a number of seconds greater than 0",
        ));
    }
    for (name, zero) in [
        ("--budget", cli.budget == Some(0)),
        ("--concurrency", cli.concurrency == Some(0)),
        ("--max-turns", cli.max_turns == Some(0)),
        ("--repeats", cli.repeats == Some(0)),
        ("--max-tool-steps", cli.max_tool_steps == Some(0)),
        ("--max-tokens", cli.max_tokens == Some(0)),
        ("--rpm", cli.rpm == Some(0)),
        ("--situations", cli.situations == Some(0)),
        ("--runs", cli.runs == Some(0)),
    ] {
        if zero {
            return Err(usage(format!("{name} must be at least 1")));
        }
    }
    if cli.hard_share.is_some_and(|s| !(0.0..=1.0).contains(&s)) {
        return Err(usage("--hard-share must be a number from 0 to 1"));
    }
    if cli
        .grid_effort
        .is_some_and(|e| !(0.0..=1000.0).contains(&e))
    {
        return Err(usage("--grid-effort must be a number from 0 to 1000"));
    }
    if cli.phrasings == Some(0) {
        return Err(usage("--phrasings must be at least 1"));
    }
    if cli.agent_timeout.is_some_and(|t| t.is_nan() || t <= 0.0) {
        return Err(usage(
            "--agent-timeout must be a number of seconds greater than 0",
        ));
    }
    for (name, value, check) in [
        (
            "--temperature",
            cli.temperature,
            check_temperature as fn(f64) -> Result<(), String>,
        ),
        ("--top-p", cli.top_p, check_top_p),
    ] {
        if let Some(v) = value {
            check(v).map_err(|m| usage(format!("{name} {v}: {m}")))?;
        }
    }
    if let Some(k) = cli.top_logprobs {
        check_top_logprobs(k).map_err(|m| usage(format!("--top-logprobs {k}: {m}")))?;
    }
    let mut patch = cli.over(spec.options.clone());
    // The writer and the person are recorded as canonical specs (no
    // credentials); `template` stays as it is.
    let writer_spec = role_spec("writer", patch.writer.as_deref())?;
    let person_spec = role_spec("person", patch.person.as_deref())?;
    patch.writer = writer_spec.as_ref().map(BackendSpec::describe);
    patch.person = person_spec.as_ref().map(BackendSpec::describe);
    patch.check().map_err(|m| {
        let hint = if m.contains("logprobs") {
            "add --logprobs"
        } else if m.contains("avg_turns") {
            "set --avg-turns from 1 to --max-turns, or raise --max-turns"
        } else {
            "add --budget N or --situations N"
        };
        usage(format!("{m}\nhint: {hint}"))
    })?;
    let pinned = match &args.tasks {
        Some(prev) => Some(pin(prev)?),
        None => None,
    };
    let agent_command = patch.agent.clone().ok_or_else(|| {
        usage("no agent: pass --agent CMD or set `options.agent` in the spec\nhint: the example agent runs as --agent \"python3 examples/support-desk/agent.py\"")
    })?;
    let out: PathBuf = patch
        .out
        .clone()
        .map_or_else(|| Path::new("runs").join(slug(&spec.name)), PathBuf::from);
    let backend = BackendSpec::parse(&agent_command).map_err(|e| usage(e.to_string()))?;
    let mut warnings = Vec::new();
    let any_model = [Some(&backend), writer_spec.as_ref(), person_spec.as_ref()]
        .into_iter()
        .flatten()
        .any(|b| matches!(b, BackendSpec::Model(_)));
    if let BackendSpec::Command(_) = &backend {
        let ignored: Vec<&str> = patch
            .model_options_set()
            .into_iter()
            // Transport limits apply to a model writer or person too.
            .filter(|o| !(any_model && matches!(*o, "rpm" | "retries")))
            .collect();
        if !ignored.is_empty() {
            warnings.push(format!(
                "{} only apply to model agents (openai:, anthropic:); the command agent ignores them",
                ignored
                    .iter()
                    .map(|o| format!("`{o}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    let explicit_repeats = patch.repeats;
    // Only a seed on the command line overrides the pinned run's; a spec's
    // `seed` is part of what an A/B edits, not of the tasks.
    let explicit_seed = args.seed;
    let mut options = patch.resolve();
    // A pinned re-run runs at this call's k when given, else the pinned
    // run's (never the mode's), and at the pinned run's seed unless one is
    // given on the command line, so the same people meet the same worlds.
    let pinned = pinned.map(|(pinned, k, seed)| {
        options.repeats = explicit_repeats.unwrap_or(k.max(1));
        if explicit_seed.is_none()
            && let Some(seed) = seed
        {
            options.seed = seed;
        }
        pinned
    });
    let timeout = Duration::from_secs_f64(options.agent_timeout);
    // One backend playing two roles is named, with the option to change.
    let roles = sparring_llm::roles::same_model(
        &[
            ("agent", backend.describe()),
            ("writer", options.writer.clone()),
            ("person", options.person.clone()),
        ]
        .into_iter()
        .map(|(r, s)| (r.to_owned(), s))
        .collect(),
    );
    warnings.extend(roles.warnings.iter().cloned());
    // Model backends are built (keys found, settings checked) before any
    // file is written, so bad input leaves nothing behind. Every backend of
    // the run shares one limiter.
    let limiter = Limiter::new(options.concurrency, options.rpm);
    let agent_sampling = Sampling {
        temperature: options.temperature,
        top_p: options.top_p,
        max_tokens: options.max_tokens,
        logprobs: options.logprobs,
        top_logprobs: options.top_logprobs,
    };
    let model = build_model(
        "agent",
        &backend,
        agent_sampling,
        timeout,
        options.retries,
        &limiter,
    )?;
    // The writer and the person sample at the server's defaults.
    let writer_model = match &writer_spec {
        Some(b) => build_model(
            "writer",
            b,
            Sampling::default(),
            timeout,
            options.retries,
            &limiter,
        )?,
        None => None,
    };
    let person_model = match &person_spec {
        Some(b) => build_model(
            "person",
            b,
            Sampling::default(),
            timeout,
            options.retries,
            &limiter,
        )?,
        None => None,
    };
    let rows_path = out.join("rows.jsonl");
    let (done, written_asks) = if args.resume {
        resume_state(
            &rows_path,
            &engine::run_id_pinned(&spec, &options, pinned.as_ref()),
        )?
    } else {
        (BTreeMap::new(), BTreeMap::new())
    };
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create `{}`", out.display()))?;
    let log = if args.resume {
        RunLog::append(&out.join("run.log"))?
    } else {
        RunLog::create(&out.join("run.log"))?
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let quiet = args.quiet;
    runtime.block_on(async move {
        let agent: Arc<dyn Agent> = match (backend, model) {
            (_, Some(agent)) => {
                log.line(&format!("agent: {}", agent.describe()));
                agent
            }
            (BackendSpec::Command(command), None) => {
                Arc::new(CommandAgent::start(&command, timeout, Some(log.clone())).await?)
            }
            (BackendSpec::Model(_), None) => {
                return Err(usage("the model backend could not be resolved"));
            }
        };
        let writer_agent = role_agent("writer", writer_spec, writer_model, timeout, &log).await?;
        let person = role_agent("person", person_spec, person_model, timeout, &log).await?;
        let executor: Option<Arc<dyn ToolExecutor>> = match &args.execute {
            None => None,
            Some(url) if url.starts_with("http://") || url.starts_with("https://") => Some(
                Arc::new(HttpWorld::start(url, timeout, Some(log.clone())).await?),
            ),
            Some(command) => Some(Arc::new(
                CommandWorld::start(
                    command.strip_prefix("command:").unwrap_or(command),
                    timeout,
                    Some(log.clone()),
                )
                .await?,
            )),
        };
        let writer = if args.resume {
            RowWriter::append(&rows_path)?
        } else {
            RowWriter::create(&rows_path)?
        };
        let mut sink = Sink(writer);
        let cancel = Arc::new(AtomicBool::new(false));
        {
            let cancel = Arc::clone(&cancel);
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    eprintln!(
                        "\ninterrupted: finishing the rollouts in flight (Ctrl-C again to abort)"
                    );
                    cancel.store(true, Ordering::SeqCst);
                    if tokio::signal::ctrl_c().await.is_ok() {
                        std::process::exit(130);
                    }
                }
            });
        }
        let bar = progress_bar(quiet);
        let plain = !quiet && bar.is_hidden() && std::env::var_os("NO_PROGRESS").is_none();
        let begun = Instant::now();
        let mut lines = PlainProgress::new(sparring_types::defaults::PROGRESS_LINE_SECS);
        let mut on_progress = |p: &Progress| {
            bar.set_length(p.total);
            bar.set_position(p.done);
            bar.set_message(format!("{} failed, {} agent errors", p.failed, p.errors));
            let secs = begun.elapsed().as_secs_f64();
            if plain && lines.due(secs) {
                eprintln!("{}", progress_line(p, secs));
            }
        };
        let config = RunConfig {
            spec: Arc::new(spec),
            options,
            agent,
            clock: Arc::new(Wall(Instant::now())),
            cancel,
            done,
            executor,
            writer: writer_agent,
            person,
            written_asks,
            pinned,
        };
        let mut summary = engine::run(config, &mut sink, &mut on_progress)
            .await
            .map_err(|e| match e {
                // The spec's axes and seeds admit no grid: the user's input.
                engine::RunError::Plan(
                    plan @ (PlanError::Grid(_) | PlanError::Axes(_)),
                ) => usage(format!("`{}`: {plan}", args.spec.display())),
                other => other.into(),
            })?;
        summary.warnings.extend(warnings);
        for d in roles.degraded {
            if !summary.degraded.contains(&d) {
                summary.degraded.push(d);
            }
        }
        let search = &summary.search;
        if summary.degraded.iter().any(|d| d == "generator_fallback") {
            let n = search.get("writer").and_then(|w| w.get("fallbacks")).cloned();
            summary.warnings.push(format!(
                "the model writer failed on {} situation(s), which kept the template writer's asks; `search.writer_errors` in run.json says why",
                n.unwrap_or_default()
            ));
        }
        if summary.degraded.iter().any(|d| d == "person_fallback") {
            let n = search.get("person").and_then(|w| w.get("fallbacks")).cloned();
            summary.warnings.push(format!(
                "the model person failed on {} turn(s), which the template person answered; `search.person_errors` in run.json says why",
                n.unwrap_or_default()
            ));
        }
        bar.finish_and_clear();
        // The summary describes the whole rows file, rows of earlier attempts
        // included.
        summary.counts = count_file(&rows_path)?;
        write_summary(&out, &summary)?;
        let rows = read_score_rows(&rows_path)?;
        if !quiet {
            let c = &summary.counts;
            let graded = if c.graded > 0 {
                format!(", {} of {} graded rows passed", c.passed, c.graded)
            } else {
                String::new()
            };
            eprintln!(
                "simulated {} rows over {} tasks in {:.1} s{graded}; stopped because {} -> {}",
                c.rows,
                c.tasks,
                summary.seconds,
                summary.stopped_because,
                out.display()
            );
            for w in &summary.warnings {
                eprintln!("warning: {w}");
            }
        }
        print!("{}", render(&report(&rows, &ReportOptions::default())?));
        Ok(if summary.stopped_because == "agent_unavailable" {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    })
}

/// Parses the `writer` or `person` option: `None` for the templates.
pub(crate) fn role_spec(option: &str, value: Option<&str>) -> Result<Option<BackendSpec>> {
    match value.map(str::trim) {
        None => Ok(None),
        Some(v) if v == sparring_types::defaults::TEMPLATE => Ok(None),
        Some(v) => BackendSpec::parse(v).map(Some).map_err(|e| {
            usage(format!(
                "`{option}`: {e}\nhint: `template` is the offline {option}"
            ))
        }),
    }
}

/// The model agent for a backend spec that names a model; `None` for a
/// command (started later, inside the runtime).
pub(crate) fn build_model(
    role: &str,
    backend: &BackendSpec,
    sampling: Sampling,
    timeout: Duration,
    retries: u32,
    limiter: &Limiter,
) -> Result<Option<Arc<dyn Agent>>> {
    let BackendSpec::Model(endpoint) = backend else {
        return Ok(None);
    };
    let resolved = endpoint
        .resolve(&|name| std::env::var(name).ok())
        .map_err(|e| usage(format!("`{role}`: {e}")))?;
    let options = BackendOptions {
        sampling,
        timeout,
        retry: RetryPolicy::with_retries(retries),
        limiter: limiter.clone(),
    };
    Ok(Some(
        model_agent(resolved, options).map_err(|e| usage(format!("`{role}`: {e}")))?,
    ))
}

/// The writer or person backend: the model built before, or the command
/// started now.
async fn role_agent(
    role: &'static str,
    spec: Option<BackendSpec>,
    model: Option<Arc<dyn Agent>>,
    timeout: Duration,
    log: &RunLog,
) -> Result<Option<Arc<dyn Agent>>> {
    Ok(match (spec, model) {
        (None, _) => None,
        (Some(_), Some(model)) => {
            log.line(&format!("model role: {}", model.describe()));
            Some(model)
        }
        (Some(BackendSpec::Command(command)), None) => Some(Arc::new(
            CommandAgent::start_as(role, &command, timeout, Some(log.clone())).await?,
        )),
        (Some(BackendSpec::Model(e)), None) => {
            return Err(usage(format!(
                "the model backend `{}` could not be built",
                e.describe()
            )));
        }
    })
}

/// Repairs a torn last line of an interrupted run's rows and counts the rows
/// each task already has. The rows must come from the same run (spec, seed
/// and options), or resuming would mix two runs in one file. Also returns
/// the asks a model writer wrote, per scenario, so they are kept.
fn resume_state(rows_path: &Path, run_id: &str) -> Result<(Done, WrittenAsks)> {
    if !rows_path.exists() {
        return Err(usage(format!(
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
            return Err(usage(format!(
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

/// Scenario id → asks a model writer wrote for it.
type WrittenAsks = BTreeMap<String, Vec<String>>;

/// Rows already written: per `(eval_run, task_id)` the outcome of each.
type Done = BTreeMap<(u32, String), Vec<String>>;
/// A previous run's tasks, from its directory or rows file: the pin, the
/// most rollouts any task had (the pinned k) and the run's seed when its
/// `run.json` says.
fn pin(prev: &Path) -> Result<(Pinned, u32, Option<u64>)> {
    let (rows_path, summary_path) = if prev.is_dir() {
        (prev.join("rows.jsonl"), prev.join("run.json"))
    } else {
        (
            prev.to_path_buf(),
            prev.parent().unwrap_or(Path::new(".")).join("run.json"),
        )
    };
    if !rows_path.exists() {
        return Err(usage(format!(
            "--tasks `{}`: no rows there (expected a run directory with rows.jsonl, or a rows file)",
            prev.display()
        )));
    }
    let rows = read_rows(&rows_path)?;
    let Some((pinned, k)) = Pinned::from_rows(&rows) else {
        return Err(usage(format!(
            "--tasks `{}`: the rows file is empty; there are no tasks to re-run",
            rows_path.display()
        )));
    };
    let seed = std::fs::read_to_string(&summary_path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| {
            (v.get("run_id").and_then(serde_json::Value::as_str) == Some(pinned.from_run.as_str()))
                .then(|| {
                    v.pointer("/options/seed")
                        .and_then(serde_json::Value::as_u64)
                })
                .flatten()
        });
    Ok((pinned, k, seed))
}

/// When to print a plain progress line: at most one per `every` seconds,
/// the first after `every` seconds (a short run prints none).
struct PlainProgress {
    every: f64,
    last: f64,
}

impl PlainProgress {
    fn new(every: f64) -> Self {
        Self { every, last: 0.0 }
    }

    /// Whether a line is due `secs` seconds into the run; if so, the next
    /// one is due `every` seconds later.
    fn due(&mut self, secs: f64) -> bool {
        if secs - self.last >= self.every {
            self.last = secs;
            true
        } else {
            false
        }
    }
}

/// One plain progress line, for when stderr is not a terminal.
fn progress_line(p: &Progress, secs: f64) -> String {
    let rate = if secs > 0.0 {
        p.done as f64 / secs
    } else {
        0.0
    };
    let eta = if rate > 0.0 && p.total > p.done {
        format!("{:.0} s", (p.total - p.done) as f64 / rate)
    } else {
        "-".to_owned()
    };
    format!(
        "progress: {}/{} rows, {rate:.1} rows/s, {} failed, {} agent errors, eta {eta}",
        p.done, p.total, p.failed, p.errors
    )
}

fn progress_bar(quiet: bool) -> ProgressBar {
    let visible =
        !quiet && std::io::stderr().is_terminal() && std::env::var_os("NO_PROGRESS").is_none();
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    let style =
        ProgressStyle::with_template("{bar:30} {pos}/{len} rows  {per_sec}  eta {eta}  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
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

#[cfg(test)]
mod tests {
    use super::{PlainProgress, progress_line};
    use sparring_engine::run::Progress;

    #[test]
    fn plain_lines_come_every_ten_seconds() {
        let mut lines = PlainProgress::new(10.0);
        let printed: Vec<f64> = [0.5, 3.0, 9.9, 10.0, 12.0, 19.9, 20.5, 21.0, 45.0, 46.0]
            .into_iter()
            .filter(|&t| lines.due(t))
            .collect();
        assert_eq!(printed, vec![10.0, 20.5, 45.0]);
    }

    #[test]
    fn a_plain_line_names_rate_failures_and_eta() {
        let p = Progress {
            done: 50,
            total: 200,
            failed: 3,
            errors: 1,
        };
        assert_eq!(
            progress_line(&p, 10.0),
            "progress: 50/200 rows, 5.0 rows/s, 3 failed, 1 agent errors, eta 30 s"
        );
        let finished = Progress { done: 200, ..p };
        assert!(progress_line(&finished, 40.0).ends_with("eta -"));
    }
}
