//! Post-optimisation: row elimination repaired by tabu local search.
//!
//! Start from a complete covering array. Repeatedly delete the row that
//! covers the fewest pairs on its own, then repair the array at the smaller
//! size: pick an uncovered pair at random and apply the best single-cell
//! change that covers it (a row already holding one of its two values gets
//! the other), judged by the change in the number of uncovered pairs; a
//! changed cell stays tabu for a few steps, and with a small probability a
//! random row takes both values instead (random walk). This is the
//! two-mode scheme of TCA (Lin et al., ASE 2015) on the row-elimination loop
//! of Cohen et al. (ICSE 2003). Every move evaluation costs one look-up per
//! column and is charged to the work budget; the search stops when the
//! budget is spent or the array reaches the lower bound, and returns the
//! smallest complete array seen.

use crate::constraints::Constraints;
use crate::defaults::{RANDOM_WALK_PROBABILITY, ROW_WORK, STEP_WORK, TABU_TENURE};
use crate::model::Model;
use crate::rng::{DetRng, Least};
use crate::uncovered::Uncovered;

/// State of the local search over a fixed-width array of rows.
pub(crate) struct Search<'a> {
    model: &'a Model,
    cons: &'a Constraints,
    k: usize,
    n: usize,
    cells: Vec<u16>,
    fixed: Vec<bool>,
    n_required: usize,
    count: Vec<u32>,
    uncovered: Uncovered,
    tabu_until: Vec<u64>,
    step: u64,
    /// Work units spent so far.
    pub(crate) work: u64,
    rng: DetRng,
}

impl<'a> Search<'a> {
    /// Sets up the search on complete rows; `fixed` marks cells of required
    /// rows, which are the first `n_required` rows.
    pub(crate) fn new(
        model: &'a Model,
        cons: &'a Constraints,
        rows: &[Vec<u16>],
        fixed: &[Vec<bool>],
        n_required: usize,
        rng: DetRng,
    ) -> Self {
        let k = model.k;
        let mut this = Self {
            model,
            cons,
            k,
            n: rows.len(),
            cells: rows.iter().flatten().copied().collect(),
            fixed: fixed.iter().flatten().copied().collect(),
            n_required,
            count: vec![0; model.pairs + 1],
            uncovered: Uncovered::new(model.pairs + 1),
            tabu_until: vec![0; rows.len() * k],
            step: 0,
            work: 0,
            rng,
        };
        for r in 0..this.n {
            for c in 0..k {
                let x = usize::from(this.cells[r * k + c]);
                for d in c + 1..k {
                    let p = model.pair(c, x, d, usize::from(this.cells[r * k + d]));
                    this.count[p] += 1;
                }
            }
        }
        // The extra slot stands for a cell paired with itself; a count of 2
        // keeps it out of every "became covered / uncovered" test.
        this.count[model.pairs] = 2;
        for p in 0..model.pairs {
            if this.count[p] == 0 && !cons.excluded.contains(p) {
                this.uncovered.list(p);
            }
        }
        this
    }

    /// The rows, as vectors.
    pub(crate) fn snapshot(&self) -> Vec<Vec<u16>> {
        self.cells.chunks(self.k).map(<[u16]>::to_vec).collect()
    }

    /// Change in uncovered pairs if cell `(r, c)` took value `b`.
    fn delta(&mut self, r: usize, c: usize, b: usize) -> i64 {
        let k = self.k;
        let row = &self.cells[r * k..(r + 1) * k];
        let lin = &self.model.lin[c * k..(c + 1) * k];
        let a = u32::from(row[c]);
        let b = b as u32;
        let mut delta = 0;
        for (l, &y) in lin.iter().zip(row) {
            let at = l.base + u32::from(y) * l.sy;
            delta += i64::from(self.count[(at + a * l.sx) as usize] == 1);
            delta -= i64::from(self.count[(at + b * l.sx) as usize] == 0);
        }
        self.work += k as u64;
        delta
    }

