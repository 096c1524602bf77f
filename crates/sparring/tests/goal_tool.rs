//! Guards issue 18's soundness figure (docs/people.md, "Measured"): with the
//! `careful` calibration agent, the share of `act` and `inform` situations
//! in which the goal's tool is called (`run.json`
//! `soundness.act_inform_goal_tool_called`), at each spec's own options,
//! seed 0. The examples' floor is a little under the 0.90 target (their
//! figures are 1.00 support-desk, 0.92 bank, 0.96 clinic: docs/people.md,
//! "The clinic"), so the test fails when the figure falls well below it,
//! not at a one-row wobble. The tau2 specs (built with fixtures by
//! `sparring_testkit::tau2::write_spec`, skipped where `../shared/data/tau2`
//! is absent) have the same floor: 0.95 retail, 0.93 airline
//! (docs/people.md, "Exchanges, bookings and searches").

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring::{Output, Simulation};
use std::path::Path;

/// `(act and inform rows, share that called the goal's tool)` of a run.
fn figure(spec: &Path) -> (u64, f64) {
    let careful = sparring_testkit::workspace().join("examples/agents/careful.py");
    let result = Simulation::from_file(spec)
        .unwrap()
        .agent(format!("python3 {}", careful.display()))
        .output(Output::Memory)
        .run_blocking()
        .unwrap();
    let s = &result.summary.soundness;
    (s.act_inform_rows, s.act_inform_goal_tool_called)
}

fn check(spec: &Path, floor: f64) {
    let (rows, share) = figure(spec);
    assert!(
        rows >= 10,
        "{}: only {rows} act and inform rows",
        spec.display()
    );
    assert!(
        share >= floor,
        "{}: the goal's tool was called in {share:.2} of {rows} act and inform rows (floor {floor})",
        spec.display()
    );
}

fn example(name: &str) -> std::path::PathBuf {
    sparring_testkit::workspace()
        .join("examples")
        .join(name)
        .join("spec.yaml")
}

#[test]
fn careful_calls_the_goal_tool_on_the_support_desk() {
    check(&example("support-desk"), 0.85);
}

#[test]
fn careful_calls_the_goal_tool_at_the_bank() {
    check(&example("bank"), 0.85);
}

/// The clinic, a domain the agents were not built on: 23 of 24.
#[test]
fn careful_calls_the_goal_tool_at_the_clinic() {
    check(&example("clinic"), 0.85);
}

#[test]
fn careful_calls_the_goal_tool_in_tau2_retail_and_airline() {
    let dir = tempfile::tempdir().unwrap();
    for (domain, floor) in [("retail", 0.85), ("airline", 0.85)] {
        let Some(spec) = sparring_testkit::tau2::write_spec(domain, dir.path()) else {
            return;
        };
        check(&spec, floor);
    }
}

/// The claims desk of a new-user trial: 49 of 52.
#[test]
fn careful_calls_the_goal_tool_at_the_claims_desk() {
    check(&example("claims"), 0.85);
}
