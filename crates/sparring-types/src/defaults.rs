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
/// Seconds a command agent may take to answer one request.
pub const AGENT_TIMEOUT_SECS: f64 = 60.0;
/// How long the simulated person keeps answering the agent's questions.
pub const PATIENCE: &str = "normal";
/// Whether `simulate` grades rows with the conduct checks.
pub const GRADE: bool = false;
/// Wordings written per situation (n).
pub const PHRASINGS: u32 = 1;
/// Share of situations drawn from the hard tiers (ambiguous, boundary,
/// adversarial).
pub const HARD_SHARE: f64 = 0.40;
/// Post-optimisation effort of the covering-array generator, as a multiplier
/// of its default work budget (`sparring_grid::Effort`); 0 builds without
/// optimising. A tenth of the generator's default: spec grids are small and
/// reach their lower bound early, and a run should not spend a second
/// shaving one row off a grid it may only partly run.
pub const GRID_EFFORT: f64 = 0.1;

// Grading (`sparring grade`, `sparring judge-trust`; docs/grading.md).

/// Identical consecutive tool calls that fail `repeated_identical_call`.
pub const REPEATED_CALLS: usize = 3;
/// Half-width of the band around 0.5 in which a decision judge is unsure.
pub const JUDGE_UNSURE_BAND: f64 = 0.1;
/// Times an unparseable judge verdict is asked again.
pub const JUDGE_VERDICT_RETRIES: u32 = 1;
/// Seconds a grader or judge command may take per row.
pub const GRADE_HOOK_TIMEOUT_SECS: f64 = 60.0;
/// Rows `judge-trust` builds probes from, at most.
pub const TRUST_PROBE_ROWS: usize = 8;
/// How many times its length the padding probe makes a reply.
pub const TRUST_PADDING_FACTOR: usize = 3;
