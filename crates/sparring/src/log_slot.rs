//! [`LogSlot`]: a way for the caller's own agent, grader or world to write
//! to the run's log.
//!
//! A run opens `run.log` only once it starts, while the caller builds its
//! agent before that. The caller hands the same slot to its agent and to
//! [`crate::Simulation::log_slot`]; the run fills it with its log when the
//! log is open. Lines written before (or in a run that keeps its rows in
//! memory, with no log) go to stderr instead, so none is lost.

use sparring_types::LogSink;
use std::sync::{Arc, Mutex};

/// A log to be filled in by a run; clones share it.
#[derive(Clone, Debug, Default)]
pub struct LogSlot(Arc<Mutex<Option<Arc<dyn LogSink>>>>);

impl LogSlot {
    /// An empty slot.
    pub fn new() -> Self {
        Self::default()
    }

    /// Puts the run's log in the slot.
    pub fn fill(&self, sink: Arc<dyn LogSink>) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(sink);
        }
    }

    /// Whether a run's log is in the slot.
    pub fn is_filled(&self) -> bool {
        self.0.lock().is_ok_and(|s| s.is_some())
    }

    /// Writes one line (each line of a multi-line text separately) to the
    /// run's log, or to stderr while the slot is empty.
    pub fn line(&self, text: &str) {
        let sink = self.0.lock().ok().and_then(|s| s.clone());
        for line in text.lines() {
            match &sink {
                Some(sink) => sink.line(line),
                None => eprintln!("{line}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default)]
    struct Lines(Mutex<Vec<String>>);

    impl LogSink for Lines {
        fn line(&self, text: &str) {
            self.0.lock().unwrap().push(text.to_owned());
        }
    }

    #[test]
    fn lines_reach_the_filled_log_one_by_one() {
        let slot = LogSlot::new();
        assert!(!slot.is_filled());
        let lines = Arc::new(Lines::default());
        slot.clone().fill(lines.clone());
        assert!(slot.is_filled());
        slot.line("Traceback (most recent call last):\n  boom");
        assert_eq!(
            *lines.0.lock().unwrap(),
            vec!["Traceback (most recent call last):", "  boom"]
        );
    }
}
