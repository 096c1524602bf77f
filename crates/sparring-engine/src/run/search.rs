//! The search: which rollout a run plays next, and when it stops looking.
//!
//! A [`Search`] is asked for work ([`Search::next`]) and told each finished
//! row ([`Search::record`]). It owns the eval run's budget of rollouts, the
//! planned tasks' queue (the seeds, then the covering array's rows, or a
//! pinned run's tasks, with their repeats), the [`Arm`]s that propose more
//! situations once the queue runs dry, and the saturation stop (no new
//! behaviour signature in [`defaults::SATURATION_ROWS`] rows).
//!
//! Today the one arm is the unique drawer (`structured` situations past the
//! array, [`super::drawer::Drawer`]); the search arms of the documents
//! (failure mutation, behaviour-targeted, open-ended, model-guided) are
//! further [`Arm`]s, and the budget split between them is this module's.

use super::RunError;
use super::queue::{Job, Queue};
use super::row::outcome;
use crate::plan::Task;
use sparring_types::hash::key64;
use sparring_types::{Row, StopReason, defaults};
use std::collections::BTreeSet;
use std::sync::Arc;

/// A source of situations to play: it proposes tasks and hears how every
/// row came out. `Send`: a run is a `Send` future.
pub(super) trait Arm: Send {
    /// How many more situations it can propose.
    fn left(&self) -> usize;
    /// Up to `n` new tasks (fewer when it has fewer left).
    ///
    /// # Errors
    ///
    /// When a situation cannot be made (the plan's error).
    fn propose(&mut self, n: usize) -> Result<Vec<Arc<Task>>, RunError>;
    /// A finished row (of any arm's task: an arm may learn from all).
    fn record(&mut self, _task: &Task, _row: &Row) {}
}

/// What the search answers when asked for work.
pub(super) enum Next {
    /// Play this rollout.
    Play(Job),
    /// Stop asking: the budget is spent, or the behaviours stopped coming.
    Stop(StopReason),
    /// Nothing is left to play.
    Empty,
}

/// One eval run's search: see the module's documentation.
pub(super) struct Search<'a> {
    queue: Queue,
    arms: Vec<&'a mut dyn Arm>,
    /// Rollouts this eval run may still start, and those it started.
    limit: u64,
    started: u64,
    /// Whether the saturation stop applies (unique situations, first eval
    /// run: replays draw nothing).
    saturation: bool,
    /// Behaviour signatures seen, by key, and rows since the last new one.
    signatures: BTreeSet<u64>,
    since_new: u64,
}

impl<'a> Search<'a> {
    /// A search over `queue`, then `arms`, for at most `limit` rollouts.
    pub(super) fn new(
        queue: Queue,
        arms: Vec<&'a mut dyn Arm>,
        limit: u64,
        saturation: bool,
    ) -> Self {
        Self {
            queue,
            arms,
            limit,
            started: 0,
            saturation,
            signatures: BTreeSet::new(),
            since_new: 0,
        }
    }

    /// The next rollout to play. `batch` is how many situations an arm
    /// proposes at once when the queue runs dry.
    ///
    /// # Errors
    ///
    /// When an arm cannot make its situations.
    pub(super) fn next(&mut self, batch: usize) -> Result<Next, RunError> {
        if self.saturation && self.since_new >= defaults::SATURATION_ROWS {
            return Ok(Next::Stop(StopReason::Saturated));
        }
        if self.started >= self.limit {
            return Ok(Next::Stop(StopReason::BudgetSpent));
        }
        loop {
            if let Some(job) = self.queue.next() {
                self.started += 1;
                return Ok(Next::Play(job));
            }
            let Some(arm) = self.arms.iter_mut().find(|a| a.left() > 0) else {
                return Ok(Next::Empty);
            };
            let more = arm.propose(batch)?;
            self.queue.append(&more);
        }
    }

    /// A finished row: its ask's later repeats are decided, the arms hear
    /// of it, and whether its behaviour is new is counted.
    pub(super) fn record(&mut self, task: &Arc<Task>, repeat: u32, row: &Row) {
        self.queue.record(task, repeat, outcome(row));
        for arm in &mut self.arms {
            arm.record(task, row);
        }
        if self.signatures.insert(key64(&row.behavior_signature)) {
            self.since_new = 0;
        } else {
            self.since_new += 1;
        }
    }

    /// Whether anything is left to play. Asked once the eval run is over:
    /// it takes the queued job it finds.
    pub(super) fn more(&mut self) -> bool {
        self.queue.next().is_some() || self.arms.iter().any(|a| a.left() > 0)
    }

    /// Repeats skipped because an ask's first rollouts agreed.
    pub(super) fn skipped(&self) -> u64 {
        self.queue.skipped
    }
}
