//! Playing one eval run: rollouts in flight up to `concurrency` (whole
//! batches with `reproducible`), rows handed to the sink as they finish.

use super::queue::Job;
use super::row::{behavior_signature, make_row, rollout_seed};
use super::search::{Next, Search};
use super::summary::Tally;
use super::{Abort, DEAD_AGENT_ROWS, Done, Progress, RunError, Shared};
use crate::context::scoped;
use crate::rollout::{Setup, play};
use crate::stages::{Combine, Stages, grade_row_under};
use serde_json::json;
use sparring_types::hash::short_id;
use sparring_types::{RolloutContext, RowSink, StopReason, defaults};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::task::JoinSet;

/// What every eval run of a call writes to: the rows' sink, the tally,
/// progress and warnings.
pub(super) struct Out<'a> {
    pub(super) shared: Arc<Shared>,
    pub(super) cancel: Arc<AtomicBool>,
    pub(super) abort: Arc<Abort>,
    pub(super) deadline: Option<f64>,
    pub(super) sink: &'a mut dyn RowSink,
    pub(super) tally: Tally,
    pub(super) progress: Progress,
    pub(super) on_progress: &'a mut (dyn FnMut(&Progress) + Send),
    pub(super) warnings: Vec<String>,
}

/// Runs one eval run: asks the search for rollouts, plays them, tells it
/// each row. Returns the reason it stopped early, or `None` when the
/// search had nothing left.
pub(super) async fn execute(
    out: &mut Out<'_>,
    eval_run: u32,
    search: &mut Search<'_>,
) -> Result<Option<StopReason>, RunError> {
    let Out {
        shared,
        cancel,
        abort,
        deadline,
        sink,
        tally,
        progress,
        on_progress,
        warnings,
    } = out;
    let deadline = *deadline;
    let options = &shared.options;
    let concurrency = options.concurrency.max(1);
    let mut in_flight: JoinSet<(u64, Done)> = JoinSet::new();
    let mut seq = 0u64;
    let mut stop: Option<StopReason> = None;
    let mut budget_hit = false;
    let mut last_error = String::new();
    // Rollouts dropped at an interrupt: they still lack their rows.
    let mut dropped = 0u64;
    loop {
        // Fill: up to `concurrency` in flight (a whole batch when
        // reproducible, and only once the last batch is consumed).
        let may_fill = !options.reproducible || in_flight.is_empty();
        while may_fill && stop.is_none() && in_flight.len() < concurrency {
            if cancel.load(Ordering::SeqCst) || abort.is_aborted() {
                stop = Some(StopReason::Interrupted);
                break;
            }
            if deadline.is_some_and(|d| shared.clock.millis() >= d) {
                stop = Some(StopReason::TimeBudget);
                break;
            }
            let job = match search.next(concurrency.max(defaults::UNIQUE_DRAW))? {
                Next::Play(job) => job,
                Next::Stop(StopReason::BudgetSpent) => {
                    budget_hit = true;
                    break;
                }
                Next::Stop(reason) => {
                    stop = Some(reason);
                    break;
                }
                Next::Empty => break,
            };
            let shared = Arc::clone(shared);
            let n = seq;
            seq += 1;
            in_flight.spawn(async move { (n, play_job(&shared, eval_run, job).await) });
        }
        if in_flight.is_empty() {
            break;
        }
        let mut finished = Vec::new();
        let aborted = if options.reproducible {
            loop {
                tokio::select! {
                    biased;
                    () = abort.wait() => break true,
                    joined = in_flight.join_next() => match joined {
                        Some(Ok(done)) => finished.push(done),
                        Some(Err(_)) => {}
                        None => break false,
                    },
                }
            }
        } else {
            tokio::select! {
                biased;
                () = abort.wait() => true,
                joined = in_flight.join_next() => {
                    if let Some(Ok(done)) = joined {
                        finished.push(done);
                    }
                    false
                }
            }
        };
        if aborted {
            // Stopped now: what is in flight, or finished but not yet
            // written, is dropped; a `--resume` runs it again.
            dropped += (in_flight.len() + finished.len()) as u64;
            in_flight.abort_all();
            while in_flight.join_next().await.is_some() {}
            stop = Some(StopReason::Interrupted);
            break;
        }
        // Consumed in submission order, whatever order they finished in.
        finished.sort_by_key(|(n, _)| *n);
        for (_, mut done) in finished {
            tally.person_fallbacks += u64::from(done.transcript.person_fallbacks);
            if !done.transcript.person_errors.is_empty() {
                tally.person_errors.insert(
                    (eval_run, done.task.index, done.repeat),
                    done.transcript.person_errors.clone(),
                );
            }
            let row = match done.graded.take() {
                Some(row) => row,
                None => make_row(&done, shared, eval_run),
            };
            if row.ended_by.is_error()
                && cancel.load(Ordering::SeqCst)
                && stop != Some(StopReason::AgentUnavailable)
            {
                // Interrupted: this error may be the interrupt's own doing
                // (a signal that reached the agent too), so the rollout is
                // dropped rather than kept as a failure; `--resume` runs it.
                dropped += 1;
                continue;
            }
            if let Err(e) = sink.write(&row) {
                in_flight.abort_all();
                return Err(RunError::Sink {
                    row: tally.counter.rows(),
                    message: e.0,
                });
            }
            tally.add(&row, &done.task.grid_row, progress);
            search.record(&done.task, done.repeat, &row);
            on_progress(progress);
            if row.ended_by.is_error() {
                row.error
                    .as_deref()
                    .unwrap_or("unknown")
                    .clone_into(&mut last_error);
            }
            if !tally.agent_replied && progress.errors >= DEAD_AGENT_ROWS && stop.is_none() {
                stop = Some(StopReason::AgentUnavailable);
                cancel.store(true, Ordering::SeqCst);
            }
        }
    }
    if stop == Some(StopReason::AgentUnavailable) {
        // Said once the rollouts in flight are in: how many rows there are
        // and whether any of the late ones got a reply.
        warnings.push(dead_agent_warning(
            tally.counter.rows(),
            tally.replied_rows,
            &last_error,
        ));
    }
    let more = search.more();
    if stop.is_none() && budget_hit && more {
        stop = Some(StopReason::BudgetSpent);
    }
    if stop == Some(StopReason::Interrupted) && !more && dropped == 0 {
        stop = None;
    }
    tally.dropped += dropped;
    Ok(stop)
}

