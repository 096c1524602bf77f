//! sparring: evals and training data for tool-calling agents, by simulation.
//!
//! This is the crate to depend on. It owns the workflow the `sparring` CLI
//! runs, stage by stage, over typed values, with exactly the CLI's warnings;
//! the CLI and the Python package are thin front ends over it.
//!
//! # The stages
//!
//! | stage | here | what it does |
//! |---|---|---|
//! | simulate | [`Simulation`] | plays the agent against simulated people in the sandbox world; rows to `rows.jsonl` (or memory) and `run.json` |
//! | grade | [`grading::grade_rows`] | conduct checks, then a grader hook, then an LLM judge, on any rows |
//! | score | [`reports`] | pass@1 with intervals over tasks, pass@k, pass^k, paired deltas, judge agreement, hack scan, eval variance |
//! | select / export | [`training`] | SFT, DPO, GRPO and reward-model cuts after decontamination, written in the trainers' formats |
//!
//! # Quick start
//!
//! ```no_run
//! use sparring::prelude::*;
//!
//! // Play the shipped example's agent, a command speaking agent protocol v1,
//! // and grade each conversation.
//! let result = Simulation::from_file("examples/support-desk/spec.yaml")?
//!     .agent("python3 examples/support-desk/agent.py")
//!     .options(OptionsPatch { grade: Some(true), ..OptionsPatch::default() })
//!     .out("runs/demo")
//!     .run_blocking()?;
//! // Read the warnings before any number.
//! for w in &result.summary.warnings {
//!     eprintln!("warning: {w}");
//! }
//! let rows = sparring::reports::read_rows_for_scoring(&result.rows_path().unwrap_or_default())?;
//! let report = sparring::reports::report(&rows, &Default::default())?;
//! println!("pass@1 {:?}", report.pass_at_1.value);
//! # Ok::<(), sparring::Error>(())
//! ```
//!
//! An agent of your own plugs in as a closure ([`types::agent_fn`]) through
//! [`Simulation::agent_impl`], and rows can stay in memory
//! ([`Output::Memory`]).
//!
//! # Errors and failures
//!
//! [`Error`] is for bad input and IO; its [`ErrorKind`] tells which. A
//! rollout that fails (the agent crashed, its backend gave up) is a row with
//! `ended_by` and the error, never an `Err`; a run that stopped early says why
//! in `stopped_because`, and anything weaker than asked is in `warnings` and
//! `degraded`.
//!
//! # The crates underneath
//!
//! Re-exported by name for what the facade does not wrap: [`types`] (rows,
//! specs, options, the `Agent` trait), [`engine`], [`world`], [`grid`],
//! [`stats`], [`score`], [`select`], [`llm`], [`io`].

mod backends;
pub mod calibrate;
mod error;
pub mod grading;
pub mod preview;
pub mod reports;
mod simulation;
pub mod training;

pub use backends::Env;
pub use error::{Error, ErrorKind, Result};
pub use simulation::{Cancel, Output, Simulation, SimulationResult};

pub use sparring_engine as engine;
pub use sparring_grid as grid;
pub use sparring_io as io;
pub use sparring_llm as llm;
pub use sparring_score as score;
pub use sparring_select as select;
pub use sparring_stats as stats;
pub use sparring_types as types;
pub use sparring_world as world;

pub use sparring_engine::run::Progress;

/// Reads and validates a spec file (YAML, JSON or TOML by extension).
///
/// # Errors
///
/// [`ErrorKind::Input`] naming the file and the JSON pointer of what is
/// wrong; [`ErrorKind::Io`] when it cannot be read.
pub fn load_spec(path: &std::path::Path) -> Result<Spec> {
    Ok(sparring_io::spec_file::load_spec(path)?)
}
pub use sparring_types::{Agent, OptionsPatch, Row, RunSummary, SimulateOptions, Spec};

/// The names most programs need.
pub mod prelude {
    pub use crate::grading::{GradeSettings, grade_rows};
    pub use crate::{Cancel, Error, ErrorKind, Output, Progress, Simulation, SimulationResult};
    pub use sparring_types::{
        Agent, AgentError, AgentReply, AgentRequest, Message, OptionsPatch, Role, Row, RunSummary,
        SimulateOptions, Spec, ToolCall, agent_fn,
    };
}

/// The futures a multi-threaded runtime moves between threads are `Send`:
/// checked when this crate compiles, never called.
#[allow(dead_code)]
fn futures_are_send(
    sim: Simulation,
    rows: Vec<Row>,
    grading: &grading::Grading,
    sink: &mut Vec<Row>,
) {
    fn send<T: Send>(_: &T) {}
    send(&sim.run());
    send(&grading::grade_rows(rows, grading, sink));
}
