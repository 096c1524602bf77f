//! The `--levels` syntax: a comma list of `v` or `v^k`.

use crate::GridError;
use crate::defaults::MAX_LEVELS;

/// Largest repeat count accepted in `v^k`, far above any useful grid.
const MAX_REPEAT: usize = 100_000;

/// Parses a level list such as `3^13,2^2` or `12,10,6,5,5,4`.
///
/// Each comma-separated item is `v` (one axis with `v` values) or `v^k` (`k`
/// axes with `v` values each); whitespace around items is ignored. Axes come
/// out in the order written.
///
/// ```
/// let levels = sparring_grid::parse_levels("4, 3^2,2")?;
/// assert_eq!(levels, vec![4, 3, 3, 2]);
/// # Ok::<(), sparring_grid::GridError>(())
/// ```
pub fn parse_levels(input: &str) -> Result<Vec<usize>, GridError> {
    let fail = |reason: String| GridError::LevelsSyntax {
        input: input.to_owned(),
        reason,
    };
    if input.trim().is_empty() {
        return Err(fail(
            "expected a comma list of `v` or `v^k`, e.g. `3^13,2^2`".to_owned(),
        ));
    }
    let mut levels = Vec::new();
    for (position, item) in input.split(',').enumerate() {
        let item = item.trim();
        let number = position + 1;
        if item.is_empty() {
            return Err(fail(format!("item {number} is empty")));
        }
        let (values_text, repeat_text) = match item.split_once('^') {
            Some((v, k)) => (v.trim(), Some(k.trim())),
            None => (item, None),
        };
        let values: usize = values_text.parse().map_err(|_| {
            fail(format!(
                "item {number} `{item}`: `{values_text}` is not a whole number of values"
            ))
        })?;
        if values == 0 || values > MAX_LEVELS {
            return Err(fail(format!(
                "item {number} `{item}`: an axis needs 1 to {MAX_LEVELS} values"
            )));
        }
        let repeat: usize = match repeat_text {
            None => 1,
            Some(text) => text.parse().map_err(|_| {
                fail(format!(
                    "item {number} `{item}`: `{text}` is not a whole number of axes"
                ))
            })?,
        };
        if repeat == 0 || repeat > MAX_REPEAT {
            return Err(fail(format!(
                "item {number} `{item}`: the repeat count must be 1 to {MAX_REPEAT}"
            )));
        }
        levels.extend(std::iter::repeat_n(values, repeat));
    }
    Ok(levels)
}

#[cfg(test)]
mod tests {
    use super::parse_levels;

    #[test]
    fn parses_mixed_lists() {
        assert_eq!(parse_levels("3^13,2^2").unwrap().len(), 15);
        assert_eq!(
            parse_levels("12,10,6,5,5,4").unwrap(),
            vec![12, 10, 6, 5, 5, 4]
        );
        assert_eq!(parse_levels(" 5 ^ 1 , 2 ").unwrap(), vec![5, 2]);
    }

    #[test]
    fn rejects_bad_items_with_a_clear_message() {
        for bad in ["", "3^", "3^0", "0", "a", "3,,2", "3^2^2", "-1", "3^x"] {
            let err = parse_levels(bad).unwrap_err().to_string();
            assert!(err.starts_with("invalid levels"), "{bad}: {err}");
        }
        let err = parse_levels("3,x^2").unwrap_err().to_string();
        assert!(err.contains("item 2 `x^2`"), "{err}");
    }
}
