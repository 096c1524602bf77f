//! [`CoveringArray`]: the generator's entry point and result.

use crate::anneal::Search;
use crate::circulant::CirculantSearch;
use crate::constraints::{Constraints, Csp};
use crate::coverage::Coverage;
use crate::defaults::{
    AROUND_SHARE_DIVISOR, CIRCULANT_SHARE_DIVISOR, INFINITY_SHARE_DIVISOR, MAX_INFINITIES,
    MAX_OA_ROWS, OA_SHARE, OA_SLACK, STARTER_SHARE,
};
use crate::ipog::construct;
use crate::model::{Model, UNSET};
use crate::problem::GridProblem;
use crate::rng::DetRng;
use crate::starter::StarterSearch;
use crate::{GridError, validate};

/// Rows in internal column order.
type Rows = Vec<Vec<u16>>;

/// Random stream of the construction.
const STREAM_CONSTRUCT: u64 = 1;
/// Random stream of the post-optimisation.
const STREAM_SEARCH: u64 = 2;
/// Random streams of the starter searches (plus the number of infinities).
const STREAM_STARTER: u64 = 16;
/// Random stream of the final polish of a developed starter.
const STREAM_POLISH: u64 = 3;
/// Random streams of the circulant starter searches (plus the number of
/// infinities).
const STREAM_CIRCULANT: u64 = 48;
/// Random stream of the search for rows completing a circulant starter.
const STREAM_AROUND: u64 = 64;
/// Random stream of the small arrays over infinities.
const STREAM_INFINITIES: u64 = 32;

/// A strength-2 covering array: rows of 0-based values, one per axis.
///
/// Produced by [`CoveringArray::generate`]. Every pair of values of two axes
/// that a valid row can contain occurs in some row, no row contains a
/// forbidden pair, and the first rows are the required rows (completed), in
/// the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoveringArray {
    /// The rows; `rows[r][axis]` is a value in `0..levels[axis]`.
    pub rows: Vec<Vec<usize>>,
    /// Pairs that can occur in a valid row, hence targeted.
    pub pairs_planned: u64,
    /// Targeted pairs the rows cover (equal to `pairs_planned`).
    pub pairs_covered: u64,
    /// A lower bound on the number of rows any covering array of this problem
    /// needs: the most allowed pairs of any two axes, or the number of required
    /// rows if larger.
    pub lower_bound: usize,
    /// Rows after construction, before post-optimisation.
    pub construction_rows: usize,
    /// Work units the post-optimisation spent (at most the effort's budget
    /// plus one move).
    pub work_spent: u64,
}

