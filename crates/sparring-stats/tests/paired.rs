//! Paired deltas: interval, sign-flip permutation p-value and verdict.

// These tests compare floats exactly on purpose: the values are exact.
#![allow(clippy::float_cmp)]

use proptest::prelude::*;
use sparring_stats::{
    BootstrapOptions, PairedOptions, PermutationMethod, PermutationOptions, StatsError, Verdict,
    bootstrap_mean, paired_delta, sign_flip_test,
};

/// p by brute force over all `2^n` sign assignments of every difference,
/// zeros included, comparing means with the same tolerance rule.
fn brute_force_p(d: &[f64]) -> f64 {
    let n = d.len();
    let observed = d.iter().sum::<f64>().abs();
    let tol = 1e-12 * d.iter().map(|x| x.abs()).sum::<f64>();
    let mut extreme = 0u64;
    for mask in 0..1u64 << n {
        let s: f64 = d
            .iter()
            .enumerate()
            .map(|(i, &x)| if (mask >> i) & 1 == 1 { -x } else { x })
            .sum();
        extreme += u64::from(s.abs() >= observed - tol);
    }
    extreme as f64 / (1u64 << n) as f64
}

/// A Monte Carlo p within 0.008 of the exact one: five standard errors at
/// 100,000 flips (below 0.0016 each).
fn assert_near_p(got: f64, want: f64) {
    assert!((got - want).abs() < 0.008, "{got} vs {want}");
}

/// Runs the Monte Carlo test on `d` (seed 8, the default 100,000 flips) and
/// checks its p is near the exact `want`.
#[allow(clippy::unwrap_used)] // a helper of tests: an error fails the test
fn assert_monte_carlo_near(d: &[f64], want: f64) {
    let mc = sign_flip_test(
        d,
        &PermutationOptions {
            seed: 8,
            ..PermutationOptions::default()
        },
    )
    .unwrap();
    assert!(matches!(mc.method, PermutationMethod::MonteCarlo { .. }));
    assert_near_p(mc.p_value, want);
}

#[test]
fn hand_computed_p_values() {
    let o = PermutationOptions::default();
    // [1, 2, 3]: sums ±1±2±3 = 6,4,2,0,0,−2,−4,−6; |s| >= 6 twice.
    let t = sign_flip_test(&[1.0, 2.0, 3.0], &o).unwrap();
    assert_eq!(t.p_value, 0.25);
    assert_eq!(t.method, PermutationMethod::Exact { assignments: 8 });
    // [1, −1, 2]: observed |2|; sums 2,0,4,−2 (and negatives): |s| >= 2 six times.
    assert_eq!(sign_flip_test(&[1.0, -1.0, 2.0], &o).unwrap().p_value, 0.75);
    // Ties reached by rounding still count: 0.1 + 0.2 vs 0.3.
    let t = sign_flip_test(&[0.1, 0.2, -0.3, 0.3], &o).unwrap();
    assert_eq!(t.p_value, brute_force_p(&[0.1, 0.2, -0.3, 0.3]));
    assert_eq!(t.p_value, 0.75);
}

#[test]
fn zeros_are_left_out_and_all_zero_gives_p_one() {
    let o = PermutationOptions::default();
    let with_zeros = sign_flip_test(&[0.0, 1.0, 0.0, 2.0, 0.0, 3.0], &o).unwrap();
    assert_eq!(with_zeros.p_value, 0.25);
    assert_eq!(with_zeros.n_nonzero, 3);
    let zeros = sign_flip_test(&[0.0; 30], &o).unwrap();
    assert_eq!(zeros.p_value, 1.0);
    assert_eq!(zeros.method, PermutationMethod::Exact { assignments: 1 });
}

#[test]
fn exact_up_to_20_nonzero_then_monte_carlo() {
    let o = PermutationOptions::default();
    let d20: Vec<f64> = (0..20)
        .map(|i| if i % 3 == 0 { -0.25 } else { 0.5 })
        .collect();
    let exact = sign_flip_test(&d20, &o).unwrap();
    assert_eq!(
        exact.method,
        PermutationMethod::Exact {
            assignments: 1 << 20
        }
    );
    assert_eq!(exact.p_value, brute_force_p(&d20));

    let d21: Vec<f64> = (0..21).map(|i| f64::from(i % 5) / 4.0 - 0.3).collect();
    let mc = sign_flip_test(&d21, &o).unwrap();
    assert_eq!(
        mc.method,
        PermutationMethod::MonteCarlo {
            permutations: 100_000
        }
    );
    // 100,000 flips: standard error below 0.0016.
    let want = brute_force_p(&d21);
    assert_near_p(mc.p_value, want);
}

