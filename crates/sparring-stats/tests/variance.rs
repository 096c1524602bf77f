//! Variance split, within-task correlation, hack scan and eval variance.

// These tests compare floats exactly on purpose: the values are exact.
#![allow(clippy::float_cmp)]

use proptest::prelude::*;
use sparring_stats::{
    HackScanOptions, StatsError, eval_variance, hack_scan, variance_split, within_task_correlation,
};

#[test]
fn variance_split_hand_computed() {
    // Tasks [0, 1, 1] (mean 2/3) and [0] (mean 0); grand mean 1/2.
    let s = variance_split(&[vec![0.0, 1.0, 1.0], vec![0.0]]).unwrap();
    // within: (3·(2/9) + 0)/4 = 1/6; between: (3·(1/6)² + (1/2)²)/4 = 1/12.
    assert!((s.within_task - 1.0 / 6.0).abs() < 1e-15);
    assert!((s.between_task - 1.0 / 12.0).abs() < 1e-15);
    assert!((s.total - 0.25).abs() < 1e-15);
    assert_eq!((s.n_rows, s.n_tasks), (4, 2));
}

#[test]
fn variance_split_edges() {
    // One task: all variance is within.
    let s = variance_split(&[vec![0.0, 1.0]]).unwrap();
    assert_eq!((s.within_task, s.between_task), (0.25, 0.0));
    // One row per task: all variance is between.
    let s = variance_split(&[vec![0.0], vec![1.0]]).unwrap();
    assert_eq!((s.within_task, s.between_task), (0.0, 0.25));
    // Empty tasks are ignored.
    let s = variance_split(&[vec![], vec![1.0, 1.0], vec![]]).unwrap();
    assert_eq!((s.total, s.n_tasks), (0.0, 1));
    assert_eq!(variance_split::<Vec<f64>>(&[]), Err(StatsError::Empty));
    assert_eq!(variance_split(&[Vec::<f64>::new()]), Err(StatsError::Empty));
    assert_eq!(
        variance_split(&[vec![1.0], vec![f64::NAN]]),
        Err(StatsError::NonFinite { index: 1 })
    );
}

#[test]
fn correlation_hand_computed() {
    // Demeaned per task: feature [−1, 1], [1, −1]; reward [−.5, .5], [−.5, .5].
    let f = [vec![1.0, 3.0], vec![4.0, 2.0]];
    let r = [vec![0.0, 1.0], vec![0.0, 1.0]];
    assert_eq!(within_task_correlation(&f, &r).unwrap(), 0.0);
    // A between-task difference alone gives no within-task correlation.
    let f = [vec![1.0, 1.0], vec![9.0, 9.0]];
    let r = [vec![0.0, 1.0], vec![1.0, 0.0]];
    assert_eq!(within_task_correlation(&f, &r).unwrap(), 0.0);
    // Perfect within-task tracking despite different levels per task.
    let f = [vec![10.0, 20.0, 30.0], vec![100.0, 101.0, 102.0]];
    let r = [vec![0.0, 0.5, 1.0], vec![0.0, 0.5, 1.0]];
    let c = within_task_correlation(&f, &r).unwrap();
    // dot = 11, Σf² = 202, Σr² = 1.
    assert!((c - 11.0 / 202f64.sqrt()).abs() < 1e-15, "{c}");
    let anti = [vec![1.0, 0.5, 0.0], vec![1.0, 0.5, 0.0]];
    assert!((within_task_correlation(&f, &anti).unwrap() + c).abs() < 1e-15);
    // Constant rewards within tasks: 0, not NaN or rounding noise.
    let flat = [vec![0.1, 0.1, 0.1], vec![0.7, 0.7, 0.7]];
    assert_eq!(within_task_correlation(&f, &flat).unwrap(), 0.0);
}

#[test]
fn correlation_errors() {
    let f = [vec![1.0, 2.0]];
    assert_eq!(
        within_task_correlation(&f, &[vec![1.0, 2.0], vec![3.0]]),
        Err(StatsError::LengthMismatch { left: 2, right: 1 })
    );
    assert_eq!(
        within_task_correlation(&f, &[vec![1.0]]),
        Err(StatsError::TaskLengthMismatch {
            task: 0,
            left: 1,
            right: 2
        })
    );
}

/// 60 tasks of 8 rows: reward coin flips; `planted` tracks reward, `noise`
/// does not.
fn scan_input() -> (Vec<Vec<f64>>, Vec<Vec<Vec<f64>>>) {
    let mut state = 12_345u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut reward = Vec::new();
    let mut planted = Vec::new();
    let mut noise = Vec::new();
    for _ in 0..60 {
        let r: Vec<f64> = (0..8)
            .map(|_| if next() < 0.5 { 1.0 } else { 0.0 })
            .collect();
        planted.push(r.iter().map(|x| 100.0 * x + 80.0 * next()).collect());
        noise.push((0..8).map(|_| 100.0 * next()).collect());
        reward.push(r);
    }
    (reward, vec![planted, noise])
}

