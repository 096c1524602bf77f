//! The pass@k family per task and averaged over tasks.

use crate::StatsError;

/// pass@1 of one task: `c / n`.
///
/// ```
/// assert_eq!(sparring_stats::pass_at_1(4, 1)?, 0.25);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn pass_at_1(n: u64, c: u64) -> Result<f64, StatsError> {
    check_counts(n, c, 1)?;
    Ok(c as f64 / n as f64)
}

/// Unbiased pass@k of one task (Chen et al. 2021): the chance that at least
/// one of `k` samples drawn without replacement from the task's `n` samples
/// succeeds, `1 − C(n−c, k) / C(n, k)`.
///
/// Computed in product form as `1 − ∏_{i=n−c+1..=n} (1 − k/i)`, summed in
/// log space (`−expm1(Σ ln_1p(−k/i))`) so that it stays accurate for small
/// values and never overflows; it is exactly 1 when `n − c < k`. The cost is
/// `c` logarithms.
///
/// ```
/// // n = 4, c = 1, k = 2: 1 − C(3,2)/C(4,2) = 1 − 3/6.
/// let p = sparring_stats::pass_at_k(4, 1, 2)?;
/// assert!((p - 0.5).abs() < 1e-15);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Result<f64, StatsError> {
    check_counts(n, c, k)?;
    Ok(pass_at_k_unchecked(n, c, k))
}

/// pass^k of one task (Yao et al. 2024): the chance that all of `k` samples
/// drawn without replacement succeed, `C(c, k) / C(n, k)`.
///
/// Computed in product form as `∏_{i=0..k} (c−i)/(n−i)`; it is exactly 0
/// when `c < k`. The cost is `k` divisions.
///
/// ```
/// // n = 4, c = 2, k = 2: C(2,2)/C(4,2) = 1/6.
/// let p = sparring_stats::pass_hat_k(4, 2, 2)?;
/// assert!((p - 1.0 / 6.0).abs() < 1e-15);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> Result<f64, StatsError> {
    check_counts(n, c, k)?;
    Ok(pass_hat_k_unchecked(n, c, k))
}

/// An estimator averaged over the tasks that have at least `k` samples.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct TaskAverage {
    /// Mean of the per-task values; `None` when no task has `k` samples.
    pub value: Option<f64>,
    /// Number of tasks averaged (those with at least `k` samples).
    pub n_tasks: usize,
}

/// Mean pass@k over tasks given as `(n, c)` pairs (samples, successes);
/// tasks with fewer than `k` samples are skipped and not counted.
///
/// ```
/// let avg = sparring_stats::mean_pass_at_k(&[(4, 1), (4, 4), (1, 1)], 2)?;
/// assert_eq!(avg.n_tasks, 2);
/// assert!((avg.value.unwrap() - 0.75).abs() < 1e-15);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn mean_pass_at_k(tasks: &[(u64, u64)], k: u64) -> Result<TaskAverage, StatsError> {
    average(tasks, k, pass_at_k_unchecked)
}

/// Mean pass^k over tasks given as `(n, c)` pairs; tasks with fewer than `k`
/// samples are skipped and not counted.
pub fn mean_pass_hat_k(tasks: &[(u64, u64)], k: u64) -> Result<TaskAverage, StatsError> {
    average(tasks, k, pass_hat_k_unchecked)
}

/// Mean pass@1 over tasks given as `(n, c)` pairs; tasks with no samples are
/// skipped and not counted.
pub fn mean_pass_at_1(tasks: &[(u64, u64)]) -> Result<TaskAverage, StatsError> {
    average(tasks, 1, |n, c, _| c as f64 / n as f64)
}

fn average(
    tasks: &[(u64, u64)],
    k: u64,
    per_task: fn(u64, u64, u64) -> f64,
) -> Result<TaskAverage, StatsError> {
    if k == 0 {
        return Err(StatsError::ZeroK);
    }
    let mut sum = 0.0;
    let mut used = 0usize;
    for &(n, c) in tasks {
        if c > n {
            return Err(StatsError::SuccessesExceedSamples { n, c });
        }
        if n >= k {
            sum += per_task(n, c, k);
            used += 1;
        }
    }
    Ok(TaskAverage {
        value: (used > 0).then(|| sum / used as f64),
        n_tasks: used,
    })
}

fn check_counts(n: u64, c: u64, k: u64) -> Result<(), StatsError> {
    if k == 0 {
        return Err(StatsError::ZeroK);
    }
    if c > n {
        return Err(StatsError::SuccessesExceedSamples { n, c });
    }
    if n < k {
        return Err(StatsError::TooFewSamples { n, k });
    }
    Ok(())
}

/// Requires `1 <= k <= n` and `c <= n`.
fn pass_at_k_unchecked(n: u64, c: u64, k: u64) -> f64 {
    if n - c < k {
        return 1.0;
    }
    if c == 0 {
        return 0.0;
    }
    if k == 1 {
        // The same division as pass@1, so that pass@1 and pass@k agree to
        // the last bit at k = 1.
        return c as f64 / n as f64;
    }
    let kf = k as f64;
    // Every i here exceeds n − c >= k, so each term is in (−inf, 0).
    let log_fail: f64 = (n - c + 1..=n).map(|i| (-kf / i as f64).ln_1p()).sum();
    -log_fail.exp_m1()
}

/// Requires `1 <= k <= n` and `c <= n`.
fn pass_hat_k_unchecked(n: u64, c: u64, k: u64) -> f64 {
    if c < k {
        return 0.0;
    }
    (0..k).map(|i| (c - i) as f64 / (n - i) as f64).product()
}
