//! Python callables as the agent, the grader and the caller's world.
//!
//! Each is called on tokio's blocking pool with the GIL taken only for the
//! call, through the helpers of `sparring._callables` (which run coroutines
//! on one asyncio loop, set `sparring.current_rollout`, and turn an
//! exception into a one-line message plus its traceback). The traceback
//! goes to the run's log; the message becomes the row's error (agent), the
//! stage's error (grader) or a fault the agent sees (world).

use crate::RolloutEnded;
use pyo3::prelude::*;
use serde_json::Value;
use sparring::LogSlot;
use sparring::single_turn::{Ask, SingleTurn, Tools};
use sparring::types::{
    BoxFuture, ExecuteError, ExecuteRequest, Grader, GraderError, GraderVerdict, RolloutContext,
    Row, ToolExecutor, world_answer,
};
use std::sync::Arc;

/// What the helpers give back: whether the call succeeded, its value (the
/// reply, a grader's reply object or a world's answer, as JSON text) or
/// the exception's one-line message, and the traceback.
type Outcome = (bool, String, Option<String>);

/// What `sparring.current_rollout` says: the opening ask, the rollout's
/// index in the run (unknown for a row graded after its run) and its seed.
pub(crate) type Rollout = (String, Option<u64>, u64);

fn rollout(r: &RolloutContext) -> Rollout {
    (r.prompt.clone(), Some(r.rollout_index), r.seed)
}

/// Why a call to a callable of the caller's gave no value.
#[derive(Debug, thiserror::Error)]
enum CallError {
    /// The callable raised: the exception's one-line message (the
    /// traceback went to the run's log).
    #[error("{0}")]
    Raised(String),
    /// sparring could not make the call or read its outcome.
    #[error("the {role}'s call failed inside sparring: {error}")]
    Internal { role: &'static str, error: PyErr },
}

/// A callable of the caller's, with its name and the run's log.
#[derive(Clone)]
pub(crate) struct Callable {
    pub(crate) func: Arc<Py<PyAny>>,
    pub(crate) name: String,
    pub(crate) log: LogSlot,
}

impl Callable {
    /// Calls helper `helper` of `sparring._callables` with the callable and
    /// `args`; logs the traceback of a failure under `role`.
    fn call(
        &self,
        role: &'static str,
        helper: &str,
        args: impl FnOnce(Python<'_>) -> PyResult<Vec<Py<PyAny>>>,
        rollout: Option<Rollout>,
    ) -> Result<String, CallError> {
        let at = rollout
            .as_ref()
            .map_or_else(String::new, |(_, index, seed)| {
                index.map_or_else(
                    || format!(", row of seed {seed}"),
                    |i| format!(", rollout {i} (seed {seed})"),
                )
            });
        let outcome: PyResult<Outcome> = Python::attach(|py| {
            let helpers = py.import("sparring._callables")?;
            let mut all: Vec<Py<PyAny>> = vec![self.func.as_ref().clone_ref(py)];
            all.extend(args(py)?);
            all.push(rollout.into_pyobject(py)?.into_any().unbind());
            let tuple = pyo3::types::PyTuple::new(py, all)?;
            helpers.getattr(helper)?.call1(tuple)?.extract()
        });
        match outcome {
            Ok((true, value, _)) => Ok(value),
            Ok((false, message, traceback)) => {
                self.log
                    .line(&format!("{role} fn:{}{at} raised {message}", self.name));
                if let Some(tb) = traceback {
                    self.log.line(&tb);
                }
                Err(CallError::Raised(message))
            }
            Err(error) => Err(CallError::Internal { role, error }),
        }
    }
}

fn text(py: Python<'_>, s: String) -> PyResult<Py<PyAny>> {
    Ok(s.into_pyobject(py)?.into_any().unbind())
}

/// The tools handle a Python agent calls (`sparring._callables.Tools` wraps
/// it): one blocking call at a time, the GIL released while the world
/// answers.
#[pyclass(frozen, name = "Tools", module = "sparring._native")]
pub(crate) struct NativeTools {
    tools: Tools,
}

#[pymethods]
impl NativeTools {
    /// Calls `tool` with `arguments` (JSON text of an object); returns the
    /// world's answer as JSON text.
    fn call(&self, py: Python<'_>, tool: &str, arguments: &str) -> PyResult<String> {
        let arguments = crate::parse("the tool call's arguments", arguments)?;
        let tools = self.tools.clone();
        let tool = tool.to_owned();
        py.detach(move || tools.call(&tool, arguments))
            .map(|answer| answer.to_string())
            .map_err(|e| RolloutEnded::new_err(e.to_string()))
    }
}

/// A Python function as a single-turn agent.
pub(crate) struct PyAgent(pub(crate) Callable);

impl SingleTurn for PyAgent {
    fn play(&self, ask: Ask, tools: &Tools) -> Result<String, String> {
        let tools = tools.clone();
        let message = ask.message;
        self.0
            .call(
                "agent",
                "run_agent",
                move |py| {
                    Ok(vec![
                        text(py, message)?,
                        Py::new(py, NativeTools { tools })?.into_any(),
                    ])
                },
                ask.rollout.as_ref().map(rollout),
            )
            .map_err(|e| e.to_string())
    }

