//! pass@1, pass@k and pass^k per task and averaged over tasks.

// These tests compare floats exactly on purpose: the values are exact.
#![allow(clippy::float_cmp)]

use proptest::prelude::*;
use sparring_stats::{
    StatsError, mean_pass_at_1, mean_pass_at_k, mean_pass_hat_k, pass_at_1, pass_at_k, pass_hat_k,
};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// `C(n, k)` for small arguments, exactly.
fn binom(n: u64, k: u64) -> u128 {
    if k > n {
        return 0;
    }
    let mut r: u128 = 1;
    for i in 0..k {
        r = r * u128::from(n - i) / u128::from(i + 1);
    }
    r
}

#[test]
fn hand_computed_pass_at_k() {
    // 1 − C(3,2)/C(5,2) = 1 − 3/10.
    assert!(close(pass_at_k(5, 2, 2).unwrap(), 0.7, 1e-15));
    // 1 − C(8,3)/C(10,3) = 1 − 56/120.
    assert!(close(pass_at_k(10, 2, 3).unwrap(), 64.0 / 120.0, 1e-15));
    // n − c < k: every draw of k contains a success.
    assert_eq!(pass_at_k(5, 3, 3).unwrap(), 1.0);
    assert_eq!(pass_at_k(5, 0, 3).unwrap(), 0.0);
    assert_eq!(pass_at_k(5, 5, 5).unwrap(), 1.0);
    assert_eq!(pass_at_k(7, 3, 1).unwrap(), pass_at_1(7, 3).unwrap());
}

#[test]
fn hand_computed_pass_hat_k() {
    // C(3,2)/C(5,2) = 3/10.
    assert!(close(pass_hat_k(5, 3, 2).unwrap(), 0.3, 1e-15));
    // C(4,3)/C(6,3) = 4/20.
    assert!(close(pass_hat_k(6, 4, 3).unwrap(), 0.2, 1e-15));
    assert_eq!(pass_hat_k(5, 1, 2).unwrap(), 0.0);
    assert_eq!(pass_hat_k(5, 5, 5).unwrap(), 1.0);
    assert_eq!(pass_hat_k(4, 3, 1).unwrap(), 0.75);
}

#[test]
fn matches_exact_binomials_for_small_n() {
    for n in 1..=30u64 {
        for c in 0..=n {
            for k in 1..=n {
                let want_at = 1.0 - binom(n - c, k) as f64 / binom(n, k) as f64;
                let want_hat = binom(c, k) as f64 / binom(n, k) as f64;
                assert!(
                    close(pass_at_k(n, c, k).unwrap(), want_at, 1e-12),
                    "{n} {c} {k}"
                );
                assert!(
                    close(pass_hat_k(n, c, k).unwrap(), want_hat, 1e-12),
                    "{n} {c} {k}"
                );
            }
        }
    }
}

#[test]
fn stable_for_large_n() {
    // Against ln C via ln Γ: 1 − exp(lnC(n−c,k) − lnC(n,k)).
    let ln_c = |n: u64, k: u64| ln_binomial(n, k);
    for &(n, c, k) in &[
        (10_000u64, 1u64, 1u64),
        (10_000, 1, 100),
        (10_000, 5_000, 100),
        (10_000, 9_990, 5),
        (10_000, 3, 5_000),
    ] {
        let got = pass_at_k(n, c, k).unwrap();
        let want = -(ln_c(n - c, k) - ln_c(n, k)).exp_m1();
        assert!(got.is_finite() && (0.0..=1.0).contains(&got));
        assert!(close(got, want, 1e-9), "{n} {c} {k}: {got} vs {want}");
        let hat = pass_hat_k(n, c, k).unwrap();
        let want_hat = if c < k {
            0.0
        } else {
            (ln_c(c, k) - ln_c(n, k)).exp()
        };
        assert!(
            close(hat, want_hat, 1e-9),
            "{n} {c} {k}: {hat} vs {want_hat}"
        );
    }
    // Tiny probabilities keep their relative accuracy: 1 − (1 − 1/n) = 1/n.
    let p = pass_at_k(10_000, 1, 1).unwrap();
    assert!((p - 1e-4).abs() < 1e-19);
    let p = pass_at_k(10_000, 1, 2).unwrap();
    assert!((p / 2e-4 - 1.0).abs() < 1e-12);
}

