//! `sparring simulate`: the command line into a [`sparring::Simulation`],
//! progress on stderr, the report on stdout.

use crate::progress::{PlainProgress, progress_bar, progress_line};
use anyhow::{Context as _, Result};
use sparring::types::OptionsPatch;
use sparring::types::StopReason;
use sparring::{Cancel, Progress, Simulation, SimulationResult, reports};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Instant;

pub(crate) use crate::simulate_args::Args;

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let sim = Simulation::from_file(&args.spec)?;
    let (result, signal) = drive(sim, args.patch(), args)?;
    let summary = &result.summary;
    let out = result.out.clone().unwrap_or_default();
    if summary.counts.rows == 0 {
        // A run may end before its first rollout (a tiny --time-budget,
        // an early Ctrl-C): nothing to report, and nothing wrong with that.
        if !args.quiet {
            eprintln!("no rows were written, so there is no report");
        }
    } else {
        let report = reports::report_rows_file(&out, &reports::ReportOptions::default())?;
        out!("{}", reports::render(&report));
    }
    Ok(exit_code(&result, signal))
}

/// 128 + the signal that stopped the run (as shells report a process the
/// signal ended), 1 when the agent never answered, else success.
pub(crate) fn exit_code(result: &SimulationResult, signal: i32) -> ExitCode {
    match signal {
        s if s > 0 => ExitCode::from(u8::try_from(128 + s).unwrap_or(130)),
        _ if result.summary.stopped_because == StopReason::AgentUnavailable => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}

/// Runs `sim` with the command line's options (`cli`, over the spec's),
/// progress on stderr, Ctrl-C and SIGTERM stopping it, and the summary
/// line and warnings at the end. Returns the result and the signal that
/// stopped the run (0 for none).
pub(crate) fn drive(
    sim: Simulation,
    cli: OptionsPatch,
    args: &Args,
) -> Result<(SimulationResult, i32)> {
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
        .force(args.force)
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
    // The signal that stopped the run, if any: the exit code says so.
    let signal = Arc::new(AtomicI32::new(0));
    let seen = Arc::clone(&signal);
    let result = runtime.block_on(async move {
        tokio::spawn(on_signals(cancel, seen));
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
        let rows = if result.kept > 0 {
            format!(
                "{} rows (and kept {} of the earlier attempt: {} in the file)",
                result.written, result.kept, c.rows
            )
        } else {
            format!("{} rows", c.rows)
        };
        eprintln!(
            "simulated {rows} over {} tasks in {:.1} s{graded}; stopped because {} -> {}",
            c.tasks,
            summary.seconds,
            summary.stopped_because,
            out.display()
        );
        for w in &summary.warnings {
            eprintln!("warning: {w}");
        }
    }
    let signal = signal.load(Ordering::SeqCst);
    Ok((result, signal))
}

/// SIGINT (Ctrl-C) and SIGTERM. The first Ctrl-C stops the run once the
/// rollouts in flight are in; a second stops it now, dropping them; a third
/// exits at once. SIGTERM stops it now, like a second Ctrl-C. Either way
/// `run.json` is written and `--resume` runs what was dropped; the exit
/// code is 128 + the first signal (130, 143).
async fn on_signals(cancel: Cancel, seen: Arc<AtomicI32>) {
    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;
    #[cfg(unix)]
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let mut presses = 0;
    loop {
        #[cfg(unix)]
        let terminated = async {
            match term.as_mut() {
                Some(t) => t.recv().await,
                None => std::future::pending().await,
            }
        };
        #[cfg(not(unix))]
        let terminated = std::future::pending::<Option<()>>();
        tokio::select! {
            pressed = tokio::signal::ctrl_c() => {
                if pressed.is_err() {
                    return;
                }
                let _ = seen.compare_exchange(0, SIGINT, Ordering::SeqCst, Ordering::SeqCst);
                presses += 1;
                match presses {
                    1 => {
                        eprintln!("\ninterrupted: finishing the rollouts in flight (Ctrl-C again to stop now and drop them)");
                        cancel.cancel();
                    }
                    2 => {
                        eprintln!("\nstopping now: the rollouts in flight are dropped; `--resume` runs them");
                        cancel.abort();
                    }
                    _ => std::process::exit(130),
                }
            }
            Some(()) = terminated => {
                let _ = seen.compare_exchange(0, SIGTERM, Ordering::SeqCst, Ordering::SeqCst);
                eprintln!("\nterminated: stopping now; the rollouts in flight are dropped and `--resume` runs them");
                cancel.abort();
            }
        }
    }
}
