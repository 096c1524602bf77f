//! Every default of a run option, named once.
//!
//! `docs/options.md` lists these with their meaning; change a value here and
//! there together.

/// Run seed when none is given.
pub const SEED: u64 = 0;
/// Rollouts in flight at once.
pub const CONCURRENCY: usize = 32;
/// Agent replies to the person before a conversation is cut off
/// (`ended_by: "max_turns"`).
pub const MAX_TURNS: u32 = 10;
/// Agent requests within one turn (each answers tool results) before the turn
/// is cut off; stops an agent that calls tools forever.
pub const MAX_TOOL_STEPS: u32 = 8;
/// Rollouts per ask (k).
pub const REPEATS: u32 = 1;
/// Seconds an agent may take to answer one request: a command agent's whole
/// answer, or one HTTP attempt of a model backend.
pub const AGENT_TIMEOUT_SECS: f64 = 60.0;
/// Retries of a model backend request after the first attempt (on 408, 409,
/// 429, 5xx, connection errors and timeouts) before the row ends as
/// `backend_error`.
pub const RETRIES: u32 = 5;
/// Whether model backends are asked for per-token log-probabilities.
pub const LOGPROBS: bool = false;
/// How long the simulated person keeps answering the agent's questions.
pub const PATIENCE: &str = "normal";
/// Whether `simulate` grades rows with the conduct checks.
pub const GRADE: bool = false;