impl CoveringArray {
    /// Generates a covering array for `problem`.
    ///
    /// Construction is IPOG with columns in decreasing order of size; then, if
    /// the effort allows and the array is above its lower bound, rows are
    /// eliminated and the array repaired by local search until the work
    /// budget is spent. Deterministic: the same problem gives the same array.
    ///
    /// Errors are about the input only: bad levels, out-of-range axes or
    /// values, a required row that clashes with the forbidden pairs,
    /// constraints that rule out every row, or a grid over the size limits.
    ///
    /// ```
    /// use sparring_grid::{CoveringArray, GridProblem};
    /// let array = CoveringArray::generate(&GridProblem::new(vec![3; 4]).with_seed(1))?;
    /// assert_eq!(array.rows.len(), 9);
    /// assert_eq!(array.pairs_covered, array.pairs_planned);
    /// # Ok::<(), sparring_grid::GridError>(())
    /// ```
    pub fn generate(problem: &GridProblem) -> Result<Self, GridError> {
        let model = Model::new(&problem.levels, true)?;
        let forbidden = validate::forbidden(&model, &problem.forbidden)?;
        let required = validate::required(&model, &problem.required)?;
        let cons = Constraints::new(&model, &forbidden)?;
        let mut csp = Csp::new(&model);
        for (index, row) in required.iter().enumerate() {
            if !cons.completable(&model, row, &mut csp)? {
                return Err(GridError::RequiredRowForbidden { index });
            }
        }
        let mut lower_bound = pair_bound(&model, &cons).max(required.len());
        if cons.n_excluded == 0 {
            lower_bound = lower_bound.max(unconstrained_bound(&model));
        }
        let budget = problem.effort.work();
        // Structured seeds only apply to unconstrained grids without
        // required rows; each gets a share of the budget, the plain search
        // the rest, and whatever is left polishes the best structured array.
        let free = required.is_empty() && cons.n_excluded == 0 && model.k >= 3;
        let oa = if free { orthogonal_seed(&model) } else { None };
        let uniform = free && model.levels.iter().all(|&v| v == model.levels[0]);
        let share = |part: f64| (budget as f64 * part) as u64;
        let mut plain_budget = budget;
        if oa.is_some() {
            plain_budget -= share(OA_SHARE).min(plain_budget);
        }
        if uniform {
            plain_budget -= share(STARTER_SHARE).min(plain_budget);
        }
        let Solved {
            mut rows,
            construction_rows,
            mut work,
        } = solve_plain(
            &model,
            &cons,
            &required,
            problem.seed,
            plain_budget,
            lower_bound,
        )?;
        let mut candidates = Vec::new();
        if let Some(oa) =
            oa.filter(|oa| oa.len() < rows.len() + OA_SLACK && rows.len() > lower_bound)
        {
            let (shrunk, spent) = polish(
                &model,
                &cons,
                oa,
                problem.seed,
                share(OA_SHARE),
                lower_bound,
            );
            work += spent;
            candidates.push(shrunk);
        }
        if uniform && budget > 0 && rows.len() > lower_bound {
            let to_beat = candidates.iter().map(Vec::len).fold(rows.len(), usize::min);
            let (found, spent) =
                starters(&model, &cons, problem.seed, share(STARTER_SHARE), to_beat)?;
            work += spent;
            if let Some(found) = found {
                let (shrunk, spent) = polish(
                    &model,
                    &cons,
                    found,
                    problem.seed,
                    budget.saturating_sub(work),
                    lower_bound,
                );
                work += spent;
                candidates.push(shrunk);
            }
        }
        for candidate in candidates {
            if candidate.len() < rows.len() {
                rows = candidate;
            }
        }
        let work_spent = work;

        let pairs_planned = (model.pairs - cons.n_excluded) as u64;
        let pairs_covered = covered(&model, &cons, &rows);
        let rows = rows
            .iter()
            .map(|row| {
                (0..model.k)
                    .map(|axis| usize::from(row[model.column_of[axis]]))
                    .collect()
            })
            .collect();
        Ok(Self {
            rows,
            pairs_planned,
            pairs_covered,
            lower_bound,
            construction_rows,
            work_spent,
        })
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.rows.len()
    }

    /// Pair coverage of the whole array.
    pub fn coverage(&self) -> Coverage {
        Coverage::new(self.pairs_planned, self.pairs_covered)
    }
}

/// An array and what it cost.
struct Solved {
    rows: Vec<Vec<u16>>,
    construction_rows: usize,
    work: u64,
}

/// IPOG construction followed by row elimination within `budget`.
fn solve_plain(
    model: &Model,
    cons: &Constraints,
    required: &[Vec<u16>],
    seed: u64,
    budget: u64,
    lower_bound: usize,
) -> Result<Solved, GridError> {
    let mut rng = DetRng::new(seed, STREAM_CONSTRUCT);
    let rows = construct(model, cons, required, &mut rng)?;
    let construction_rows = rows.len();
    if budget == 0 || rows.len() <= lower_bound || model.k < 2 {
        return Ok(Solved {
            rows,
            construction_rows,
            work: 0,
        });
    }
    let fixed: Vec<Vec<bool>> = (0..rows.len())
        .map(|r| match required.get(r) {
            Some(req) => req.iter().map(|&x| x != UNSET).collect(),
            None => vec![false; model.k],
        })
        .collect();
    let mut search = Search::new(
        model,
        cons,
        &rows,
        &fixed,
        required.len(),
        DetRng::new(seed, STREAM_SEARCH),
    );
    let rows = search.run(budget, lower_bound);
    Ok(Solved {
        rows,
        construction_rows,
        work: search.work,
    })
}