    /// Sets cell `(r, c)` to `b`, keeping counts and the uncovered list.
    fn apply(&mut self, r: usize, c: usize, b: usize) {
        let k = self.k;
        let a = u32::from(self.cells[r * k + c]);
        let b32 = b as u32;
        for d in 0..k {
            let l = self.model.lin[c * k + d];
            let at = l.base + u32::from(self.cells[r * k + d]) * l.sy;
            let pa = (at + a * l.sx) as usize;
            self.count[pa] -= 1;
            // A two-cell move passes through a row that may hold an excluded
            // pair for a moment; such a pair must never become a target.
            if self.count[pa] == 0 && !self.cons.excluded.contains(pa) {
                self.uncovered.list(pa);
            }
            let pb = (at + b32 * l.sx) as usize;
            if self.count[pb] == 0 {
                self.uncovered.unlist(pb);
            }
            self.count[pb] += 1;
        }
        self.cells[r * k + c] = b as u16;
        self.tabu_until[r * k + c] = self.step + TABU_TENURE;
        self.work += k as u64;
    }

    /// Deletes row `r` (not a required row); the last row takes its place.
    fn remove_row(&mut self, r: usize) {
        let k = self.k;
        for c in 0..k {
            let x = usize::from(self.cells[r * k + c]);
            for (d, &y) in self.cells[r * k..(r + 1) * k]
                .iter()
                .enumerate()
                .skip(c + 1)
            {
                let p = self.model.pair(c, x, d, usize::from(y));
                self.count[p] -= 1;
                if self.count[p] == 0 {
                    self.uncovered.list(p);
                }
            }
        }
        let last = self.n - 1;
        if r != last {
            self.cells.copy_within(last * k..(last + 1) * k, r * k);
            self.fixed.copy_within(last * k..(last + 1) * k, r * k);
        }
        self.n = last;
        self.cells.truncate(last * k);
        self.fixed.truncate(last * k);
        self.tabu_until.truncate(last * k);
        self.tabu_until.iter_mut().for_each(|t| *t = 0);
        self.work += (k * k) as u64;
    }

    /// The removable row covering the fewest pairs alone (ties at random).
    fn weakest_row(&mut self) -> Option<usize> {
        let k = self.k;
        let mut least = Least::new();
        for r in self.n_required..self.n {
            let row = &self.cells[r * k..(r + 1) * k];
            let mut alone = 0;
            for (c, &x) in row.iter().enumerate() {
                for (d, &y) in row.iter().enumerate().skip(c + 1) {
                    let p = self.model.pair(c, usize::from(x), d, usize::from(y));
                    alone += usize::from(self.count[p] == 1);
                }
            }
            least.offer(alone, r, &mut self.rng);
        }
        self.work += ((self.n - self.n_required) * k * k / 2) as u64;
        least.chosen()
    }

    /// Whether cell `(r, c)` may take `x`: not fixed, and no forbidden pair
    /// with the rest of the row (ignoring column `skip`).
    fn may_set(&self, r: usize, c: usize, x: usize, skip: usize) -> bool {
        let k = self.k;
        if self.fixed[r * k + c] {
            return false;
        }
        let row = &self.cells[r * k..(r + 1) * k];
        !self
            .cons
            .partners(self.model.value_id(c, x))
            .iter()
            .any(|&(d, y)| usize::from(d) != skip && row[usize::from(d)] == y)
    }

    /// One move towards covering everything at the current size.
    fn step_once(&mut self, best_uncovered: usize) {
        self.step += 1;
        let pick = self.rng.below(self.uncovered.len());
        let (c, x, d, y) = self.model.decode(self.uncovered.get(pick));
        let k = self.k;
        if self.rng.chance(RANDOM_WALK_PROBABILITY) {
            self.random_walk(c, x, d, y);
            return;
        }
        let mut least = Least::new();
        let now = self.uncovered.len() as i64;
        self.work += STEP_WORK + ROW_WORK * self.n as u64;
        for r in 0..self.n {
            let need_c = usize::from(self.cells[r * k + c]) != x;
            let need_d = usize::from(self.cells[r * k + d]) != y;
            if (need_c && !self.may_set(r, c, x, if need_d { d } else { usize::MAX }))
                || (need_d && !self.may_set(r, d, y, if need_c { c } else { usize::MAX }))
            {
                continue;
            }
            let tabu = (need_c && self.tabu_until[r * k + c] > self.step)
                || (need_d && self.tabu_until[r * k + d] > self.step);
            let delta = match (need_c, need_d) {
                (true, true) => self.delta2(r, c, x, d, y),
                (true, false) => self.delta(r, c, x),
                _ => self.delta(r, d, y),
            };
            if tabu && now + delta >= best_uncovered as i64 {
                continue;
            }
            least.offer(delta, r, &mut self.rng);
        }
        match least.chosen() {
            Some(r) => {
                if usize::from(self.cells[r * k + c]) != x {
                    self.apply(r, c, x);
                }
                if usize::from(self.cells[r * k + d]) != y {
                    self.apply(r, d, y);
                }
            }
            None => self.random_walk(c, x, d, y),
        }
    }

