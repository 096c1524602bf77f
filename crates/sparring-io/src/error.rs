//! The crate's error type.

use std::path::PathBuf;

/// Why a file could not be read or written, or a process not started.
/// Every message names the file or command and fits on one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file is missing or unreadable.
    #[error("cannot read `{path}`: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A file could not be written.
    #[error("cannot write `{path}`: {message}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A spec or rows file is malformed. `at` is a JSON pointer or a
    /// `line N` / `line N, column M` location.
    #[error("`{path}`: at {at}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Where in it.
        at: String,
        /// What is wrong.
        message: String,
    },
    /// Rows or labels the score's parsers refuse, as they word it.
    #[error(transparent)]
    Score(#[from] sparring_score::Error),
    /// Another process holds the lock on a run directory
    /// ([`crate::lock::RunLock`]).
    #[error("`{}` is in use by another sparring ({}); wait for it to finish, or choose another --out", dir.display(), pid.map_or_else(|| "its pid is unknown".to_owned(), |p| format!("pid {p}")))]
    Locked {
        /// The run directory.
        dir: PathBuf,
        /// The holder's process id, as its lock file says.
        pid: Option<u32>,
    },
    /// A command could not be started.
    #[error("cannot start {role} command `{command}`: {message}")]
    Spawn {
        /// What the command plays: `agent`, `world` or `grader`.
        role: &'static str,
        /// The command, with secrets redacted.
        command: String,
        /// What went wrong.
        message: String,
    },
}

impl Error {
    pub(crate) fn read(path: &std::path::Path, e: &std::io::Error) -> Self {
        Self::Read {
            path: path.to_owned(),
            message: Self::read_message(e),
        }
    }

    /// Why a file cannot be read, in lower case (`no such file`).
    pub(crate) fn read_message(e: &std::io::Error) -> String {
        if e.kind() == std::io::ErrorKind::NotFound {
            "no such file".to_owned()
        } else {
            e.to_string().to_lowercase()
        }
    }

    pub(crate) fn write(path: &std::path::Path, e: &std::io::Error) -> Self {
        Self::Write {
            path: path.to_owned(),
            message: e.to_string().to_lowercase(),
        }
    }

    pub(crate) fn invalid(
        path: &std::path::Path,
        at: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        let (at, message) = (at.into(), message.into());
        // The place and the message may quote the file's own data, which
        // can be megabytes long: cut, so the error stays one line.
        Self::Invalid {
            path: path.to_owned(),
            at: sparring_types::clip::message(&at).into_owned(),
            message: sparring_types::clip::message(&message).into_owned(),
        }
    }
}
