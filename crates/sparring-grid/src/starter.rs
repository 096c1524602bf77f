//! Cyclic cover starters for uniform grids (symbols developed over Z_g).
//!
//! For `k` axes of `v` values each, split the symbols into `g = v - f`
//! "finite" ones (the group Z_g) and `f` fixed ones ("infinities"). A
//! *starter* is a small `m × k` array; developing it (adding each `h` in Z_g
//! to every finite entry, leaving infinities alone) gives `g · m` rows. A
//! pair of columns is covered by the development when the starter shows every
//! difference `y - x` of finite entries, and every infinity of each column
//! next to a finite entry of the other. Pairs of two infinities are covered by
//! `N_f` appended rows forming a covering array over the `f` infinities. The
//! array has `g · m + N_f` rows, and the search space is `g` times smaller
//! than the array's: this is the "cover starter" construction of Lobb,
//! Colbourn, Danziger, Stevens and Torres-Jimenez (2012), which holds many
//! of the best known sizes for larger uniform alphabets. Starters are found
//! by the same row-elimination and tabu search as whole arrays.

use crate::defaults::{RANDOM_WALK_PROBABILITY, ROW_WORK, STEP_WORK, TABU_TENURE};
use crate::rng::{DetRng, Least};
use crate::uncovered::Uncovered;

/// Count given to the per-pair slot of "two infinities", which the
/// development does not cover and which is never a target; it is large
/// enough never to reach 0 or 1.
const NEVER: u32 = 1 << 30;

/// Search for a starter with a fixed number of rows, then fewer.
pub(crate) struct StarterSearch {
    k: usize,
    g: usize,
    f: usize,
    /// Slots per pair of columns: `g` differences, `f` (∞ first), `f`
    /// (∞ second), and one slot for two infinities.
    per_pair: usize,
    /// `base[c * k + d]`: first slot of the unordered column pair.
    base: Vec<u32>,
    /// `offset[x * v + y]`: slot of symbols `x` (first column) and `y`.
    offset: Vec<u32>,
    /// `offset_t[x * v + y]`: slot of `x` in the second column and `y` in the first.
    offset_t: Vec<u32>,
    m: usize,
    cells: Vec<u16>,
    count: Vec<u32>,
    uncovered: Uncovered,
    tabu_until: Vec<u64>,
    step: u64,
    /// Work units spent so far.
    pub(crate) work: u64,
    rng: DetRng,
    candidates: Vec<(usize, usize, usize)>,
}

impl StarterSearch {
    /// A random starter of `m` rows for `k` columns over `g` finite symbols
    /// and `f` infinities.
    pub(crate) fn new(k: usize, g: usize, f: usize, m: usize, mut rng: DetRng) -> Self {
        let v = g + f;
        let per_pair = g + 2 * f + 1;
        let mut base = vec![0_u32; k * k];
        let mut next = 0;
        for c in 0..k {
            for d in c + 1..k {
                base[c * k + d] = next as u32;
                base[d * k + c] = next as u32;
                next += per_pair;
            }
        }
        let slot = |x: usize, y: usize| -> u32 {
            (match (x < g, y < g) {
                (true, true) => (y + g - x) % g,
                (false, true) => x,
                (true, false) => f + y,
                (false, false) => g + 2 * f,
            }) as u32
        };
        let mut offset = vec![0; v * v];
        let mut offset_t = vec![0; v * v];
        for x in 0..v {
            for y in 0..v {
                offset[x * v + y] = slot(x, y);
                offset_t[x * v + y] = slot(y, x);
            }
        }
        let cells = (0..m * k).map(|_| rng.below(v) as u16).collect();
        let mut this = Self {
            k,
            g,
            f,
            per_pair,
            base,
            offset,
            offset_t,
            m,
            cells,
            count: vec![0; next],
            uncovered: Uncovered::new(next),
            tabu_until: vec![0; m * k],
            step: 0,
            work: 0,
            rng,
            candidates: Vec::new(),
        };
        for pair in 0..next / per_pair {
            this.count[pair * per_pair + per_pair - 1] = NEVER;
        }
        for r in 0..m {
            for c in 0..k {
                for d in c + 1..k {
                    let q = this.class(c, this.at(r, c), d, this.at(r, d));
                    this.count[q] += 1;
                }
            }
        }
        for q in 0..next {
            if this.count[q] == 0 {
                this.uncovered.list(q);
            }
        }
        this
    }

