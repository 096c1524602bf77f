//! Every tunable of the generator, named once.
//!
//! The public constants bound what a caller may ask for; the crate-private ones
//! steer the search. Changing any of them changes generated arrays, so the golden
//! test in `tests/golden.rs` must be updated in the same commit.

/// Work units that effort `1` (the default) buys for post-optimisation.
///
/// One work unit is roughly one pair-counter look-up (a search step and each
/// row it scans are charged too). The value is calibrated so that the default
/// effort stays under one second on the reference machine (2-vCPU Xeon VM):
/// at most about 0.8 s of CPU on the benchmark configurations in
/// `docs/benchmarks-grid.md`, 2-4 ns per unit. The budget is counted, never
/// timed, so results do not depend on the clock.
pub const DEFAULT_EFFORT_WORK: u64 = 300_000_000;

/// Largest effort multiplier accepted by [`crate::Effort::new`] and its parser.
pub const MAX_EFFORT: u32 = 1000;

/// Largest number of values on one axis.
pub const MAX_LEVELS: usize = 65_534;

/// Largest number of value pairs (summed over all pairs of axes) a grid may have.
///
/// Memory grows with about 12 bytes per pair; 20 axes of 200 values have
/// 7.6 million pairs.
pub const MAX_PAIRS: u64 = 1 << 25;

/// Search steps allowed for deciding which pairs the forbidden pairs still allow.
///
/// Realistic constraint sets need a few steps per pair; the limit only stops
/// adversarial inputs where pairwise constraints encode a hard puzzle.
pub const CONSTRAINT_SEARCH_BUDGET: u64 = 50_000_000;

/// Probability of a random-walk move instead of a greedy one in the local
/// searches (whole arrays and cover starters).
pub(crate) const RANDOM_WALK_PROBABILITY: f64 = 0.01;

/// Steps during which a changed cell may not change again (tabu tenure);
/// 1 means a cell may change again on the very next step.
pub(crate) const TABU_TENURE: u64 = 2;

/// Probability that a circulant cover-starter search step makes a random
/// move that fills its chosen slot instead of the best such move.
pub(crate) const CIRCULANT_RANDOM_WALK: f64 = 0.05;

/// Tabu tenure of the circulant cover-starter search (steps during which a
/// changed position may not change again). Measured on 10^20 with three
/// infinities over 20 seeds: 3 halves the median work of 2 and beats 1, 4
/// and 8.
pub(crate) const CIRCULANT_TABU_TENURE: u64 = 3;

/// Share of the work budget for the cover-starter searches on uniform grids,
/// split evenly over the numbers of infinities tried. The plain search gets
/// what the structured seeds leave, and the final polish of the best
/// developed starter whatever is then unspent.
pub(crate) const STARTER_SHARE: f64 = 0.5;

/// Part of a starter search's share spent on the small covering array over
/// its infinities (1 / this).
pub(crate) const INFINITY_SHARE_DIVISOR: u64 = 4;

/// Work units charged for one circulant search step besides its move
/// evaluations (choosing the slot, random numbers).
pub(crate) const CIRCULANT_STEP_WORK: u64 = 20;

/// Part of a starter search's share, after the infinities, that a circulant
/// starter may spend (1 / this); it usually needs far less, and what it
/// leaves goes to the search for rows around it and the general starter
/// search.
pub(crate) const CIRCULANT_SHARE_DIVISOR: u64 = 2;

/// Part of what the circulant leaves that the search for rows completing it
/// (the pairs of infinities it does not show) may spend (1 / this).
pub(crate) const AROUND_SHARE_DIVISOR: u64 = 4;

/// Most fixed symbols ("infinities") tried in a cover starter.
pub(crate) const MAX_INFINITIES: usize = 3;

/// Share of the work budget for shrinking an orthogonal-array seed.
pub(crate) const OA_SHARE: f64 = 0.1;

/// An orthogonal-array seed is tried when it has fewer rows than the plain
/// search's array plus this slack (row elimination usually removes a few).
pub(crate) const OA_SLACK: usize = 4;

/// Largest orthogonal-array seed tried, in rows.
pub(crate) const MAX_OA_ROWS: usize = 40_000;

/// Work units charged for one local-search step besides its look-ups
/// (choosing the pair, random numbers), so that small grids do not run
/// longer per unit than large ones.
pub(crate) const STEP_WORK: u64 = 40;

/// Work units charged per row scanned when collecting candidate moves.
pub(crate) const ROW_WORK: u64 = 3;
