//! The rollout being played, visible to the agents, graders and worlds it
//! calls.
//!
//! A caller's agent, grader or world (a Python callable, a closure) may want
//! to know which rollout it is answering: its opening ask, its index in the
//! run and its seed. The run sets them for the whole of each rollout, and the
//! in-run grader of its row, as a tokio task-local; [`current_rollout`] reads
//! it from inside any future the rollout awaits. Nothing is global: two runs
//! in one process each see their own rollouts.

use sparring_types::RolloutContext;
use std::future::Future;

tokio::task_local! {
    static ROLLOUT: RolloutContext;
}

/// The rollout whose agent, world or grader is being called, when called
/// from inside a run (`None` elsewhere, and on a thread of the blocking pool:
/// read it before handing work to another thread).
pub fn current_rollout() -> Option<RolloutContext> {
    ROLLOUT.try_with(Clone::clone).ok()
}

/// Runs `fut` with `context` as the current rollout.
pub(crate) async fn scoped<F: Future>(context: RolloutContext, fut: F) -> F::Output {
    ROLLOUT.scope(context, fut).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn visible_inside_the_scope_only() {
        assert_eq!(current_rollout(), None);
        let context = RolloutContext {
            prompt: "where is my order".to_owned(),
            rollout_index: 3,
            seed: 7,
        };
        let seen = scoped(context.clone(), async { current_rollout() }).await;
        assert_eq!(seen, Some(context));
        assert_eq!(current_rollout(), None);
    }
}
