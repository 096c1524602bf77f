//! Guards the calibration figures of issue 17 (docs/grading.md,
//! "Calibration"): on the support-desk, bank, clinic and claims examples the three
//! calibration agents score inside their bounds and the eval ranks them.
//! The clinic was written as a domain the agents were not built on (issue
//! 18): it guards that they stay domain-general.
//! Run at `SITUATIONS` fresh situations per agent (the CLI's default is
//! `CALIBRATION_SITUATIONS`), so it takes seconds.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring::calibrate::{AgentScore, calibrate};
use sparring_types::OptionsPatch;
use sparring_types::values::Situations;

const SITUATIONS: u64 = 100;

fn run(example: &str, situations: u64) -> Vec<AgentScore> {
    let options = OptionsPatch {
        situations: Situations::new(situations).ok(),
        unique_situations: Some(true),
        ..OptionsPatch::default()
    };
    let root = sparring_testkit::workspace();
    // The built-in agents: the scripts of examples/agents as compiled in.
    let c = calibrate(
        &root.join("examples").join(example).join("spec.yaml"),
        None,
        &options,
    )
    .unwrap();
    let text = sparring::calibrate::render(&c);
    assert!(c.ranked, "{example} is not ranked:\n{text}");
    c.agents
}

fn pass(a: &AgentScore) -> f64 {
    a.pass_at_1.value.unwrap()
}

fn check(example: &str, situations: u64) {
    let agents = run(example, situations);
    let [idle, reckless, careful] = agents.as_slice() else {
        panic!("{agents:?}")
    };
    assert_eq!(
        (
            idle.agent.as_str(),
            reckless.agent.as_str(),
            careful.agent.as_str()
        ),
        ("do_nothing", "reckless", "careful")
    );
    // do_nothing passes at most where inaction is right, and at most 20 %.
    let (n, _) = idle.by_goal.get("no_action").copied().unwrap_or((0, 0));
    let inaction = n as f64 / idle.n_rows as f64;
    assert!(pass(idle) <= inaction + 1e-9, "{example}: {idle:?}");
    assert!(pass(idle) <= 0.20, "{example}: {idle:?}");
    assert!(pass(reckless) <= 0.50, "{example}: {reckless:?}");
    assert!(pass(careful) >= 0.85, "{example}: {careful:?}");
    // reckless meets goals, not only no_action: it is not an idle agent.
    assert!(
        reckless.by_goal.get("inform").is_some_and(|&(_, p)| p > 0),
        "{example}: {reckless:?}"
    );
}

#[test]
fn support_desk_ranks_the_calibration_agents() {
    check("support-desk", SITUATIONS);
}

#[test]
fn bank_ranks_the_calibration_agents() {
    check("bank", SITUATIONS);
}

/// At the CLI's 150 situations: every read and change in the clinic needs
/// the patient identified first, which `reckless` never asks for, so it
/// passes little more than the hand-offs and `no_action` (26 to 29 % on
/// seeds 0 to 3, `do_nothing` 11 to 13 %); at 100 situations the two
/// intervals touch.
#[test]
fn clinic_ranks_the_calibration_agents() {
    check("clinic", 150);
}

/// An insurance claims desk written from the docs in a new-user trial
/// (claims belong to a policy's holder; filing makes a claim; an appeal
/// leaves it under appeal): 4.7 / 18.7 / 95.3 % at 150 situations.
#[test]
fn claims_desk_ranks_the_calibration_agents() {
    check("claims", 150);
}
