//! Pair-coverage accounting over any set of rows.

use crate::constraints::Constraints;
use crate::model::{BitSet, Model};
use crate::problem::ForbiddenPair;
use crate::{GridError, validate};

/// How many of the pairs that can occur a set of rows covers.
///
/// `pairs_planned` counts the pairs of values of two different axes that some
/// row respecting the forbidden pairs can contain (forbidden pairs, and pairs
/// the constraints rule out indirectly, are not planned). `pairs_covered`
/// counts the planned pairs that occur in at least one row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coverage {
    /// Pairs that can occur in a valid row.
    pub pairs_planned: u64,
    /// Planned pairs that occur in at least one of the rows.
    pub pairs_covered: u64,
    /// `pairs_covered / pairs_planned`, or 1 when nothing is planned.
    pub fraction: f64,
}

impl Coverage {
    pub(crate) fn new(pairs_planned: u64, pairs_covered: u64) -> Self {
        let fraction = if pairs_planned == 0 {
            1.0
        } else {
            pairs_covered as f64 / pairs_planned as f64
        };
        Self {
            pairs_planned,
            pairs_covered,
            fraction,
        }
    }
}

/// Measures the pair coverage of `rows` (full rows, one 0-based value per axis)
/// against the pairs `levels` and `forbidden` allow.
///
/// Use it for coverage accounting over the rows a run actually ran. Pairs that
/// occur in a row but are not planned (forbidden ones) are not counted.
///
/// ```
/// use sparring_grid::coverage;
/// let rows = vec![vec![0, 0], vec![1, 1]];
/// let c = coverage(&[2, 2], &[((0, 1), (1, 0))], &rows)?;
/// assert_eq!((c.pairs_planned, c.pairs_covered), (3, 2));
/// # Ok::<(), sparring_grid::GridError>(())
/// ```
pub fn coverage(
    levels: &[usize],
    forbidden: &[ForbiddenPair],
    rows: &[Vec<usize>],
) -> Result<Coverage, GridError> {
    let model = Model::new(levels, false)?;
    let forbidden = validate::forbidden(&model, forbidden)?;
    let cons = Constraints::new(&model, &forbidden)?;
    let mut seen = BitSet::new(model.pairs);
    for (index, row) in rows.iter().enumerate() {
        let context = || format!("row `{index}`");
        validate::row_length(&model, row.len(), &context)?;
        for (axis, &value) in row.iter().enumerate() {
            validate::cell(&model, axis, value, &context)?;
        }
        for c in 0..model.k {
            for d in c + 1..model.k {
                seen.insert(model.pair(c, row[c], d, row[d]));
            }
        }
    }
    let planned = (model.pairs - cons.n_excluded) as u64;
    let covered = (0..model.pairs)
        .filter(|&p| seen.contains(p) && !cons.excluded.contains(p))
        .count() as u64;
    Ok(Coverage::new(planned, covered))
}
