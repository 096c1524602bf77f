//! A library caller gets exactly what `sparring simulate` writes: the rows
//! and `run.json` of a [`sparring::Simulation`] equal the CLI's golden files
//! (`crates/sparring-cli/tests/golden/`, checked against the binary by its
//! own test), timings aside, warnings included.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring::{OptionsPatch, Simulation};
use sparring_testkit::golden::{golden_dir, normalise};
use sparring_testkit::workspace;

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
    let golden = golden_dir(name);
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
