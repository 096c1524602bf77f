//! What the plan makes of the blind corpus's specs (docs/validity.md): a
//! choice between records has records to choose from, and some people say
//! up front what proves who they are.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring::engine::plan::plan;
use sparring::load_spec;
use sparring_types::{GoalKind, SimulateOptions};

fn corpus() -> Vec<std::path::PathBuf> {
    let dir = sparring_testkit::workspace().join("tests/domains");
    let mut specs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path().join("spec.yaml"))
        .filter(|p| p.exists())
        .collect();
    specs.sort();
    specs
}

fn options() -> SimulateOptions {
    SimulateOptions::default()
}

/// A `disambiguate` goal names two or more candidates and the person does
/// not say which one they mean; a tool on a person's own record (one
/// employee, one member) is never played on `several`.
#[test]
fn a_choice_between_records_has_records_to_choose_from() {
    let mut choices = 0;
    for path in corpus() {
        let spec = load_spec(&path).unwrap();
        let plan = plan(&spec, &options()).unwrap();
        for task in &plan.tasks {
            let Some(goal) = &task.situation.goal else {
                continue;
            };
            if goal.kind != GoalKind::Disambiguate {
                continue;
            }
            choices += 1;
            assert!(
                goal.candidates.len() >= 2,
                "{}: task {} is a choice among {:?}: {}",
                path.display(),
                task.index,
                goal.candidates,
                task.ask
            );
            let record = goal.record.as_deref().unwrap();
            // Said only in the list of the person's records.
            let before_list = task.ask.split(&goal.candidates[1]).next().unwrap();
            let unlisted = before_list.split(&goal.candidates[0]).next().unwrap();
            assert!(
                !unlisted.contains(record),
                "{}: task {} says which record it means ({record}) before listing them: {}",
                path.display(),
                task.index,
                task.ask
            );
        }
    }
    assert!(choices >= 50, "only {choices} choices in the corpus");
}

/// Where the policy identifies people with a tool that takes their details
/// (a date of birth, a member number), some openings state them unasked
/// and most do not.
#[test]
fn some_people_say_who_they_are_unasked() {
    let spec =
        load_spec(&sparring_testkit::workspace().join("tests/domains/pharmacy/spec.yaml")).unwrap();
    let plan = plan(&spec, &options()).unwrap();
    let generated: Vec<_> = plan
        .tasks
        .iter()
        .filter(|t| {
            t.arm != sparring_types::Arm::Seed && t.facts.known.contains_key("date_of_birth")
        })
        .collect();
    let said = generated
        .iter()
        .filter(|t| t.ask.contains(&t.facts.known["date_of_birth"]))
        .count();
    let share = said as f64 / generated.len() as f64;
    assert!(
        generated.len() >= 50 && (0.15..0.6).contains(&share),
        "{said} of {} openings state the date of birth",
        generated.len()
    );
}
