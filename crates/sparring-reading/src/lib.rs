//! The spec's words, read once.
//!
//! A spec is written in English: tool names and descriptions, a policy in
//! sentences, fixture records with statuses. This crate is the one place that
//! reads them. [`tool`] reads what each tool does from its name and
//! parameters (an [`Operation`] on an entity, the money it moves, the fields it
//! reads); [`precondition`] reads what a real backend would enforce from the
//! descriptions and the policy, sentence by sentence ([`Reading`]);
//! [`owners`] reads who owns a record ([`Owners`]: which entities are people,
//! which fields point at whose records).
//!
//! [`SpecReading::of`] reads a whole spec once into a plain value: the
//! tool models ([`models`]), the preconditions the descriptions and the
//! policy state, and the policy's rules with their checks ([`policy`]). The
//! world, the situations, the person, the writer and the grader take it and
//! read no English themselves; a run builds it once and shares it.
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
pub mod owners;
pub mod policy;
pub mod precondition;
pub mod text;
pub mod tool;

use sparring_types::Spec;
use std::sync::atomic::{AtomicU64, Ordering};

pub use owners::{Link, LinkBy, Owners};
pub use policy::{Policy, PolicyError};
pub use precondition::{Precondition, Reading, RuleReader, Source, preconditions};
pub use tool::{
    KeyFields, Money, Operation, ToolModel, infer_tool, infer_tool_keyed, is_write_tool,
    key_fields, name_words, plural, status_after,
};

/// Why a spec could not be read: a correction of its `policy_rules` names a
/// rule the policy does not have (or adds one it has).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// A `policy_rules` correction the policy cannot take.
    #[error(transparent)]
    Policy(#[from] PolicyError),
}

/// Readings made since the process started: a diagnostic, so a test can
/// hold a run to reading its spec once.
static READINGS: AtomicU64 = AtomicU64::new(0);

/// Everything the spec's words say, read once: a plain value with no world
/// and no seed, which a run shares behind an `Arc`.
#[derive(Clone, Debug)]
pub struct SpecReading {
    models: Vec<ToolModel>,
    preconditions: Vec<Reading>,
    policy: Policy,
}

impl SpecReading {
    /// Reads a spec: its tools, the preconditions their descriptions and
    /// the policy state, and the policy with its `policy_rules` applied.
    ///
    /// # Errors
    ///
    /// When `policy_rules` names a rule the policy does not have.
    pub fn of(spec: &Spec) -> Result<Self, ReadError> {
        Self::read(spec, true)
    }

    /// As [`SpecReading::of`], passing over corrections of rules the policy
    /// does not have (rows graded under a policy that has changed since).
    pub fn lenient(spec: &Spec) -> Self {
        // INVARIANT: a lenient reading applies no correction strictly, and
        // a correction is the only way reading fails.
        Self::read(spec, false).unwrap_or_else(|_| Self {
            models: models::tool_models(spec),
            preconditions: Vec::new(),
            policy: Policy::default(),
        })
    }

    fn read(spec: &Spec, strict: bool) -> Result<Self, ReadError> {
        READINGS.fetch_add(1, Ordering::Relaxed);
        let models = models::tool_models(spec);
        let reader = RuleReader::new(&spec.tools, &models, &spec.fixtures, &spec.system_prompt);
        let preconditions = reader.read_all(&spec.system_prompt);
        let policy = Policy::of_models(spec, &models, strict)?;
        Ok(Self {
            models,
            preconditions,
            policy,
        })
    }

    /// What each tool does, in the order of the spec's tools.
    pub fn models(&self) -> &[ToolModel] {
        &self.models
    }

    /// What the descriptions and the policy say each tool needs or leaves,
    /// sentence by sentence.
    pub fn preconditions(&self) -> &[Reading] {
        &self.preconditions
    }

    /// The policy's rules, with the spec's corrections applied.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// How many spec readings this process has made.
    pub fn made() -> u64 {
        READINGS.load(Ordering::Relaxed)
    }

    /// The reading as `sparring policy --json` and `sparring world
    /// --explain` show it: the tools' models and the policy's rules.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "tools": self.models,
            "preconditions": self.preconditions,
            "rules": self.policy.rules().iter().map(policy::Rule::to_json).collect::<Vec<_>>(),
        })
    }
}

/// A type that must cross threads: a run shares its reading between tasks.
const _: fn() = || {
    fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<SpecReading>();
};
