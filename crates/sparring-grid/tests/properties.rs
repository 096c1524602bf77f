//! Generator against an independent brute-force validator.
//!
//! For small grids every full row is enumerated: the valid rows (no forbidden
//! pair) define which pairs can occur and which required rows can be
//! completed. Generated arrays must cover exactly those pairs, contain no
//! forbidden pair, start with the required rows, and be the same for the same
//! seed.

use proptest::prelude::*;
use sparring_grid::{CoveringArray, Effort, GridError, GridProblem, coverage};
use std::collections::BTreeSet;

type Pair = (usize, usize, usize, usize);

/// Every full row of the grid.
fn all_rows(levels: &[usize]) -> Vec<Vec<usize>> {
    let mut rows = vec![Vec::new()];
    for &v in levels {
        rows = rows
            .into_iter()
            .flat_map(|row| {
                (0..v).map(move |x| {
                    let mut next = row.clone();
                    next.push(x);
                    next
                })
            })
            .collect();
    }
    rows
}

fn has_forbidden(row: &[usize], problem: &GridProblem) -> bool {
    problem
        .forbidden
        .iter()
        .any(|&((a, x), (b, y))| row[a] == x && row[b] == y)
}

fn pairs_of(row: &[usize]) -> impl Iterator<Item = Pair> + '_ {
    (0..row.len()).flat_map(move |a| (a + 1..row.len()).map(move |b| (a, row[a], b, row[b])))
}

fn matches(row: &[usize], partial: &[Option<usize>]) -> bool {
    row.iter()
        .zip(partial)
        .all(|(&x, p)| p.is_none_or(|p| p == x))
}

/// Checks one generation result against brute force.
fn check(problem: &GridProblem) -> Result<(), TestCaseError> {
    let valid: Vec<Vec<usize>> = if problem.forbidden.is_empty() && problem.required.is_empty() {
        // Without constraints every pair is allowed; one row per pair of a
        // pair of axes stands in for the (possibly huge) set of all rows.
        let k = problem.levels.len();
        let mut rows = Vec::new();
        for a in 0..k {
            for b in a + 1..k {
                for x in 0..problem.levels[a] {
                    for y in 0..problem.levels[b] {
                        let mut row = vec![0; k];
                        row[a] = x;
                        row[b] = y;
                        rows.push(row);
                    }
                }
            }
        }
        rows
    } else {
        all_rows(&problem.levels)
            .into_iter()
            .filter(|row| !has_forbidden(row, problem))
            .collect()
    };
    let result = CoveringArray::generate(problem);
    if valid.is_empty() {
        prop_assert_eq!(result, Err(GridError::Unsatisfiable));
        return Ok(());
    }
    if let Some(index) = problem
        .required
        .iter()
        .position(|req| !valid.iter().any(|row| matches(row, req)))
    {
        prop_assert_eq!(result, Err(GridError::RequiredRowForbidden { index }));
        return Ok(());
    }
    let array = result.map_err(|e| TestCaseError::fail(e.to_string()))?;
    let allowed: BTreeSet<Pair> = valid.iter().flat_map(|row| pairs_of(row)).collect();
    let mut covered = BTreeSet::new();
    for row in &array.rows {
        prop_assert_eq!(row.len(), problem.levels.len());
        for (x, v) in row.iter().zip(&problem.levels) {
            prop_assert!(x < v);
        }
        prop_assert!(!has_forbidden(row, problem), "forbidden pair in {:?}", row);
        covered.extend(pairs_of(row));
    }
    prop_assert_eq!(
        &covered,
        &allowed,
        "covered pairs differ from allowed pairs"
    );
    prop_assert_eq!(array.pairs_planned, allowed.len() as u64);
    prop_assert_eq!(array.pairs_covered, array.pairs_planned);
    for (i, req) in problem.required.iter().enumerate() {
        prop_assert!(
            matches(&array.rows[i], req),
            "row {} does not hold required {:?}",
            i,
            req
        );
    }
    prop_assert!(array.n_rows() >= array.lower_bound);
    let measured = coverage(&problem.levels, &problem.forbidden, &array.rows)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(measured.pairs_planned, array.pairs_planned);
    prop_assert_eq!(measured.pairs_covered, array.pairs_covered);
    let again = CoveringArray::generate(problem).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(again, array, "same seed gave a different array");
    Ok(())
}

/// Small grids with a few forbidden pairs and required partial rows.
fn constrained_problem() -> impl Strategy<Value = GridProblem> {
    prop::collection::vec(1_usize..=5, 2..=6).prop_flat_map(|levels| {
        let k = levels.len();
        let cell = (0..k, any::<usize>());
        let forbidden = prop::collection::vec((cell.clone(), cell), 0..=8);
        let required = prop::collection::vec(
            prop::collection::vec(prop::option::of(any::<usize>()), k),
            0..=2,
        );
        (
            Just(levels),
            forbidden,
            required,
            any::<u64>(),
            0_u64..=200_000,
        )
            .prop_map(|(levels, forbidden, required, seed, work)| {
                let forbidden = forbidden
                    .into_iter()
                    .filter(|((a, _), (b, _))| a != b)
                    .map(|((a, x), (b, y))| ((a, x % levels[a]), (b, y % levels[b])))
                    .collect();
                let required = required
                    .into_iter()
                    .map(|row| {
                        row.iter()
                            .zip(&levels)
                            .map(|(x, v)| x.map(|x| x % v))
                            .collect()
                    })
                    .collect();
                GridProblem {
                    levels,
                    forbidden,
                    required,
                    seed,
                    effort: Effort::from_work(work),
                }
            })
    })
}

/// Unconstrained grids, including uniform ones that take the structured
/// paths (orthogonal arrays, cover starters).
fn free_problem() -> impl Strategy<Value = GridProblem> {
    (
        prop_oneof![
            (2_usize..=7, 3_usize..=9).prop_map(|(v, k)| vec![v; k]),
            prop::collection::vec(1_usize..=6, 2..=8),
        ],
        any::<u64>(),
        0_u64..=1_000_000,
    )
        .prop_map(|(levels, seed, work)| {
            GridProblem::new(levels)
                .with_seed(seed)
                .with_effort(Effort::from_work(work))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn constrained_arrays_are_valid(problem in constrained_problem()) {
        check(&problem)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    #[test]
    fn free_arrays_are_valid(problem in free_problem()) {
        check(&problem)?;
    }
}
