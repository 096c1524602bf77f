//! What the golden tests share: where the golden files are, and the one
//! normalisation that makes two runs' files comparable byte for byte.

use crate::workspace;
use std::path::PathBuf;

/// The golden files of the CLI's tests: `crates/sparring-cli/tests/golden/NAME`.
pub fn golden_dir(name: &str) -> PathBuf {
    workspace()
        .join("crates/sparring-cli/tests/golden")
        .join(name)
}

/// The keys whose numbers differ between any two runs: the timings
/// (`timings.rollout_ms`, `timings.agent_ms`) and the summary's `seconds`.
const TIMING_KEYS: [&str; 3] = ["\"rollout_ms\":", "\"agent_ms\":", "\"seconds\": "];

/// `text` with every timing number zeroed, and when `sort` is set its lines
/// sorted (rows land in completion order, which concurrency moves).
pub fn normalise(text: &str, sort: bool) -> String {
    let mut lines: Vec<String> = text.lines().map(zero_timings).collect();
    if sort {
        lines.sort_unstable();
    }
    lines.iter().flat_map(|l| [l.as_str(), "\n"]).collect()
}

fn zero_timings(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    'outer: while !rest.is_empty() {
        for key in TIMING_KEYS {
            if let Some(after) = rest.strip_prefix(key) {
                out.push_str(key);
                out.push('0');
                let end = after
                    .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
                    .unwrap_or(after.len());
                rest = &after[end..];
                continue 'outer;
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalise;

    #[test]
    fn timings_are_zeroed_and_rows_sorted() {
        let text = concat!(
            r#"{"timings":{"rollout_ms":12.5,"agent_ms":3e-2,"agent_requests":2},"x":1.5}"#,
            "\n{\"a\":2}\n"
        );
        assert_eq!(
            normalise(text, true),
            concat!(
                "{\"a\":2}\n",
                r#"{"timings":{"rollout_ms":0,"agent_ms":0,"agent_requests":2},"x":1.5}"#,
                "\n"
            )
        );
        assert_eq!(
            normalise("  \"seconds\": 4.2e1,\n", false),
            "  \"seconds\": 0,\n"
        );
    }
}
