//! Wilson interval, Cohen's kappa and judge agreement.

// These tests compare floats exactly on purpose: the values are exact.
#![allow(clippy::float_cmp)]

use proptest::prelude::*;
use sparring_stats::{
    StatsError, cohen_kappa, judge_agreement, normal_critical_value, wilson_interval,
};

#[test]
fn normal_critical_values() {
    assert!((normal_critical_value(0.95).unwrap() - 1.959_963_984_540_054).abs() < 1e-12);
    assert!((normal_critical_value(0.99).unwrap() - 2.575_829_303_548_900_4).abs() < 1e-12);
    assert!((normal_critical_value(0.9).unwrap() - 1.644_853_626_951_472_2).abs() < 1e-12);
    assert!(normal_critical_value(1.0).is_err());
}

#[test]
fn wilson_hand_computed() {
    // statsmodels.stats.proportion.proportion_confint(8, 10, method="wilson")
    // = (0.49016247153664183, 0.9433178485456247); so does the formula by hand.
    let ci = wilson_interval(8, 10, 0.95).unwrap();
    let z: f64 = 1.959_963_984_540_054;
    let (n, p) = (10.0, 0.8);
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
    assert!((ci.lo - (centre - half)).abs() < 1e-15);
    assert!((ci.hi - (centre + half)).abs() < 1e-15);
    assert!(
        (ci.lo - 0.490_162_471_536_641_83).abs() < 1e-12
            && (ci.hi - 0.943_317_848_545_624_7).abs() < 1e-12
    );

    // Edges: 0 of n starts at 0, n of n ends at 1.
    let zero = wilson_interval(0, 20, 0.95).unwrap();
    assert_eq!((zero.estimate, zero.lo), (0.0, 0.0));
    assert!((zero.hi - 0.161_125_158_052_819_4).abs() < 1e-12);
    let all = wilson_interval(20, 20, 0.95).unwrap();
    assert_eq!((all.estimate, all.hi), (1.0, 1.0));
    assert!((all.lo - 0.838_874_841_947_180_4).abs() < 1e-12);
}

#[test]
fn wilson_errors() {
    assert_eq!(wilson_interval(0, 0, 0.95), Err(StatsError::Empty));
    assert_eq!(
        wilson_interval(3, 2, 0.95),
        Err(StatsError::SuccessesExceedSamples { n: 2, c: 3 })
    );
    assert!(matches!(
        wilson_interval(1, 2, 1.5),
        Err(StatsError::OutOfUnitInterval { .. })
    ));
}

#[test]
fn kappa_hand_computed() {
    // Perfect agreement with both labels present.
    assert_eq!(
        cohen_kappa(&[true, false, true], &[true, false, true]).unwrap(),
        Some(1.0)
    );
    // Perfect disagreement, balanced: p_o = 0, p_e = 1/2, kappa = −1.
    assert_eq!(
        cohen_kappa(&[true, false], &[false, true]).unwrap(),
        Some(-1.0)
    );
    // 10 items: a = 6 true, b = 5 true, agree on 7.
    let a = [
        true, true, true, true, true, true, false, false, false, false,
    ];
    let b = [
        true, true, true, true, false, false, true, false, false, false,
    ];
    // p_o = 0.7; p_e = 0.6·0.5 + 0.4·0.5 = 0.5; kappa = 0.4.
    let k = cohen_kappa(&a, &b).unwrap().unwrap();
    assert!((k - 0.4).abs() < 1e-15);
    // One rater constant, the other not: p_e < 1, kappa 0.
    assert_eq!(
        cohen_kappa(&[true, true], &[true, false]).unwrap(),
        Some(0.0)
    );
    // Both constant and equal: p_e = 1, undefined.
    assert_eq!(cohen_kappa(&[false; 4], &[false; 4]).unwrap(), None);
    // Both constant and different: p_o = p_e = 0, kappa 0.
    assert_eq!(cohen_kappa(&[true; 3], &[false; 3]).unwrap(), Some(0.0));
}

#[test]
fn kappa_errors() {
    assert_eq!(cohen_kappa(&[], &[]), Err(StatsError::Empty));
    assert_eq!(
        cohen_kappa(&[true], &[]),
        Err(StatsError::LengthMismatch { left: 1, right: 0 })
    );
}

#[test]
fn judge_agreement_hand_computed() {
    let judge = [true, true, true, false, false, true, false, true];
    let gold = [true, false, true, false, true, false, false, true];
    let s = judge_agreement(&judge, &gold).unwrap();
    assert_eq!(s.n, 8);
    assert_eq!(s.agreement, 0.625);
    let w = wilson_interval(5, 8, 0.95).unwrap();
    assert_eq!(s.agreement_ci95, (w.lo, w.hi));
    assert_eq!(s.kappa, cohen_kappa(&judge, &gold).unwrap());
    // Gold fails at 1, 3, 5, 6; the judge passed 1 and 5.
    assert_eq!(s.pass_when_gold_fail, Some(0.5));

    let no_fail = judge_agreement(&[true, false], &[true, true]).unwrap();
    assert_eq!(no_fail.pass_when_gold_fail, None);
    let all_pass = judge_agreement(&[true; 5], &[true; 5]).unwrap();
    assert_eq!((all_pass.agreement, all_pass.kappa), (1.0, None));
    assert!(judge_agreement(&[true], &[true, false]).is_err());
}

proptest! {
    #[test]
    fn wilson_contains_the_point(n in 1u64..5000, frac in 0.0f64..=1.0, conf in 0.5f64..0.999) {
        let x = (frac * n as f64).floor() as u64;
        let ci = wilson_interval(x, n, conf).unwrap();
        prop_assert!(0.0 <= ci.lo && ci.lo <= ci.estimate && ci.estimate <= ci.hi && ci.hi <= 1.0);
    }

    #[test]
    fn kappa_is_at_most_one_and_symmetric(pairs in prop::collection::vec(any::<(bool, bool)>(), 1..100)) {
        let (a, b): (Vec<bool>, Vec<bool>) = pairs.into_iter().unzip();
        let k = cohen_kappa(&a, &b).unwrap();
        prop_assert_eq!(k, cohen_kappa(&b, &a).unwrap());
        if let Some(k) = k {
            prop_assert!((-1.0..=1.0).contains(&k));
        }
    }
}