#[test]
fn monte_carlo_counts_the_observed_assignment() {
    // 40 equal positive differences: no random flip is as extreme unless it
    // flips none or all, so p is close to its minimum (1 + b)/(1 + B).
    let o = PermutationOptions {
        permutations: 999,
        ..PermutationOptions::default()
    };
    let t = sign_flip_test(&[0.5; 40], &o).unwrap();
    assert_eq!(t.p_value, 1.0 / 1000.0);
}

#[test]
fn monte_carlo_with_few_distinct_differences_matches_exact_p() {
    // 30 × 0.25 and 20 × −0.5: sampled as binomial counts per value. The
    // exact p convolves the two Binomial(m, 1/2) flip counts.
    let mut d = vec![0.25; 30];
    d.extend([-0.5; 20]);
    let pmf = |m: u64| -> Vec<f64> {
        let mut row = vec![1.0f64];
        for _ in 0..m {
            let mut next = vec![0.0; row.len() + 1];
            for (k, p) in row.iter().enumerate() {
                next[k] += p / 2.0;
                next[k + 1] += p / 2.0;
            }
            row = next;
        }
        row
    };
    let (p30, p20) = (pmf(30), pmf(20));
    let mut want = 0.0;
    for (k1, a) in p30.iter().enumerate() {
        for (k2, b) in p20.iter().enumerate() {
            let s = 0.25 * (30.0 - 2.0 * k1 as f64) - 0.5 * (20.0 - 2.0 * k2 as f64);
            if s.abs() >= 2.5 - 1e-9 {
                want += a * b;
            }
        }
    }
    assert_monte_carlo_near(&d, want);
}

#[test]
fn monte_carlo_with_distinct_differences_matches_exact_p() {
    // Distinct differences are flipped one random bit each.
    let d: Vec<f64> = (0..21).map(|i| f64::from(i) / 10.0 - 1.35).collect();
    let exact = sign_flip_test(
        &d,
        &PermutationOptions {
            exact_max_nonzero: 21,
            ..PermutationOptions::default()
        },
    )
    .unwrap();
    assert_eq!(exact.p_value, brute_force_p(&d));
    assert_monte_carlo_near(&d, exact.p_value);
}

#[test]
fn large_monte_carlo_is_reasonable() {
    // 400 pass-rate differences with a clear shift: tiny p, same seed same p.
    let d: Vec<f64> = (0..400).map(|i| f64::from(i % 5) / 4.0 - 0.25).collect();
    let o = PermutationOptions {
        permutations: 20_000,
        ..PermutationOptions::default()
    };
    let a = sign_flip_test(&d, &o).unwrap();
    assert_eq!(a, sign_flip_test(&d, &o).unwrap());
    assert_eq!(a.p_value, 1.0 / 20_001.0);
    // Symmetric differences: p near 1.
    let sym: Vec<f64> = (0..400)
        .map(|i| if i % 2 == 0 { 0.25 } else { -0.25 })
        .collect();
    assert!(sign_flip_test(&sym, &o).unwrap().p_value > 0.9);
}

#[test]
fn paired_delta_hand_computed() {
    let before = [0.0, 0.5, 1.0, 0.25];
    let after = [0.5, 0.5, 1.0, 1.0];
    let d = paired_delta(&before, &after, &PairedOptions::with_seed(1)).unwrap();
    assert_eq!(d.n_paired, 4);
    assert_eq!((d.before, d.after), (0.4375, 0.75));
    assert_eq!(d.delta.estimate, 0.3125);
    // Two non-zero differences (0.5, 0.75), both positive: 2 of 4.
    assert_eq!(d.test.p_value, 0.5);
    assert_eq!(d.test.n_nonzero, 2);
    assert_eq!(d.verdict, d.delta.verdict());
}

