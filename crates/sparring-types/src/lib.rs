//! The vocabulary every other sparring crate speaks.
//!
//! sparring plays a tool-calling agent against simulated people inside a
//! sandbox world and writes one [`Row`] per conversation. This crate holds the
//! types that cross crate boundaries and the contracts between stages:
//!
//! - [`Message`] and [`ToolCall`]: chat-completions shaped conversation turns,
//!   exactly as rows store them and as command agents receive them.
//! - [`ToolSpec`]: one tool, normalised from the OpenAI function format or the
//!   MCP format, with [`ToolSpec::to_openai`] to send it back out.
//! - [`Spec`]: a validated spec (system prompt, tools, output schemas, seeds,
//!   fixtures, options). [`Spec::from_value`] validates a JSON value and names
//!   the JSON pointer of anything wrong; reading files is `sparring-io`'s job.
//! - [`Expect`]: what a seed given as `{ask, expect}` must achieve (calls,
//!   end state, facts said), the goal of that seed's situation.
//! - [`axes`]: the six situation axes by name, their fixed value lists, and
//!   [`AxesSpec`], a spec's pins and forbidden pairs (`axes`).
//! - [`OptionsPatch`] and [`SimulateOptions`]: run options as given (by a spec
//!   or a command line) and as resolved, with every default in [`defaults`].
//! - [`Row`], [`Situation`], [`Persona`], [`Lineage`] and [`RunSummary`]: the
//!   row contract, versioned by [`SCHEMA_VERSION`] and documented field by
//!   field in `docs/rows.md`.
//! - [`Agent`]: the trait an agent implements, whatever it is (a command, a
//!   model endpoint, a closure). Futures are boxed so agents can be `dyn`.
//! - [`ToolExecutor`]: the caller's own world answering tool calls in place
//!   of the sandbox (`execute`), with the [`RolloutContext`] of each call.
//! - [`FaultRecord`], [`FaultKind`], [`FaultSource`]: a fault as the row
//!   records it (`situation.faults`), shared by the world, the plan and the
//!   reports.
//! - [`WorldOptions`]: every number the sandbox world uses (`options.world`).
//! - [`world_spec`]: the spec's `world:` section ([`WorldSpec`]), what the
//!   world is told per tool (ids, `requires`, `effects`, `returns`, `creates`).
//! - [`seed`]: seed derivation by SHA-256 and the one random stream type,
//!   [`seed::Stream`], so every draw is reproducible per seed.
//! - [`hash`]: canonical JSON and SHA-256 for ids that are stable across runs.
//! - [`clip`]: values quoted in error messages cut to a length one line
//!   carries, with their length said.
//! - [`policy`]: policy rule classes ([`RuleClass`]), a rule as data
//!   ([`PolicyRule`]) and a spec's corrections to the reading
//!   ([`PolicyRulesSpec`], `policy_rules`).
//!
//! This crate does no IO and reads no clock or environment.
//!
//! ```
//! use sparring_types::{Spec, seed::Stream};
//! let spec = Spec::from_value(&serde_json::json!({
//!     "name": "demo",
//!     "system_prompt": "Be helpful.",
//!     "tools": [{"name": "get_order", "description": "Look up an order",
//!                "inputSchema": {"type": "object",
//!                                "properties": {"order_id": {"type": "string"}}}}],
//! })).unwrap();
//! assert_eq!(spec.tools[0].name, "get_order");
//! let mut stream = Stream::derive(7, "persona", &[0, 1]);
//! assert!(stream.below(10) < 10);
//! ```

pub mod agent;
pub mod axes;
pub mod clip;
pub mod defaults;
pub mod executor;
mod expect;
mod fault;
mod goal;
pub mod grader;
pub mod hash;
mod introspect;
pub mod keys;
mod log;
mod message;
mod options;
pub mod policy;
pub mod row;
pub mod secrets;
pub mod seed;
mod sink;
mod spec;
mod summary;
mod tool;
mod unique;
pub mod values;
pub mod words;
mod world_options;
pub mod world_spec;

pub use agent::{
    Agent, AgentError, AgentErrorKind, AgentReply, AgentRequest, BoxFuture, CutShort, Finish,
    FnAgent, Stop, Usage, agent_fn,
};
pub use axes::{AxesSpec, AxisValue, ForbiddenPair};
pub use executor::{ExecuteError, ExecuteRequest, RolloutContext, ToolExecutor, world_answer};
pub use expect::{Expect, ExpectedCall, ExpectedState};
pub use fault::{FaultKind, FaultRecord, FaultSource};
pub use goal::Goal;
pub use grader::{Grader, GraderError, GraderReplyError, GraderVerdict};
pub use keys::{IdField, IdSource, id_fields};
pub use log::LogSink;
pub use message::{FunctionCall, Message, Role, ToolCall};
pub use options::{
    OptionsPatch, SimulateOptions, check_avg_turns, check_choice, closest, mode_preset,
    option_names,
};
pub use policy::{PolicyRule, PolicyRulesSpec, RuleClass};
pub use row::{
    Confirmation, Correction, EndedBy, Lineage, Persona, Row, SCHEMA_VERSION, Situation,
    StageVerdict, Timings, Tools,
};
pub use sink::{RowSink, SinkError};
pub use spec::{Spec, SpecError, id_keys, record_id, singular, spec_keys};
pub use summary::{
    Counts, Coverage, Degraded, EndedOnQuestion, EvalRunLine, PairwiseCoverage, PersonRecord,
    PinnedRecord, RepeatsRecord, RowCounter, RunSummary, Search, Soundness, StopReason, TierMix,
    WriterRecord,
};
pub use tool::{ToolSpec, arguments_validator, is_date_time};
pub use unique::{Duplicate, UniqueIds, first_duplicate};
pub use values::{
    Arm, ConfirmationKind, GoalKind, History, Mode, OptionError, Patience, RepeatPolicy, Stage,
    Stance, Tier, ToolCondition, Vocabulary, WorldState,
};
pub use world_options::{WorldOptions, WorldPatch};
pub use world_spec::WorldSpec;