#[test]
fn hack_scan_flags_the_planted_feature() {
    let (reward, features) = scan_input();
    let scan = hack_scan(&reward, &features, &HackScanOptions::default()).unwrap();
    assert!(
        scan.features[0].corr > 0.5 && scan.features[0].flagged,
        "{scan:?}"
    );
    assert!(!scan.features[1].flagged, "{scan:?}");
    // Shuffled maxima over two features for 480 rows sit near 0.1.
    assert!(scan.floor > 0.03 && scan.floor < 0.25, "{}", scan.floor);
    assert_eq!(scan.variance, variance_split(&reward).unwrap());
    assert_eq!(
        scan.features[1].corr,
        within_task_correlation(&features[1], &reward).unwrap()
    );
    // Same seed, same scan; another seed moves only the floor.
    assert_eq!(
        scan,
        hack_scan(&reward, &features, &HackScanOptions::default()).unwrap()
    );
    let other = hack_scan(
        &reward,
        &features,
        &HackScanOptions {
            seed: 1,
            ..HackScanOptions::default()
        },
    )
    .unwrap();
    assert_eq!(other.features[0].corr, scan.features[0].corr);
    assert_ne!(other.floor, scan.floor);
}

#[test]
fn hack_scan_edges() {
    let reward = vec![vec![1.0, 1.0], vec![0.0, 0.0]];
    let feature = vec![vec![vec![1.0, 2.0], vec![3.0, 4.0]]];
    // Rewards constant within tasks: nothing to correlate, nothing flagged.
    let scan = hack_scan(&reward, &feature, &HackScanOptions::default()).unwrap();
    assert_eq!(
        (scan.floor, scan.features[0].corr, scan.features[0].flagged),
        (0.0, 0.0, false)
    );
    let none = hack_scan::<Vec<Vec<f64>>, _>(&reward, &[], &HackScanOptions::default()).unwrap();
    assert_eq!((none.floor, none.features.len()), (0.0, 0));
    let bad = HackScanOptions {
        shuffles: 0,
        ..HackScanOptions::default()
    };
    assert_eq!(
        hack_scan(&reward, &feature, &bad),
        Err(StatsError::ZeroResamples)
    );
    let bad = HackScanOptions {
        quantile: 1.0,
        ..HackScanOptions::default()
    };
    assert!(hack_scan(&reward, &feature, &bad).is_err());
    let short = vec![vec![vec![1.0], vec![3.0, 4.0]]];
    assert!(hack_scan(&reward, &short, &HackScanOptions::default()).is_err());
}

#[test]
fn eval_variance_hand_computed() {
    let v = eval_variance(&[0.2, 0.4, 0.6, 0.8]).unwrap();
    assert_eq!(v.n_runs, 4);
    assert!((v.mean - 0.5).abs() < 1e-15);
    // Sample sd: sqrt((0.09 + 0.01 + 0.01 + 0.09) / 3).
    assert!((v.std.unwrap() - (0.2f64 / 3.0).sqrt()).abs() < 1e-15);
    let one = eval_variance(&[0.7]).unwrap();
    assert_eq!((one.mean, one.std), (0.7, None));
    assert_eq!(eval_variance(&[]), Err(StatsError::Empty));
}

fn groups() -> impl Strategy<Value = Vec<Vec<f64>>> {
    prop::collection::vec(prop::collection::vec(-10.0f64..10.0, 0..12), 1..20)
        .prop_filter("at least one row", |g| g.iter().any(|t| !t.is_empty()))
}

proptest! {
    #[test]
    fn law_of_total_variance_holds(g in groups()) {
        let s = variance_split(&g).unwrap();
        let scale = s.total.max(1e-300);
        prop_assert!((s.within_task + s.between_task - s.total).abs() <= 1e-12 * scale.max(1.0));
        prop_assert!(s.within_task >= 0.0 && s.between_task >= 0.0);
    }

    #[test]
    fn correlation_is_bounded_and_shift_invariant_per_task(
        g in groups(),
        shifts in prop::collection::vec(-50.0f64..50.0, 20),
    ) {
        // Feature = reward^2 plus a per-task shift: shifts never matter.
        let f: Vec<Vec<f64>> = g.iter().map(|t| t.iter().map(|x| x * x).collect()).collect();
        let shifted: Vec<Vec<f64>> = f
            .iter()
            .zip(&shifts)
            .map(|(t, s)| t.iter().map(|x| x + s).collect())
            .collect();
        let c = within_task_correlation(&f, &g).unwrap();
        prop_assert!((-1.0 - 1e-12..=1.0 + 1e-12).contains(&c));
        let cs = within_task_correlation(&shifted, &g).unwrap();
        prop_assert!((c - cs).abs() < 1e-6, "{c} {cs}");
    }
}
