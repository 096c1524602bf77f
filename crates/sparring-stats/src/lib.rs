//! Estimators behind the numbers sparring prints: pass@k and pass^k per
//! task, percentile-bootstrap intervals over tasks, paired before/after
//! deltas with a sign-flip permutation test, Wilson intervals, Cohen's
//! kappa, judge agreement, the reward variance split and within-task
//! correlations of the hack scan, and the spread of repeated eval runs.
//!
//! Everything here is a pure function over plain numbers: no IO, no clock,
//! no environment, no hash-map iteration. Randomness is explicit: each
//! randomized estimator takes a `u64` seed in its options and draws from its
//! own ChaCha8 stream ([`StatsRng`]), so the same input and seed give the
//! same output on every platform. Bad input (empty, NaN, `c > n`, lengths
//! that do not line up) is a [`StatsError`]; nothing panics.
//!
//! # Main pieces
//!
//! - **Per task**: [`pass_at_1`], [`pass_at_k`] (Chen et al. 2021, unbiased),
//!   [`pass_hat_k`] (Yao et al. 2024), in product form, stable for `n` in
//!   the tens of thousands. Averaged over tasks with at least `k` samples by
//!   [`mean_pass_at_1`], [`mean_pass_at_k`], [`mean_pass_hat_k`], which also
//!   count the tasks used ([`TaskAverage`]).
//! - **Over tasks**: [`bootstrap_mean`] gives an [`Interval`] by the
//!   percentile bootstrap (95 %, 10,000 resamples by default,
//!   [`BootstrapOptions`]). Per-task pass rates take few distinct values, so
//!   resamples are drawn as multinomial counts over groups of equal values
//!   ([`Resampler::Counts`]), which is the same bootstrap at a tiny fraction
//!   of the cost.
//! - **Paired runs**: [`paired_delta`] returns the mean difference, its
//!   bootstrap interval, a [`Verdict`] and a [`sign_flip_test`] p-value
//!   (exact up to 20 non-zero differences, else Monte Carlo).
//! - **Judges**: [`wilson_interval`], [`cohen_kappa`] and
//!   [`judge_agreement`].
//! - **Reward hacking**: [`variance_split`], [`within_task_correlation`] and
//!   [`hack_scan`] with its permutation floor.
//! - **Eval noise**: [`eval_variance`].
//!
//! Every tunable is a constant in [`defaults`] and a field of an options
//! struct.
//!
//! # Example
//!
//! ```
//! use sparring_stats::{bootstrap_mean, mean_pass_at_k, paired_delta, BootstrapOptions, PairedOptions};
//!
//! // (samples, successes) per task.
//! let tasks = [(4, 4), (4, 1), (4, 0), (4, 3), (2, 2)];
//! let pass_at_2 = mean_pass_at_k(&tasks, 2)?;
//! assert_eq!(pass_at_2.n_tasks, 5);
//!
//! // Interval over tasks for pass@1.
//! let per_task: Vec<f64> = tasks.iter().map(|&(n, c)| c as f64 / n as f64).collect();
//! let ci = bootstrap_mean(&per_task, &BootstrapOptions::with_seed(0))?;
//! assert!(ci.lo <= ci.estimate && ci.estimate <= ci.hi);
//!
//! // The same tasks after a change.
//! let after = [1.0, 0.5, 0.25, 1.0, 1.0];
//! let delta = paired_delta(&per_task, &after, &PairedOptions::with_seed(0))?;
//! println!("{} ({:.3}, p = {:.3})", delta.verdict, delta.delta.estimate, delta.test.p_value);
//! # Ok::<(), sparring_stats::StatsError>(())
//! ```
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod agreement;
mod binomial;
mod bootstrap;
pub mod defaults;
mod error;
mod paired;
mod passk;
mod quantile;
mod rng;
mod variance;

pub use agreement::{
    JudgeAgreement, cohen_kappa, judge_agreement, normal_critical_value, wilson_interval,
};
pub use bootstrap::{
    BootstrapOptions, Interval, Resampler, bootstrap_distribution, bootstrap_mean,
};
pub use error::StatsError;
pub use paired::{
    PairedDelta, PairedOptions, PermutationMethod, PermutationOptions, SignFlipTest, Verdict,
    paired_delta, sign_flip_test,
};
pub use passk::{
    TaskAverage, mean_pass_at_1, mean_pass_at_k, mean_pass_hat_k, pass_at_1, pass_at_k, pass_hat_k,
};
pub use quantile::quantile;
pub use rng::StatsRng;
pub use variance::{
    EvalVariance, FeatureCorrelation, HackScan, HackScanOptions, VarianceSplit, eval_variance,
    hack_scan, variance_split, within_task_correlation,
};