    fn describe(&self) -> String {
        format!("fn:{}", self.0.name)
    }
}

/// The rollout a row came from: the run's, inside a run; outside one (a
/// row graded after its run) its opening ask and seed, the index unknown.
fn rollout_of_row(row: &Row) -> Option<Rollout> {
    match sparring::current_rollout() {
        Some(r) => Some(rollout(&r)),
        None => row
            .messages
            .get(1)
            .map(|m| (m.content_str().to_owned(), None, row.seed)),
    }
}

/// A Python function as a grader hook.
pub(crate) struct PyGrader(pub(crate) Callable);

impl Grader for PyGrader {
    fn grade<'a>(&'a self, row: &'a Row) -> BoxFuture<'a, Result<GraderVerdict, GraderError>> {
        Box::pin(async move {
            let rollout = rollout_of_row(row);
            let row_json = serde_json::to_string(row)
                .map_err(|e| GraderError(format!("cannot encode the row: {e}")))?;
            let callable = self.0.clone();
            let reply = tokio::task::spawn_blocking(move || {
                callable.call(
                    "grader",
                    "run_grader",
                    move |py| Ok(vec![text(py, row_json)?]),
                    rollout,
                )
            })
            .await
            .map_err(|e| GraderError(format!("the grader's thread failed: {e}")))?
            .map_err(|e| GraderError(e.to_string()))?;
            let value: Value = serde_json::from_str(&reply)
                .map_err(|e| GraderError(format!("the grader's reply is not JSON: {e}")))?;
            GraderVerdict::from_reply(&value).map_err(|e| GraderError(e.to_string()))
        })
    }

    fn describe(&self) -> String {
        format!("fn:{}", self.0.name)
    }
}

/// A Python function `(tool, arguments) -> result` as the caller's world.
pub(crate) struct PyWorld(pub(crate) Callable);

impl ToolExecutor for PyWorld {
    fn execute(&self, request: ExecuteRequest) -> BoxFuture<'_, Result<Value, ExecuteError>> {
        Box::pin(async move {
            let callable = self.0.clone();
            let ExecuteRequest {
                tool,
                arguments,
                rollout,
                ..
            } = request;
            let arguments = arguments.to_string();
            let reply = tokio::task::spawn_blocking(move || {
                callable.call(
                    "world",
                    "run_execute",
                    move |py| Ok(vec![text(py, tool)?, text(py, arguments)?]),
                    Some(super::callables::rollout(&rollout)),
                )
            })
            .await
            .map_err(|e| ExecuteError(format!("the world's thread failed: {e}")))?
            .map_err(|e| ExecuteError(e.to_string()))?;
            let value: Value = serde_json::from_str(&reply)
                .map_err(|e| ExecuteError(format!("the world's answer is not JSON: {e}")))?;
            Ok(world_answer(&value))
        })
    }

    fn describe(&self) -> String {
        format!("fn:{}", self.0.name)
    }
}