fn ln_binomial(n: u64, k: u64) -> f64 {
    // ln Γ by summing logs is exact enough for this check.
    let ln_fact = |m: u64| (1..=m).map(|i| (i as f64).ln()).sum::<f64>();
    ln_fact(n) - ln_fact(k) - ln_fact(n - k)
}

#[test]
fn errors() {
    assert_eq!(
        pass_at_k(3, 4, 1),
        Err(StatsError::SuccessesExceedSamples { n: 3, c: 4 })
    );
    assert_eq!(pass_at_k(3, 1, 0), Err(StatsError::ZeroK));
    assert_eq!(
        pass_at_k(3, 1, 4),
        Err(StatsError::TooFewSamples { n: 3, k: 4 })
    );
    assert_eq!(
        pass_at_1(0, 0),
        Err(StatsError::TooFewSamples { n: 0, k: 1 })
    );
    assert_eq!(
        pass_hat_k(2, 3, 1),
        Err(StatsError::SuccessesExceedSamples { n: 2, c: 3 })
    );
    assert_eq!(
        mean_pass_at_k(&[(1, 2)], 1),
        Err(StatsError::SuccessesExceedSamples { n: 1, c: 2 })
    );
    assert_eq!(mean_pass_hat_k(&[(1, 1)], 0), Err(StatsError::ZeroK));
    assert_eq!(
        StatsError::SuccessesExceedSamples { n: 1, c: 2 }.to_string(),
        "success count `2` exceeds sample count `1`"
    );
}

#[test]
fn averages_skip_tasks_with_fewer_than_k_samples() {
    let tasks = [(4, 2), (2, 1), (1, 1), (0, 0), (8, 8)];
    let at1 = mean_pass_at_1(&tasks).unwrap();
    assert_eq!(at1.n_tasks, 4);
    assert!(close(
        at1.value.unwrap(),
        (0.5 + 0.5 + 1.0 + 1.0) / 4.0,
        1e-15
    ));
    let at2 = mean_pass_at_k(&tasks, 2).unwrap();
    assert_eq!(at2.n_tasks, 3);
    let want = (pass_at_k(4, 2, 2).unwrap() + 1.0 + 1.0) / 3.0;
    assert!(close(at2.value.unwrap(), want, 1e-15));
    let hat4 = mean_pass_hat_k(&tasks, 4).unwrap();
    assert_eq!(hat4.n_tasks, 2);
    assert!(close(hat4.value.unwrap(), 0.5, 1e-15));
    let none = mean_pass_at_k(&tasks, 9).unwrap();
    assert_eq!((none.value, none.n_tasks), (None, 0));
    let empty = mean_pass_at_1(&[]).unwrap();
    assert_eq!((empty.value, empty.n_tasks), (None, 0));
}

/// `(n, c, k)` with `c <= n` and `1 <= k <= n`; small `n` half the time so
/// that edge cases (`c = 0`, `c = n`, `n − c < k`) come up often.
fn task() -> impl Strategy<Value = (u64, u64, u64)> {
    prop_oneof![1u64..=12, 1u64..=10_000].prop_flat_map(|n| (Just(n), 0..=n, 1..=n))
}

proptest! {
    #[test]
    fn pass_at_k_is_monotone_in_k((n, c, k) in task()) {
        prop_assume!(k < n);
        prop_assert!(pass_at_k(n, c, k).unwrap() <= pass_at_k(n, c, k + 1).unwrap());
        prop_assert!(pass_hat_k(n, c, k).unwrap() >= pass_hat_k(n, c, k + 1).unwrap());
    }

    #[test]
    fn pass_at_k_is_monotone_in_c((n, c, k) in task()) {
        prop_assume!(c < n);
        prop_assert!(pass_at_k(n, c, k).unwrap() <= pass_at_k(n, c + 1, k).unwrap());
        prop_assert!(pass_hat_k(n, c, k).unwrap() <= pass_hat_k(n, c + 1, k).unwrap());
    }

    #[test]
    fn pass_hat_k_below_pass_at_1_below_pass_at_k((n, c, k) in task()) {
        let hat = pass_hat_k(n, c, k).unwrap();
        let one = pass_at_1(n, c).unwrap();
        let at = pass_at_k(n, c, k).unwrap();
        prop_assert!(0.0 <= hat && hat <= one && one <= at && at <= 1.0, "{hat} {one} {at}");
    }
}
