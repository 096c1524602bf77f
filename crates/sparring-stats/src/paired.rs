//! Paired before/after comparisons: mean difference, bootstrap interval and
//! sign-flip permutation p-value.

use std::fmt;

use crate::binomial::binomial;
use crate::bootstrap::{
    BootstrapOptions, Groups, Interval, Resampler, bootstrap_mean, check_values,
};
use crate::rng::{STREAM_PERMUTATION, StatsRng};
use crate::{StatsError, defaults};

/// What an interval for a difference says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// The whole interval lies above zero.
    Improved,
    /// The whole interval lies below zero.
    Regressed,
    /// The interval includes zero.
    Inconclusive,
}

impl Verdict {
    /// `Improved` when `lo > 0`, `Regressed` when `hi < 0`, else
    /// `Inconclusive` (an interval touching zero does not exclude it).
    ///
    /// ```
    /// use sparring_stats::Verdict;
    ///
    /// assert_eq!(Verdict::from_bounds(0.01, 0.2), Verdict::Improved);
    /// assert_eq!(Verdict::from_bounds(-0.2, -0.01), Verdict::Regressed);
    /// assert_eq!(Verdict::from_bounds(0.0, 0.2), Verdict::Inconclusive);
    /// ```
    pub fn from_bounds(lo: f64, hi: f64) -> Self {
        if lo > 0.0 {
            Self::Improved
        } else if hi < 0.0 {
            Self::Regressed
        } else {
            Self::Inconclusive
        }
    }

    /// The lowercase name: `improved`, `regressed` or `inconclusive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Improved => "improved",
            Self::Regressed => "regressed",
            Self::Inconclusive => "inconclusive",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Options of [`sign_flip_test`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermutationOptions {
    /// Enumerate all `2^m` sign assignments when the number `m` of non-zero
    /// differences is at most this (default
    /// [`defaults::EXACT_PERMUTATION_MAX_NONZERO`]; values above 40 act as
    /// 40).
    pub exact_max_nonzero: usize,
    /// Random sign assignments otherwise (default [`defaults::PERMUTATIONS`]).
    pub permutations: usize,
    /// Seed of the ChaCha8 stream (default [`defaults::SEED`]).
    pub seed: u64,
}

impl Default for PermutationOptions {
    fn default() -> Self {
        Self {
            exact_max_nonzero: defaults::EXACT_PERMUTATION_MAX_NONZERO,
            permutations: defaults::PERMUTATIONS,
            seed: defaults::SEED,
        }
    }
}

/// How a permutation p-value was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PermutationMethod {
    /// Every one of the `assignments = 2^m` sign assignments of the `m`
    /// non-zero differences; `p = (assignments at least as extreme) / 2^m`.
    Exact {
        /// `2^m`.
        assignments: u64,
    },
    /// `permutations` random sign assignments; `p = (1 + b) / (1 + B)` where
    /// `b` of the `B` random assignments are at least as extreme. The `+ 1`s
    /// count the observed assignment, which keeps `p` above zero and the test
    /// valid (Phipson and Smyth 2010).
    MonteCarlo {
        /// `B`.
        permutations: u64,
    },
}

/// Result of [`sign_flip_test`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SignFlipTest {
    /// Two-sided p-value.
    pub p_value: f64,
    /// Number of non-zero differences (only these are flipped).
    pub n_nonzero: usize,
    /// How `p_value` was obtained.
    pub method: PermutationMethod,
}

