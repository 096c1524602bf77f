//! The sandbox world: what answers an agent's tool calls during a rollout.
//!
//! A [`World`] is built from a spec's tools and fixtures. It reads each tool's
//! name and parameters to learn which **entity** the tool is about (`order_id`
//! → `orders`, `get_order` → `orders`) and what **operation** it performs (the
//! verb: `get` reads, `cancel` changes state, `update` edits, `create` adds;
//! see [`Operation`]). It then answers every call the way a real backend
//! would, and remembers: a cancelled order reads back cancelled, and
//! cancelling it again is refused with the reason.
//!
//! Every answer is a [`ToolResult`]: `{"ok": true, "result": …}` or
//! `{"ok": false, "error": {"kind", "message", "hint"}}`, the JSON an agent
//! receives as a tool message. The error kinds are `not_found` (an unknown
//! id), `refused` (an argument that echoes the schema, or an action the
//! record's state does not allow), `invalid_arguments` (an argument that
//! breaks the schema) and `unknown_tool`.
//!
//! A world is deterministic: the same spec, seed and calls give the same
//! answers. It does no IO.
//!
//! ```
//! use sparring_types::Spec;
//! use sparring_world::World;
//! let spec = Spec::from_value(&serde_json::json!({
//!     "name": "shop", "system_prompt": "",
//!     "tools": [{"name": "cancel_order", "inputSchema": {"type": "object",
//!         "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}],
//!     "fixtures": {"orders": [{"order_id": "A1", "status": "pending"}]},
//! })).unwrap();
//! let mut world = World::new(&spec, 0);
//! let first = world.call("cancel_order", &serde_json::json!({"order_id": "A1"}));
//! assert!(first.is_ok());
//! let again = world.call("cancel_order", &serde_json::json!({"order_id": "A1"}));
//! assert_eq!(again.error_kind(), Some("refused"));
//! let missing = world.call("cancel_order", &serde_json::json!({"order_id": "ZZ"}));
//! assert_eq!(missing.error_kind(), Some("not_found"));
//! ```

mod calc;
mod fault;
mod generate;
mod matching;
mod refuse;
mod result;
mod rulebook;
mod shape;
mod vocab;
mod world;

pub use fault::{fault_error, fault_garble};
pub use generate::name_in_id;
pub use matching::{looks_like_phone, same_identifier};
pub use refuse::PLACEHOLDERS;
pub use result::{ErrorKind, Records, ToolResult};
pub use shape::{IdShape, description_example};
pub use sparring_reading::{Money, Operation, ToolModel, infer_tool, name_words, status_after};
pub use sparring_reading::{Precondition, Reading, RuleReader, Source, preconditions};
pub use sparring_types::{FaultKind, FaultRecord, FaultSource, WorldOptions};
pub use world::{ANY_TOOL, TERMINAL_STATUSES, World};
