//! Every tunable of the estimators, named once.

/// Confidence level of intervals (two-sided).
pub const CONFIDENCE: f64 = 0.95;

/// Bootstrap resamples.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// Seed used when the caller has no opinion.
pub const SEED: u64 = 0;

/// The sign-flip test enumerates all 2^m assignments when at most this many
/// paired tasks have a non-zero difference.
pub const EXACT_PERMUTATION_MAX_NONZERO: usize = 20;

/// Random sign assignments of the Monte Carlo sign-flip test.
pub const PERMUTATIONS: usize = 100_000;

/// Within-task reward shuffles of the hack scan's permutation floor.
pub const HACK_SCAN_SHUFFLES: usize = 1_000;

/// Quantile of the shuffled maximum |corr| that sets the hack scan's floor.
pub const HACK_SCAN_FLOOR_QUANTILE: f64 = 0.95;

/// Relative tolerance for "at least as extreme" in permutation tests: an
/// assignment counts when its |sum| is at least the observed |sum| minus
/// this times the sum of the absolute differences. It absorbs rounding from
/// adding the same terms in another order, and nothing more.
pub const TIE_TOLERANCE: f64 = 1e-12;

/// The bootstrap ([`crate::Resampler::Auto`]) and the Monte Carlo sign-flip
/// test draw multinomial or binomial counts per distinct value, instead of
/// one index or sign per task, when there are at least this many tasks per
/// distinct value. Both ways sample the same distribution; this only picks
/// the faster one (a binomial draw costs about as much as 16 index draws),
/// and it decides which random draws a seed produces.
pub const TASKS_PER_DISTINCT_VALUE_FOR_COUNTS: usize = 16;
