//! The crate's error type: bad backend specs and setup failures. Failures of
//! a request are not errors of this type; they end a row as
//! `backend_error` through `sparring_types::AgentError`.

/// Why a backend could not be set up. Messages fit on one line, name the
/// spec or variable at fault, and never contain a key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A backend spec string is malformed.
    #[error("backend `{spec}`: {message}")]
    Spec {
        /// The spec as given.
        spec: String,
        /// What is wrong.
        message: String,
    },
    /// A key the backend needs is not in the environment.
    #[error("backend `{spec}` needs an API key: `{variable}` is not set")]
    MissingKey {
        /// The spec, described without secrets.
        spec: String,
        /// The environment variable.
        variable: String,
    },
    /// A run setting the backend cannot honour.
    #[error("backend `{spec}`: {message}")]
    Unsupported {
        /// The spec, described without secrets.
        spec: String,
        /// What cannot be done.
        message: String,
    },
    /// The caller's world (`execute http://…`) cannot be used: a bad URL, or
    /// nothing answers there.
    #[error("cannot use the world `{world}`: {message}")]
    World {
        /// The world, with secrets removed.
        world: String,
        /// What went wrong.
        message: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}
