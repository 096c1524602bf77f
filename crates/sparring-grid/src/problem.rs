//! What the caller asks for: [`GridProblem`] and [`Effort`].

use std::fmt;
use std::str::FromStr;

use crate::GridError;
use crate::defaults::{DEFAULT_EFFORT_WORK, MAX_EFFORT};

/// One value of one axis: `(axis, value)`, both 0-based.
pub type AxisValue = (usize, usize);

/// A pair of axis values that must never appear together in a row.
pub type ForbiddenPair = (AxisValue, AxisValue);

/// A strength-2 covering-array problem.
///
/// `levels[i]` is the number of values of axis `i`; values are `0..levels[i]`.
/// The generated array covers every pair of values of two different axes that
/// can occur in a row respecting `forbidden`, contains no forbidden pair, and
/// contains every row of `required` (a `None` cell is filled by the generator).
/// Required rows come first in the output, in the order given, each as its own
/// row.
///
/// ```
/// use sparring_grid::{Effort, GridProblem};
/// let problem = GridProblem {
///     levels: vec![3, 3, 2],
///     forbidden: vec![((0, 2), (2, 1))],
///     required: vec![vec![Some(1), None, Some(0)]],
///     seed: 7,
///     effort: Effort::DEFAULT,
/// };
/// assert_eq!(problem, GridProblem::new(vec![3, 3, 2])
///     .forbid((0, 2), (2, 1))
///     .require(vec![Some(1), None, Some(0)])
///     .with_seed(7));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GridProblem {
    /// Number of values of each axis, in axis order.
    pub levels: Vec<usize>,
    /// Pairs of `(axis, value)` that must never share a row.
    pub forbidden: Vec<ForbiddenPair>,
    /// Rows (possibly partial) that the array must contain, one cell per axis.
    pub required: Vec<Vec<Option<usize>>>,
    /// Seed of every random choice; the same problem and seed give the same array.
    pub seed: u64,
    /// How much post-optimisation to spend on shrinking the array.
    pub effort: Effort,
}

impl GridProblem {
    /// A problem with these levels, no constraints, seed 0 and default effort.
    pub fn new(levels: Vec<usize>) -> Self {
        Self {
            levels,
            ..Self::default()
        }
    }

    /// Adds a forbidden pair of `(axis, value)` cells.
    #[must_use]
    pub fn forbid(mut self, a: AxisValue, b: AxisValue) -> Self {
        self.forbidden.push((a, b));
        self
    }

    /// Adds a required (possibly partial) row.
    #[must_use]
    pub fn require(mut self, row: Vec<Option<usize>>) -> Self {
        self.required.push(row);
        self
    }

    /// Sets the seed.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the effort.
    #[must_use]
    pub fn with_effort(mut self, effort: Effort) -> Self {
        self.effort = effort;
        self
    }
}

/// How much post-optimisation the generator may spend, as a counted work budget.
///
/// Effort is a multiplier of [`DEFAULT_EFFORT_WORK`](crate::defaults::DEFAULT_EFFORT_WORK)
/// work units (about one pair-counter look-up each): `0` runs the construction
/// only, `1` is the default (under about a second on the reference 2-vCPU
/// machine for the benchmark configurations), `10` buys ten times the search.
/// Because the budget is counted rather than timed, the same problem, seed and
/// effort give the same array on any machine. The search also stops early once
/// the array reaches the lower bound.
///
/// ```
/// use sparring_grid::Effort;
/// let e: Effort = "2.5".parse()?;
/// assert_eq!(e.work(), 5 * Effort::DEFAULT.work() / 2);
/// assert_eq!(Effort::NONE.work(), 0);
/// # Ok::<(), sparring_grid::GridError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Effort {
    work: u64,
}

impl Effort {
    /// Construction only, no post-optimisation.
    pub const NONE: Self = Self { work: 0 };
    /// The default effort, multiplier 1.
    pub const DEFAULT: Self = Self {
        work: DEFAULT_EFFORT_WORK,
    };

    /// Effort as a multiplier of the default, from 0 to [`MAX_EFFORT`](crate::defaults::MAX_EFFORT).
    pub fn new(multiplier: f64) -> Result<Self, GridError> {
        if !(0.0..=f64::from(MAX_EFFORT)).contains(&multiplier) {
            return Err(GridError::EffortSyntax {
                input: multiplier.to_string(),
                max: MAX_EFFORT,
            });
        }
        Ok(Self {
            work: (multiplier * DEFAULT_EFFORT_WORK as f64).round() as u64,
        })
    }

    /// Effort as an exact number of work units.
    pub const fn from_work(work: u64) -> Self {
        Self { work }
    }

    /// The work budget in units.
    pub const fn work(self) -> u64 {
        self.work
    }
}

impl Default for Effort {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl FromStr for Effort {
    type Err = GridError;

    /// Parses a multiplier of the default effort, such as `0`, `1` or `2.5`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let fail = || GridError::EffortSyntax {
            input: s.to_owned(),
            max: MAX_EFFORT,
        };
        let value: f64 = s.trim().parse().map_err(|_| fail())?;
        Self::new(value).map_err(|_| fail())
    }
}

impl fmt::Display for Effort {
    /// Shows the multiplier of the default effort.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.work as f64 / DEFAULT_EFFORT_WORK as f64)
    }
}
