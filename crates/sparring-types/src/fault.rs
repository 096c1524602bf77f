//! Faults as a row records them (`situation.faults`): which tool, how the
//! call broke, where the fault came from and whether it happened.
//!
//! The world (`sparring_world`) schedules, draws and answers faults; the
//! plan schedules one per situation; reports and the run's soundness read
//! them back. All of them share these types, so a fault goes from the world
//! to the row and back without passing through untyped JSON.
//!
//! ```
//! use sparring_types::{FaultKind, FaultRecord, FaultSource};
//! let f = FaultRecord::scheduled("get_order", FaultKind::Timeout);
//! assert_eq!(
//!     serde_json::to_string(&f).unwrap(),
//!     r#"{"fired":false,"kind":"timeout","source":"scheduled","tool":"get_order"}"#
//! );
//! // A row written before faults recorded `source` or `fired` still reads.
//! let old: FaultRecord = serde_json::from_str(r#"{"tool":"get_order","kind":"timeout"}"#).unwrap();
//! assert_eq!((old.source, old.fired), (FaultSource::Scheduled, None));
//! ```

use crate::WorldOptions;
use crate::seed::Stream;
use crate::values::{Vocabulary, vocabulary};
use serde::{Deserialize, Serialize};

vocabulary!(
    /// How a call breaks.
    FaultKind, "fault kind", {
        /// No answer within the time limit; the call is not performed.
        Timeout => "timeout",
        /// The service failed (500); the call is not performed.
        ServerError => "server_error",
        /// Too many requests (429), with a retry-after hint; not performed.
        RateLimited => "rate_limited",
        /// The call is performed but its answer is cut short: not valid JSON.
        Malformed => "malformed",
        /// The call is performed but its answer is empty.
        Empty => "empty",
    }
);

impl FaultKind {
    fn weight(self, o: &WorldOptions) -> f64 {
        match self {
            Self::Timeout => o.timeout_weight,
            Self::ServerError => o.server_error_weight,
            Self::RateLimited => o.rate_limited_weight,
            Self::Malformed => o.malformed_weight,
            Self::Empty => o.empty_weight,
        }
    }

    /// A kind drawn by the options' weights; `None` when every weight is 0.
    pub fn draw(options: &WorldOptions, stream: &mut Stream) -> Option<Self> {
        let total: f64 = Self::ALL.iter().map(|k| k.weight(options)).sum();
        if total <= 0.0 {
            return None;
        }
        let mut x = stream.unit() * total;
        for &k in Self::ALL {
            let w = k.weight(options);
            if x < w {
                return Some(k);
            }
            x -= w;
        }
        Self::ALL
            .iter()
            .rev()
            .copied()
            .find(|k| k.weight(options) > 0.0)
    }

    /// Whether the fault stops the call before it is performed.
    pub fn blocks(self) -> bool {
        matches!(self, Self::Timeout | Self::ServerError | Self::RateLimited)
    }
}

vocabulary!(
    /// Where a fault came from.
    #[derive(Default)]
    FaultSource, "fault source", {
        /// Scheduled by the situation's tool condition (the default: rows
        /// written before faults recorded a source held only these).
        #[default]
        Scheduled => "scheduled",
        /// Drawn by the world at `fault_rate`.
        Random => "random",
        /// The caller's world failed to answer; counted as a `server_error`.
        Execute => "execute",
    }
);

/// A fault as the row records it (`situation.faults`).
///
/// The fields are declared in the order of their names: rows have always
/// written a fault's keys sorted, and a row's bytes do not change with the
/// type that writes them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultRecord {
    /// The 1-based index, among the rollout's calls, of the call it hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u64>,
    /// Whether it happened (a scheduled fault on a tool never called did
    /// not); `None` on rows written before faults recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fired: Option<bool>,
    /// For a fault scheduled on any tool (`tool: "none"`), the tool whose
    /// call it hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fired_on: Option<String>,
    /// How the call breaks.
    pub kind: FaultKind,
    /// Where it came from.
    #[serde(default)]
    pub source: FaultSource,
    /// The tool it hits; `none` (a situation without a tool) for a fault
    /// that fires on the first call of any tool.
    pub tool: String,
}

impl FaultRecord {
    /// A fault scheduled on the first call to `tool`, not fired yet.
    pub fn scheduled(tool: &str, kind: FaultKind) -> Self {
        Self {
            tool: tool.to_owned(),
            kind,
            source: FaultSource::Scheduled,
            fired: Some(false),
            call: None,
            fired_on: None,
        }
    }

    /// A fault from `source` that hit call number `call` of `tool`.
    pub fn fired(tool: &str, kind: FaultKind, source: FaultSource, call: u64) -> Self {
        Self {
            tool: tool.to_owned(),
            kind,
            source,
            fired: Some(true),
            call: Some(call),
            fired_on: None,
        }
    }

    /// Whether the record says the fault happened (`fired: true`).
    pub fn has_fired(&self) -> bool {
        self.fired == Some(true)
    }

    /// Whether the situation scheduled it (rather than the world drawing it
    /// or the caller's world failing).
    pub fn is_scheduled(&self) -> bool {
        self.source == FaultSource::Scheduled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_pick_kinds() {
        let mut o = WorldOptions::default();
        let mut s = Stream::derive(0, "f", &[]);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            seen.insert(FaultKind::draw(&o, &mut s).unwrap());
        }
        assert_eq!(seen.len(), 5);
        o.timeout_weight = 0.0;
        o.server_error_weight = 0.0;
        o.malformed_weight = 0.0;
        o.empty_weight = 0.0;
        for _ in 0..50 {
            assert_eq!(FaultKind::draw(&o, &mut s), Some(FaultKind::RateLimited));
        }
        o.rate_limited_weight = 0.0;
        assert_eq!(FaultKind::draw(&o, &mut s), None);
    }

    #[test]
    fn records_keep_the_wire_shape() {
        let mut hit = FaultRecord::scheduled("none", FaultKind::ServerError);
        hit.fired = Some(true);
        hit.call = Some(1);
        hit.fired_on = Some("find_orders".to_owned());
        // Keys sorted, as every version wrote them.
        let text = r#"{"call":1,"fired":true,"fired_on":"find_orders","kind":"server_error","source":"scheduled","tool":"none"}"#;
        assert_eq!(serde_json::to_string(&hit).unwrap(), text);
        assert_eq!(serde_json::from_str::<FaultRecord>(text).unwrap(), hit);
        let drawn = FaultRecord::fired("get_order", FaultKind::Empty, FaultSource::Execute, 3);
        assert_eq!(
            serde_json::to_string(&drawn).unwrap(),
            r#"{"call":3,"fired":true,"kind":"empty","source":"execute","tool":"get_order"}"#
        );
        assert!(drawn.has_fired() && !drawn.is_scheduled());
    }

    #[test]
    fn bad_records_are_named() {
        let e = serde_json::from_str::<FaultRecord>(r#"{"tool":"t","kind":"timeot"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `timeout`"), "{e}");
        let e = serde_json::from_str::<FaultRecord>(r#"{"tool":"t","kind":"empty","source":"x"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown fault source `x`"), "{e}");
    }
}
