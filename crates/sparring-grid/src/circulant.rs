//! Circulant cover starters for uniform grids.
//!
//! A *circulant cover starter* is one vector `s` of length `n` over a group
//! `G` of order `g` plus `f` fixed symbols ("infinities"). The `n × n`
//! circulant built from it (row `j`, column `c` holds `s[(c + j) mod n]`),
//! developed over `G` (adding each `h` in `G` to every finite entry), has
//! `g · n` rows. Two columns at cyclic distance `δ` see exactly the pairs
//! `(s[i], s[i + δ])`, `i` in `Z_n`, each developed over `G`, so the array
//! covers every pair of symbols other than two infinities exactly when, for
//! every `δ` in `1..n`, those `n` pairs show every difference `y - x` of two
//! finite entries, and every infinity before and after a finite entry. Rows
//! covering the pairs of infinities (a covering array over the `f` fixed
//! symbols) complete it: `g · n + CAN(2, n, f)` rows for `n` columns, and any
//! fewer columns by dropping some. This is the construction of Lobb,
//! Colbourn, Danziger, Stevens and Torres-Jimenez (2012) that holds the best
//! known sizes for several larger alphabets (10^20 among them); the vector is
//! found here by a small tabu search, which is fast because the whole search
//! space is one row.

use crate::defaults::{CIRCULANT_RANDOM_WALK, CIRCULANT_STEP_WORK, CIRCULANT_TABU_TENURE};
use crate::rng::{DetRng, Least};
use crate::starter::StarterSearch;

/// Search for one circulant cover starter of length `n`.
pub(crate) struct CirculantSearch {
    n: usize,
    g: usize,
    f: usize,
    /// Slots per distance: `g` differences, `f` (infinity first), `f`
    /// (infinity second).
    per: usize,
    s: Vec<u16>,
    /// `count[δ * per + slot]`: pairs at distance `δ` filling the slot.
    count: Vec<u32>,
    /// Slots with count 0 (over `δ` in `1..n`).
    uncovered: usize,
    /// `tabu_until[i]`: step until which position `i` may not change.
    tabu_until: Vec<u64>,
    step: u64,
    /// Work units spent so far.
    pub(crate) work: u64,
    rng: DetRng,
}

impl CirculantSearch {
    /// A random vector of length `n` over Z_g and `f` infinities.
    pub(crate) fn new(n: usize, g: usize, f: usize, mut rng: DetRng) -> Self {
        let per = g + 2 * f;
        let s = (0..n).map(|_| rng.below(g + f) as u16).collect();
        let mut this = Self {
            n,
            g,
            f,
            per,
            s,
            count: vec![0; n * per],
            uncovered: (n - 1) * per,
            tabu_until: vec![0; n],
            step: 0,
            work: 0,
            rng,
        };
        for i in 0..n {
            for delta in 1..n {
                let (x, y) = (this.at(i), this.at(i + delta));
                if let Some(t) = this.slot(x, y) {
                    this.bump(delta, t, true);
                }
            }
        }
        this.work = (n * n) as u64;
        this
    }

    #[inline]
    fn at(&self, i: usize) -> usize {
        usize::from(self.s[i % self.n])
    }

    /// Slot filled by `x` followed by `y`; `None` for two infinities.
    #[inline]
    fn slot(&self, x: usize, y: usize) -> Option<usize> {
        let g = self.g;
        match (x < g, y < g) {
            (true, true) => Some((y + g - x) % g),
            (false, true) => Some(x),
            (true, false) => Some(y + self.f),
            (false, false) => None,
        }
    }

    fn bump(&mut self, delta: usize, t: usize, up: bool) {
        let q = delta * self.per + t;
        if up {
            if self.count[q] == 0 {
                self.uncovered -= 1;
            }
            self.count[q] += 1;
        } else {
            self.count[q] -= 1;
            if self.count[q] == 0 {
                self.uncovered += 1;
            }
        }
    }

    /// Change in the number of uncovered slots if position `i` became `b`.
    fn delta(&mut self, i: usize, b: usize) -> i64 {
        let n = self.n;
        let a = self.at(i);
        let mut total = 0;
        for delta in 1..n {
            let after = self.at(i + delta);
            let before = self.at(i + n - delta);
            // Up to four slots of this distance change: two lose a pair,
            // two gain one (they may coincide).
            let mut changes: [(usize, i64); 4] = [(usize::MAX, 0); 4];
            let mut used = 0;
            let mut note = |t: Option<usize>, d: i64| {
                let Some(t) = t else { return };
                if let Some(entry) = changes[..used].iter_mut().find(|e| e.0 == t) {
                    entry.1 += d;
                } else {
                    changes[used] = (t, d);
                    used += 1;
                }
            };
            note(self.slot(a, after), -1);
            note(self.slot(before, a), -1);
            note(self.slot(b, after), 1);
            note(self.slot(before, b), 1);
            for &(t, d) in &changes[..used] {
                let now = i64::from(self.count[delta * self.per + t]);
                total += i64::from(now + d == 0 && now > 0) - i64::from(now == 0 && now + d > 0);
            }
        }
        self.work += 4 * n as u64;
        total
    }

    fn apply(&mut self, i: usize, b: usize) {
        let n = self.n;
        let a = self.at(i);
        for delta in 1..n {
            let (after, before) = (self.at(i + delta), self.at(i + n - delta));
            for (t, up) in [(self.slot(a, after), false), (self.slot(before, a), false)] {
                if let Some(t) = t {
                    self.bump(delta, t, up);
                }
            }
            for (t, up) in [(self.slot(b, after), true), (self.slot(before, b), true)] {
                if let Some(t) = t {
                    self.bump(delta, t, up);
                }
            }
        }
        self.s[i] = b as u16;
        self.tabu_until[i] = self.step + CIRCULANT_TABU_TENURE;
        self.work += 4 * n as u64;
    }