/// Two-sided sign-flip permutation test of "the mean difference is zero".
///
/// Under the null each paired difference is as likely to have either sign,
/// so the statistic `|mean(d)|` is compared with its value under every (or
/// many random) assignments of signs to the differences. `p` is the share of
/// assignments whose `|mean|` is at least the observed one, the observed
/// assignment included. Zero differences do not change the statistic and are
/// left out of the enumeration; with `m` non-zero differences the test is
/// exact when `m <= options.exact_max_nonzero` (2^m assignments), else Monte
/// Carlo with `p = (1 + b) / (1 + B)` on ChaCha8 stream 2 of `options.seed`.
/// A random assignment flips each non-zero difference with chance 1/2 (one
/// random bit each); when the differences take few distinct values (see
/// [`defaults::TASKS_PER_DISTINCT_VALUE_FOR_COUNTS`]) the number flipped
/// among equal differences is drawn as Binomial(count, 1/2) instead, which
/// is the same distribution at a fraction of the cost.
///
/// "At least as extreme" allows a tolerance of
/// [`defaults::TIE_TOLERANCE`] times `Σ|d|`, so that assignments tying the
/// observed statistic count even when rounding differs.
///
/// ```
/// use sparring_stats::{sign_flip_test, PermutationOptions};
///
/// // Three positive differences: only "all +" and "all −" are as extreme.
/// let t = sign_flip_test(&[1.0, 1.0, 1.0, 0.0], &PermutationOptions::default())?;
/// assert_eq!(t.p_value, 0.25);
/// assert_eq!(t.n_nonzero, 3);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn sign_flip_test(
    differences: &[f64],
    options: &PermutationOptions,
) -> Result<SignFlipTest, StatsError> {
    check_values(differences)?;
    let nonzero: Vec<f64> = differences.iter().copied().filter(|&d| d != 0.0).collect();
    let m = nonzero.len();
    let observed = nonzero.iter().sum::<f64>().abs();
    let scale: f64 = nonzero.iter().map(|d| d.abs()).sum();
    let threshold = observed - defaults::TIE_TOLERANCE * scale;
    if m <= options.exact_max_nonzero.min(40) {
        let (extreme, assignments) = exact_count(&nonzero, threshold);
        return Ok(SignFlipTest {
            p_value: extreme as f64 / assignments as f64,
            n_nonzero: m,
            method: PermutationMethod::Exact { assignments },
        });
    }
    if options.permutations == 0 {
        return Err(StatsError::ZeroResamples);
    }
    let mut rng = StatsRng::with_stream(options.seed, STREAM_PERMUTATION);
    let groups = Groups::new(&nonzero);
    let mut extreme = 0u64;
    if groups.len() * defaults::TASKS_PER_DISTINCT_VALUE_FOR_COUNTS <= m {
        // Few distinct differences: the number flipped in each group of
        // equal differences is Binomial(size, 1/2).
        for _ in 0..options.permutations {
            let s: f64 = groups
                .iter()
                .map(|(v, size)| {
                    let flipped = binomial(&mut rng, size, 0.5);
                    v * (size as f64 - 2.0 * flipped as f64)
                })
                .sum();
            extreme += u64::from(s.abs() >= threshold);
        }
    } else {
        for _ in 0..options.permutations {
            let mut s = 0.0;
            for chunk in nonzero.chunks(64) {
                let mut bits = rng.next_u64();
                for &d in chunk {
                    s += if bits & 1 == 1 { -d } else { d };
                    bits >>= 1;
                }
            }
            extreme += u64::from(s.abs() >= threshold);
        }
    }
    let b = options.permutations as u64;
    Ok(SignFlipTest {
        p_value: (1 + extreme) as f64 / (1 + b) as f64,
        n_nonzero: m,
        method: PermutationMethod::MonteCarlo { permutations: b },
    })
}

/// Counts the sign assignments of `d` whose `|sum|` reaches `threshold`, by
/// meeting in the middle: the sums of each half's `2^(m/2)` assignments, one
/// half sorted and searched. Returns `(count, 2^m)`.
fn exact_count(d: &[f64], threshold: f64) -> (u64, u64) {
    let m = d.len();
    let total = 1u64 << m;
    if threshold <= 0.0 {
        return (total, total);
    }
    let (left, right) = d.split_at(m / 2);
    let a = subset_sums(left);
    let mut b = subset_sums(right);
    b.sort_unstable_by(f64::total_cmp);
    let mut count = 0u64;
    for &x in &a {
        // `x + y` is monotone in `y`, so both sets are prefixes or suffixes.
        let below = b.partition_point(|&y| x + y < threshold);
        let low = b.partition_point(|&y| x + y <= -threshold);
        count += (b.len() - below + low) as u64;
    }
    (count, total)
}

