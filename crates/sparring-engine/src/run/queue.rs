//! Which rollouts come next.

use crate::plan::Task;
use sparring_types::{RepeatPolicy, SimulateOptions, defaults};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// One rollout to play: a task and which of its repeats.
#[derive(Clone)]
pub(super) struct Job {
    pub(super) task: Arc<Task>,
    pub(super) repeat: u32,
}

/// Which rollouts come next: the seeds first, each with all its repeats in
/// turn (the budget pays for whole seeds, in the spec's order, before
/// anything else), then every other task once, then every task again (a
/// small budget spreads over tasks). Under `repeat_policy: successive` only
/// the first [`defaults::SUCCESSIVE_FIRST`] rounds are queued up front; an
/// ask's later repeats join the queue when its first rollouts are in and
/// disagree. Tasks drawn during the run (unique situations) join at the
/// back. Only asks awaiting their decision keep state here, so memory
/// follows the work in flight, not the run's size.
pub(super) struct Queue {
    pub(super) tasks: Vec<Arc<Task>>,
    /// The first `seeds` tasks are the spec's seeds, played first.
    pub(super) seeds: usize,
    /// The next seed job, counted over (seed task, round).
    pub(super) seed_job: usize,
    /// Later repeats of seeds (`successive`), ahead of every other job.
    pub(super) ready_seeds: VecDeque<Job>,
    pub(super) k: u32,
    pub(super) first: u32,
    pub(super) round: u32,
    pub(super) cursor: usize,
    pub(super) ready: VecDeque<Job>,
    pub(super) extra: VecDeque<Job>,
    pub(super) outcomes: BTreeMap<String, Vec<String>>,
    pub(super) already: BTreeMap<String, u32>,
    /// Repeats skipped because the ask's first rollouts were unanimous.
    pub(super) skipped: u64,
}

impl Queue {
    /// A queue over `tasks` whose first `seeds` are the spec's seeds.
    pub(super) fn new(
        tasks: Vec<Arc<Task>>,
        seeds: usize,
        options: &SimulateOptions,
        done: BTreeMap<String, Vec<String>>,
    ) -> Self {
        let k = options.repeats.max(1);
        let first = if options.repeat_policy == RepeatPolicy::Successive {
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
            seeds: seeds.min(tasks.len()),
            seed_job: 0,
            ready_seeds: VecDeque::new(),
            cursor: seeds.min(tasks.len()),
            tasks,
            k,
            first,
            round: 0,
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

    pub(super) fn next(&mut self) -> Option<Job> {
        let first = self.first as usize;
        while self.seed_job < self.seeds * first {
            let (t, round) = (self.seed_job / first, self.seed_job % first);
            self.seed_job += 1;
            let task = &self.tasks[t];
            let round = u32::try_from(round).unwrap_or(u32::MAX);
            if round < self.done_before(task) {
                continue;
            }
            return Some(Job {
                task: Arc::clone(task),
                repeat: round,
            });
        }
        if let Some(job) = self.ready_seeds.pop_front() {
            return Some(job);
        }
        while self.round < self.first {
            if self.cursor >= self.tasks.len() {
                self.round += 1;
                self.cursor = self.seeds;
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
    pub(super) fn append(&mut self, tasks: &[Arc<Task>]) {
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
    pub(super) fn record(&mut self, task: &Arc<Task>, repeat: u32, outcome: String) {
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
        let seed = self.tasks[..self.seeds]
            .iter()
            .any(|t| t.task_id == task.task_id);
        for repeat in from..self.k {
            let job = Job {
                task: Arc::clone(task),
                repeat,
            };
            if seed {
                self.ready_seeds.push_back(job);
            } else {
                self.ready.push_back(job);
            }
        }
    }
}