    /// Value for the first position of a pair so that, followed by `y`, it
    /// fills slot `t`; `None` when none does.
    fn first_for(&mut self, y: usize, t: usize) -> Option<usize> {
        let (g, f) = (self.g, self.f);
        if t < g {
            return (y < g).then_some((y + g - t) % g);
        }
        if t < g + f {
            return (y < g).then_some(t);
        }
        (y == t - f).then(|| self.rng.below(g))
    }

    /// Value for the second position of a pair so that, after `x`, it
    /// fills slot `t`; `None` when none does.
    fn second_for(&mut self, x: usize, t: usize) -> Option<usize> {
        let (g, f) = (self.g, self.f);
        if t < g {
            return (x < g).then_some((x + t) % g);
        }
        if t < g + f {
            return (x == t).then(|| self.rng.below(g));
        }
        (x < g).then_some(t - f)
    }

    /// A random uncovered slot, as `(δ, t)`.
    fn pick_uncovered(&mut self) -> (usize, usize) {
        let mut left = self.rng.below(self.uncovered);
        for q in self.per..self.count.len() {
            if self.count[q] == 0 {
                if left == 0 {
                    return (q / self.per, q % self.per);
                }
                left -= 1;
            }
        }
        (1, 0)
    }

    fn step_once(&mut self) {
        self.step += 1;
        self.work += CIRCULANT_STEP_WORK + self.count.len() as u64 / 8;
        let n = self.n;
        let (delta, t) = self.pick_uncovered();
        let mut least = Least::new();
        let walk = self.rng.chance(CIRCULANT_RANDOM_WALK);
        for i in 0..n {
            let j = (i + delta) % n;
            let (x, y) = (self.at(i), self.at(j));
            let moves = [
                self.first_for(y, t).map(|b| (i, b)),
                self.second_for(x, t).map(|b| (j, b)),
            ];
            for (p, b) in moves.into_iter().flatten() {
                if b == self.at(p) || (!walk && self.tabu_until[p] > self.step) {
                    continue;
                }
                let d = if walk { 0 } else { self.delta(p, b) };
                least.offer(d, (p, b), &mut self.rng);
            }
        }
        if let Some((p, b)) = least.chosen() {
            self.apply(p, b);
        }
    }

    /// Searches until the vector is a cover starter or `budget` work is
    /// spent; returns the starter, if found.
    pub(crate) fn run(&mut self, budget: u64) -> Option<Vec<u16>> {
        while self.uncovered > 0 {
            if self.work >= budget {
                return None;
            }
            self.step_once();
        }
        Some(self.s.clone())
    }

    /// The developed circulant of `starter`, cut to its first `k` columns.
    pub(crate) fn develop(starter: &[u16], g: usize, k: usize) -> Vec<Vec<u16>> {
        let n = starter.len();
        let circulant: Vec<Vec<u16>> = (0..n)
            .map(|j| (0..k).map(|c| starter[(c + j) % n]).collect())
            .collect();
        StarterSearch::develop(&circulant, g)
    }
}

#[cfg(test)]
mod tests {
    use super::CirculantSearch;
    use crate::rng::DetRng;

    /// Every pair other than two infinities occurs in the developed rows.
    fn covers_all_but_infinity_pairs(rows: &[Vec<u16>], k: usize, g: usize, v: usize) -> bool {
        (0..k).all(|c| {
            (0..k).filter(|&d| d != c).all(|d| {
                (0..v).all(|x| {
                    (0..v).all(|y| {
                        (x >= g && y >= g)
                            || rows
                                .iter()
                                .any(|r| usize::from(r[c]) == x && usize::from(r[d]) == y)
                    })
                })
            })
        })
    }

    #[test]
    fn found_starters_develop_into_covering_rows() {
        for (n, k, g, f) in [(20, 20, 7, 3), (20, 17, 8, 2), (12, 12, 5, 1), (9, 7, 5, 0)] {
            let mut search = CirculantSearch::new(n, g, f, DetRng::new(5, 1));
            let starter = search
                .run(200_000_000)
                .unwrap_or_else(|| panic!("no starter for n={n} g={g} f={f}"));
            let rows = CirculantSearch::develop(&starter, g, k);
            assert_eq!(rows.len(), n * g);
            assert!(
                covers_all_but_infinity_pairs(&rows, k, g, g + f),
                "n={n} g={g} f={f}"
            );
        }
    }

    #[test]
    fn incremental_counts_match_a_recount() {
        let mut search = CirculantSearch::new(15, 7, 3, DetRng::new(9, 2));
        for _ in 0..500 {
            let i = search.rng.below(15);
            let b = search.rng.below(10);
            let before = search.uncovered as i64;
            let predicted = search.delta(i, b);
            search.apply(i, b);
            assert_eq!(search.uncovered as i64 - before, predicted);
            let mut recount = CirculantSearch::new(15, 7, 3, DetRng::new(0, 0));
            recount.s.clone_from(&search.s);
            recount.count.iter_mut().for_each(|c| *c = 0);
            recount.uncovered = 14 * recount.per;
            for p in 0..15 {
                for delta in 1..15 {
                    if let Some(t) = recount.slot(recount.at(p), recount.at(p + delta)) {
                        recount.bump(delta, t, true);
                    }
                }
            }
            assert_eq!(recount.count, search.count);
            assert_eq!(recount.uncovered, search.uncovered);
        }
    }

    #[test]
    fn impossible_lengths_are_not_found() {
        // Distance tables of 9 pairs cannot show 13 slots.
        let mut search = CirculantSearch::new(10, 7, 3, DetRng::new(1, 1));
        assert_eq!(search.run(2_000_000), None);
    }
}
