//! A library caller gets exactly what `sparring simulate` writes: the rows
//! and `run.json` of a [`sparring::Simulation`] equal the CLI's golden files
//! (`crates/sparring-cli/tests/golden/`, checked against the binary by its
//! own test), timings aside, warnings included.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring::{OptionsPatch, Simulation};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Zeroes `rollout_ms`, `agent_ms` and the summary's `seconds`, and sorts
/// the rows (they land in completion order), as the CLI's golden test does.
fn normalise(text: &str, sort: bool) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut l = line.to_owned();
        for key in ["\"rollout_ms\":", "\"agent_ms\":", "\"seconds\": "] {
            let mut from = 0;
            while let Some(i) = l[from..].find(key) {
                let start = from + i + key.len();
                let end = l[start..]
                    .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
                    .map_or(l.len(), |e| start + e);
                l.replace_range(start..end, "0");
                from = start + 1;
            }
        }
        out.push_str(&l);
        out.push('\n');
    }
    if sort {
        let mut lines: Vec<&str> = out.lines().collect();
        lines.sort_unstable();
        return lines.iter().flat_map(|l| [*l, "\n"]).collect();
    }
    out
}

fn check(name: &str, options: OptionsPatch) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let result = Simulation::from_file("examples/support-desk/spec.yaml")
        .unwrap()
        .agent("python3 examples/support-desk/agent.py")
        .options(options)
        .out(&out)
        .run_blocking()
        .unwrap();
    let golden = workspace()
        .join("crates/sparring-cli/tests/golden")
        .join(name);
    for (file, sort) in [("rows.jsonl", true), ("run.json", false)] {
        let got = normalise(&std::fs::read_to_string(out.join(file)).unwrap(), sort);
        let want = std::fs::read_to_string(golden.join(file)).unwrap();
        assert!(
            got == want,
            "{name}/{file}: the library wrote other bytes than the CLI"
        );
    }
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(
        on_disk["warnings"],
        serde_json::json!(result.summary.warnings),
        "the summary returned is the one written"
    );
}

/// One test: it moves the working directory to the workspace, where the
/// example's agent command is relative to.
#[test]
fn the_library_writes_what_the_cli_writes() {
    std::env::set_current_dir(workspace()).unwrap();
    check(
        "demo",
        OptionsPatch {
            grade: Some(true),
            ..OptionsPatch::default()
        },
    );
    // Typed values check their ranges; a JSON object is the short way to
    // write several.
    let options = OptionsPatch::from_value(&serde_json::json!({
        "grade": true, "repeats": 2, "phrasings": 2, "seed": 7, "avg_turns": 3,
        "budget": 60, "concurrency": 1, "temperature": 0.3,
    }))
    .unwrap();
    check("rep", options);
}
