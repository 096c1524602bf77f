//! The grader trait: a hook that grades one row.
//!
//! A grader receives a whole row and answers with a reward, a reason and
//! numeric markers. Command graders (`sparring-io`), HTTP hooks and
//! in-process closures implement [`Grader`]; a grader's failure is recorded
//! on the row it was grading, never fatal to the pass.

use crate::Row;
use crate::agent::BoxFuture;
use std::collections::BTreeMap;

/// A grader's answer for one row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraderVerdict {
    /// 0..=1.
    pub reward: f64,
    /// Why.
    pub reason: Option<String>,
    /// The grader's failure class, if it gave one.
    pub failure_class: Option<String>,
    /// Numeric markers to put on the row.
    pub markers: BTreeMap<String, f64>,
}

/// Why a grader gave no verdict for a row (a crash, a timeout, a reply that
/// is not a verdict). The message must never contain a secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GraderError(pub String);

/// A hook that grades rows.
pub trait Grader: Send + Sync {
    /// Grades one row.
    fn grade<'a>(&'a self, row: &'a Row) -> BoxFuture<'a, Result<GraderVerdict, GraderError>>;

    /// A short description for rows and logs, without secrets.
    fn describe(&self) -> String;
}
