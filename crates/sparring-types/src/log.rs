//! Where a run's log lines go.

/// A run's log (`run.log`): agent and world stderr, restarts, backends,
/// failed calls. `sparring-io`'s `RunLog` writes it to a file; a library
/// caller may pass its own. Logging never fails a run.
pub trait LogSink: Send + Sync + std::fmt::Debug {
    /// Appends one line.
    fn line(&self, text: &str);
}
