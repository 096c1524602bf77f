//! Every default of the scoring reports, cuts, decontamination and exports,
//! named once (`docs/export.md` lists the cut and export ones with their
//! meaning; change a value here and there together). The estimators' own
//! defaults (confidence, resamples, permutations, seed) live in
//! `sparring_stats::defaults`.

/// The `k` values `sparring report` prints pass@k and pass^k for.
pub const REPORT_K: [u64; 3] = [1, 2, 4];

/// Seed of every interval, p-value and floor, and of the cuts' tie-breaking
/// draws, when none is given: the estimators' own default, re-exported so the
/// binary names it once.
pub use sparring_stats::defaults::SEED;

/// SFT: reward a row needs to be a candidate (`reward == 1`).
pub const SFT_REWARD: f64 = 1.0;
/// SFT: rows kept per task (per prompt). More than one spreads the picks of a
/// task across its behaviour signatures too.
pub const SFT_PER_TASK: usize = 1;

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

/// Parquet export: share of tasks put in the `holdout` split when no held-out
/// rows file is given.
pub const HOLDOUT_FRACTION: f64 = 0.1;

/// How long an HTTP world (`execute http://…`) may take to accept a
/// connection; the whole call is bounded by `agent_timeout`.
pub const HTTP_WORLD_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Command agents: ids of recent replies kept per process, so a second
/// reply to one of them is told apart from an id nobody asked for.
pub const AGENT_ANSWERED_IDS_KEPT: usize = 4096;

/// Command agents: how long, after its stdout closed, sparring waits for the
/// process's exit status to name it in the error.
pub const AGENT_EXIT_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

/// Grading: rows graded at once (`sparring grade`), and the most processes
/// a command grader keeps when the caller names no number
/// (`CommandGrader::start_pool` with 0 starts one per CPU up to this; each
/// process grades one row at a time).
pub const GRADE_CONCURRENCY: usize = 8;

/// Grading: rows in a row on which no hook (grader, judge) could be reached
/// after which the pass stops (`FailFast`): a dead endpoint or a broken
/// command then costs seconds, not one timeout per row.
pub const GRADE_FAIL_FAST_ROWS: u64 = 8;
