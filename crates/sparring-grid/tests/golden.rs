//! Golden arrays: a fixed problem and seed must keep giving the same rows.
//!
//! A failure here means generated arrays changed for every user. That is
//! allowed (a better search, new defaults) but must be deliberate: update the
//! expected rows in the same commit and say so in its message.

use sparring_grid::{CoveringArray, Effort, GridProblem};

fn constrained() -> GridProblem {
    GridProblem::new(vec![4, 3, 3, 2, 2])
        .forbid((0, 3), (1, 1))
        .forbid((2, 0), (4, 1))
        .require(vec![Some(0), None, None, Some(1), None])
        .with_seed(7)
        .with_effort(Effort::from_work(500_000))
}

fn uniform() -> GridProblem {
    GridProblem::new(vec![5; 7])
        .with_seed(3)
        .with_effort(Effort::from_work(2_000_000))
}

#[test]
fn constrained_array_is_pinned() {
    let array = CoveringArray::generate(&constrained()).unwrap();
    // 12 rows: the lower bound (4 x 3 pairs of axes 0 and 2).
    assert_eq!(array.lower_bound, 12);
    let expected: Vec<Vec<usize>> = vec![
        vec![0, 1, 0, 1, 0],
        vec![0, 0, 1, 0, 1],
        vec![1, 0, 2, 1, 0],
        vec![2, 0, 0, 0, 0],
        vec![3, 0, 2, 0, 1],
        vec![1, 1, 1, 0, 1],
        vec![2, 1, 2, 1, 1],
        vec![0, 2, 2, 0, 0],
        vec![1, 2, 0, 1, 0],
        vec![2, 2, 1, 1, 0],
        vec![3, 2, 1, 1, 1],
        vec![3, 2, 0, 1, 0],
    ];
    assert_eq!(array.rows, expected);
}

#[test]
fn uniform_array_is_pinned() {
    let array = CoveringArray::generate(&uniform()).unwrap();
    // 29 = 4 x 7 + 1: the circulant of one cover-starter vector over Z_4
    // plus one fixed symbol (4), developed, and the all-4 row.
    let expected: Vec<Vec<usize>> = vec![
        vec![4, 2, 3, 1, 0, 2, 2],
        vec![4, 3, 0, 2, 1, 3, 3],
        vec![4, 0, 1, 3, 2, 0, 0],
        vec![4, 1, 2, 0, 3, 1, 1],
        vec![2, 3, 1, 0, 2, 2, 4],
        vec![3, 0, 2, 1, 3, 3, 4],
        vec![0, 1, 3, 2, 0, 0, 4],
        vec![1, 2, 0, 3, 1, 1, 4],
        vec![3, 1, 0, 2, 2, 4, 2],
        vec![0, 2, 1, 3, 3, 4, 3],
        vec![1, 3, 2, 0, 0, 4, 0],
        vec![2, 0, 3, 1, 1, 4, 1],
        vec![1, 0, 2, 2, 4, 2, 3],
        vec![2, 1, 3, 3, 4, 3, 0],
        vec![3, 2, 0, 0, 4, 0, 1],
        vec![0, 3, 1, 1, 4, 1, 2],
        vec![0, 2, 2, 4, 2, 3, 1],
        vec![1, 3, 3, 4, 3, 0, 2],
        vec![2, 0, 0, 4, 0, 1, 3],
        vec![3, 1, 1, 4, 1, 2, 0],
        vec![2, 2, 4, 2, 3, 1, 0],
        vec![3, 3, 4, 3, 0, 2, 1],
        vec![0, 0, 4, 0, 1, 3, 2],
        vec![1, 1, 4, 1, 2, 0, 3],
        vec![2, 4, 2, 3, 1, 0, 2],
        vec![3, 4, 3, 0, 2, 1, 3],
        vec![0, 4, 0, 1, 3, 2, 0],
        vec![1, 4, 1, 2, 0, 3, 1],
        vec![4, 4, 4, 4, 4, 4, 4],
    ];
    assert_eq!(array.rows, expected);
}
