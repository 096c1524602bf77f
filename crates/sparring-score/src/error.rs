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
        let (at, message) = (at.into(), message.into());
        // The place and the message may quote the rows' own data, which
        // can be megabytes long: cut, so the error stays one line.
        Self::Invalid {
            path: path.to_owned(),
            at: sparring_types::clip::message(&at).into_owned(),
            message: sparring_types::clip::message(&message).into_owned(),
        }
    }
}