/// The warning of an `agent_unavailable` stop: the rows written in all
/// (the rollouts in flight at the stop finish), and "never replied" only
/// when no row shows a reply.
fn dead_agent_warning(rows: u64, replied: u64, last_error: &str) -> String {
    if replied == 0 {
        format!(
            "stopped after {rows} rows: the agent failed every request and never replied (last error: {last_error})"
        )
    } else {
        format!(
            "stopped after {rows} rows: the first {DEAD_AGENT_ROWS} ended in errors before any reply; {replied} of the {rows} rows (rollouts in flight at the stop) show agent replies (last error: {last_error})"
        )
    }
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
    let rollout_index = job.task.index as u64 * u64::from(options.repeats) + u64::from(job.repeat);
    let context = RolloutContext {
        prompt: job.task.ask.clone(),
        rollout_index,
        seed: rollout_seed,
    };
    // The agent, the caller's world and the grader hook all see which
    // rollout they are answering.
    scoped(context, async {
        let transcript = play(
            Setup {
                task: &job.task,
                system_prompt: &shared.spec.system_prompt,
                options,
                rollout_seed,
                rollout_index,
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
        let mut done = Done {
            task: job.task,
            repeat: job.repeat,
            transcript,
            graded: None,
        };
        if let Some(grader) = shared.grader.as_deref() {
            let mut row = make_row(&done, shared, eval_run);
            let scoring_run_id = short_id(
                "grade",
                &json!({"run": shared.run_id, "grader": grader.describe()}),
            );
            let stages = Stages {
                conduct: options.grade,
                grader: Some(grader),
                judge: None,
                // As `grade` and `simulate --grade`: the caller's hook has
                // the last word.
                combine: Combine::Last,
            };
            grade_row_under(
                &mut row,
                stages,
                Some(shared.reading.policy()),
                &scoring_run_id,
            )
            .await;
            row.behavior_signature = behavior_signature(&row);
            done.graded = Some(row);
        }
        done
    })
    .await
}
