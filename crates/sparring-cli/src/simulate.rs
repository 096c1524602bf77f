//! `sparring simulate`: the command line into a [`sparring::Simulation`],
//! progress on stderr, the report on stdout.

use crate::progress::{PlainProgress, progress_bar, progress_line};
use anyhow::{Context as _, Result};
use sparring::types::OptionsPatch;
use sparring::types::StopReason;
use sparring::{Cancel, Progress, Simulation, SimulationResult, reports};
use std::process::ExitCode;
use std::time::Instant;

pub(crate) use crate::simulate_args::Args;

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let sim = Simulation::from_file(&args.spec)?;
    let result = drive(sim, args.patch(), args)?;
    let out = result.out.clone().unwrap_or_default();
    let rows = reports::read_rows_for_scoring(&out)?;
    print!(
        "{}",
        reports::render(&reports::report(&rows, &reports::ReportOptions::default())?)
    );
    Ok(exit_code(&result))
}

/// Exit code 1 when the agent never answered, else success.
pub(crate) fn exit_code(result: &SimulationResult) -> ExitCode {
    if result.summary.stopped_because == StopReason::AgentUnavailable {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Runs `sim` with the command line's options (`cli`, over the spec's),
/// progress on stderr, Ctrl-C cancelling, and the summary line and
/// warnings at the end.
pub(crate) fn drive(sim: Simulation, cli: OptionsPatch, args: &Args) -> Result<SimulationResult> {
    let mut sim = match args.dimensions()? {
        Some(d) => sim.dimensions(&d)?,
        None => sim,
    };
    let cancel = Cancel::new();
    let quiet = args.quiet;
    let bar = progress_bar(quiet);
    let plain = !quiet && bar.is_hidden() && std::env::var_os("NO_PROGRESS").is_none();
    let begun = Instant::now();
    let mut lines = PlainProgress::new(sparring::types::defaults::PROGRESS_LINE_SECS);
    let shown = bar.clone();
    sim = sim
        .options(cli)
        .resume(args.resume)
        .cancel_with(cancel.clone())
        .on_progress(move |p: &Progress| {
            shown.set_length(p.total);
            shown.set_position(p.done);
            shown.set_message(format!("{} failed, {} agent errors", p.failed, p.errors));
            let secs = begun.elapsed().as_secs_f64();
            if plain && lines.due(secs) {
                eprintln!("{}", progress_line(p, secs));
            }
        });
    if let Some(prev) = &args.tasks {
        sim = sim.tasks(prev);
    }
    if let Some(world) = &args.execute {
        sim = sim.execute(world);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(async move {
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!(
                    "\ninterrupted: finishing the rollouts in flight (Ctrl-C again to abort)"
                );
                cancel.cancel();
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            }
        });
        sim.run().await
    })?;
    bar.finish_and_clear();
    let summary = &result.summary;
    let out = result.out.clone().unwrap_or_default();
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
    Ok(result)
}
