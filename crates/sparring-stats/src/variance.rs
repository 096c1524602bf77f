//! Variance across tasks and runs: the split of reward variance used by the
//! hack scan, within-task correlations with a permutation floor, and the
//! spread of pass@1 across repeated eval runs.

use crate::bootstrap::{check_unit, check_values};
use crate::quantile::quantile_linear;
use crate::rng::{STREAM_SHUFFLE, StatsRng};
use crate::{StatsError, defaults};

/// Reward variance split by the law of total variance.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct VarianceSplit {
    /// `E[Var(r | task)]`: the row-weighted mean of each task's population
    /// variance, `Σ_t (n_t/N)·Var_t`.
    pub within_task: f64,
    /// `Var(E[r | task])`: the row-weighted population variance of the task
    /// means around the grand mean, `Σ_t (n_t/N)·(mean_t − mean)²`.
    pub between_task: f64,
    /// Population variance of all rows; equals `within_task + between_task`
    /// up to rounding.
    pub total: f64,
    /// Rows used.
    pub n_rows: usize,
    /// Tasks with at least one row.
    pub n_tasks: usize,
}

/// Splits the variance of rewards grouped by task (`groups[t]` holds task
/// `t`'s rewards) into within-task and between-task parts.
///
/// Each task is weighted by its share of rows `n_t / N`, and all variances
/// are population variances (divide by the count, `ddof = 0`). With this
/// weighting the law of total variance holds exactly:
/// `total = within_task + between_task`. Empty groups are ignored.
///
/// ```
/// // Task means 0.5 and 1.0; grand mean 0.75.
/// let s = sparring_stats::variance_split(&[vec![0.0, 1.0], vec![1.0, 1.0]])?;
/// assert_eq!(s.within_task, 0.125); // (0.25 + 0) / 2
/// assert_eq!(s.between_task, 0.0625); // 0.25² on both sides
/// assert_eq!(s.total, 0.1875);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn variance_split<G: AsRef<[f64]>>(groups: &[G]) -> Result<VarianceSplit, StatsError> {
    let flat = Flat::new(groups)?;
    let n = flat.values.len() as f64;
    let grand = flat.values.iter().sum::<f64>() / n;
    let mut within = 0.0;
    let mut between = 0.0;
    let mut n_tasks = 0;
    for range in flat.ranges() {
        let rows = &flat.values[range];
        if rows.is_empty() {
            continue;
        }
        n_tasks += 1;
        let m = rows.len() as f64;
        let mean = rows.iter().sum::<f64>() / m;
        within += rows.iter().map(|r| (r - mean) * (r - mean)).sum::<f64>();
        between += m * (mean - grand) * (mean - grand);
    }
    let total = flat
        .values
        .iter()
        .map(|r| (r - grand) * (r - grand))
        .sum::<f64>()
        / n;
    Ok(VarianceSplit {
        within_task: within / n,
        between_task: between / n,
        total,
        n_rows: flat.values.len(),
        n_tasks,
    })
}

/// Within-task correlation of a feature with reward: both are demeaned
/// within each task, then the Pearson correlation is taken over all rows.
/// `feature[t]` and `reward[t]` hold task `t`'s rows in the same order.
///
/// Returns 0 when either side has no within-task variation (for example
/// every task's rewards are constant). A task whose values are all equal
/// contributes exact zeros, not rounding noise.
///
/// ```
/// // Two tasks where a longer reply goes with success, one where it does not.
/// let feature = [vec![1.0, 3.0], vec![4.0, 2.0], vec![0.0, 2.0]];
/// let reward = [vec![0.0, 1.0], vec![1.0, 0.0], vec![1.0, 0.0]];
/// assert_eq!(sparring_stats::within_task_correlation(&feature, &reward)?, 1.0 / 3.0);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn within_task_correlation<G: AsRef<[f64]>>(
    feature: &[G],
    reward: &[G],
) -> Result<f64, StatsError> {
    let reward = Flat::new(reward)?;
    let feature = Flat::new(feature)?;
    reward.check_same_shape(&feature)?;
    let r = reward.demeaned();
    let f = feature.demeaned();
    Ok(correlation(&f, &r, sum_sq(&r)))
}