/// `Σ ±d_i` for all `2^len` sign assignments, each summed directly in
/// index order so no rounding accumulates across assignments.
fn subset_sums(d: &[f64]) -> Vec<f64> {
    (0..1u64 << d.len())
        .map(|mask| {
            d.iter()
                .enumerate()
                .map(|(i, &x)| if (mask >> i) & 1 == 1 { -x } else { x })
                .sum()
        })
        .collect()
}

/// Options of [`paired_delta`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedOptions {
    /// Bootstrap resamples over paired tasks (default
    /// [`defaults::BOOTSTRAP_RESAMPLES`]).
    pub resamples: usize,
    /// Two-sided confidence level (default [`defaults::CONFIDENCE`]).
    pub confidence: f64,
    /// See [`PermutationOptions::exact_max_nonzero`].
    pub exact_max_nonzero: usize,
    /// See [`PermutationOptions::permutations`].
    pub permutations: usize,
    /// Seed for both the bootstrap (stream 1) and the permutation test
    /// (stream 2) (default [`defaults::SEED`]).
    pub seed: u64,
}

impl Default for PairedOptions {
    fn default() -> Self {
        Self {
            resamples: defaults::BOOTSTRAP_RESAMPLES,
            confidence: defaults::CONFIDENCE,
            exact_max_nonzero: defaults::EXACT_PERMUTATION_MAX_NONZERO,
            permutations: defaults::PERMUTATIONS,
            seed: defaults::SEED,
        }
    }
}

impl PairedOptions {
    /// The defaults with another seed.
    pub fn with_seed(seed: u64) -> Self {
        Self {
            seed,
            ..Self::default()
        }
    }
}

/// Result of [`paired_delta`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct PairedDelta {
    /// Number of paired tasks.
    pub n_paired: usize,
    /// Mean of the `before` values.
    pub before: f64,
    /// Mean of the `after` values.
    pub after: f64,
    /// Mean of `after − before` with its percentile-bootstrap interval over
    /// paired tasks (exactly [`bootstrap_mean`] of the differences with the
    /// same seed and confidence).
    pub delta: Interval,
    /// The sign-flip permutation test of the differences.
    pub test: SignFlipTest,
    /// [`Verdict::from_bounds`] of the interval.
    pub verdict: Verdict,
}

/// Paired comparison of two runs: `before[i]` and `after[i]` are one task's
/// values (for example its pass@1) in each run.
///
/// ```
/// use sparring_stats::{paired_delta, PairedOptions, Verdict};
///
/// let before = [0.0, 0.5, 0.5, 0.25, 0.0, 1.0];
/// let after = [0.5, 0.75, 1.0, 0.5, 0.25, 1.0];
/// let d = paired_delta(&before, &after, &PairedOptions::with_seed(3))?;
/// assert_eq!(d.n_paired, 6);
/// assert!((d.delta.estimate - 0.2916666666666667).abs() < 1e-15);
/// assert_eq!(d.verdict, Verdict::Improved);
/// // Five non-zero differences, all positive: 2 of 32 assignments.
/// assert_eq!(d.test.p_value, 0.0625);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn paired_delta(
    before: &[f64],
    after: &[f64],
    options: &PairedOptions,
) -> Result<PairedDelta, StatsError> {
    if before.len() != after.len() {
        return Err(StatsError::LengthMismatch {
            left: before.len(),
            right: after.len(),
        });
    }
    check_values(before)?;
    check_values(after)?;
    let diffs: Vec<f64> = before.iter().zip(after).map(|(b, a)| a - b).collect();
    check_values(&diffs)?;
    let n = before.len() as f64;
    let delta = bootstrap_mean(
        &diffs,
        &BootstrapOptions {
            resamples: options.resamples,
            confidence: options.confidence,
            seed: options.seed,
            resampler: Resampler::Auto,
        },
    )?;
    let test = sign_flip_test(
        &diffs,
        &PermutationOptions {
            exact_max_nonzero: options.exact_max_nonzero,
            permutations: options.permutations,
            seed: options.seed,
        },
    )?;
    Ok(PairedDelta {
        n_paired: before.len(),
        before: before.iter().sum::<f64>() / n,
        after: after.iter().sum::<f64>() / n,
        delta,
        test,
        verdict: delta.verdict(),
    })
}
