//! The one error type of this crate.

/// Everything that can go wrong when parsing a grid description or generating
/// or measuring a covering array. All variants describe bad input or a
/// problem outside the supported size; generation itself cannot fail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GridError {
    /// The problem has no axes at all.
    #[error("the grid has no axes")]
    NoAxes,
    /// An axis was declared with zero values.
    #[error("axis `{axis}` has no values")]
    EmptyAxis {
        /// Index of the axis.
        axis: usize,
    },
    /// An axis has more values than the generator supports.
    #[error("axis `{axis}` has `{levels}` values, more than the limit of `{limit}`")]
    TooManyValues {
        /// Index of the axis.
        axis: usize,
        /// Number of values declared.
        levels: usize,
        /// Largest supported number of values.
        limit: usize,
    },
    /// The number of value pairs to track exceeds the supported size.
    #[error("the grid has `{pairs}` value pairs, more than the limit of `{limit}`")]
    TooManyPairs {
        /// Number of value pairs over all pairs of axes.
        pairs: u64,
        /// Largest supported number of pairs.
        limit: u64,
    },
    /// A forbidden pair or required row names an axis that does not exist.
    #[error("{context} names axis `{axis}`, but the grid has `{axes}` axes")]
    AxisOutOfRange {
        /// Where the bad reference was found, e.g. "forbidden pair 3".
        context: String,
        /// The axis named.
        axis: usize,
        /// Number of axes in the grid.
        axes: usize,
    },
    /// A forbidden pair, required row or measured row names a value outside its axis.
    #[error("{context} gives value `{value}` on axis `{axis}`, which has `{levels}` values")]
    ValueOutOfRange {
        /// Where the bad reference was found, e.g. "required row 0".
        context: String,
        /// The axis.
        axis: usize,
        /// The value given (0-based).
        value: usize,
        /// Number of values of that axis.
        levels: usize,
    },
    /// A forbidden pair names the same axis twice.
    #[error("forbidden pair `{index}` names axis `{axis}` twice")]
    ForbiddenSameAxis {
        /// Position of the pair in the forbidden list.
        index: usize,
        /// The axis named twice.
        axis: usize,
    },
    /// A required or measured row does not have one cell per axis.
    #[error("{context} has `{len}` cells, but the grid has `{axes}` axes")]
    RowLength {
        /// Which row, e.g. "required row 2".
        context: String,
        /// Number of cells given.
        len: usize,
        /// Number of axes in the grid.
        axes: usize,
    },
    /// A required row cannot be part of any valid row because of the constraints.
    #[error("required row `{index}` cannot be completed without a forbidden pair")]
    RequiredRowForbidden {
        /// Position of the row in the required list.
        index: usize,
    },
    /// The constraints rule out every row.
    #[error("the forbidden pairs rule out every row")]
    Unsatisfiable,
    /// Deciding which pairs the constraints allow took too much search.
    #[error(
        "the forbidden pairs are too entangled: deciding which pairs can occur took more than `{budget}` search steps"
    )]
    ConstraintsTooComplex {
        /// The search budget that was exhausted.
        budget: u64,
    },
    /// The `--levels` text could not be parsed.
    #[error("invalid levels `{input}`: {reason}")]
    LevelsSyntax {
        /// The whole text given.
        input: String,
        /// What is wrong, naming the offending item.
        reason: String,
    },
    /// The effort text could not be parsed or is out of range.
    #[error("invalid effort `{input}`: expected a number from 0 to {max}")]
    EffortSyntax {
        /// The text given.
        input: String,
        /// Largest accepted effort.
        max: u32,
    },
}
