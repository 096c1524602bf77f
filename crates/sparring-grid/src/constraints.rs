//! Forbidden pairs, row completion and the set of pairs that can occur at all.
//!
//! Constraints are forbidden pairs of values. A pair that is not forbidden may
//! still be impossible: if value `a` forbids every value of axis `B` but one,
//! and that one forbids `c`, then `a` and `c` never meet in a valid row. The
//! coverage target is therefore "every pair that occurs in some valid row",
//! decided here by a small backtracking search with forward checking.
//!
//! The search is cheap in practice because of one observation: a column that
//! has at least one value without any forbidden partner can always be
//! completed (that value is compatible with everything), so only "hard"
//! columns, whose every value is constrained, take part in the search.

use crate::GridError;
use crate::defaults::CONSTRAINT_SEARCH_BUDGET;
use crate::model::{BitSet, Model, UNSET};
use crate::problem::ForbiddenPair;

/// Forbidden pairs in internal column order, plus the derived target.
#[derive(Debug, Clone)]
pub(crate) struct Constraints {
    /// Forbidden partners `(column, value)` of each global value id.
    adj: Vec<Vec<(u16, u16)>>,
    /// Columns whose every value has a forbidden partner.
    hard: Vec<usize>,
    /// Whether each column is hard.
    is_hard: Vec<bool>,
    /// Pairs that cannot occur in a valid row (forbidden or implied).
    pub(crate) excluded: BitSet,
    /// Number of excluded pairs.
    pub(crate) n_excluded: usize,
}

/// Scratch memory and step counter of the completion search.
pub(crate) struct Csp {
    blocked: Vec<u32>,
    domain: Vec<usize>,
    assigned: Vec<bool>,
    log: Vec<usize>,
    steps: u64,
}

impl Csp {
    pub(crate) fn new(model: &Model) -> Self {
        Self {
            blocked: vec![0; model.n_values],
            domain: model.levels.clone(),
            assigned: vec![false; model.k],
            log: Vec::new(),
            steps: 0,
        }
    }
}

impl Constraints {
    /// Builds the constraint tables from forbidden pairs given in internal
    /// columns, and decides which pairs can occur.
    pub(crate) fn new(model: &Model, forbidden: &[ForbiddenPair]) -> Result<Self, GridError> {
        let mut adj: Vec<Vec<(u16, u16)>> = vec![Vec::new(); model.n_values];
        let mut excluded = BitSet::new(model.pairs);
        for &((c, x), (d, y)) in forbidden {
            if excluded.insert(model.pair(c, x, d, y)) {
                adj[model.value_id(c, x)].push((d as u16, y as u16));
                adj[model.value_id(d, y)].push((c as u16, x as u16));
            }
        }
        for list in &mut adj {
            list.sort_unstable();
        }
        let is_hard: Vec<bool> = (0..model.k)
            .map(|c| (0..model.levels[c]).all(|x| !adj[model.value_id(c, x)].is_empty()))
            .collect();
        let hard = (0..model.k).filter(|&c| is_hard[c]).collect();
        let mut this = Self {
            adj,
            hard,
            is_hard,
            excluded,
            n_excluded: 0,
        };
        this.derive_implied(model)?;
        this.n_excluded = this.excluded.count();
        Ok(this)
    }

    /// Whether the value (global id) has forbidden partners.
    #[inline]
    pub(crate) fn is_constrained(&self, value_id: usize) -> bool {
        !self.adj[value_id].is_empty()
    }

    /// Forbidden partners of a value (global id).
    #[inline]
    pub(crate) fn partners(&self, value_id: usize) -> &[(u16, u16)] {
        &self.adj[value_id]
    }

    /// Whether setting column `c` to `x` in `row` creates a forbidden pair
    /// with a set cell (cells equal to [`UNSET`] are ignored).
    #[inline]
    pub(crate) fn clashes(&self, model: &Model, row: &[u16], c: usize, x: usize) -> bool {
        self.adj[model.value_id(c, x)]
            .iter()
            .any(|&(d, y)| row[usize::from(d)] == y)
    }

    /// Whether `row` with `c` set to `x` is free of forbidden pairs and can be
    /// completed, assuming `row` itself could be.
    pub(crate) fn allows(
        &self,
        model: &Model,
        row: &mut [u16],
        c: usize,
        x: usize,
        csp: &mut Csp,
    ) -> Result<bool, GridError> {
        if self.clashes(model, row, c, x) {
            return Ok(false);
        }
        // An unconstrained value keeps any completable row completable: put it
        // into a completion of the old row and nothing clashes.
        if self.hard.is_empty() || !self.is_constrained(model.value_id(c, x)) {
            return Ok(true);
        }
        let old = row[c];
        row[c] = x as u16;
        let result = self.completable(model, row, csp);
        row[c] = old;
        result
    }

    /// Whether the partial row (unset cells are [`UNSET`]) extends to a full
    /// row without forbidden pairs.
    pub(crate) fn completable(
        &self,
        model: &Model,
        row: &[u16],
        csp: &mut Csp,
    ) -> Result<bool, GridError> {
        for (c, &x) in row.iter().enumerate() {
            if x != UNSET && self.clashes(model, row, c, usize::from(x)) {
                return Ok(false);
            }
        }
        if self.hard.iter().all(|&h| row[h] != UNSET) {
            return Ok(true);
        }
        let mark = csp.log.len();
        let mut ok = true;
        for (c, &x) in row.iter().enumerate() {
            if x != UNSET
                && !self.block_partners(model, row, model.value_id(c, usize::from(x)), csp)
            {
                ok = false;
                break;
            }
        }
        let result = if ok {
            self.search(model, row, csp)
        } else {
            Ok(false)
        };
        Self::undo(model, csp, mark);
        result
    }

