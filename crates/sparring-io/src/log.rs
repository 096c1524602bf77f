//! The run's log file.

use crate::Error;
use sparring_types::LogSink;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// An append-only log shared by everything in a run (agent stderr, restarts).
/// Lines are written and flushed one at a time.
#[derive(Clone, Debug)]
pub struct RunLog {
    file: Arc<Mutex<File>>,
    path: PathBuf,
}

impl RunLog {
    /// Creates (or truncates) the log at `path`.
    pub fn create(path: &Path) -> Result<Self, Error> {
        let file = File::create(path).map_err(|e| Error::write(path, &e))?;
        Ok(Self {
            file: Arc::new(Mutex::new(file)),
            path: path.to_owned(),
        })
    }

    /// Opens the log at `path` for appending (a resumed run keeps its log).
    pub fn append(path: &Path) -> Result<Self, Error> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| Error::write(path, &e))?;
        Ok(Self {
            file: Arc::new(Mutex::new(file)),
            path: path.to_owned(),
        })
    }

    /// Appends one line. A failure to log is not worth failing a run over.
    pub fn line(&self, text: &str) {
        if let Ok(mut file) = self.file.lock() {
            let _ = writeln!(file, "{text}");
            let _ = file.flush();
        }
    }

    /// The log as a [`LogSink`], for the crates that log without touching
    /// files (the HTTP world in `sparring-llm`).
    pub fn sink(&self) -> std::sync::Arc<dyn LogSink> {
        std::sync::Arc::new(self.clone())
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl LogSink for RunLog {
    fn line(&self, text: &str) {
        Self::line(self, text);
    }
}
