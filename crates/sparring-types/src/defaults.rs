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
pub const PATIENCE: crate::Patience = crate::Patience::Normal;
/// Situations `sparring calibrate` runs per agent when neither `budget` nor
/// `situations` is given: fresh worlds past the covering array
/// (`unique_situations`), so the pass@1 intervals are narrow enough to rank
/// three agents (about ±7 points at 150 rows, against ±11 at 66).
pub const CALIBRATION_SITUATIONS: u64 = 150;
/// Rows a run needs before its soundness figures can warn.
pub const SOUNDNESS_MIN_ROWS: u64 = 10;
/// A soundness share (rows that reached a tool, persons with every
/// argument) below which the run warns that it measures little.
pub const SOUNDNESS_WARN_BELOW: f64 = 0.5;

/// The chance the simulated person walks away instead of answering a
/// question, by patience and question (docs/options.md, `patience`): a
/// default, not a measurement; fit them on source traces to ground them.
pub mod patience {
    /// `normal`: on the second question.
    pub const NORMAL_SECOND: f64 = 0.35;
    /// `normal`: on each later question.
    pub const NORMAL_LATER: f64 = 0.60;
    /// `short`: on the second question.
    pub const SHORT_SECOND: f64 = 0.60;
    /// `short`: on each later question.
    pub const SHORT_LATER: f64 = 0.90;
}

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
/// Who writes the asks and who plays the person when no backend is named:
/// the offline templates.
pub const TEMPLATE: &str = "template";
/// Errors of a model writer or person kept in the run's `search` record
/// (`writer_errors`, `person_errors`): the last ones.
pub const MODEL_ROLE_ERRORS_KEPT: usize = 5;
/// Failures of a model writer, with no success yet, after which a run stops
/// asking it and writes the remaining situations from templates.
pub const WRITER_GIVE_UP: u64 = 3;

/// Repeat policy when no mode sets one: every ask gets all k rollouts.
pub const REPEAT_POLICY: crate::RepeatPolicy = crate::RepeatPolicy::Fixed;
/// Under `repeat_policy: successive`, rollouts of an ask that must agree
/// before its remaining repeats are skipped (fewer when k is smaller).
pub const SUCCESSIVE_FIRST: u32 = 3;
/// Whether the run keeps drawing situations past the covering array.
pub const UNIQUE_SITUATIONS: bool = false;
/// Whether rollouts go in batches that finish before the next is chosen.
pub const REPRODUCIBLE: bool = false;
/// Times the task set is run in one call.
pub const RUNS: u32 = 1;
/// With `unique_situations`, rows in a row without a new behaviour
/// signature after which the run stops as `saturated`.
pub const SATURATION_ROWS: u64 = 200;
/// Unique situations drawn at a time (at least `concurrency`), so a run
/// with a large budget holds only a few in memory.
pub const UNIQUE_DRAW: usize = 64;
/// Seconds between plain progress lines when stderr is not a terminal.
pub const PROGRESS_LINE_SECS: f64 = 10.0;

/// What each `mode` sets, below anything given explicitly
/// (docs/options.md, "Modes").
pub mod modes {
    /// `eval`: one rollout per ask; pass@1 over many tasks.
    pub const EVAL_REPEATS: u32 = 1;
    /// `eval`: repeat policy.
    pub const EVAL_POLICY: crate::RepeatPolicy = crate::RepeatPolicy::Fixed;
    /// `eval`: wordings per situation.
    pub const EVAL_PHRASINGS: u32 = 1;
    /// `rl`: a group of 8 rollouts per ask, for group-relative training.
    pub const RL_REPEATS: u32 = 8;
    /// `rl`: stop repeating an ask whose first rollouts agree (a unanimous
    /// group has no signal for group-relative training).
    pub const RL_POLICY: crate::RepeatPolicy = crate::RepeatPolicy::Successive;
    /// `rl`: wordings per situation.
    pub const RL_PHRASINGS: u32 = 1;
    /// `sft`: two rollouts per ask, so a passing one is likely among them.
    pub const SFT_REPEATS: u32 = 2;
    /// `sft`: repeat policy.
    pub const SFT_POLICY: crate::RepeatPolicy = crate::RepeatPolicy::Fixed;
    /// `sft`: three wordings per situation, for variety in the prompts.
    pub const SFT_PHRASINGS: u32 = 3;
}

// Grading (`sparring grade`, `sparring judge-trust`; docs/grading.md).

