//! The shipped example's rows and `run.json`, byte for byte (timings aside),
//! against files kept in `tests/golden/`.
//!
//! A refactor must leave them alone. A change that means to change what a
//! run writes (a new field, a new rule of the world) rewrites them on
//! purpose: `SPARRING_UPDATE_GOLDEN=1 cargo test -p sparring-cli --test
//! golden`, then read the diff of the golden files before committing it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Run, example_spec, simulate_cmd};
use sparring_testkit::golden::{golden_dir, normalise};

/// Runs `sparring simulate` on the example with `args` and compares its
/// rows and summary with `tests/golden/<name>/`.
fn check(name: &str, args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    simulate_cmd(
        example_spec(),
        "python3 examples/support-desk/agent.py",
        &out,
    )
    .arg("--quiet")
    .args(args)
    .run_ok();
    let golden = golden_dir(name);
    for (file, sort) in [("rows.jsonl", true), ("run.json", false)] {
        let got = normalise(&std::fs::read_to_string(out.join(file)).unwrap(), sort);
        let path = golden.join(file);
        if std::env::var_os("SPARRING_UPDATE_GOLDEN").is_some() {
            std::fs::create_dir_all(&golden).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap();
        if got != want {
            let line = got
                .lines()
                .zip(want.lines())
                .position(|(g, w)| g != w)
                .map_or_else(
                    || "the line count".to_owned(),
                    |i| format!("line {}", i + 1),
                );
            panic!(
                "{name}/{file} differs from the golden file at {line}; if the change is meant, rewrite it with SPARRING_UPDATE_GOLDEN=1"
            );
        }
    }
}

#[test]
fn the_demo_writes_the_golden_rows() {
    check("demo", &["--grade"]);
}

/// Repeats, phrasings, a turn cap per rollout, a budget that cuts the grid
/// and an option a command agent ignores (a warning in `run.json`).
#[test]
fn a_run_with_repeats_writes_the_golden_rows() {
    check(
        "rep",
        &[
            "--grade",
            "--repeats",
            "2",
            "--phrasings",
            "2",
            "--seed",
            "7",
            "--avg-turns",
            "3",
            "--budget",
            "60",
            "--concurrency",
            "1",
            "--temperature",
            "0.3",
        ],
    );
}
