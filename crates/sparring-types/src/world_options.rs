//! Options of the sandbox world, as given (`options.world`) and resolved.

use crate::defaults::world as d;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Every number the sandbox world uses, resolved. Defaults live in
/// [`crate::defaults::world`]; `docs/options.md` documents each field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldOptions {
    /// Probability that one tool call meets a random fault; also the share
    /// of planned situations whose tool carries a scheduled fault.
    pub fault_rate: f64,
    /// Relative weight of `timeout` faults.
    pub timeout_weight: f64,
    /// Relative weight of `server_error` faults.
    pub server_error_weight: f64,
    /// Relative weight of `rate_limited` faults.
    pub rate_limited_weight: f64,
    /// Relative weight of `malformed` faults.
    pub malformed_weight: f64,
    /// Relative weight of `empty` faults.
    pub empty_weight: f64,
    /// Seconds a timed-out call says it waited.
    pub timeout_secs: u32,
    /// Seconds a rate-limited call asks the agent to wait.
    pub retry_after_secs: u32,
    /// Share of the answer's text a malformed result keeps.
    pub malformed_keep: f64,
    /// Records generated for an entity without fixtures.
    pub records_per_entity: u32,
    /// Records a search over generated records makes up when none match.
    pub records_per_list: u32,
    /// Records one list or search answer holds at most.
    pub page_size: u32,
    /// Digits of a generated id when nothing shows an id's shape.
    pub id_digits: u32,
    /// Items in a generated array when its schema sets no bounds.
    pub array_items: u32,
    /// Nesting depth at which the record generator stops descending.
    pub max_depth: u32,
    /// Words an argument must share, in order, with its parameter's
    /// description to count as an echo of it.
    pub echo_min_words: u32,
}

impl Default for WorldOptions {
    fn default() -> Self {
        Self {
            fault_rate: d::FAULT_RATE,
            timeout_weight: d::TIMEOUT_WEIGHT,
            server_error_weight: d::SERVER_ERROR_WEIGHT,
            rate_limited_weight: d::RATE_LIMITED_WEIGHT,
            malformed_weight: d::MALFORMED_WEIGHT,
            empty_weight: d::EMPTY_WEIGHT,
            timeout_secs: d::TIMEOUT_SECS,
            retry_after_secs: d::RETRY_AFTER_SECS,
            malformed_keep: d::MALFORMED_KEEP,
            records_per_entity: d::RECORDS_PER_ENTITY,
            records_per_list: d::RECORDS_PER_LIST,
            page_size: d::PAGE_SIZE,
            id_digits: d::ID_DIGITS,
            array_items: d::ARRAY_ITEMS,
            max_depth: d::MAX_DEPTH,
            echo_min_words: d::ECHO_MIN_WORDS,
        }
    }
}

/// The names `options.world` accepts.
pub(crate) const WORLD_OPTION_NAMES: &[&str] = &[
    "fault_rate",
    "timeout_weight",
    "server_error_weight",
    "rate_limited_weight",
    "malformed_weight",
    "empty_weight",
    "timeout_secs",
    "retry_after_secs",
    "malformed_keep",
    "records_per_entity",
    "records_per_list",
    "page_size",
    "id_digits",
    "array_items",
    "max_depth",
    "echo_min_words",
];

/// `options.world` as one source gives it: the fields set there, checked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorldPatch(pub Map<String, Value>);

