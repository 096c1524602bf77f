//! `simulate` and `evaluate`: a request from the Python layer (JSON) and
//! the caller's callables into a `sparring::Simulation`, run on a runtime
//! of its own with the GIL released, and the result back as JSON.

use crate::callables::{Callable, PyAgent, PyGrader, PyWorld};
use crate::{encode, parse, py_err};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde_json::{Value, json};
use sparring::evaluation::EvalSet;
use sparring::single_turn::{Limits, SingleTurnAgent, run_options};
use sparring::types::{OptionsPatch, Row, Spec};
use sparring::{Cancel, LogSlot, Output, Simulation, SimulationResult};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// How often the waiting thread takes the GIL back to look for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

fn field<'a>(request: &'a Value, key: &str) -> Option<&'a Value> {
    request.get(key).filter(|v| !v.is_null())
}

fn string(request: &Value, key: &str) -> Option<String> {
    field(request, key)
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The spec a request names: a spec file (`spec_path`), a spec document
/// (`spec`), or one made of `system_prompt`, `tools` and `seeds`; those
/// three, when given with a spec, replace the spec's own.
pub(crate) fn spec_of(request: &Value) -> PyResult<Spec> {
    let spec_error = |e: sparring::types::SpecError| {
        PyValueError::new_err(format!("spec at `{}`: {}", e.pointer, e.message))
    };
    let overrides = ["system_prompt", "tools", "seeds"];
    let mut spec = if let Some(path) = string(request, "spec_path") {
        sparring::load_spec(std::path::Path::new(&path)).map_err(|e| py_err(&e))?
    } else if let Some(doc) = field(request, "spec") {
        Spec::from_value(doc).map_err(spec_error)?
    } else {
        let mut doc = serde_json::Map::new();
        doc.insert(
            "name".to_owned(),
            field(request, "name")
                .cloned()
                .unwrap_or_else(|| json!("agent")),
        );
        for key in overrides {
            if let Some(v) = field(request, key) {
                doc.insert(key.to_owned(), v.clone());
            }
        }
        return Spec::from_value(&Value::Object(doc)).map_err(spec_error);
    };
    // Overrides are checked the way a spec's own fields are.
    if overrides.iter().any(|k| field(request, k).is_some()) {
        let mut doc = serde_json::Map::new();
        doc.insert("name".to_owned(), json!(spec.name));
        doc.insert("system_prompt".to_owned(), json!(spec.system_prompt));
        doc.insert(
            "tools".to_owned(),
            json!(
                spec.tools
                    .iter()
                    .map(sparring::types::ToolSpec::to_openai)
                    .collect::<Vec<_>>()
            ),
        );
        // Seeds with an expected state name the spec's fixtures.
        doc.insert("fixtures".to_owned(), json!(spec.fixtures));
        for key in overrides {
            if let Some(v) = field(request, key) {
                doc.insert(key.to_owned(), v.clone());
            }
        }
        let given = Spec::from_value(&Value::Object(doc)).map_err(spec_error)?;
        if field(request, "system_prompt").is_some() {
            spec.system_prompt = given.system_prompt;
        }
        if field(request, "tools").is_some() {
            spec.tools = given.tools;
        }
        if field(request, "seeds").is_some() {
            spec.seeds = given.seeds;
            spec.seed_expects = given.seed_expects;
        }
    }
    Ok(spec)
}

/// Options as the Python layer named them, read as a spec's `options`.
pub(crate) fn options_of(request: &Value) -> PyResult<OptionsPatch> {
    let value = field(request, "options")
        .cloned()
        .unwrap_or_else(|| json!({}));
    OptionsPatch::from_value(&value)
        .map_err(|(at, m)| PyValueError::new_err(format!("`{}`: {m}", at.trim_start_matches('/'))))
}

/// Runs a simulation (or, with `eval_set`, an evaluation).
///
/// `request` is JSON: the spec (see [`spec_of`]), `options`, `agent` (a
/// backend spec or command, when `agent` is not a callable), `name`,
/// `sampling`, `execute` (a command or URL, when `execute` is not a
/// callable), `output` (a directory; rows stay in memory without it),
/// `resume`, `tasks` (a previous run's directory or rows file),
/// `dimensions`, `eval_set`. Returns JSON: `summary` (run.json), `rows`,
/// `out`, `interrupted`, and `table` for an evaluation.
#[pyfunction]
#[pyo3(signature = (request, agent=None, grader=None, execute=None))]
pub(crate) fn simulate(
    py: Python<'_>,
    request: &str,
    agent: Option<Py<PyAny>>,
    grader: Option<Py<PyAny>>,
    execute: Option<Py<PyAny>>,
) -> PyResult<String> {
    let request = parse("the simulate request", request)?;
    let spec = spec_of(&request)?;
    let mut patch = options_of(&request)?;
    let log = LogSlot::new();
    let name = string(&request, "name").unwrap_or_else(|| "agent".to_owned());
    let callable = |func: Py<PyAny>, role: &str| Callable {
        func: Arc::new(func),
        name: string(&request, &format!("{role}_name")).unwrap_or_else(|| name.clone()),
        log: log.clone(),
    };
    let mut warnings = Vec::new();
    if agent.is_some() {
        let (p, w) = run_options(patch, &spec.options);
        patch = p;
        warnings = w;
    }
    let eval_set = match field(&request, "eval_set") {
        Some(v) => {
            let asks: Vec<String> = serde_json::from_value(v.clone()).map_err(|_| {
                PyValueError::new_err("`eval_set` must be a list of asks (strings)")
            })?;
            Some(EvalSet::new(asks).map_err(|e| py_err(&e))?)
        }
        None => None,
    };
    let spec_options = spec.options.clone();
    let mut sim = match &eval_set {
        Some(set) => {
            patch = set.simulation_options(patch).map_err(|e| py_err(&e))?;
            set.simulation(spec, patch.clone())
                .map_err(|e| py_err(&e))?
        }
        None => Simulation::new(spec).options(patch.clone()),
    };
    if let Some(d) = field(&request, "dimensions") {
        sim = sim.dimensions(d).map_err(|e| py_err(&e))?;
    }
    match (agent, string(&request, "agent")) {
        (Some(func), _) => {
            let limits = Limits::of(&patch.clone().over(spec_options).resolve());
            let single = SingleTurnAgent::new(PyAgent(callable(func, "agent")), limits)
                .with_sampling(field(&request, "sampling").cloned());
            sim = sim.agent_impl(Arc::new(single));
        }
        (None, Some(backend)) => sim = sim.agent(backend),
        (None, None) => {}
    }
    if let Some(func) = grader {
        sim = sim.grader(Arc::new(PyGrader(callable(func, "grader"))));
    }
    match (execute, string(&request, "execute")) {
        (Some(func), _) => sim = sim.executor(Arc::new(PyWorld(callable(func, "execute")))),
        (None, Some(world)) => sim = sim.execute(world),
        (None, None) => {}
    }
    if let Some(tasks) = string(&request, "tasks") {
        sim = sim.tasks(tasks);
    }
    sim = match string(&request, "output") {
        Some(dir) => sim.out(dir),
        None => sim.output(Output::Memory),
    }
    .resume(field(&request, "resume").and_then(Value::as_bool) == Some(true))
    .log_slot(log);
    let (result, interrupted) = run_detached(py, sim)?;
    let mut result = result.map_err(|e| py_err(&e))?;
    let mut warnings_out = std::mem::take(&mut result.summary.warnings);
    warnings_out.extend(warnings);
    result.summary.warnings = warnings_out;
    let rows = rows_of(&result)?;
    let table = eval_set.as_ref().map(|set| set.table(&rows));
    if let Some(t) = &table {
        result.summary.warnings.extend(t.warnings.iter().cloned());
    }
    encode(&json!({
        "summary": result.summary,
        "rows": rows,
        "out": result.out,
        "interrupted": interrupted,
        "table": table,
    }))
}

/// The rows of a finished run: in memory, or read back from its rows file.
fn rows_of(result: &SimulationResult) -> PyResult<Vec<Row>> {
    match result.rows_path() {
        Some(path) => sparring::io::rows::read_rows(&path).map_err(|e| py_err(&e.into())),
        None => Ok(result.rows.clone()),
    }
}

/// Runs `sim` on a thread and runtime of its own while this thread waits
/// without the GIL, taking it back every [`SIGNAL_POLL`] to look for
/// Ctrl-C. Ctrl-C cancels the run: no rollout starts, those in flight
/// finish and are written, `run.json` says `interrupted`, and the directory
/// resumes. Returns the result and whether it was interrupted.
fn run_detached(
    py: Python<'_>,
    sim: Simulation,
) -> PyResult<(sparring::Result<SimulationResult>, bool)> {
    let cancel = Cancel::new();
    let sim = sim.cancel_with(cancel.clone());
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("sparring-run".to_owned())
        .spawn(move || {
            let result = match tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => {
                    let result = runtime.block_on(sim.run());
                    // A callable still running past its timeout keeps its
                    // thread; the call returns without waiting for it.
                    runtime.shutdown_background();
                    result
                }
                Err(e) => Err(sparring::Error::new(
                    sparring::ErrorKind::Failed,
                    format!("cannot start the async runtime: {e}"),
                )),
            };
            let _ = tx.send(result);
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the run's thread: {e}")))?;
    let rx = Mutex::new(rx);
    let mut interrupted = false;
    loop {
        let got = py.detach(|| {
            rx.lock()
                .map_err(|_| mpsc::RecvTimeoutError::Disconnected)
                .and_then(|r| r.recv_timeout(SIGNAL_POLL))
        });
        match got {
            Ok(result) => return Ok((result, interrupted)),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    if e.is_instance_of::<PyKeyboardInterrupt>(py) {
                        interrupted = true;
                        cancel.cancel();
                    } else {
                        cancel.cancel();
                        return Err(e);
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "the run's thread ended without a result",
                ));
            }
        }
    }
}
