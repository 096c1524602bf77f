//! Pairwise (strength-2) covering arrays for sparring's situation grid.
//!
//! Most agent failures come from two factors interacting, so sparring covers
//! every pair of values of its situation axes with as few rows as possible.
//! This crate is the generator: pure, deterministic per seed, no IO.
//!
//! # Main types
//!
//! * [`GridProblem`]: levels (values per axis), forbidden pairs of
//!   `(axis, value)`, required (possibly partial) rows, a seed and an
//!   [`Effort`].
//! * [`CoveringArray`]: the result of [`CoveringArray::generate`]: rows of
//!   0-based values plus `pairs_planned` and `pairs_covered`.
//! * [`coverage`] and [`Coverage`]: pair-coverage accounting over any rows,
//!   for instance the rows a run actually ran.
//! * [`parse_levels`]: the `--levels` syntax, a comma list of `v` or `v^k`.
//! * [`GridError`]: the one error type; errors are about input only.
//!
//! # How arrays are built
//!
//! 1. **Constraints.** Forbidden pairs are excluded from the target, and so
//!    are pairs they rule out indirectly (found by a small completion search
//!    over the columns whose every value is constrained).
//! 2. **Construction.** IPOG (In-Parameter-Order-General) with columns in
//!    decreasing order of size, around the required rows, never placing a
//!    value that clashes with a forbidden pair or makes a row impossible to
//!    complete.
//! 3. **Post-optimisation.** Row elimination repaired by tabu local search
//!    within a counted work budget set by [`Effort`], stopping early at the
//!    lower bound (the most allowed pairs of any two axes, or the exact binary
//!    size and Bush's bound where they apply).
//! 4. **Structured seeds** for grids without constraints or required rows,
//!    each shrunk by the same search and kept only if smaller: an orthogonal
//!    array over a prime field when there are at most `q + 1` axes of at most
//!    `q` values, and, for uniform grids, cover starters over Z_g plus up to
//!    three fixed symbols: first a circulant one (a single vector whose
//!    cyclic shifts, developed over Z_g, cover every pair; `g · k` rows plus
//!    a few for pairs of fixed symbols, searched around it), the construction
//!    behind the best known sizes for larger alphabets such as 10^20, then a
//!    general one (a small array developed over Z_g).
//!
//! **Determinism.** All randomness comes from ChaCha8 keyed from the seed,
//! with this crate's own helpers for ranges and probabilities; the effort is a count
//! of work units, never a time, so the same problem gives the same array on
//! any machine.
//!
//! # Example
//!
//! ```
//! use sparring_grid::{CoveringArray, Effort, GridProblem, coverage, parse_levels};
//!
//! // Tool (4 values), condition (3), stance (2); tool 3 never times out.
//! let problem = GridProblem::new(parse_levels("4,3,2")?)
//!     .forbid((0, 3), (1, 1))
//!     .require(vec![Some(0), None, Some(1)])
//!     .with_seed(42)
//!     .with_effort(Effort::DEFAULT);
//! let array = CoveringArray::generate(&problem)?;
//!
//! // 4 x 3 tool-condition pairs minus the forbidden one: the lower bound.
//! assert_eq!((array.n_rows(), array.lower_bound), (11, 11));
//! assert_eq!(array.pairs_planned, 4 * 3 + 4 * 2 + 3 * 2 - 1);
//! assert_eq!(array.pairs_covered, array.pairs_planned);
//! assert!(array.rows.iter().all(|row| !(row[0] == 3 && row[1] == 1)));
//! assert_eq!((array.rows[0][0], array.rows[0][2]), (0, 1));
//!
//! // Coverage of the rows actually run, e.g. the first five.
//! let ran = coverage(&problem.levels, &problem.forbidden, &array.rows[..5])?;
//! assert!(ran.fraction < 1.0);
//! # Ok::<(), sparring_grid::GridError>(())
//! ```

// The algorithms use covering-array notation throughout: `r` a row, `c` and
// `d` columns, `x` and `y` values, `k` columns, `v` levels, `g` and `f` the
// finite and fixed symbols of a starter.
#![allow(clippy::many_single_char_names)]

mod anneal;
mod array;
mod circulant;
mod constraints;
mod coverage;
pub mod defaults;
mod error;
mod ipog;
mod levels;
mod model;
mod problem;
mod rng;
mod starter;
mod uncovered;
mod validate;

pub use array::CoveringArray;
pub use coverage::{Coverage, coverage};
pub use error::GridError;
pub use levels::parse_levels;
pub use problem::{AxisValue, Effort, ForbiddenPair, GridProblem};