impl WorldPatch {
    /// Parses `options.world` strictly. Errors are `(pointer suffix,
    /// message)`, the pointer relative to `options.world`.
    pub fn from_value(value: &Value) -> Result<Self, (String, String)> {
        let Some(map) = value.as_object() else {
            return Err((String::new(), "must be an object".to_owned()));
        };
        for (key, v) in map {
            let at = |msg: &str| (format!("/{key}"), msg.to_owned());
            match key.as_str() {
                "fault_rate" | "malformed_keep" => {
                    if !v.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x)) {
                        return Err(at("must be a number from 0 to 1"));
                    }
                }
                "timeout_weight"
                | "server_error_weight"
                | "rate_limited_weight"
                | "malformed_weight"
                | "empty_weight" => {
                    if !v.as_f64().is_some_and(|x| x >= 0.0 && x.is_finite()) {
                        return Err(at("must be a number >= 0"));
                    }
                }
                "timeout_secs" | "retry_after_secs" | "records_per_entity" | "records_per_list"
                | "page_size" | "id_digits" | "array_items" | "max_depth" | "echo_min_words" => {
                    let max = match key.as_str() {
                        "records_per_entity" | "records_per_list" | "page_size" => d::MAX_RECORDS,
                        "array_items" => d::MAX_ARRAY_ITEMS,
                        "max_depth" => d::MAX_DEPTH_BOUND,
                        "id_digits" => d::MAX_ID_DIGITS,
                        _ => u32::MAX,
                    };
                    let ok = v.as_u64().is_some_and(|n| n >= 1 && n <= u64::from(max));
                    if !ok {
                        return Err(at(&format!("must be an integer from 1 to {max}")));
                    }
                }
                other => {
                    let hint = crate::closest(other, WORLD_OPTION_NAMES)
                        .map(|c| format!("; did you mean `{c}`?"))
                        .unwrap_or_default();
                    return Err((
                        format!("/{other}"),
                        format!("unknown world option `{other}`{hint}"),
                    ));
                }
            }
        }
        Ok(Self(map.clone()))
    }

    /// `self`'s fields where set, else `base`'s.
    #[must_use]
    pub fn over(self, base: Self) -> Self {
        let mut merged = base.0;
        merged.extend(self.0);
        Self(merged)
    }

    /// The defaults with this patch's fields applied.
    pub fn resolve(&self) -> WorldOptions {
        let mut value = serde_json::to_value(WorldOptions::default()).unwrap_or(Value::Null);
        if let Value::Object(fields) = &mut value {
            for (k, v) in &self.0 {
                fields.insert(k.clone(), v.clone());
            }
        }
        // Every field was checked by `from_value`, so this cannot fail; the
        // defaults are the safe answer if it somehow did.
        serde_json::from_value(value).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_and_layered() {
        let spec = WorldPatch::from_value(&json!({"fault_rate": 0.2, "page_size": 5})).unwrap();
        let cli = WorldPatch::from_value(&json!({"page_size": 7})).unwrap();
        let w = cli.over(spec).resolve();
        assert!((w.fault_rate - 0.2).abs() < 1e-12);
        assert_eq!(w.page_size, 7);
        assert_eq!(w.retry_after_secs, d::RETRY_AFTER_SECS);
        let e = WorldPatch::from_value(&json!({"fault_rat": 0.2})).unwrap_err();
        assert_eq!(e.0, "/fault_rat");
        assert!(e.1.contains("did you mean `fault_rate`"), "{}", e.1);
        assert!(WorldPatch::from_value(&json!({"fault_rate": 2})).is_err());
        assert!(WorldPatch::from_value(&json!({"page_size": 0})).is_err());
        assert!(WorldPatch::from_value(&json!({"page_size": "3"})).is_err());
        assert!(WorldPatch::from_value(&json!({"timeout_weight": -1})).is_err());
    }

    #[test]
    fn sizes_have_upper_bounds_named_in_the_message() {
        for (key, max) in [
            ("records_per_entity", d::MAX_RECORDS),
            ("page_size", d::MAX_RECORDS),
            ("array_items", d::MAX_ARRAY_ITEMS),
            ("max_depth", d::MAX_DEPTH_BOUND),
            ("id_digits", d::MAX_ID_DIGITS),
        ] {
            assert!(WorldPatch::from_value(&json!({key: max})).is_ok(), "{key}");
            let e = WorldPatch::from_value(&json!({key: u64::from(max) + 1})).unwrap_err();
            assert_eq!(e.0, format!("/{key}"));
            assert_eq!(e.1, format!("must be an integer from 1 to {max}"));
        }
        let e = WorldPatch::from_value(&json!({"records_per_entity": 1e7})).unwrap_err();
        assert!(e.1.contains("from 1 to 10000"), "{}", e.1);
        let e = WorldPatch::from_value(&json!({"timeout_secs": 1e11})).unwrap_err();
        assert!(e.1.contains(&u32::MAX.to_string()), "{}", e.1);
    }

    #[test]
    fn every_field_has_a_name() {
        let fields = serde_json::to_value(WorldOptions::default()).unwrap();
        let names: Vec<&String> = fields.as_object().unwrap().keys().collect();
        assert_eq!(names.len(), WORLD_OPTION_NAMES.len());
        for n in names {
            assert!(WORLD_OPTION_NAMES.contains(&n.as_str()), "{n}");
        }
    }
}
