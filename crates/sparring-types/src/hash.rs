//! Canonical JSON and SHA-256, for ids and hashes that must be the same on
//! every machine and every release.
//!
//! Canonical JSON here is compact JSON with object keys sorted by their UTF-8
//! bytes, whatever order the value holds them in.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

/// Compact JSON with object keys sorted.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*key).clone()).to_string());
                out.push(':');
                if let Some(v) = map.get(*key) {
                    write_canonical(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in &digest {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// A compact key for a string held only to tell strings apart (a set of
/// ids seen, never written out): the first 8 bytes of its SHA-256. Two
/// different strings share a key with odds of about n² / 2⁶⁵ among n.
pub fn key64(text: &str) -> u64 {
    let digest = Sha256::digest(text.as_bytes());
    let mut key = [0u8; 8];
    key.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(key)
}

/// A short stable id: the first 16 hex digits of the SHA-256 of the canonical
/// JSON of `value`, after `prefix` and an underscore.
pub fn short_id(prefix: &str, value: &Value) -> String {
    let hex = sha256_hex(canonical_json(value).as_bytes());
    format!("{prefix}_{}", &hex[..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_sorts_keys_at_every_depth() {
        let v = json!({"b": 1, "a": {"d": [1, {"z": 0, "y": "x"}], "c": null}});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"c":null,"d":[1,{"y":"x","z":0}]},"b":1}"#
        );
    }

    #[test]
    fn sha256_matches_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn short_id_is_stable() {
        assert_eq!(
            short_id("t", &json!({"a": 1})),
            short_id("t", &json!({"a": 1}))
        );
        assert_ne!(
            short_id("t", &json!({"a": 1})),
            short_id("t", &json!({"a": 2}))
        );
    }
}