/// Options of [`hack_scan`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HackScanOptions {
    /// Within-task reward shuffles (default [`defaults::HACK_SCAN_SHUFFLES`]).
    pub shuffles: usize,
    /// Quantile of the shuffled maxima that sets the floor (default
    /// [`defaults::HACK_SCAN_FLOOR_QUANTILE`]).
    pub quantile: f64,
    /// Seed of the ChaCha8 stream (default [`defaults::SEED`]).
    pub seed: u64,
}

impl Default for HackScanOptions {
    fn default() -> Self {
        Self {
            shuffles: defaults::HACK_SCAN_SHUFFLES,
            quantile: defaults::HACK_SCAN_FLOOR_QUANTILE,
            seed: defaults::SEED,
        }
    }
}

/// One feature's line in a [`HackScan`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct FeatureCorrelation {
    /// [`within_task_correlation`] of the feature with reward.
    pub corr: f64,
    /// Whether `|corr|` is strictly above the floor.
    pub flagged: bool,
}

/// Result of [`hack_scan`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HackScan {
    /// The reward variance split.
    pub variance: VarianceSplit,
    /// The permutation floor for `|corr|`.
    pub floor: f64,
    /// One entry per feature, in input order.
    pub features: Vec<FeatureCorrelation>,
}

/// Looks for row features that track reward within tasks, which suggests
/// the reward can be gamed (longer replies, more apologies, …).
///
/// `reward[t]` holds task `t`'s rewards and `features[j][t]` feature `j` on
/// the same rows. For each feature it reports the
/// [`within_task_correlation`] with reward. The floor is what chance alone
/// gives for the strongest of these features: rewards are shuffled within
/// each task `options.shuffles` times (ChaCha8 stream 3 of `options.seed`,
/// Fisher–Yates per task in task order), each time the largest `|corr|`
/// over all features is kept, and the floor is the `options.quantile`
/// quantile (numpy linear) of those maxima. Features whose `|corr|` is
/// strictly above the floor are flagged. With no features the floor is 0.
///
/// ```
/// use sparring_stats::{hack_scan, HackScanOptions};
///
/// let reward = vec![vec![0.0, 1.0, 1.0, 0.0], vec![1.0, 0.0, 1.0, 0.0]];
/// let length = vec![vec![10.0, 90.0, 80.0, 20.0], vec![70.0, 5.0, 60.0, 15.0]];
/// let scan = hack_scan(&reward, &[length], &HackScanOptions::default())?;
/// assert!(scan.features[0].corr > 0.9);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn hack_scan<F, G>(
    reward: &[G],
    features: &[F],
    options: &HackScanOptions,
) -> Result<HackScan, StatsError>
where
    F: AsRef<[G]>,
    G: AsRef<[f64]>,
{
    check_unit(options.quantile)?;
    if options.shuffles == 0 {
        return Err(StatsError::ZeroResamples);
    }
    let variance = variance_split(reward)?;
    let reward = Flat::new(reward)?;
    let mut demeaned = Vec::with_capacity(features.len());
    for feature in features {
        let flat = Flat::new(feature.as_ref())?;
        reward.check_same_shape(&flat)?;
        let f = flat.demeaned();
        let ss = sum_sq(&f);
        demeaned.push((f, ss));
    }
    let mut r = reward.demeaned();
    let r_ss = sum_sq(&r);
    let corr_of = |r: &[f64], f: &[f64], f_ss: f64| -> f64 {
        if r_ss == 0.0 || f_ss == 0.0 {
            0.0
        } else {
            dot(f, r) / (f_ss * r_ss).sqrt()
        }
    };
    let observed: Vec<f64> = demeaned.iter().map(|(f, ss)| corr_of(&r, f, *ss)).collect();

    // Shuffling raw rewards within a task shuffles their demeaned values the
    // same way (the task mean does not move), so shuffle `r` directly.
    let mut rng = StatsRng::with_stream(options.seed, STREAM_SHUFFLE);
    let mut maxima = Vec::with_capacity(options.shuffles);
    for _ in 0..options.shuffles {
        for range in reward.ranges() {
            rng.shuffle(&mut r[range]);
        }
        let max = demeaned
            .iter()
            .map(|(f, ss)| corr_of(&r, f, *ss).abs())
            .fold(0.0, f64::max);
        maxima.push(max);
    }
    let floor = if features.is_empty() {
        0.0
    } else {
        quantile_linear(&mut maxima, options.quantile).unwrap_or(0.0)
    };
    Ok(HackScan {
        variance,
        floor,
        features: observed
            .into_iter()
            .map(|corr| FeatureCorrelation {
                corr,
                flagged: corr.abs() > floor,
            })
            .collect(),
    })
}