    /// Change in uncovered pairs if row `r` took `x` in column `c` and `y`
    /// in column `d` (both different from the current values).
    fn delta2(&mut self, r: usize, c: usize, x: usize, d: usize, y: usize) -> i64 {
        let k = self.k;
        let row = &self.cells[r * k..(r + 1) * k];
        let lc = &self.model.lin[c * k..(c + 1) * k];
        let ld = &self.model.lin[d * k..(d + 1) * k];
        let (a, b) = (u32::from(row[c]), u32::from(row[d]));
        let (x, y) = (x as u32, y as u32);
        let mut delta = 0;
        for ((l, m), &z) in lc.iter().zip(ld).zip(row) {
            let z = u32::from(z);
            let at = l.base + z * l.sy;
            delta += i64::from(self.count[(at + a * l.sx) as usize] == 1);
            delta -= i64::from(self.count[(at + x * l.sx) as usize] == 0);
            let at = m.base + z * m.sy;
            delta += i64::from(self.count[(at + b * m.sx) as usize] == 1);
            delta -= i64::from(self.count[(at + y * m.sx) as usize] == 0);
        }
        // Both views also counted the pair (c, d) itself against the other
        // column's old value; the true change is (a, b) -> (x, y), and
        // (x, y) is uncovered by construction.
        let l = lc[d];
        let pair = |vc: u32, vd: u32| (l.base + vd * l.sy + vc * l.sx) as usize;
        delta -= i64::from(self.count[pair(a, b)] == 1);
        delta += i64::from(self.count[pair(x, b)] == 0);
        delta += i64::from(self.count[pair(a, y)] == 0);
        delta -= 1;
        self.work += 2 * k as u64;
        delta
    }

    /// Puts both values of the pair into a random row that can take them.
    fn random_walk(&mut self, c: usize, x: usize, d: usize, y: usize) {
        let k = self.k;
        let start = self.rng.below(self.n);
        for i in 0..self.n {
            let r = (start + i) % self.n;
            let need_c = usize::from(self.cells[r * k + c]) != x;
            let need_d = usize::from(self.cells[r * k + d]) != y;
            if (need_c && !self.may_set(r, c, x, d)) || (need_d && !self.may_set(r, d, y, c)) {
                continue;
            }
            if need_c {
                self.apply(r, c, x);
            }
            if need_d {
                self.apply(r, d, y);
            }
            return;
        }
    }

    /// Shrinks the array until the budget is spent or `lower_bound` rows are
    /// reached; returns the smallest complete array seen.
    pub(crate) fn run(&mut self, budget: u64, lower_bound: usize) -> Vec<Vec<u16>> {
        let mut best = self.snapshot();
        let mut best_uncovered = 0;
        loop {
            if self.uncovered.is_empty() {
                if self.n < best.len() {
                    best = self.snapshot();
                }
                if self.n <= lower_bound.max(self.n_required) || self.work >= budget {
                    break;
                }
                let Some(r) = self.weakest_row() else {
                    break;
                };
                self.remove_row(r);
                best_uncovered = self.uncovered.len();
                continue;
            }
            if self.work >= budget {
                break;
            }
            self.step_once(best_uncovered);
            best_uncovered = best_uncovered.min(self.uncovered.len());
        }
        best
    }
}
