//! The spec's words, read once.
//!
//! A spec is written in English: tool names and descriptions, a policy in
//! sentences, fixture records with statuses. This crate is the one place that
//! reads them. [`tool`] reads what each tool does from its name and
//! parameters (an [`Operation`] on an entity, the money it moves, the fields it
//! reads); [`precondition`] reads what a real backend would enforce from the
//! descriptions and the policy, sentence by sentence ([`Reading`]).
//!
//! The world, the situations, the person, the writer and the grader take
//! these readings and read no English themselves.
//!
//! ```
//! use sparring_types::ToolSpec;
//! let tool = ToolSpec {
//!     name: "cancel_order".into(),
//!     description: "Cancel a pending order.".into(),
//!     parameters: serde_json::json!({"type": "object", "properties": {"order_id": {"type": "string"}}}),
//!     output_schema: None,
//! };
//! let model = sparring_reading::infer_tool(&tool, &[]);
//! assert_eq!(model.entity.as_deref(), Some("orders"));
//! ```

pub mod models;
pub mod policy;
pub mod precondition;
pub mod text;
pub mod tool;

pub use precondition::{Precondition, Reading, RuleReader, Source, preconditions};
pub use tool::{
    Money, Operation, ToolModel, infer_tool, is_write_tool, name_words, plural, status_after,
};
