//! Ids that must be unique in a file (`row_id` in a rows file), checked the
//! same way by every reader.

use std::collections::BTreeMap;

/// An id seen twice: where first, and where again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Duplicate {
    /// The id.
    pub id: String,
    /// The 1-based line it was first on.
    pub first_line: usize,
    /// The 1-based line it came back on.
    pub line: usize,
}

/// The first id (in the order given) that repeats an earlier one, with both
/// line numbers; `None` when every id is unique.
///
/// ```
/// let d = sparring_types::first_duplicate([(1, "a"), (2, "b"), (4, "a")]).unwrap();
/// assert_eq!((d.id.as_str(), d.first_line, d.line), ("a", 1, 4));
/// assert!(sparring_types::first_duplicate([(1, "a"), (2, "b")]).is_none());
/// ```
pub fn first_duplicate<'a>(ids: impl IntoIterator<Item = (usize, &'a str)>) -> Option<Duplicate> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (line, id) in ids {
        if let Some(first) = seen.insert(id, line) {
            return Some(Duplicate {
                id: id.to_owned(),
                first_line: first,
                line,
            });
        }
    }
    None
}
