//! Every default of the cuts and decontamination, named once
//! (`docs/export.md` lists them with their meaning; change a value here and
//! there together).

/// Seed of the cuts' tie-breaking draws when none is given: the estimators'
/// default seed, re-exported so one value serves the score and the cuts.
pub use sparring_stats::defaults::SEED;

/// SFT: reward a row needs to be a candidate (`reward == 1`).
pub const SFT_REWARD: f64 = 1.0;
/// SFT: rows kept per task (per prompt). More than one spreads the picks of a
/// task across its behaviour signatures too.
pub const SFT_PER_TASK: usize = 1;

/// SFT: whether rows the person walked away from (`ended_by: user_left`)
/// are kept. They end on an unanswered question, so by default they are not
/// examples of a finished conversation.
pub const SFT_KEEP_USER_LEFT: bool = false;

/// DPO: least reward difference between chosen and rejected.
pub const DPO_MARGIN: f64 = 0.5;
/// DPO: largest ratio between the longer and the shorter side, in characters
/// of agent turns, so a pair does not teach "longer wins".
pub const DPO_MAX_LENGTH_RATIO: f64 = 1.5;
/// DPO: pairs kept per task at most.
pub const DPO_MAX_PAIRS_PER_TASK: usize = 4;

/// GRPO: lowest pass rate of a group that is kept (inclusive).
pub const RL_MIN_PASS_RATE: f64 = 0.2;
/// GRPO: highest pass rate of a group that is kept (inclusive).
pub const RL_MAX_PASS_RATE: f64 = 0.8;
/// GRPO: fewest graded rollouts a group needs; one rollout has no spread.
pub const RL_MIN_GROUP_SIZE: usize = 2;

/// DPO and reward-model pairs: rows of one task paired at most. Pairing is
/// quadratic in a task's rows, so a task of more rows is paired over this
/// many, spread evenly over its rows ordered by reward (the highest and the
/// lowest always among them); the rest are excluded as
/// `over_max_rows_per_task`. 20,000 rows of one task then cost 16,256
/// ordered pairs, not 400 million.
pub const PAIR_MAX_ROWS_PER_TASK: usize = 128;

/// Reward model: least reward difference for a pair.
pub const RM_MIN_MARGIN: f64 = 1e-9;
/// Reward model: pairs kept per task at most.
pub const RM_MAX_PAIRS_PER_TASK: usize = 16;

/// A row passes when its reward is at least this (as in reports).
pub const PASS_THRESHOLD: f64 = 0.5;

/// Decontamination: words per n-gram.
pub const DECONTAM_NGRAM: usize = 8;
/// Decontamination: a row is dropped when at least this share of its
/// distinct n-grams appears in the reference.
pub const DECONTAM_THRESHOLD: f64 = 0.5;
