//! Percentile bootstrap of a mean over tasks.

use crate::binomial::binomial;
use crate::quantile::quantile_linear;
use crate::rng::{IndexStream, STREAM_BOOTSTRAP, StatsRng};
use crate::{StatsError, Verdict, defaults};

/// A point estimate with a two-sided interval.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Interval {
    /// The point estimate.
    pub estimate: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

impl Interval {
    /// Whether `x` lies in `[lo, hi]`.
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// [`Verdict::from_bounds`] of this interval.
    pub fn verdict(&self) -> Verdict {
        Verdict::from_bounds(self.lo, self.hi)
    }
}

/// How bootstrap resamples are drawn. Both ways draw from the same
/// distribution (resampling tasks with replacement); they use the seed
/// differently, so for one seed they give different (equally valid) draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Resampler {
    /// [`Resampler::Counts`] when the values have few distinct values (at
    /// most one per [`defaults::TASKS_PER_DISTINCT_VALUE_FOR_COUNTS`] tasks,
    /// as per-task pass rates do), else [`Resampler::Indices`]. The choice
    /// depends only on the values.
    #[default]
    Auto,
    /// Draw `n` task indices uniformly with replacement and average the
    /// values at them: `O(n)` per resample.
    Indices,
    /// Group equal values, then draw how many of the `n` picks land in each
    /// group from the multinomial distribution (a chain of binomial draws):
    /// `O(distinct values)` per resample. The resampled mean depends only on
    /// these counts, so this is the same bootstrap, only faster.
    Counts,
}

/// Options of [`bootstrap_mean`] and the interval of [`crate::paired_delta`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BootstrapOptions {
    /// Number of resamples `B` (default [`defaults::BOOTSTRAP_RESAMPLES`]).
    pub resamples: usize,
    /// Two-sided confidence level (default [`defaults::CONFIDENCE`]).
    pub confidence: f64,
    /// Seed of the ChaCha8 stream (default [`defaults::SEED`]).
    pub seed: u64,
    /// How resamples are drawn (default [`Resampler::Auto`]).
    pub resampler: Resampler,
}

impl Default for BootstrapOptions {
    fn default() -> Self {
        Self {
            resamples: defaults::BOOTSTRAP_RESAMPLES,
            confidence: defaults::CONFIDENCE,
            seed: defaults::SEED,
            resampler: Resampler::Auto,
        }
    }
}

impl BootstrapOptions {
    /// The defaults with another seed.
    pub fn with_seed(seed: u64) -> Self {
        Self {
            seed,
            ..Self::default()
        }
    }
}

/// Percentile-bootstrap interval for the mean of one value per task.
///
/// Resamples tasks with replacement `B` times, takes the mean of each
/// resample, and returns the sample mean with the `α/2` and `1 − α/2`
/// quantiles of the `B` means (`α = 1 − confidence`), each quantile by
/// numpy's default linear interpolation (as `scipy.stats.bootstrap` with
/// `method="percentile"` does). Randomness comes from ChaCha8 stream 1 of
/// `options.seed`, so the same values and options always give the same
/// interval.
///
/// The point estimate is computed with the same arithmetic as the resampled
/// means (by groups of equal values under [`Resampler::Counts`]), so that
/// constant data give `lo == estimate == hi` exactly.
///
/// ```
/// use sparring_stats::{bootstrap_mean, BootstrapOptions};
///
/// let per_task = [1.0, 0.5, 0.0, 1.0, 0.75, 0.25, 1.0, 0.5];
/// let ci = bootstrap_mean(&per_task, &BootstrapOptions::with_seed(1))?;
/// assert_eq!(ci.estimate, 0.625);
/// assert!(ci.lo < ci.estimate && ci.estimate < ci.hi);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn bootstrap_mean(values: &[f64], options: &BootstrapOptions) -> Result<Interval, StatsError> {
    let (estimate, mut means) = bootstrap_distribution(values, options)?;
    let alpha = 1.0 - options.confidence;
    let (lo, hi) = percentile_bounds(&mut means, alpha);
    Ok(Interval { estimate, lo, hi })
}

