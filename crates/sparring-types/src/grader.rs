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
    pub fn from_reply(value: &Value) -> Result<Self, String> {
        let shown: String = value.to_string().chars().take(120).collect();
        if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
            let text = error
                .as_str()
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(format!("the grader reported an error: {text}"));
        }
        let reward = value
            .get("reward")
            .and_then(Value::as_f64)
            .ok_or_else(|| format!("the grader's reply has no numeric `reward`: `{shown}`"))?;
        if !(0.0..=1.0).contains(&reward) {
            return Err(format!("the grader's reward {reward} is outside 0..=1"));
        }
        let mut markers = BTreeMap::new();
        if let Some(m) = value.get("markers").filter(|m| !m.is_null()) {
            let Some(map) = m.as_object() else {
                return Err("the grader's `markers` is not an object".to_owned());
            };
            for (k, v) in map {
                let n = v
                    .as_f64()
                    .ok_or_else(|| format!("the grader's marker `{k}` is not a number"))?;
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
