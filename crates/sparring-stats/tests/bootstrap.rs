//! Percentile bootstrap over tasks, its two samplers, and quantiles.

// These tests compare floats exactly on purpose: the values are exact.
#![allow(clippy::float_cmp)]

use proptest::prelude::*;
use sparring_stats::{
    BootstrapOptions, Resampler, StatsError, bootstrap_distribution, bootstrap_mean, quantile,
};

fn options(seed: u64, resamples: usize, resampler: Resampler) -> BootstrapOptions {
    BootstrapOptions {
        resamples,
        seed,
        resampler,
        ..BootstrapOptions::default()
    }
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

fn var(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / x.len() as f64
}

#[test]
fn defaults_are_95_percent_and_10000_resamples() {
    let o = BootstrapOptions::default();
    assert_eq!((o.resamples, o.confidence, o.seed), (10_000, 0.95, 0));
    assert_eq!(o.resampler, Resampler::Auto);
}

#[test]
fn quantile_matches_numpy_linear() {
    // numpy.quantile([1, 2, 3, 4], q) for these q.
    let x = [3.0, 1.0, 4.0, 2.0];
    assert_eq!(quantile(&x, 0.0).unwrap(), 1.0);
    assert_eq!(quantile(&x, 0.25).unwrap(), 1.75);
    assert_eq!(quantile(&x, 0.5).unwrap(), 2.5);
    assert_eq!(quantile(&x, 0.9).unwrap(), 3.7);
    assert_eq!(quantile(&x, 1.0).unwrap(), 4.0);
    // numpy.quantile(range(10), 0.025) = 0.225, (…, 0.975) = 8.775.
    let y: Vec<f64> = (0..10).map(f64::from).collect();
    assert!((quantile(&y, 0.025).unwrap() - 0.225).abs() < 1e-15);
    assert!((quantile(&y, 0.975).unwrap() - 8.775).abs() < 1e-15);
    assert_eq!(quantile(&[5.0], 0.3).unwrap(), 5.0);
    assert!(quantile(&[], 0.5).is_err());
    assert!(quantile(&[1.0], 1.5).is_err());
}

#[test]
fn constant_values_give_a_point_interval() {
    for n in [1, 3, 17, 1000] {
        for resampler in [Resampler::Auto, Resampler::Indices, Resampler::Counts] {
            let x = vec![0.1; n];
            let ci = bootstrap_mean(&x, &options(5, 200, resampler)).unwrap();
            assert_eq!(ci.lo, ci.estimate);
            assert_eq!(ci.hi, ci.estimate);
            assert!((ci.estimate - 0.1).abs() < 1e-15);
        }
    }
}

#[test]
fn two_tasks_resample_to_known_distribution() {
    // Means of resamples of [0, 1] are 0, 0.5, 1 with chances 1/4, 1/2, 1/4.
    for resampler in [Resampler::Indices, Resampler::Counts] {
        let (est, draws) =
            bootstrap_distribution(&[0.0, 1.0], &options(9, 40_000, resampler)).unwrap();
        assert_eq!(est, 0.5);
        let share = |v: f64| draws.iter().filter(|&&d| d == v).count() as f64 / draws.len() as f64;
        assert!((share(0.0) - 0.25).abs() < 0.01, "{resampler:?}");
        assert!((share(0.5) - 0.5).abs() < 0.01, "{resampler:?}");
        assert!((share(1.0) - 0.25).abs() < 0.01, "{resampler:?}");
        let ci = bootstrap_mean(&[0.0, 1.0], &options(9, 40_000, resampler)).unwrap();
        assert_eq!((ci.lo, ci.hi), (0.0, 1.0));
    }
}

#[test]
fn both_samplers_agree_in_distribution() {
    // 60 tasks with pass rates in eighths. The variance of a resampled mean
    // is Var(x)/n exactly; both samplers must match it and each other.
    let x: Vec<f64> = (0..60).map(|i| f64::from((i * 7) % 9) / 8.0).collect();
    let want_var = var(&x) / x.len() as f64;
    let mut bounds = Vec::new();
    for resampler in [Resampler::Indices, Resampler::Counts] {
        let (est, draws) = bootstrap_distribution(&x, &options(11, 50_000, resampler)).unwrap();
        assert!((mean(&draws) - est).abs() < 0.002, "{resampler:?}");
        assert!((var(&draws) / want_var - 1.0).abs() < 0.03, "{resampler:?}");
        let ci = bootstrap_mean(&x, &options(11, 50_000, resampler)).unwrap();
        bounds.push((ci.lo, ci.hi));
    }
    assert!((bounds[0].0 - bounds[1].0).abs() < 0.01, "{bounds:?}");
    assert!((bounds[0].1 - bounds[1].1).abs() < 0.01, "{bounds:?}");
}

#[test]
fn counts_sampler_draws_exact_binomials() {
    // With m ones among n tasks, n·(resampled mean) ~ Binomial(n, m/n).
    // Covers both the inversion (n·p <= 30) and BTPE (n·p > 30) branches.
    for &(n, m) in &[(40usize, 4usize), (200, 60), (5000, 1000), (10_000, 9_000)] {
        let mut x = vec![0.0; n];
        x[..m].fill(1.0);
        let draws = 40_000;
        let (_, means) = bootstrap_distribution(&x, &options(3, draws, Resampler::Counts)).unwrap();
        let counts: Vec<f64> = means.iter().map(|v| (v * n as f64).round()).collect();
        let p = m as f64 / n as f64;
        let (mu, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
        let got_mu = mean(&counts);
        let got_sd = var(&counts).sqrt();
        assert!(
            (got_mu - mu).abs() < 4.0 * sd / (draws as f64).sqrt(),
            "{n} {m}: mean {got_mu} vs {mu}"
        );
        assert!(
            (got_sd / sd - 1.0).abs() < 0.02,
            "{n} {m}: sd {got_sd} vs {sd}"
        );
        // Chi-square against the exact pmf on cells with expected >= 20.
        let ln_pmf = |k: f64| {
            let lf = |v: f64| (1..=v as u64).map(|i| (i as f64).ln()).sum::<f64>();
            lf(n as f64) - lf(k) - lf(n as f64 - k) + k * p.ln() + (n as f64 - k) * (1.0 - p).ln()
        };
        let lo = (mu - 6.0 * sd).floor().max(0.0) as u64;
        let hi = (mu + 6.0 * sd).ceil().min(n as f64) as u64;
        let mut chi2 = 0.0;
        let mut cells = 0;
        for k in lo..=hi {
            let expected = draws as f64 * ln_pmf(k as f64).exp();
            if expected < 20.0 {
                continue;
            }
            let observed = counts.iter().filter(|&&c| c == k as f64).count() as f64;
            chi2 += (observed - expected).powi(2) / expected;
            cells += 1;
        }
        // Mean cells − 1, sd √(2(cells − 1)); allow 5 sd.
        let df = f64::from(cells - 1);
        assert!(
            chi2 < df + 5.0 * (2.0 * df).sqrt(),
            "{n} {m}: chi2 {chi2} over {cells} cells"
        );
    }
}

#[test]
fn auto_uses_counts_only_for_few_distinct_values() {
    // Same seed: Auto equals Counts for pass rates, Indices for distinct values.
    let rates: Vec<f64> = (0..400).map(|i| f64::from(i % 5) / 4.0).collect();
    let distinct: Vec<f64> = (0..400).map(|i| f64::from(i) / 400.0).collect();
    let auto = |x: &[f64]| bootstrap_mean(x, &options(2, 300, Resampler::Auto)).unwrap();
    assert_eq!(
        auto(&rates),
        bootstrap_mean(&rates, &options(2, 300, Resampler::Counts)).unwrap()
    );
    assert_eq!(
        auto(&distinct),
        bootstrap_mean(&distinct, &options(2, 300, Resampler::Indices)).unwrap()
    );
}

#[test]
fn same_seed_same_interval_other_seed_other_draws() {
    let x: Vec<f64> = (0..50).map(|i| f64::from(i * i % 17) / 16.0).collect();
    let a = bootstrap_mean(&x, &BootstrapOptions::with_seed(4)).unwrap();
    let b = bootstrap_mean(&x, &BootstrapOptions::with_seed(4)).unwrap();
    assert_eq!(a, b);
    let (_, d1) = bootstrap_distribution(&x, &options(4, 100, Resampler::Auto)).unwrap();
    let (_, d2) = bootstrap_distribution(&x, &options(5, 100, Resampler::Auto)).unwrap();
    assert_ne!(d1, d2);
}

#[test]
fn confidence_widens_the_interval() {
    let x: Vec<f64> = (0..80).map(|i| f64::from(i % 4) / 3.0).collect();
    let at = |confidence| {
        let o = BootstrapOptions {
            confidence,
            ..BootstrapOptions::with_seed(1)
        };
        bootstrap_mean(&x, &o).unwrap()
    };
    let (narrow, wide) = (at(0.5), at(0.99));
    assert!(wide.lo < narrow.lo && narrow.hi < wide.hi);
}

#[test]
fn errors() {
    let o = BootstrapOptions::default();
    assert_eq!(bootstrap_mean(&[], &o), Err(StatsError::Empty));
    assert_eq!(
        bootstrap_mean(&[1.0, f64::NAN], &o),
        Err(StatsError::NonFinite { index: 1 })
    );
    let zero = BootstrapOptions { resamples: 0, ..o };
    assert_eq!(
        bootstrap_mean(&[1.0], &zero),
        Err(StatsError::ZeroResamples)
    );
    for confidence in [0.0, 1.0, -0.5, f64::NAN] {
        let bad = BootstrapOptions { confidence, ..o };
        assert!(matches!(
            bootstrap_mean(&[1.0], &bad),
            Err(StatsError::OutOfUnitInterval { .. })
        ));
    }
    assert_eq!(
        StatsError::NonFinite { index: 1 }.to_string(),
        "value at index `1` is not finite"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn interval_contains_the_point(
        x in prop::collection::vec(0.0f64..=1.0, 1..60),
        seed in any::<u64>(),
        counts in any::<bool>(),
    ) {
        let resampler = if counts { Resampler::Counts } else { Resampler::Indices };
        let ci = bootstrap_mean(&x, &options(seed, 500, resampler)).unwrap();
        prop_assert!(ci.lo <= ci.hi);
        prop_assert!(ci.contains(ci.estimate), "{ci:?}");
    }

    #[test]
    fn interval_contains_the_point_for_pass_rates(
        x in prop::collection::vec((0u32..=4).prop_map(|c| f64::from(c) / 4.0), 1..400),
        seed in any::<u64>(),
    ) {
        let ci = bootstrap_mean(&x, &options(seed, 500, Resampler::Auto)).unwrap();
        prop_assert!(ci.contains(ci.estimate), "{ci:?}");
        prop_assert!(0.0 <= ci.lo && ci.hi <= 1.0);
    }

    #[test]
    fn same_seed_same_result(x in prop::collection::vec(-5.0f64..5.0, 1..40), seed in any::<u64>()) {
        let o = options(seed, 200, Resampler::Auto);
        prop_assert_eq!(bootstrap_mean(&x, &o).unwrap(), bootstrap_mean(&x, &o).unwrap());
    }
}
