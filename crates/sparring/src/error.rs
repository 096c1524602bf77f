//! The library's one error type.

use std::fmt;

/// What kind of failure an [`Error`] is, for callers that act on it (the
/// CLI maps [`ErrorKind::Input`] and [`ErrorKind::Io`] to exit code 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The caller's input is wrong: a spec, an option, a backend spec, a
    /// rows file, a command that cannot start, a key that is not set.
    Input,
    /// A file could not be read or written.
    Io,
    /// The work could not be done with good input (a row could not be
    /// stored, the runtime could not start).
    Failed,
}

/// Why a stage could not run. Failed rollouts are rows, never errors. The
/// message is one line naming what and where (with a `hint:` line when
/// there is an obvious fix) and never holds a secret.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        let message = message.into();
        // Every error a caller sees passes here: a value it quotes (a name,
        // a key, a parser's rendering of the input) is cut, so no line of
        // it is longer than `ERROR_LINE_BYTES`.
        Self {
            kind,
            message: sparring_types::clip::message(&message).into_owned(),
        }
    }

    /// Bad input.
    pub fn input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Input, message)
    }

    /// A file that could not be read or written: "cannot `what` `path`: why".
    pub(crate) fn io(what: &str, path: &std::path::Path, e: &std::io::Error) -> Self {
        Self::new(
            ErrorKind::Io,
            format!(
                "cannot {what} `{}`: {}",
                path.display(),
                e.to_string().to_lowercase()
            ),
        )
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<sparring_io::Error> for Error {
    fn from(e: sparring_io::Error) -> Self {
        let kind = match e {
            sparring_io::Error::Read { .. } | sparring_io::Error::Write { .. } => ErrorKind::Io,
            _ => ErrorKind::Input,
        };
        Self::new(kind, e.to_string())
    }
}

impl From<sparring_score::Error> for Error {
    fn from(e: sparring_score::Error) -> Self {
        Self::input(e.to_string())
    }
}

impl From<sparring_llm::Error> for Error {
    fn from(e: sparring_llm::Error) -> Self {
        Self::input(e.to_string())
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
