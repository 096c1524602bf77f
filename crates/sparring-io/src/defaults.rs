//! Every default of the scoring reports, named once. The estimators' own
//! defaults (confidence, resamples, permutations, seed) live in
//! `sparring_stats::defaults`.

/// The `k` values `sparring report` prints pass@k and pass^k for.
pub const REPORT_K: [u64; 3] = [1, 2, 4];

/// Seed of every interval, p-value and floor when none is given: the
/// estimators' own default, re-exported so the binary names it once.
pub use sparring_stats::defaults::SEED;

/// How long an HTTP world (`execute http://…`) may take to accept a
/// connection; the whole call is bounded by `agent_timeout`.
pub const HTTP_WORLD_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
