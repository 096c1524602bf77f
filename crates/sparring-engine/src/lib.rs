//! The engine: situations in, graded rows out.
//!
//! A run goes through these stages, each in its own module:
//!
//! 1. [`plan`] lays out the situations a spec's agent can meet: each tool
//!    against a few stances of the person and the world states its ids allow
//!    (a record that exists, one that does not), plus one situation per seed
//!    ask. Each [`plan::Task`] carries its ask and what the person knows.
//! 2. [`person`] writes the opening ask from templates and plays the person:
//!    it answers what it knows, says so when it does not, agrees when asked to
//!    confirm, and may walk away when its patience runs out.
//! 3. [`rollout`] plays one conversation: person, agent and world take turns
//!    until the agent answers without a question, the person leaves, or a cap
//!    is reached. A failure of the agent ends the row, not the run.
//! 4. [`grade`] runs the deterministic conduct checks on a finished row.
//! 5. [`run`] schedules rollouts at the asked concurrency and hands each row to
//!    a [`run::RowSink`] as soon as it finishes.
//!
//! The engine does no file or network IO and reads no clock of its own: agents
//! come in as [`sparring_types::Agent`] trait objects, rows go out through a
//! sink, time comes from a [`run::Clock`].
//!
//! ```
//! use std::sync::Arc;
//! use sparring_engine::plan::plan;
//! use sparring_types::{SimulateOptions, Spec};
//! let spec = Spec::from_value(&serde_json::json!({
//!     "name": "shop", "system_prompt": "Help customers.",
//!     "tools": [{"name": "get_order", "inputSchema": {"type": "object",
//!         "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}],
//!     "fixtures": {"orders": [{"order_id": "A1", "status": "pending"}]},
//! })).unwrap();
//! let tasks = plan(&spec, &SimulateOptions::default());
//! assert!(tasks.iter().any(|t| t.ask.contains("A1")));
//! ```

pub mod grade;
pub mod judge;
pub mod person;
pub mod plan;
pub mod rollout;
pub mod run;
pub mod stages;
mod text;
pub mod trust;