/// The point estimate and the `B` resampled means behind
/// [`bootstrap_mean`], in draw order.
pub fn bootstrap_distribution(
    values: &[f64],
    options: &BootstrapOptions,
) -> Result<(f64, Vec<f64>), StatsError> {
    check_values(values)?;
    check_unit(options.confidence)?;
    if options.resamples == 0 {
        return Err(StatsError::ZeroResamples);
    }
    if values.len() as u64 > 1 << 32 {
        return Err(StatsError::TooMany { len: values.len() });
    }
    let mut rng = StatsRng::with_stream(options.seed, STREAM_BOOTSTRAP);
    let groups = match options.resampler {
        Resampler::Indices => None,
        Resampler::Counts => Some(Groups::new(values)),
        Resampler::Auto => Some(Groups::new(values))
            .filter(|g| g.len() * defaults::TASKS_PER_DISTINCT_VALUE_FOR_COUNTS <= values.len()),
    };
    if let Some(groups) = groups {
        let means = (0..options.resamples)
            .map(|_| groups.resampled_mean(&mut rng))
            .collect();
        return Ok((groups.mean(), means));
    }
    let n = values.len();
    let means = (0..options.resamples)
        .map(|_| {
            let mut picks = IndexStream::new(&mut rng, n as u64);
            sum4(n, || values[picks.next_index()]) / n as f64
        })
        .collect();
    Ok((sum4(n, indexed(values)) / n as f64, means))
}

/// The `α/2` and `1 − α/2` quantiles (numpy linear) of `draws`, reordering
/// them. `draws` must not be empty.
pub(crate) fn percentile_bounds(draws: &mut [f64], alpha: f64) -> (f64, f64) {
    let lo = quantile_linear(draws, alpha / 2.0).unwrap_or(f64::NAN);
    let hi = quantile_linear(draws, 1.0 - alpha / 2.0).unwrap_or(f64::NAN);
    (lo, hi)
}

pub(crate) fn check_values(values: &[f64]) -> Result<(), StatsError> {
    if values.is_empty() {
        return Err(StatsError::Empty);
    }
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(StatsError::NonFinite { index }),
        None => Ok(()),
    }
}

pub(crate) fn check_unit(value: f64) -> Result<(), StatsError> {
    if value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(StatsError::OutOfUnitInterval { value })
    }
}

/// The values in order, as a closure for [`sum4`].
fn indexed(values: &[f64]) -> impl FnMut() -> f64 + '_ {
    let mut it = values.iter().copied();
    move || it.next().unwrap_or(0.0)
}

/// Sum of `n` values from `next`, over four interleaved accumulators (added
/// as `(a0 + a1) + (a2 + a3)`), which breaks the dependency chain of one
/// running sum. The order is fixed, so results are reproducible.
#[inline]
fn sum4(n: usize, mut next: impl FnMut() -> f64) -> f64 {
    let mut acc = [0.0f64; 4];
    for _ in 0..n / 4 {
        acc[0] += next();
        acc[1] += next();
        acc[2] += next();
        acc[3] += next();
    }
    for _ in 0..n % 4 {
        acc[0] += next();
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// Distinct values with their multiplicities, in ascending order.
#[derive(Debug)]
pub(crate) struct Groups {
    values: Vec<f64>,
    counts: Vec<u64>,
    total: u64,
}

impl Groups {
    pub(crate) fn new(values: &[f64]) -> Self {
        let mut sorted = values.to_vec();
        sorted.sort_unstable_by(f64::total_cmp);
        let mut out = Self {
            values: Vec::new(),
            counts: Vec::new(),
            total: values.len() as u64,
        };
        for v in sorted {
            match (out.values.last(), out.counts.last_mut()) {
                // `==` merges 0.0 and -0.0, which add alike.
                #[allow(clippy::float_cmp)]
                (Some(&last), Some(count)) if last == v => *count += 1,
                _ => {
                    out.values.push(v);
                    out.counts.push(1);
                }
            }
        }
        out
    }

    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        self.values.iter().copied().zip(self.counts.iter().copied())
    }

    /// `Σ value·count / total`, the arithmetic of [`Groups::resampled_mean`].
    pub(crate) fn mean(&self) -> f64 {
        self.iter().map(|(v, c)| v * c as f64).sum::<f64>() / self.total as f64
    }

    /// The mean of one bootstrap resample: multinomial counts of `total`
    /// picks over the groups (probabilities proportional to their sizes),
    /// drawn as a chain of conditional binomials.
    pub(crate) fn resampled_mean(&self, rng: &mut StatsRng) -> f64 {
        let mut picks_left = self.total;
        let mut size_left = self.total;
        let mut sum = 0.0;
        let last = self.values.len().saturating_sub(1);
        for (i, (v, size)) in self.iter().enumerate() {
            let k = if i == last {
                picks_left
            } else {
                binomial(rng, picks_left, size as f64 / size_left as f64)
            };
            sum += v * k as f64;
            picks_left -= k.min(picks_left);
            size_left -= size;
            if picks_left == 0 {
                break;
            }
        }
        sum / self.total as f64
    }
}