/// Spread of pass@1 across repeated runs of one eval.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct EvalVariance {
    /// Number of runs.
    pub n_runs: usize,
    /// Mean pass@1 across runs.
    pub mean: f64,
    /// Sample standard deviation across runs (divides by `n − 1`, numpy's
    /// `ddof=1`); `None` with a single run.
    pub std: Option<f64>,
}

/// Mean and sample standard deviation (`ddof = 1`) of per-run pass@1.
///
/// ```
/// let v = sparring_stats::eval_variance(&[0.5, 0.7, 0.6])?;
/// assert!((v.mean - 0.6).abs() < 1e-15);
/// assert!((v.std.unwrap() - 0.1).abs() < 1e-15);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn eval_variance(pass_at_1_per_run: &[f64]) -> Result<EvalVariance, StatsError> {
    check_values(pass_at_1_per_run)?;
    let n = pass_at_1_per_run.len();
    let mean = pass_at_1_per_run.iter().sum::<f64>() / n as f64;
    let std = (n > 1).then(|| {
        let ss: f64 = pass_at_1_per_run
            .iter()
            .map(|x| (x - mean) * (x - mean))
            .sum();
        (ss / (n - 1) as f64).sqrt()
    });
    Ok(EvalVariance {
        n_runs: n,
        mean,
        std,
    })
}

/// Rows of all tasks in one buffer, with task boundaries.
struct Flat {
    values: Vec<f64>,
    /// `ends[t]` is one past task `t`'s last row.
    ends: Vec<usize>,
}

impl Flat {
    fn new<G: AsRef<[f64]>>(groups: &[G]) -> Result<Self, StatsError> {
        let mut values = Vec::new();
        let mut ends = Vec::with_capacity(groups.len());
        for g in groups {
            values.extend_from_slice(g.as_ref());
            ends.push(values.len());
        }
        check_values(&values)?;
        Ok(Self { values, ends })
    }

    fn ranges(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter().copied()).map(|(s, e)| s..e)
    }

    fn check_same_shape(&self, other: &Self) -> Result<(), StatsError> {
        if self.ends.len() != other.ends.len() {
            return Err(StatsError::LengthMismatch {
                left: self.ends.len(),
                right: other.ends.len(),
            });
        }
        for (task, (a, b)) in self.ranges().zip(other.ranges()).enumerate() {
            if a.len() != b.len() {
                return Err(StatsError::TaskLengthMismatch {
                    task,
                    left: a.len(),
                    right: b.len(),
                });
            }
        }
        Ok(())
    }

    /// Values minus their task's mean; a task whose values are all equal
    /// gets exact zeros.
    fn demeaned(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.values.len()];
        for range in self.ranges() {
            let rows = &self.values[range.clone()];
            let Some(&first) = rows.first() else { continue };
            #[allow(clippy::float_cmp)]
            let constant = rows.iter().all(|&v| v == first);
            if constant {
                continue;
            }
            let mean = rows.iter().sum::<f64>() / rows.len() as f64;
            for (o, v) in out[range].iter_mut().zip(rows) {
                *o = v - mean;
            }
        }
        out
    }
}

fn sum_sq(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn correlation(f: &[f64], r: &[f64], r_ss: f64) -> f64 {
    let f_ss = sum_sq(f);
    if r_ss == 0.0 || f_ss == 0.0 {
        0.0
    } else {
        dot(f, r) / (f_ss * r_ss).sqrt()
    }
}