    #[inline]
    fn at(&self, r: usize, c: usize) -> usize {
        usize::from(self.cells[r * self.k + c])
    }

    /// Slot covered by symbols `x` in column `c` and `y` in column `d` (`c != d`).
    #[inline]
    fn class(&self, c: usize, x: usize, d: usize, y: usize) -> usize {
        let v = self.g + self.f;
        let table = if c < d { &self.offset } else { &self.offset_t };
        (self.base[c * self.k + d] + table[x * v + y]) as usize
    }

    fn delta(&mut self, r: usize, c: usize, b: usize) -> i64 {
        let a = self.at(r, c);
        let mut delta = 0;
        for d in (0..self.k).filter(|&d| d != c) {
            let y = self.at(r, d);
            let (qa, qb) = (self.class(c, a, d, y), self.class(c, b, d, y));
            // Next to an infinity, every finite value fills the same slot.
            if qa != qb {
                delta += i64::from(self.count[qa] == 1);
                delta -= i64::from(self.count[qb] == 0);
            }
        }
        self.work += self.k as u64;
        delta
    }

    fn apply(&mut self, r: usize, c: usize, b: usize) {
        let a = self.at(r, c);
        for d in (0..self.k).filter(|&d| d != c) {
            let y = self.at(r, d);
            let qa = self.class(c, a, d, y);
            self.count[qa] -= 1;
            if self.count[qa] == 0 {
                self.uncovered.list(qa);
            }
            let qb = self.class(c, b, d, y);
            if self.count[qb] == 0 {
                self.uncovered.unlist(qb);
            }
            self.count[qb] += 1;
        }
        self.cells[r * self.k + c] = b as u16;
        self.tabu_until[r * self.k + c] = self.step + TABU_TENURE;
        self.work += self.k as u64;
    }

    fn remove_row(&mut self, r: usize) {
        let k = self.k;
        for c in 0..k {
            for d in c + 1..k {
                let q = self.class(c, self.at(r, c), d, self.at(r, d));
                self.count[q] -= 1;
                if self.count[q] == 0 {
                    self.uncovered.list(q);
                }
            }
        }
        let last = self.m - 1;
        self.cells.copy_within(last * k..(last + 1) * k, r * k);
        self.m = last;
        self.cells.truncate(last * k);
        self.tabu_until.truncate(last * k);
        self.tabu_until.iter_mut().for_each(|t| *t = 0);
        self.work += (k * k) as u64;
    }

    fn weakest_row(&mut self) -> usize {
        let k = self.k;
        let mut least = Least::new();
        for r in 0..self.m {
            let mut alone = 0;
            for c in 0..k {
                for d in c + 1..k {
                    if self.count[self.class(c, self.at(r, c), d, self.at(r, d))] == 1 {
                        alone += 1;
                    }
                }
            }
            least.offer(alone, r, &mut self.rng);
        }
        self.work += (self.m * k * k / 2) as u64;
        least.chosen().unwrap_or(0)
    }

    /// Symbol for column `c` that, next to `y` in column `d`, fills slot `t`
    /// of the pair; `None` when no symbol does.
    fn completing(&mut self, c: usize, d: usize, y: usize, t: usize) -> Option<usize> {
        let (g, f) = (self.g, self.f);
        // Slots name the lower-numbered column first; `t_here` is the slot
        // of "infinity in column c", `t_there` of "infinity in column d".
        let (here, there) = if c < d { (g, g + f) } else { (g + f, g) };
        if t < g {
            if y >= g {
                return None;
            }
            // c < d: y - x = t; c > d: x - y = t.
            return Some(if c < d { (y + g - t) % g } else { (y + t) % g });
        }
        if (here..here + f).contains(&t) {
            return (y < g).then_some(g + t - here);
        }
        if (there..there + f).contains(&t) {
            return (y == g + t - there).then(|| self.rng.below(g));
        }
        None
    }

