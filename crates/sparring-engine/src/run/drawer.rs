//! Unique situations drawn during the run: the search's `structured` arm
//! past the covering array.

use super::RunError;
use crate::plan::{Plan, Task};
use sparring_types::{SimulateOptions, Spec};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Draws unique situations during the run, a piece at a time.
pub(super) struct Drawer<'a> {
    pub(super) spec: &'a Spec,
    pub(super) options: &'a SimulateOptions,
    pub(super) plan: &'a Plan,
    pub(super) drawn: usize,
    pub(super) next_index: usize,
    pub(super) tier_mix: BTreeMap<String, u64>,
    /// Every drawn task, kept only when later eval runs replay them.
    pub(super) keep: Option<Vec<Arc<Task>>>,
}

/// The drawer is the `structured` arm past the covering array.
impl super::search::Arm for Drawer<'_> {
    fn left(&self) -> usize {
        self.plan.unique_left.saturating_sub(self.drawn)
    }

    fn propose(&mut self, count: usize) -> Result<Vec<Arc<Task>>, RunError> {
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
