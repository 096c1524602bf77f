//! `sparring._native`: the PyO3 glue of the sparring Python package.
//!
//! The package's public API (`python/sparring/`) is Python: it checks the
//! keywords, turns them into the option names `sparring-types` declares, and
//! hands this module JSON. This module calls the `sparring` crate and
//! nothing below it (its re-exports, `sparring::types` and the like, are the
//! facade's), and hands JSON back:
//!
//! - [`run`]: `simulate` and `evaluate`, with the engine on a runtime of its
//!   own and the GIL released; Ctrl-C cancels the run cleanly.
//! - [`callables`]: Python functions as the agent (single turn, through
//!   `sparring::single_turn`), the in-run grader and the caller's world,
//!   each run on tokio's blocking pool (coroutines on one asyncio loop, see
//!   `python/sparring/_callables.py`); an exception becomes the row's error
//!   and its traceback goes to `run.log`.
//! - [`stages`]: grading, the score's reports, the training cuts,
//!   decontamination, export, coverage gaps and the judge's measurement.
//!
//! Errors keep the library's kinds: bad input is `ValueError`, a file that
//! cannot be read or written `OSError`, anything else `RuntimeError`.

mod callables;
mod run;
mod stages;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde_json::Value;

pyo3::create_exception!(
    _native,
    RolloutEnded,
    pyo3::exceptions::PyRuntimeError,
    "A tool call of a callable agent got no answer: its rollout no longer listens (the turn hit `max_tool_steps`, or the agent took longer than `agent_timeout`)."
);

/// A library error as the Python exception of its kind.
pub(crate) fn py_err(e: &sparring::Error) -> PyErr {
    let message = e.message().to_owned();
    match e.kind() {
        sparring::ErrorKind::Input => PyValueError::new_err(message),
        sparring::ErrorKind::Io => PyOSError::new_err(message),
        _ => PyRuntimeError::new_err(message),
    }
}

/// A value Python handed over that is not the JSON it should be (a bug of
/// the Python layer, or a value the caller passed through it).
pub(crate) fn bad_json(what: &str, e: &serde_json::Error) -> PyErr {
    PyValueError::new_err(format!("{what} is not valid JSON: {e}"))
}

/// Parses JSON text handed over by the Python layer.
pub(crate) fn parse(what: &str, text: &str) -> PyResult<Value> {
    serde_json::from_str(text).map_err(|e| bad_json(what, &e))
}

/// Encodes a result for the Python layer.
pub(crate) fn encode<T: serde::Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot encode a result: {e}")))
}

/// The option names `options` (and so `simulate`) accepts, aliases
/// included, as `sparring-types` declares them.
#[pyfunction]
fn option_names() -> Vec<&'static str> {
    sparring::types::option_names()
}

/// The candidate closest to `word`, when it is close enough to be a
/// misspelling of it.
#[pyfunction]
// PyO3 extracts a Python list as an owned Vec; it cannot lend a slice.
#[allow(clippy::needless_pass_by_value)]
fn closest(word: &str, candidates: Vec<String>) -> Option<String> {
    let names: Vec<&str> = candidates.iter().map(String::as_str).collect();
    sparring::types::closest(word, &names).map(str::to_owned)
}

/// The sparring version this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("RolloutEnded", m.py().get_type::<RolloutEnded>())?;
    m.add_class::<callables::NativeTools>()?;
    m.add_function(wrap_pyfunction!(option_names, m)?)?;
    m.add_function(wrap_pyfunction!(closest, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(run::simulate, m)?)?;
    stages::register(m)?;
    Ok(())
}