    /// Blocks the forbidden partners of a value in unset hard columns; false
    /// when some hard column runs out of values.
    fn block_partners(&self, model: &Model, row: &[u16], value_id: usize, csp: &mut Csp) -> bool {
        let mut ok = true;
        for &(d, y) in &self.adj[value_id] {
            let d = usize::from(d);
            if !self.is_hard[d] || row[d] != UNSET || csp.assigned[d] {
                continue;
            }
            let id = model.value_id(d, usize::from(y));
            csp.blocked[id] += 1;
            csp.log.push(id);
            if csp.blocked[id] == 1 {
                csp.domain[d] -= 1;
                if csp.domain[d] == 0 {
                    ok = false;
                }
            }
        }
        ok
    }

    fn undo(model: &Model, csp: &mut Csp, mark: usize) {
        while csp.log.len() > mark {
            if let Some(id) = csp.log.pop() {
                csp.blocked[id] -= 1;
                if csp.blocked[id] == 0 {
                    csp.domain[usize::from(model.value_column[id])] += 1;
                }
            }
        }
    }

    /// Backtracking over unset hard columns, smallest domain first.
    fn search(&self, model: &Model, row: &[u16], csp: &mut Csp) -> Result<bool, GridError> {
        let next = self
            .hard
            .iter()
            .copied()
            .filter(|&h| row[h] == UNSET && !csp.assigned[h])
            .min_by_key(|&h| csp.domain[h]);
        let Some(c) = next else {
            return Ok(true);
        };
        csp.assigned[c] = true;
        let mut found = false;
        for x in 0..model.levels[c] {
            let id = model.value_id(c, x);
            if csp.blocked[id] > 0 {
                continue;
            }
            csp.steps += 1;
            if csp.steps > CONSTRAINT_SEARCH_BUDGET {
                csp.assigned[c] = false;
                return Err(GridError::ConstraintsTooComplex {
                    budget: CONSTRAINT_SEARCH_BUDGET,
                });
            }
            let mark = csp.log.len();
            let ok = self.block_partners(model, row, id, csp);
            let result = if ok {
                self.search(model, row, csp)
            } else {
                Ok(false)
            };
            Self::undo(model, csp, mark);
            match result {
                Ok(true) => {
                    found = true;
                    break;
                }
                Ok(false) => {}
                Err(e) => {
                    csp.assigned[c] = false;
                    return Err(e);
                }
            }
        }
        csp.assigned[c] = false;
        Ok(found)
    }

    /// Marks pairs that no valid row can contain.
    fn derive_implied(&mut self, model: &Model) -> Result<(), GridError> {
        if self.hard.is_empty() {
            // Every partial row without a forbidden pair completes, so only
            // the forbidden pairs themselves are excluded.
            return Ok(());
        }
        let mut csp = Csp::new(model);
        let mut row = vec![UNSET; model.k];
        if !self.completable(model, &row, &mut csp)? {
            return Err(GridError::Unsatisfiable);
        }
        let constrained: Vec<(usize, usize)> = (0..model.k)
            .flat_map(|c| (0..model.levels[c]).map(move |x| (c, x)))
            .filter(|&(c, x)| self.is_constrained(model.value_id(c, x)))
            .collect();
        let mut feasible = vec![true; model.n_values];
        for &(c, x) in &constrained {
            row[c] = x as u16;
            let ok = self.completable(model, &row, &mut csp)?;
            row[c] = UNSET;
            if !ok {
                feasible[model.value_id(c, x)] = false;
                for d in (0..model.k).filter(|&d| d != c) {
                    for y in 0..model.levels[d] {
                        self.excluded.insert(model.pair(c, x, d, y));
                    }
                }
            }
        }
        for (i, &(c, x)) in constrained.iter().enumerate() {
            if !feasible[model.value_id(c, x)] {
                continue;
            }
            for &(d, y) in &constrained[i + 1..] {
                if d == c || !feasible[model.value_id(d, y)] {
                    continue;
                }
                let p = model.pair(c, x, d, y);
                if self.excluded.contains(p) {
                    continue;
                }
                row[c] = x as u16;
                row[d] = y as u16;
                let ok = self.completable(model, &row, &mut csp)?;
                row[c] = UNSET;
                row[d] = UNSET;
                if !ok {
                    self.excluded.insert(p);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Constraints;
    use crate::model::Model;

    #[test]
    fn implied_exclusions_are_found() {
        // Column 0 = 0 forbids column 1 = 1, so column 0 = 0 forces column 1 = 0;
        // column 1 = 0 forbids column 2 = 0; hence (0=0, 2=0) is impossible.
        // Make column 1 hard: its value 0 forbids 2=0 and value 1 forbids 0=0.
        let m = Model::new(&[2, 2, 2], false).unwrap();
        let c = Constraints::new(&m, &[((0, 0), (1, 1)), ((1, 0), (2, 0))]).unwrap();
        assert!(c.excluded.contains(m.pair(0, 0, 1, 1)));
        assert!(c.excluded.contains(m.pair(1, 0, 2, 0)));
        assert!(c.excluded.contains(m.pair(0, 0, 2, 0)));
        assert_eq!(c.n_excluded, 3);
    }

    #[test]
    fn unsatisfiable_constraints_are_reported() {
        let m = Model::new(&[1, 1], false).unwrap();
        let err = Constraints::new(&m, &[((0, 0), (1, 0))]).unwrap_err();
        assert_eq!(err, crate::GridError::Unsatisfiable);
    }
}
