//! Quantiles by selection, with numpy's default (linear) interpolation.

use crate::StatsError;
use crate::bootstrap::check_values;

/// The `q`-quantile of `values` (`0 <= q <= 1`) by numpy's default method
/// (`method="linear"`, Hyndman and Fan type 7): with the values sorted as
/// `x[0] <= … <= x[m−1]` and `h = (m−1)·q`, the result is
/// `x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])`.
///
/// Runs in expected linear time by quickselect (`select_nth_unstable_by`),
/// reordering `values`. Returns `None` for an empty slice.
pub(crate) fn quantile_linear(values: &mut [f64], q: f64) -> Option<f64> {
    let m = values.len();
    if m == 0 {
        return None;
    }
    let h = (m - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = (h.floor() as usize).min(m - 1);
    let frac = h - lo as f64;
    let (_, &mut below, above) = values.select_nth_unstable_by(lo, f64::total_cmp);
    if frac == 0.0 || above.is_empty() {
        return Some(below);
    }
    let next = above.iter().copied().fold(f64::INFINITY, f64::min);
    // numpy's `_lerp`: the form it uses, switching ends at t = 0.5, so that
    // results match to the last bit where they can.
    let diff = next - below;
    let value = if frac >= 0.5 {
        next - diff * (1.0 - frac)
    } else {
        below + diff * frac
    };
    Some(value)
}

/// The `q`-quantile of `values` with numpy's default linear interpolation
/// (`numpy.quantile(values, q)`), for `0 <= q <= 1`.
///
/// ```
/// let q = sparring_stats::quantile(&[4.0, 1.0, 3.0, 2.0], 0.25)?;
/// assert_eq!(q, 1.75);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn quantile(values: &[f64], q: f64) -> Result<f64, StatsError> {
    check_values(values)?;
    if !(0.0..=1.0).contains(&q) {
        return Err(StatsError::OutOfUnitInterval { value: q });
    }
    let mut copy = values.to_vec();
    quantile_linear(&mut copy, q).ok_or(StatsError::Empty)
}
