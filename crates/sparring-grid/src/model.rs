//! Internal layout of a problem: column order, value ids and pair indices.
//!
//! Columns are kept in "internal order": axes sorted by decreasing number of
//! values (ties by axis index), which is the order IPOG wants. Every pair of
//! values of two different columns has one dense index in `0..pairs`.

use crate::GridError;
use crate::defaults::{MAX_LEVELS, MAX_PAIRS};

/// An unset cell in a partial row.
pub(crate) const UNSET: u16 = u16::MAX;

/// Dense indexing of columns, values and value pairs.
#[derive(Debug, Clone)]
pub(crate) struct Model {
    /// Number of columns.
    pub(crate) k: usize,
    /// Values per column, internal order.
    pub(crate) levels: Vec<usize>,
    /// `column_of[axis]` is the internal column of the caller's axis.
    pub(crate) column_of: Vec<usize>,
    /// First global value id of each column.
    pub(crate) offset: Vec<usize>,
    /// Column of each global value id.
    pub(crate) value_column: Vec<u16>,
    /// Total number of values over all columns.
    pub(crate) n_values: usize,
    /// `base[c * k + d]` for `c < d`: index of the pair (c=0, d=0).
    base: Vec<usize>,
    /// `(base, c, d)` for each pair of columns, sorted by base.
    column_pairs: Vec<(usize, u16, u16)>,
    /// Number of value pairs.
    pub(crate) pairs: usize,
    /// `lin[c * k + d]`: pair index of (c=x, d=y) is `base + x * sx + y * sy`;
    /// for `c == d` it points at the extra slot `pairs` with zero strides.
    pub(crate) lin: Vec<Lin>,
}

/// Linear form of the pair index for one ordered pair of columns.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Lin {
    pub(crate) base: u32,
    pub(crate) sx: u32,
    pub(crate) sy: u32,
}

impl Model {
    /// Lays out the caller's levels; `sort` picks the IPOG column order.
    pub(crate) fn new(levels: &[usize], sort: bool) -> Result<Self, GridError> {
        if levels.is_empty() {
            return Err(GridError::NoAxes);
        }
        for (axis, &v) in levels.iter().enumerate() {
            if v == 0 {
                return Err(GridError::EmptyAxis { axis });
            }
            if v > MAX_LEVELS {
                return Err(GridError::TooManyValues {
                    axis,
                    levels: v,
                    limit: MAX_LEVELS,
                });
            }
        }
        let k = levels.len();
        let mut order: Vec<usize> = (0..k).collect();
        if sort {
            order.sort_by(|&a, &b| levels[b].cmp(&levels[a]).then(a.cmp(&b)));
        }
        let mut column_of = vec![0; k];
        for (c, &axis) in order.iter().enumerate() {
            column_of[axis] = c;
        }
        let internal: Vec<usize> = order.iter().map(|&a| levels[a]).collect();
        let mut total: u64 = 0;
        let mut prefix: u64 = 0;
        for &v in &internal {
            total += prefix * v as u64;
            prefix += v as u64;
        }
        if total > MAX_PAIRS || k > usize::from(u16::MAX) {
            return Err(GridError::TooManyPairs {
                pairs: total,
                limit: MAX_PAIRS,
            });
        }
        let mut offset = Vec::with_capacity(k);
        let mut value_column = Vec::new();
        for (c, &v) in internal.iter().enumerate() {
            offset.push(value_column.len());
            value_column.extend(std::iter::repeat_n(c as u16, v));
        }
        let mut base = vec![0; k * k];
        let mut column_pairs = Vec::with_capacity(k * (k - 1) / 2);
        let mut next = 0;
        for c in 0..k {
            for d in c + 1..k {
                base[c * k + d] = next;
                column_pairs.push((next, c as u16, d as u16));
                next += internal[c] * internal[d];
            }
        }
        let mut lin = vec![Lin::default(); k * k];
        for c in 0..k {
            for d in 0..k {
                lin[c * k + d] = match c.cmp(&d) {
                    std::cmp::Ordering::Less => Lin {
                        base: base[c * k + d] as u32,
                        sx: internal[d] as u32,
                        sy: 1,
                    },
                    std::cmp::Ordering::Greater => Lin {
                        base: base[d * k + c] as u32,
                        sx: 1,
                        sy: internal[c] as u32,
                    },
                    std::cmp::Ordering::Equal => Lin {
                        base: next as u32,
                        sx: 0,
                        sy: 0,
                    },
                };
            }
        }
        Ok(Self {
            k,
            lin,
            n_values: value_column.len(),
            levels: internal,
            column_of,
            offset,
            value_column,
            base,
            column_pairs,
            pairs: next,
        })
    }

