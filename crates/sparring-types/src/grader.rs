//! The grader trait: a hook that grades one row.
//!
//! A grader receives a whole row and answers with a reward, a reason and
//! numeric markers. Command graders (`sparring-io`), HTTP hooks and
//! in-process closures implement [`Grader`]; a grader's failure is recorded
//! on the row it was grading, never fatal to the pass.

use crate::Row;
use crate::agent::BoxFuture;
use serde_json::Value;
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

impl GraderVerdict {
    /// Reads a grader's reply object (`docs/grading.md`): `reward` in
    /// 0..=1, optional `reason`, numeric `markers` and `failure_class`; a
    /// non-null `error` is the grader saying it could not grade. The same
    /// reading serves command and HTTP graders.
    pub fn from_reply(value: &Value) -> Result<Self, GraderReplyError> {
        if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
            let text = error
                .as_str()
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(GraderReplyError::Reported(text));
        }
        let reward = value.get("reward").and_then(Value::as_f64).ok_or_else(|| {
            GraderReplyError::NoReward {
                shown: value.to_string().chars().take(120).collect(),
            }
        })?;
        if !(0.0..=1.0).contains(&reward) {
            return Err(GraderReplyError::RewardOutOfRange(reward));
        }
        let mut markers = BTreeMap::new();
        if let Some(m) = value.get("markers").filter(|m| !m.is_null()) {
            let Some(map) = m.as_object() else {
                return Err(GraderReplyError::MarkersNotObject);
            };
            for (k, v) in map {
                let n = v
                    .as_f64()
                    .ok_or_else(|| GraderReplyError::MarkerNotNumber(k.clone()))?;
                markers.insert(k.clone(), n);
            }
        }
        Ok(Self {
            reward,
            reason: value
                .get("reason")
                .and_then(Value::as_str)
                .map(str::to_owned),
            failure_class: value
                .get("failure_class")
                .and_then(Value::as_str)
                .map(str::to_owned),
            markers,
        })
    }
}

/// Why a grader's reply object is not a verdict
/// ([`GraderVerdict::from_reply`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GraderReplyError {
    /// The reply's `error`: the grader could not grade the row.
    #[error("the grader reported an error: {0}")]
    Reported(String),
    /// No numeric `reward`; `shown` is the reply's first 120 characters.
    #[error("the grader's reply has no numeric `reward`: `{shown}`")]
    NoReward {
        /// The start of the reply, as JSON.
        shown: String,
    },
    /// A `reward` outside 0..=1.
    #[error("the grader's reward {0} is outside 0..=1")]
    RewardOutOfRange(f64),
    /// `markers` is not an object.
    #[error("the grader's `markers` is not an object")]
    MarkersNotObject,
    /// A marker, by name, whose value is not a number.
    #[error("the grader's marker `{0}` is not a number")]
    MarkerNotNumber(String),
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
