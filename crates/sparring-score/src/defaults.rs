//! Every default of the scoring reports, named once (`docs/score.md` lists
//! them). The estimators' own defaults (confidence, resamples, permutations,
//! seed) live in `sparring_stats::defaults`.

/// The `k` values `sparring report` prints pass@k and pass^k for.
pub const REPORT_K: [u64; 3] = [1, 2, 4];

/// Text tables: the widest the name column (a category, a marker, an eval
/// run) is padded to; a longer name is shown whole and shifts its own row.
pub const NAME_COLUMN_MAX: usize = 64;

/// Seed of every interval, p-value and floor when none is given: the
/// estimators' own default.
pub use sparring_stats::defaults::SEED;
