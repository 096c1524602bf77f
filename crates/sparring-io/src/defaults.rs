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
