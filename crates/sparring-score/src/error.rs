//! The crate's error type.

use std::path::PathBuf;

/// Why rows could not be scored. Every message fits on one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A rows or labels text is malformed. `at` is a `line N` location.
    #[error("`{path}`: at {at}: {message}")]
    Invalid {
        /// The file the text came from.
        path: PathBuf,
        /// Where in it.
        at: String,
        /// What is wrong.
        message: String,
    },
    /// Well-formed inputs that cannot give the figure asked for (no graded
    /// rows, no task in common, a guard naming a marker no row carries).
    #[error("{message}")]
    Unscorable {
        /// What is missing, naming the file or option, with a hint.
        message: String,
    },
}

impl Error {
    pub(crate) fn invalid(
        path: &std::path::Path,
        at: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::Invalid {
            path: path.to_owned(),
            at: at.into(),
            message: message.into(),
        }
    }
}