    /// Index of the pair (column `c` = `x`, column `d` = `y`), `c != d`.
    #[inline]
    pub(crate) fn pair(&self, c: usize, x: usize, d: usize, y: usize) -> usize {
        if c < d {
            self.base[c * self.k + d] + x * self.levels[d] + y
        } else {
            self.base[d * self.k + c] + y * self.levels[c] + x
        }
    }

    /// Index of the first pair of columns `c < d`.
    #[inline]
    pub(crate) fn pair_base(&self, c: usize, d: usize) -> usize {
        self.base[c * self.k + d]
    }

    /// The pair with index `p`, as `(c, x, d, y)` with `c < d`.
    pub(crate) fn decode(&self, p: usize) -> (usize, usize, usize, usize) {
        let at = self
            .column_pairs
            .partition_point(|&(b, _, _)| b <= p)
            .saturating_sub(1);
        let (b, c, d) = self.column_pairs[at];
        let (c, d) = (usize::from(c), usize::from(d));
        let rel = p - b;
        (c, rel / self.levels[d], d, rel % self.levels[d])
    }

    /// Global value id of value `x` of column `c`.
    #[inline]
    pub(crate) fn value_id(&self, c: usize, x: usize) -> usize {
        self.offset[c] + x
    }

    /// All pairs of columns `(c, d)` with `c < d`, in index order.
    pub(crate) fn column_pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.column_pairs
            .iter()
            .map(|&(_, c, d)| (usize::from(c), usize::from(d)))
    }
}

/// A fixed-size set of small integers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    /// An empty set able to hold `0..n`.
    pub(crate) fn new(n: usize) -> Self {
        Self {
            words: vec![0; n.div_ceil(64)],
        }
    }

    /// Whether `i` is in the set.
    #[inline]
    pub(crate) fn contains(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Adds `i`; returns whether it was new.
    #[inline]
    pub(crate) fn insert(&mut self, i: usize) -> bool {
        let w = &mut self.words[i / 64];
        let bit = 1 << (i % 64);
        let new = *w & bit == 0;
        *w |= bit;
        new
    }

    /// Calls `f(offset)` for each `start + offset`, `offset < len`, not in the set.
    #[inline]
    pub(crate) fn for_each_absent(&self, start: usize, len: usize, mut f: impl FnMut(usize)) {
        let end = start + len;
        let mut at = start;
        while at < end {
            let word = at / 64;
            let low = at % 64;
            let high = (end - word * 64).min(64);
            let span = if high - low == 64 {
                u64::MAX
            } else {
                ((1_u64 << (high - low)) - 1) << low
            };
            let mut absent = !self.words[word] & span;
            while absent != 0 {
                let bit = absent.trailing_zeros() as usize;
                f(word * 64 + bit - start);
                absent &= absent - 1;
            }
            at = word * 64 + high;
        }
    }

    /// Number of members.
    pub(crate) fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::{BitSet, Model};

    #[test]
    fn absent_members_are_listed() {
        let mut s = BitSet::new(300);
        for i in [0, 5, 63, 64, 65, 130, 199] {
            s.insert(i);
        }
        for (start, len) in [(0, 300), (3, 70), (60, 6), (64, 1), (128, 64), (199, 1)] {
            let mut got = Vec::new();
            s.for_each_absent(start, len, |o| got.push(start + o));
            let want: Vec<usize> = (start..start + len).filter(|&i| !s.contains(i)).collect();
            assert_eq!(got, want, "{start} {len}");
        }
    }

    #[test]
    fn pair_indices_are_dense_and_decodable() {
        let m = Model::new(&[2, 4, 3], true).unwrap();
        assert_eq!(m.levels, vec![4, 3, 2]);
        assert_eq!(m.column_of, vec![2, 0, 1]);
        assert_eq!(m.pairs, 4 * 3 + 4 * 2 + 3 * 2);
        let mut seen = vec![false; m.pairs];
        for c in 0..3 {
            for d in c + 1..3 {
                for x in 0..m.levels[c] {
                    for y in 0..m.levels[d] {
                        let p = m.pair(c, x, d, y);
                        assert_eq!(p, m.pair(d, y, c, x));
                        assert!(!seen[p]);
                        seen[p] = true;
                        assert_eq!(m.decode(p), (c, x, d, y));
                    }
                }
            }
        }
    }
}