/// Identical consecutive tool calls that fail `repeated_identical_call`.
pub const REPEATED_CALLS: usize = 3;
/// Words a run of a tool's description, or of a free-text value in a
/// call or a tool's answer, must have for an agent's sentence repeating it
/// to count as a quote rather than a claim (`claimed_without_call`).
pub const QUOTED_MIN_WORDS: usize = 3;
/// Half-width of the band around 0.5 in which a decision judge is unsure.
pub const JUDGE_UNSURE_BAND: f64 = 0.1;
/// Times an unparseable judge verdict is asked again.
pub const JUDGE_VERDICT_RETRIES: u32 = 1;
/// Seconds a grader or judge command may take per row.
pub const GRADE_HOOK_TIMEOUT_SECS: f64 = 60.0;
/// Rows `sparring grade` grades at once (each may wait on a grader or a
/// judge).
pub const GRADE_CONCURRENCY: usize = 8;
/// Rows `judge-trust` builds probes from, at most.
pub const TRUST_PROBE_ROWS: usize = 8;
/// How many times its length the padding probe makes a reply.
pub const TRUST_PADDING_FACTOR: usize = 3;
/// Retries of an HTTP grader request (`--grader URL`) after the first
/// attempt, on 408, 409, 429, 5xx and connection failures.
pub const GRADER_RETRIES: u32 = 2;
/// Temperature sent to a model judge (`openai:`, `anthropic:`): grading
/// should not be a draw.
pub const JUDGE_TEMPERATURE: f64 = 0.0;
/// Characters of a policy rule's text shown beside its id in `report`,
/// `delta`, rows and the grid (`sparring_types::policy::short_text`).
pub const POLICY_RULE_TEXT_CHARS: usize = 80;
/// Errors: the characters a quoted value (a name, a key, a pointer, a
/// parser's rendering of a value) keeps; a longer one is cut with its length
/// said (`sparring_types::clip`).
pub const QUOTED_CHARS: usize = 200;
/// Errors: the bytes one line of an error message may take; a longer line
/// keeps its start and end and says how much was cut (`sparring_types::clip`).
pub const ERROR_LINE_BYTES: usize = 2048;

/// Defaults of the sandbox world (`options.world`, [`crate::WorldOptions`]).
/// `docs/options.md` lists them with their meaning.
pub mod world {
    /// Probability that one tool call meets a random fault; also the share of
    /// planned situations whose tool carries a scheduled fault.
    pub const FAULT_RATE: f64 = 0.0;
    /// Relative weight of `timeout` among fault kinds.
    pub const TIMEOUT_WEIGHT: f64 = 1.0;
    /// Relative weight of `server_error` among fault kinds.
    pub const SERVER_ERROR_WEIGHT: f64 = 1.0;
    /// Relative weight of `rate_limited` among fault kinds.
    pub const RATE_LIMITED_WEIGHT: f64 = 1.0;
    /// Relative weight of `malformed` among fault kinds.
    pub const MALFORMED_WEIGHT: f64 = 1.0;
    /// Relative weight of `empty` among fault kinds.
    pub const EMPTY_WEIGHT: f64 = 1.0;
    /// Seconds a timed-out call says it waited.
    pub const TIMEOUT_SECS: u32 = 30;
    /// Seconds a rate-limited call asks the agent to wait (its hint).
    pub const RETRY_AFTER_SECS: u32 = 2;
    /// Share of the answer's text a malformed result keeps before it is cut.
    pub const MALFORMED_KEEP: f64 = 0.5;
    /// Records the world generates for an entity the spec gives no fixtures for.
    pub const RECORDS_PER_ENTITY: u32 = 20;
    /// Records a search over generated records makes up when none match.
    pub const RECORDS_PER_LIST: u32 = 3;
    /// Records one list or search answer holds at most.
    pub const PAGE_SIZE: u32 = 20;
    /// Digits of a generated id when no fixture or description shows a shape.
    pub const ID_DIGITS: u32 = 8;
    /// Items in a generated array when its schema sets no bounds.
    pub const ARRAY_ITEMS: u32 = 2;
    /// Nesting depth at which the record generator stops descending.
    pub const MAX_DEPTH: u32 = 8;
    /// Words an argument must share, in order, with its parameter's
    /// description before it counts as an echo of the description.
    pub const ECHO_MIN_WORDS: u32 = 2;

    /// Share of generated records (of an entity whose records name their
    /// person, not itself a person) that belong to the person of the
    /// record before them, so that owners have several records (`several`
    /// situations): the second record always does, each later odd-placed
    /// one at this share.
    pub const SHARED_OWNER_SHARE: f64 = 0.5;

    /// Upper bound of `records_per_entity`, `records_per_list` and
    /// `page_size`: every entity's ids are made when first touched, so the
    /// bound keeps one rollout's memory and time small.
    pub const MAX_RECORDS: u32 = 10_000;
    /// Upper bound of `array_items`.
    pub const MAX_ARRAY_ITEMS: u32 = 100;
    /// Upper bound of `max_depth`.
    pub const MAX_DEPTH_BOUND: u32 = 32;
    /// Upper bound of `id_digits`.
    pub const MAX_ID_DIGITS: u32 = 18;
    /// Longest string the record generator makes, whatever a schema's
    /// `minLength` asks (a longer minimum is not met).
    pub const MAX_STRING_CHARS: usize = 4_096;
    /// Most items the record generator puts in one array, whatever a
    /// schema's `minItems` asks.
    pub const MAX_GENERATED_ITEMS: u64 = 1_000;
    /// Most values (strings, numbers, objects, array items …) in one
    /// generated record: past it, arrays stop growing and optional fields
    /// are left out, so nested `minItems` cannot multiply into millions.
    pub const MAX_GENERATED_VALUES: u64 = 20_000;
}
