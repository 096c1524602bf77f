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

/// The same check as [`first_duplicate`] for ids that come one at a time
/// (a file read a line at a time), keeping 16 bytes per id instead of the
/// id: each id is kept as its [`crate::hash::key64`] and the line it was
/// on. Two different ids share a key with odds of about n² / 2⁶⁵ for n ids
/// (under 10⁻⁷ at a million rows); such a pair would be reported as a
/// duplicate, never a real duplicate missed.
///
/// ```
/// let mut ids = sparring_types::UniqueIds::default();
/// assert!(ids.check(1, "a").is_none());
/// assert!(ids.check(2, "b").is_none());
/// let d = ids.check(4, "a").unwrap();
/// assert_eq!((d.id.as_str(), d.first_line, d.line), ("a", 1, 4));
/// ```
#[derive(Clone, Debug, Default)]
pub struct UniqueIds {
    seen: BTreeMap<u64, usize>,
}

impl UniqueIds {
    /// Records `id` on `line`; the duplicate when an earlier line had it.
    pub fn check(&mut self, line: usize, id: &str) -> Option<Duplicate> {
        let first = self.seen.insert(crate::hash::key64(id), line)?;
        Some(Duplicate {
            id: id.to_owned(),
            first_line: first,
            line,
        })
    }
}
