//! The engine: situations in, graded rows out.
//!
//! A run goes through these stages, each in its own module:
//!
//! 1. [`axes`] reads the six situation axes out of a spec (tools, policy
//!    rules from the system prompt, stances, world states, tool conditions,
//!    histories) with the pairs that cannot meet, and builds the pairwise
//!    covering array over them (seeds are its required rows).
//! 2. [`plan`] turns each array row into a situation: the person's facts
//!    chosen to match the world state, a tier drawn at `hard_share`, a style,
//!    and `phrasings` wordings of the ask from the [`writer`] (templates in
//!    `data/asks.toml`). Each wording is a [`plan::Task`].
//! 3. [`person`] plays the person: it answers what it knows, says so when it
//!    does not, agrees when asked to confirm, and may walk away when its
//!    patience runs out. [`model_people`] hands the writing of asks and of
//!    the person's answers to a model (any [`sparring_types::Agent`]), with
//!    the templates standing in wherever the model fails.
//! 4. [`rollout`] plays one conversation: person, agent and world take turns
//!    until the agent answers without a question, the person leaves, or a cap
//!    is reached (`max_turns`, or with `avg_turns` a cap each rollout draws,
//!    [`rollout::turn_cap`]). A failure of the agent ends the row, not the
//!    run.
//! 5. [`grade`] runs the deterministic conduct checks on a finished row.
//! 6. [`run`] schedules rollouts at the asked concurrency and hands each row to
//!    a [`run::RowSink`] as soon as it finishes.
//!
//! The engine does no file or network IO and reads no clock of its own: agents
//! come in as [`sparring_types::Agent`] trait objects, rows go out through a
//! sink, time comes from a [`run::Clock`].
//!
//! ```
//! use sparring_engine::plan::plan;
//! use sparring_types::{SimulateOptions, Spec};
//! let spec = Spec::from_value(&serde_json::json!({
//!     "name": "shop", "system_prompt": "Help customers. Never refund twice.",
//!     "tools": [{"name": "refund_order", "inputSchema": {"type": "object",
//!         "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}],
//!     "fixtures": {"orders": [{"order_id": "A1", "status": "delivered"},
//!                             {"order_id": "A2", "status": "refunded"}]},
//! })).unwrap();
//! let plan = plan(&spec, &SimulateOptions::default()).unwrap();
//! // Every pair of axis values is covered by some situation.
//! assert_eq!(plan.array.pairs_covered, plan.array.pairs_planned);
//! assert!(plan.tasks.iter().any(|t| t.ask.contains("A1")));
//! ```

pub mod axes;
pub mod context;
pub mod defaults;
pub mod goal;
pub mod grade;
pub mod ground;
pub mod identity;
pub mod judge;
pub mod model_people;
pub mod person;
pub mod plan;
pub use sparring_reading::policy;
pub mod rollout;
pub mod run;
pub mod stages;
pub mod trust;
pub mod writer;
