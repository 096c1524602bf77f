//! sparring's edge: everything that touches files or other processes.
//!
//! - [`spec_file`]: reads a spec from YAML, JSON or TOML (by extension),
//!   replaces `{file: PATH}` references, and validates it; every error names
//!   the file, the JSON pointer and what is wrong, on one line.
//! - [`rows`]: the streaming JSONL writer ([`rows::RowWriter`], one flushed
//!   line per finished rollout), the reader ([`rows::read_rows`]) that names
//!   the line of anything wrong, and `run.json` ([`rows::write_summary`]).
//! - [`command_agent`]: [`command_agent::CommandAgent`], an agent that is a
//!   long-lived subprocess speaking agent protocol v1 (`docs/agent-protocol.md`)
//!   with many requests in flight and a restart when it dies.
//! - [`command_world`]: [`command_world::CommandWorld`], the caller's world
//!   as a subprocess answering tool calls in JSON lines (`execute`).
//! - [`rows::read_score_rows`], [`rows::read_labels`]: rows and gold labels
//!   read leniently for `sparring-score`'s reports.
//! - [`log`]: the run's log file, where agent stderr goes.
//! - [`lock`]: the lock that keeps a second process out of a run directory.
//! - [`rows::read_holdout`], [`rows::read_traces`]: the references of
//!   `sparring-select`'s decontamination, read from files.
//! - [`redact`]: the documented patterns that hide secrets on command lines,
//!   and the masking of what a program echoes of them.
//! - [`export`]: the training files (`openai-sft`, `openai-dpo`, `trl-sft`,
//!   `trl-dpo`, `trl-reward`, `trl-kto`, `trl-grpo`, `parquet`).
//! - [`defaults`]: every default of the export writers, named once.
//!
//! ```no_run
//! let spec = sparring_io::spec_file::load_spec("examples/support-desk/spec.yaml".as_ref())?;
//! println!("{} tools", spec.tools.len());
//! # Ok::<(), sparring_io::Error>(())
//! ```

pub mod command_agent;
pub mod command_grader;
pub mod command_world;
pub mod defaults;
mod error;
pub mod export;
pub mod lock;
pub mod log;
pub mod redact;
pub mod rows;
pub mod spec_file;
mod subprocess;
mod text;

pub use error::Error;