/// Row elimination on a complete array without required rows.
fn polish(
    model: &Model,
    cons: &Constraints,
    rows: Vec<Vec<u16>>,
    seed: u64,
    budget: u64,
    lower_bound: usize,
) -> (Vec<Vec<u16>>, u64) {
    if budget == 0 || rows.len() <= lower_bound {
        return (rows, 0);
    }
    let fixed = vec![vec![false; model.k]; rows.len()];
    let mut search = Search::new(
        model,
        cons,
        &rows,
        &fixed,
        0,
        DetRng::new(seed, STREAM_POLISH),
    );
    let shrunk = search.run(budget, lower_bound);
    (shrunk, search.work)
}

/// Tries cover starters with 0 to 3 infinities on a uniform grid without
/// constraints or required rows (`cons` excludes nothing): first a
/// circulant one (one vector, `g · n` rows for `n >= k` columns), then a
/// general one (a small array, `g · m` rows); returns the smallest
/// developed array below `to_beat` rows, if any, and the work spent.
fn starters(
    model: &Model,
    cons: &Constraints,
    seed: u64,
    budget: u64,
    to_beat: usize,
) -> Result<(Option<Rows>, u64), GridError> {
    let (k, v) = (model.k, model.levels[0]);
    let options: Vec<usize> = (0..=MAX_INFINITIES.min(v.saturating_sub(2))).collect();
    let share = budget / options.len() as u64;
    let mut best: Option<Vec<Vec<u16>>> = None;
    let mut work = 0;
    for f in options {
        let g = v - f;
        let infinities = infinity_rows(k, g, f, seed, share / INFINITY_SHARE_DIVISOR)?;
        let mut left = share.saturating_sub(infinities.work);
        work += infinities.work;
        let current = |best: &Option<Rows>| best.as_ref().map_or(to_beat, Vec::len).min(to_beat);

        // A circulant needs at least one pair per slot at every distance.
        let n = k.max(g + 2 * f + 1);
        if g * n + infinities.rows.len() < current(&best) {
            let mut search =
                CirculantSearch::new(n, g, f, DetRng::new(seed, STREAM_CIRCULANT + f as u64));
            let found = search.run(left / CIRCULANT_SHARE_DIVISOR);
            left = left.saturating_sub(search.work);
            work += search.work;
            if let Some(starter) = found {
                let developed = CirculantSearch::develop(&starter, g, k);
                // The circulant already shows some pairs of infinities; a
                // search around it may need fewer rows than the full array
                // over the infinities.
                let lb = developed.len() + 1;
                let around = solve_plain(
                    model,
                    cons,
                    &developed,
                    seed ^ STREAM_AROUND,
                    left / AROUND_SHARE_DIVISOR,
                    lb,
                )?;
                left = left.saturating_sub(around.work);
                work += around.work;
                let mut rows = developed;
                if around.rows.len() < rows.len() + infinities.rows.len() {
                    rows = around.rows;
                } else {
                    rows.extend(infinities.rows.iter().cloned());
                }
                if rows.len() < current(&best) {
                    best = Some(rows);
                }
            }
        }

        let Some(m) = (current(&best) - 1)
            .checked_sub(infinities.rows.len())
            .map(|room| room / g)
        else {
            continue;
        };
        let min_m = g + 2 * f;
        if m < min_m {
            continue;
        }
        let mut search =
            StarterSearch::new(k, g, f, m, DetRng::new(seed, STREAM_STARTER + f as u64));
        let found = search.run(left, min_m);
        work += search.work;
        if let Some(starter) = found {
            let mut rows = StarterSearch::develop(&starter, g);
            rows.extend(infinities.rows);
            if rows.len() < current(&best) {
                best = Some(rows);
            }
        }
    }
    Ok((best, work))
}

