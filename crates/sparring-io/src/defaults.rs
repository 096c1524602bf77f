//! Every default of the export writers, named once (`docs/export.md` lists
//! them with their meaning). The cuts' defaults are `sparring_select::defaults`,
//! the reports' `sparring_score::defaults`.

/// Seed of the export's draws (the Parquet holdout split) when none is given.
pub use sparring_select::defaults::SEED;

/// A row passes when its reward is at least this (as in reports).
pub use sparring_select::defaults::PASS_THRESHOLD;

/// Parquet export: share of tasks put in the `holdout` split when no held-out
/// rows file is given.
pub const HOLDOUT_FRACTION: f64 = 0.1;

/// Rows readers: distinct `tools` lists a file's rows share one copy of each
/// (a run's rows all carry its spec's list; a file joined from a few runs
/// has a few). Rows with a list beyond these keep their own copy.
pub const ROWS_TOOL_LISTS_SHARED: usize = 16;

/// Command agents: ids of recent replies kept per process, so a second
/// reply to one of them is told apart from an id nobody asked for.
pub const AGENT_ANSWERED_IDS_KEPT: usize = 4096;

/// Command agents: how long, after its stdout closed, sparring waits for the
/// process's exit status to name it in the error.
pub const AGENT_EXIT_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

/// Grading: the most processes a command grader keeps when the caller names
/// no number (`CommandGrader::start_pool` with 0 starts one per CPU up to
/// this; each process grades one row at a time): as many as rows are graded
/// at once.
pub use sparring_types::defaults::GRADE_CONCURRENCY;

/// Grading: rows in a row on which no hook (grader, judge) could be reached
/// after which the pass stops (`FailFast`): a dead endpoint or a broken
/// command then costs seconds, not one timeout per row.
pub const GRADE_FAIL_FAST_ROWS: u64 = 8;