#[test]
fn paired_interval_is_the_bootstrap_of_differences() {
    let before: Vec<f64> = (0..300).map(|i| f64::from(i % 3) / 2.0).collect();
    let after: Vec<f64> = (0..300).map(|i| f64::from((i + 1) % 3) / 2.0).collect();
    let o = PairedOptions {
        resamples: 2000,
        ..PairedOptions::with_seed(6)
    };
    let d = paired_delta(&before, &after, &o).unwrap();
    let diffs: Vec<f64> = before.iter().zip(&after).map(|(b, a)| a - b).collect();
    let b = BootstrapOptions {
        resamples: 2000,
        ..BootstrapOptions::with_seed(6)
    };
    assert_eq!(d.delta, bootstrap_mean(&diffs, &b).unwrap());
}

#[test]
fn verdicts() {
    assert_eq!(Verdict::from_bounds(0.1, 0.3), Verdict::Improved);
    assert_eq!(Verdict::from_bounds(-0.3, -0.1), Verdict::Regressed);
    assert_eq!(Verdict::from_bounds(-0.1, 0.3), Verdict::Inconclusive);
    assert_eq!(Verdict::from_bounds(-0.1, 0.0), Verdict::Inconclusive);
    assert_eq!(Verdict::from_bounds(0.0, 0.0), Verdict::Inconclusive);
    assert_eq!(Verdict::Regressed.to_string(), "regressed");
    assert_eq!(Verdict::Improved.as_str(), "improved");

    let up: Vec<f64> = vec![1.0; 50];
    let down: Vec<f64> = vec![0.0; 50];
    let o = PairedOptions::with_seed(0);
    assert_eq!(
        paired_delta(&down, &up, &o).unwrap().verdict,
        Verdict::Improved
    );
    assert_eq!(
        paired_delta(&up, &down, &o).unwrap().verdict,
        Verdict::Regressed
    );
    let same = paired_delta(&up, &up, &o).unwrap();
    assert_eq!(
        (same.verdict, same.test.p_value, same.delta.estimate),
        (Verdict::Inconclusive, 1.0, 0.0)
    );
}

#[test]
fn errors() {
    let o = PairedOptions::default();
    assert_eq!(
        paired_delta(&[1.0], &[1.0, 2.0], &o),
        Err(StatsError::LengthMismatch { left: 1, right: 2 })
    );
    assert_eq!(paired_delta(&[], &[], &o), Err(StatsError::Empty));
    assert_eq!(
        paired_delta(&[1.0], &[f64::INFINITY], &o),
        Err(StatsError::NonFinite { index: 0 })
    );
    assert_eq!(
        paired_delta(&[-f64::MAX], &[f64::MAX], &o),
        Err(StatsError::NonFinite { index: 0 })
    );
    let no_flips = PermutationOptions {
        permutations: 0,
        exact_max_nonzero: 0,
        seed: 0,
    };
    assert_eq!(
        sign_flip_test(&[1.0], &no_flips),
        Err(StatsError::ZeroResamples)
    );
    assert_eq!(
        StatsError::LengthMismatch { left: 1, right: 2 }.to_string(),
        "length mismatch: `1` against `2`"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn exact_p_equals_brute_force(d in prop::collection::vec(
        prop_oneof![Just(0.0), (-4i32..=4).prop_map(|c| f64::from(c) / 4.0), -1.0f64..1.0],
        1..=12,
    )) {
        let t = sign_flip_test(&d, &PermutationOptions::default()).unwrap();
        prop_assert_eq!(t.p_value, brute_force_p(&d));
    }

    #[test]
    fn p_is_a_probability_and_interval_contains_delta(
        pairs in prop::collection::vec((0u32..=4, 0u32..=4), 1..60),
        seed in any::<u64>(),
    ) {
        let before: Vec<f64> = pairs.iter().map(|p| f64::from(p.0) / 4.0).collect();
        let after: Vec<f64> = pairs.iter().map(|p| f64::from(p.1) / 4.0).collect();
        let o = PairedOptions { resamples: 300, permutations: 2000, ..PairedOptions::with_seed(seed) };
        let d = paired_delta(&before, &after, &o).unwrap();
        prop_assert!(d.test.p_value > 0.0 && d.test.p_value <= 1.0);
        prop_assert!(d.delta.contains(d.delta.estimate), "{:?}", d.delta);
        prop_assert_eq!(d, paired_delta(&before, &after, &o).unwrap());
    }
}