    fn step_once(&mut self) {
        self.step += 1;
        let q = self.uncovered.get(self.rng.below(self.uncovered.len()));
        let pair = q / self.per_pair;
        let t = q % self.per_pair;
        let (c, d) = self.columns_of(pair);
        let k = self.k;
        if self.rng.chance(RANDOM_WALK_PROBABILITY) {
            self.random_walk(c, d, t);
            return;
        }
        self.candidates.clear();
        self.work += STEP_WORK + ROW_WORK * self.m as u64;
        for r in 0..self.m {
            let (x, y) = (self.at(r, c), self.at(r, d));
            if let Some(nx) = self.completing(c, d, y, t)
                && nx != x
            {
                self.candidates.push((r, c, nx));
            }
            if let Some(ny) = self.completing(d, c, x, t)
                && ny != y
            {
                self.candidates.push((r, d, ny));
            }
        }
        let mut least = Least::new();
        for i in 0..self.candidates.len() {
            let (r, col, val) = self.candidates[i];
            if self.tabu_until[r * k + col] > self.step {
                continue;
            }
            let delta = self.delta(r, col, val);
            least.offer(delta, (r, col, val), &mut self.rng);
        }
        match least.chosen() {
            Some((r, col, val)) => self.apply(r, col, val),
            None => self.random_walk(c, d, t),
        }
    }

    /// Makes a random row fill slot `t` of columns `c < d`.
    fn random_walk(&mut self, c: usize, d: usize, t: usize) {
        let (g, f) = (self.g, self.f);
        let r = self.rng.below(self.m);
        let (x, y) = if t < g {
            let x = self.rng.below(g);
            (x, (x + t) % g)
        } else if t < g + f {
            (t, self.rng.below(g))
        } else {
            (self.rng.below(g), t - f)
        };
        if self.at(r, c) != x {
            self.apply(r, c, x);
        }
        if self.at(r, d) != y {
            self.apply(r, d, y);
        }
    }

    /// Columns `(c, d)`, `c < d`, of the pair with index `pair`.
    fn columns_of(&self, pair: usize) -> (usize, usize) {
        // Pairs are numbered row by row: (0,1), (0,2), ..., (1,2), ...
        let k = self.k;
        let mut rest = pair;
        for c in 0..k {
            let span = k - c - 1;
            if rest < span {
                return (c, c + 1 + rest);
            }
            rest -= span;
        }
        (0, 1)
    }

    /// Shrinks the starter until `budget` work is spent or `min_rows` rows
    /// remain; returns the smallest complete starter seen, if any.
    pub(crate) fn run(&mut self, budget: u64, min_rows: usize) -> Option<Vec<Vec<u16>>> {
        let mut best = None;
        loop {
            if self.uncovered.is_empty() {
                best = Some(self.cells.chunks(self.k).map(<[u16]>::to_vec).collect());
                if self.m <= min_rows.max(1) || self.work >= budget {
                    break;
                }
                let r = self.weakest_row();
                self.remove_row(r);
                continue;
            }
            if self.work >= budget {
                break;
            }
            self.step_once();
        }
        best
    }

    /// Develops a starter into full rows (without the rows for pairs of
    /// infinities).
    pub(crate) fn develop(starter: &[Vec<u16>], g: usize) -> Vec<Vec<u16>> {
        let mut rows = Vec::with_capacity(starter.len() * g);
        for row in starter {
            for h in 0..g {
                rows.push(
                    row.iter()
                        .map(|&x| {
                            let x = usize::from(x);
                            if x < g {
                                ((x + h) % g) as u16
                            } else {
                                x as u16
                            }
                        })
                        .collect(),
                );
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::StarterSearch;
    use crate::rng::DetRng;

    #[test]
    fn developed_starter_covers_all_but_infinity_pairs() {
        let (k, g, f) = (6, 4, 1);
        let mut s = StarterSearch::new(k, g, f, 12, DetRng::new(3, 0));
        let starter = s.run(2_000_000, g + 2 * f).unwrap();
        let rows = StarterSearch::develop(&starter, g);
        let v = g + f;
        for c in 0..k {
            for d in c + 1..k {
                for x in 0..v {
                    for y in 0..v {
                        let both_inf = x >= g && y >= g;
                        let seen = rows
                            .iter()
                            .any(|r| usize::from(r[c]) == x && usize::from(r[d]) == y);
                        assert!(seen || both_inf, "({c}={x}, {d}={y})");
                    }
                }
            }
        }
    }
}
