//! The crate's one error type.

/// Why an estimator refused its input.
///
/// Every variant is a problem with the arguments: the estimators themselves
/// cannot fail on valid input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StatsError {
    /// There were no values (or no tasks, runs or items) to work on.
    #[error("no values to estimate from")]
    Empty,
    /// A task reported more successes than samples.
    #[error("success count `{c}` exceeds sample count `{n}`")]
    SuccessesExceedSamples {
        /// Samples of the task.
        n: u64,
        /// Successes of the task.
        c: u64,
    },
    /// `k` was zero.
    #[error("`k` must be at least 1")]
    ZeroK,
    /// A per-task estimator was asked for `k` larger than the task's samples.
    #[error("sample count `{n}` is smaller than `k` = `{k}`")]
    TooFewSamples {
        /// Samples of the task.
        n: u64,
        /// The requested `k`.
        k: u64,
    },
    /// Two inputs that must line up had different lengths.
    #[error("length mismatch: `{left}` against `{right}`")]
    LengthMismatch {
        /// Length of the first input.
        left: usize,
        /// Length of the second input.
        right: usize,
    },
    /// A task's rows had different lengths in two inputs that must line up.
    #[error("task `{task}` has `{left}` rows in one input and `{right}` in the other")]
    TaskLengthMismatch {
        /// Index of the task.
        task: usize,
        /// Rows in the first input.
        left: usize,
        /// Rows in the second input.
        right: usize,
    },
    /// A value was NaN or infinite.
    #[error("value at index `{index}` is not finite")]
    NonFinite {
        /// Position of the value (row index over all tasks, in input order).
        index: usize,
    },
    /// A confidence level or quantile was outside the unit interval (open
    /// for confidence levels, closed for [`crate::quantile()`]).
    #[error("`{value}` is outside the unit interval")]
    OutOfUnitInterval {
        /// The rejected value.
        value: f64,
    },
    /// A resample, permutation or shuffle count was zero.
    #[error("the number of resamples must be at least 1")]
    ZeroResamples,
    /// Too many values for the index sampler (more than 2³² tasks).
    #[error("`{len}` values exceed the supported maximum of 2^32")]
    TooMany {
        /// The number of values given.
        len: usize,
    },
}