/// Rows covering every pair of two infinities (symbols `g..g+f`) of `k` columns.
fn infinity_rows(
    k: usize,
    g: usize,
    f: usize,
    seed: u64,
    budget: u64,
) -> Result<Solved, GridError> {
    if f == 0 {
        return Ok(Solved {
            rows: Vec::new(),
            construction_rows: 0,
            work: 0,
        });
    }
    if f == 1 {
        return Ok(Solved {
            rows: vec![vec![g as u16; k]],
            construction_rows: 1,
            work: 0,
        });
    }
    let model = Model::new(&vec![f; k], true)?;
    let cons = Constraints::new(&model, &[])?;
    let lb = pair_bound(&model, &cons).max(unconstrained_bound(&model));
    let mut solved = solve_plain(&model, &cons, &[], seed ^ STREAM_INFINITIES, budget, lb)?;
    for row in &mut solved.rows {
        for x in row.iter_mut() {
            *x += g as u16;
        }
    }
    Ok(solved)
}

/// The orthogonal array OA(q^2; q+1, q) for the smallest prime `q` at least
/// the largest level, when the grid has at most `q + 1` columns: row `(a, b)`
/// has `a * j + b mod q` in column `j < q` and `a` in column `q`. Any two
/// columns show every pair of symbols exactly once; symbols beyond a column's
/// level are replaced by `symbol mod level`, keeping every needed pair.
fn orthogonal_seed(model: &Model) -> Option<Vec<Vec<u16>>> {
    let v = model.levels[0];
    // Bertrand's postulate: a prime lies between n and 2n.
    let q = (v.max(2)..=2 * v.max(2))
        .find(|&n| (2..n).take_while(|d| d * d <= n).all(|d| n % d != 0))?;
    if model.k > q + 1 || q * q > MAX_OA_ROWS {
        return None;
    }
    let mut rows = Vec::with_capacity(q * q);
    for a in 0..q {
        for b in 0..q {
            rows.push(
                (0..model.k)
                    .map(|j| {
                        let symbol = if j < q { (a * j + b) % q } else { a };
                        (symbol % model.levels[j]) as u16
                    })
                    .collect(),
            );
        }
    }
    Some(rows)
}

/// Lower bounds that hold without constraints: the exact binary size
/// (Kleitman-Spencer, Katona) and Bush's bound (more than `v + 1` columns of
/// the two largest sizes `v` need more than `v^2` rows).
fn unconstrained_bound(model: &Model) -> usize {
    let v = model.levels[0];
    let k = model.k;
    if k < 2 {
        return 1;
    }
    if v == 2 {
        let binary = model.levels.iter().filter(|&&l| l == 2).count();
        // 127 rows already allow C(126, 64) > 10^36 binary columns.
        return (2..128)
            .find(|&n| binomial(n - 1, n.div_ceil(2)) >= binary as u128)
            .unwrap_or(2);
    }
    let top = model.levels.iter().filter(|&&l| l == v).count();
    if v >= 2 && top >= v + 2 { v * v + 1 } else { 0 }
}

/// Binomial coefficient, saturating.
fn binomial(n: usize, r: usize) -> u128 {
    let r = r.min(n - r.min(n));
    let mut acc: u128 = 1;
    for i in 0..r {
        acc = acc.saturating_mul((n - i) as u128) / (i as u128 + 1);
    }
    acc
}

/// The most allowed pairs over any two columns (1 for a single column).
fn pair_bound(model: &Model, cons: &Constraints) -> usize {
    if model.k == 1 {
        return model.levels[0];
    }
    model
        .column_pairs()
        .map(|(c, d)| {
            let base = model.pair_base(c, d);
            let size = model.levels[c] * model.levels[d];
            if cons.n_excluded == 0 {
                size
            } else {
                (base..base + size)
                    .filter(|&p| !cons.excluded.contains(p))
                    .count()
            }
        })
        .max()
        .unwrap_or(1)
}

/// Number of targeted pairs the rows cover.
fn covered(model: &Model, cons: &Constraints, rows: &[Vec<u16>]) -> u64 {
    let mut seen = crate::model::BitSet::new(model.pairs);
    for row in rows {
        for c in 0..model.k {
            for d in c + 1..model.k {
                let p = model.pair(c, usize::from(row[c]), d, usize::from(row[d]));
                if !cons.excluded.contains(p) {
                    seen.insert(p);
                }
            }
        }
    }
    seen.count() as u64
}
