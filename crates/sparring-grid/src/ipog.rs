//! Construction: In-Parameter-Order growth (IPOG, Lei et al. 2007) for strength 2.
//!
//! Columns are added one at a time in decreasing order of size. Horizontal
//! growth gives each existing row the value of the new column that covers the
//! most still-uncovered pairs with the row's set cells; vertical growth then
//! places every pair still uncovered into a row that has room for it (an unset
//! cell in the right column) or into a new row whose other cells stay unset.
//! Unset cells are filled at the end. Constraints are respected throughout:
//! a cell only takes a value that keeps the row free of forbidden pairs and
//! completable; pairs that no valid row can hold are not targeted at all.

use crate::GridError;
use crate::constraints::{Constraints, Csp};
use crate::model::{BitSet, Model, UNSET};
use crate::rng::{DetRng, Least};

/// Rows under construction plus the set of pairs already covered (or excluded).
struct Builder<'a> {
    model: &'a Model,
    cons: &'a Constraints,
    rows: Vec<Vec<u16>>,
    covered: BitSet,
    csp: Csp,
}

impl Builder<'_> {
    /// Sets an unset cell and marks the pairs it forms with the row's set cells.
    fn set(&mut self, r: usize, c: usize, x: usize) {
        let row = &mut self.rows[r];
        row[c] = x as u16;
        for (d, &y) in row.iter().enumerate() {
            if d != c && y != UNSET {
                self.covered
                    .insert(self.model.pair(c, x, d, usize::from(y)));
            }
        }
    }

    fn mark_row(&mut self, r: usize) {
        let row = &self.rows[r];
        for c in 0..row.len() {
            if row[c] == UNSET {
                continue;
            }
            for d in c + 1..row.len() {
                if row[d] != UNSET {
                    self.covered.insert(self.model.pair(
                        c,
                        usize::from(row[c]),
                        d,
                        usize::from(row[d]),
                    ));
                }
            }
        }
    }

    /// Whether row `r` can take `c = x` (and `d = y` when given) without a
    /// forbidden pair and stay completable.
    fn fits(
        &mut self,
        r: usize,
        c: usize,
        x: usize,
        second: Option<(usize, usize)>,
    ) -> Result<bool, GridError> {
        let row = &mut self.rows[r];
        let first_new = row[c] == UNSET;
        if first_new && !self.cons.allows(self.model, row, c, x, &mut self.csp)? {
            return Ok(false);
        }
        let Some((d, y)) = second else {
            return Ok(true);
        };
        if row[d] != UNSET {
            return Ok(true);
        }
        let old = row[c];
        row[c] = x as u16;
        let ok = self.cons.allows(self.model, row, d, y, &mut self.csp);
        row[c] = old;
        ok
    }

    /// Horizontal growth of column `i`.
    fn horizontal(&mut self, i: usize, rng: &mut DetRng) -> Result<(), GridError> {
        let v = self.model.levels[i];
        let mut gains = vec![0_i64; v];
        for r in 0..self.rows.len() {
            if self.rows[r][i] != UNSET {
                continue;
            }
            gains.fill(0);
            for (d, &y) in self.rows[r].iter().enumerate() {
                if d == i || y == UNSET {
                    continue;
                }
                let y = usize::from(y);
                if d < i {
                    // The pairs (d = y, i = x) for all x are contiguous: scan
                    // only the uncovered ones, which thin out quickly.
                    let start = self.model.pair(d, y, i, 0);
                    self.covered.for_each_absent(start, v, |x| gains[x] += 1);
                } else {
                    for (x, g) in gains.iter_mut().enumerate() {
                        if !self.covered.contains(self.model.pair(i, x, d, y)) {
                            *g += 1;
                        }
                    }
                }
            }
            while let Some(x) = pick_max(&gains, rng) {
                if self.fits(r, i, x, None)? {
                    self.set(r, i, x);
                    break;
                }
                gains[x] = 0;
            }
        }
        Ok(())
    }

    /// Vertical growth of column `i`: every pair of column `i` with an
    /// earlier column still uncovered gets a row.
    ///
    /// Only rows with an unset cell before column `i` can take such a pair:
    /// a fully set row left unset in column `i` had no uncovered pair for any
    /// value there (horizontal growth gave it gain 0), and coverage only
    /// grows. Candidates are kept by their value in column `i`.
    fn vertical(&mut self, i: usize) -> Result<(), GridError> {
        let v = self.model.levels[i];
        let mut by_value: Vec<Vec<usize>> = vec![Vec::new(); v];
        let mut free: Vec<usize> = Vec::new();
        for r in 0..self.rows.len() {
            if !self.rows[r][..i].contains(&UNSET) {
                continue;
            }
            match self.rows[r][i] {
                UNSET => free.push(r),
                x => by_value[usize::from(x)].push(r),
            }
        }
        for (x, holding) in by_value.iter_mut().enumerate() {
            free.retain(|&r| self.rows[r][i] == UNSET);
            for d in 0..i {
                for y in 0..self.model.levels[d] {
                    if self.covered.contains(self.model.pair(d, y, i, x)) {
                        continue;
                    }
                    let mut chosen = None;
                    // Rows holding x already: the pair is uncovered, so their
                    // cell d is unset or holds another value.
                    for &r in holding.iter() {
                        if self.rows[r][d] == UNSET && self.fits(r, i, x, Some((d, y)))? {
                            chosen = Some(r);
                            break;
                        }
                    }
                    if chosen.is_none() {
                        let mut fallback = None;
                        for &r in &free {
                            let rd = self.rows[r][d];
                            if self.rows[r][i] != UNSET || (rd != UNSET && usize::from(rd) != y) {
                                continue;
                            }
                            if (rd != UNSET || fallback.is_none())
                                && self.fits(r, i, x, Some((d, y)))?
                            {
                                if rd != UNSET {
                                    chosen = Some(r);
                                    break;
                                }
                                fallback = Some(r);
                            }
                        }
                        chosen = chosen.or(fallback);
                    }
                    let r = if let Some(r) = chosen {
                        r
                    } else {
                        self.rows.push(vec![UNSET; self.model.k]);
                        self.rows.len() - 1
                    };
                    if self.rows[r][i] == UNSET {
                        self.set(r, i, x);
                        holding.push(r);
                    }
                    if self.rows[r][d] == UNSET {
                        self.set(r, d, y);
                    }
                }
            }
        }
        Ok(())
    }

    /// Fills every unset cell with a value that keeps the row valid.
    fn fill(&mut self, rng: &mut DetRng) -> Result<(), GridError> {
        for r in 0..self.rows.len() {
            for c in 0..self.model.k {
                if self.rows[r][c] != UNSET {
                    continue;
                }
                let v = self.model.levels[c];
                let start = rng.below(v);
                // Rows are kept completable, so some value fits.
                for step in 0..v {
                    let x = (start + step) % v;
                    if self.fits(r, c, x, None)? {
                        self.set(r, c, x);
                        break;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Index of a largest positive entry, ties broken at random; `None` if all are 0.
fn pick_max(gains: &[i64], rng: &mut DetRng) -> Option<usize> {
    let mut most = Least::new();
    for (x, &g) in gains.iter().enumerate().filter(|(_, g)| **g > 0) {
        most.offer(std::cmp::Reverse(g), x, rng);
    }
    most.chosen()
}

/// Builds a complete covering array around the required rows (internal
/// column order, [`UNSET`] for free cells). Required rows come first.
pub(crate) fn construct(
    model: &Model,
    cons: &Constraints,
    required: &[Vec<u16>],
    rng: &mut DetRng,
) -> Result<Vec<Vec<u16>>, GridError> {
    let mut b = Builder {
        model,
        cons,
        rows: required.to_vec(),
        covered: cons.excluded.clone(),
        csp: Csp::new(model),
    };
    for r in 0..b.rows.len() {
        b.mark_row(r);
    }
    if model.k == 1 {
        // No pairs: list every value once so that each one appears.
        let present: Vec<u16> = b.rows.iter().map(|row| row[0]).collect();
        for x in 0..model.levels[0] {
            if !present.contains(&(x as u16)) {
                b.rows.push(vec![x as u16]);
            }
        }
    }
    for i in 1..model.k {
        b.horizontal(i, rng)?;
        b.vertical(i)?;
    }
    b.fill(rng)?;
    Ok(b.rows)
}
