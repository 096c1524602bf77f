//! A run reads its spec once and builds its world once (docs/ARCHITECTURE.md,
//! `sparring-reading`): the plan, the situations drawn as the run goes, the
//! rollouts and the conduct grade share one `SpecReading` and one `World`.
//! Its own test binary, so the process-wide counters see this run alone.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring::{OptionsPatch, Simulation};
use sparring_reading::SpecReading;
use sparring_testkit::workspace;
use sparring_world::World;

#[test]
fn a_simulate_reads_the_spec_once_and_builds_one_world() {
    std::env::set_current_dir(workspace()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Graded, past the covering array (unique situations are drawn as the
    // run goes), with a random fault rate (the plan's world has none).
    let options = OptionsPatch::from_value(&serde_json::json!({
        "grade": true, "unique_situations": true, "situations": 90, "budget": 90,
        "world": {"fault_rate": 0.1},
    }))
    .unwrap();
    let (readings, worlds) = (SpecReading::made(), World::built());
    let result = Simulation::from_file("examples/support-desk/spec.yaml")
        .unwrap()
        .agent("python3 examples/support-desk/agent.py")
        .options(options)
        .out(dir.path().join("run"))
        .run_blocking()
        .unwrap();
    assert!(
        result.summary.counts.rows >= 90,
        "{:?}",
        result.summary.counts
    );
    assert_eq!(SpecReading::made() - readings, 1, "spec readings");
    assert_eq!(World::built() - worlds, 1, "worlds built from the spec");
}
