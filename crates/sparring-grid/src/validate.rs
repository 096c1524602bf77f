//! Checks caller input and translates it to internal column order.

use crate::GridError;
use crate::model::{Model, UNSET};
use crate::problem::ForbiddenPair;

/// Forbidden pairs in internal columns (as `((column, value), (column, value))`),
/// after range checks.
pub(crate) fn forbidden(
    model: &Model,
    pairs: &[ForbiddenPair],
) -> Result<Vec<ForbiddenPair>, GridError> {
    let mut out = Vec::with_capacity(pairs.len());
    for (index, &((a, x), (b, y))) in pairs.iter().enumerate() {
        let context = || format!("forbidden pair `{index}`");
        for (axis, value) in [(a, x), (b, y)] {
            cell(model, axis, value, &context)?;
        }
        if a == b {
            return Err(GridError::ForbiddenSameAxis { index, axis: a });
        }
        out.push(((model.column_of[a], x), (model.column_of[b], y)));
    }
    Ok(out)
}

/// Required rows in internal columns, [`UNSET`] for free cells.
pub(crate) fn required(
    model: &Model,
    rows: &[Vec<Option<usize>>],
) -> Result<Vec<Vec<u16>>, GridError> {
    let mut out = Vec::with_capacity(rows.len());
    for (index, row) in rows.iter().enumerate() {
        let context = || format!("required row `{index}`");
        row_length(model, row.len(), &context)?;
        let mut internal = vec![UNSET; model.k];
        for (axis, &value) in row.iter().enumerate() {
            if let Some(value) = value {
                cell(model, axis, value, &context)?;
                internal[model.column_of[axis]] = value as u16;
            }
        }
        out.push(internal);
    }
    Ok(out)
}

/// Checks that a row (named by `context`) has one cell per axis.
pub(crate) fn row_length(
    model: &Model,
    len: usize,
    context: &dyn Fn() -> String,
) -> Result<(), GridError> {
    if len != model.k {
        return Err(GridError::RowLength {
            context: context(),
            len,
            axes: model.k,
        });
    }
    Ok(())
}

/// Checks that `axis` exists and `value` is one of its values.
pub(crate) fn cell(
    model: &Model,
    axis: usize,
    value: usize,
    context: &dyn Fn() -> String,
) -> Result<(), GridError> {
    if axis >= model.k {
        return Err(GridError::AxisOutOfRange {
            context: context(),
            axis,
            axes: model.k,
        });
    }
    let levels = model.levels[model.column_of[axis]];
    if value >= levels {
        return Err(GridError::ValueOutOfRange {
            context: context(),
            axis,
            value,
            levels,
        });
    }
    Ok(())
}
