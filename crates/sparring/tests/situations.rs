//! What the plan makes of the blind corpus's specs (docs/validity.md): the
//! goals are ones the world and a careful agent can meet (a choice has
//! records to choose from, an `act` is not refused, a bound past the
//! schema's is a `decline`, a missing or other record is not the person's
//! own), the records an ask names belong together, an ask says what its
//! tool does, and some people say up front what proves who they are.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::Value;
use sparring::engine::plan::{Plan, Task, plan};
use sparring::load_spec;
use sparring_types::{Goal, GoalKind, SimulateOptions, Spec};
use std::path::PathBuf;
use std::sync::OnceLock;

/// One corpus spec and its plan at the default options.
struct Planned {
    path: PathBuf,
    spec: Spec,
    plan: Plan,
}

/// Every corpus spec with its plan, planned once for all the tests here.
fn corpus() -> &'static [Planned] {
    static CORPUS: OnceLock<Vec<Planned>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = sparring_testkit::workspace().join("tests/domains");
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path().join("spec.yaml"))
            .filter(|p| p.exists())
            .collect();
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let spec = load_spec(&path).unwrap();
                let plan = plan(&spec, &SimulateOptions::default()).unwrap();
                Planned { path, spec, plan }
            })
            .collect()
    })
}

/// Every planned task that carries a goal, with its spec.
fn goals() -> impl Iterator<Item = (&'static Planned, &'static Task, &'static Goal)> {
    corpus().iter().flat_map(|p| {
        p.plan
            .tasks
            .iter()
            .filter_map(move |t| t.situation.goal.as_ref().map(|g| (p, t, g)))
    })
}

/// Where a task is, for a failure's message.
fn at(p: &Planned, task: &Task) -> String {
    format!("{}: task {}", p.path.display(), task.index)
}

/// A number as a person or a schema writes it (`"$7,500"`, `25`).
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::String(s) => s.replace(['$', ','], "").parse().ok(),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// A `disambiguate` goal names two or more candidates and the person does
/// not say which one they mean; a tool on a person's own record (one
/// employee, one member) is never played on `several`.
#[test]
fn a_choice_between_records_has_records_to_choose_from() {
    let mut choices = 0;
    for (p, task, goal) in goals().filter(|(_, _, g)| g.kind == GoalKind::Disambiguate) {
        choices += 1;
        assert!(
            goal.candidates.len() >= 2,
            "{} is a choice among {:?}: {}",
            at(p, task),
            goal.candidates,
            task.ask
        );
        let record = goal.record.as_deref().unwrap();
        // Said only in the list of the person's records.
        let before_list = task.ask.split(&goal.candidates[1]).next().unwrap();
        let unlisted = before_list.split(&goal.candidates[0]).next().unwrap();
        assert!(
            !unlisted.contains(record),
            "{} says which record it means ({record}) before listing them: {}",
            at(p, task),
            task.ask
        );
    }
    assert!(choices >= 50, "only {choices} choices in the corpus");
}

/// Where the policy identifies people with a tool that takes their details
/// (a date of birth, a member number), some openings state them unasked
/// and most do not.
#[test]
fn some_people_say_who_they_are_unasked() {
    let pharmacy = corpus()
        .iter()
        .find(|p| p.path.ends_with("pharmacy/spec.yaml"))
        .unwrap();
    let generated: Vec<_> = pharmacy
        .plan
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

/// An `act` goal is something the world would do: its call, made with the
/// goal's own arguments in the situation's world, is never refused (a hold
/// on a prescription already on hold, a credit past the schema's maximum, an
/// enrolment for a student whose registration is blocked are `decline`).
#[test]
fn an_act_goal_is_never_one_the_world_refuses() {
    use sparring::world::World;
    let mut acts = 0;
    let mut refused = Vec::new();
    for p in corpus() {
        let base = World::new(&p.spec, 0);
        for task in &p.plan.tasks {
            let Some(goal) = &task.situation.goal else {
                continue;
            };
            if goal.kind != GoalKind::Act || task.arm == sparring_types::Arm::Seed {
                continue;
            }
            let (Some(tool_name), Some(tool)) = (
                goal.tool.as_deref(),
                goal.tool.as_deref().and_then(|t| p.spec.tool(t)),
            ) else {
                continue;
            };
            // The goal's arguments, and what else the person would say the
            // tool needs, as the schema types them.
            let mut given = goal.arguments.clone();
            for param in tool.required() {
                let said = task
                    .facts
                    .args
                    .iter()
                    .find(|(a, _)| a == param)
                    .map(|(_, v)| v)
                    .or_else(|| task.facts.known.get(param));
                if let Some(v) = said {
                    given
                        .entry(param.to_owned())
                        .or_insert_with(|| Value::String(v.clone()));
                }
            }
            let args: serde_json::Map<String, Value> = given
                .iter()
                .map(|(k, v)| {
                    let numeric = tool
                        .parameter(k)
                        .and_then(|s| s.get("type"))
                        .and_then(Value::as_str)
                        .is_some_and(|t| t == "number" || t == "integer");
                    // Words become numbers; a number stays as it is.
                    let typed = match (v, number(v)) {
                        (Value::String(_), Some(n)) if numeric => serde_json::json!(n),
                        _ => v.clone(),
                    };
                    (k.clone(), typed)
                })
                .collect();
            let mut world = base.clone().with_seed(task.situation.world_seed);
            let answer = world.call(tool_name, &Value::Object(args)).to_json();
            acts += 1;
            if answer.pointer("/error/kind").and_then(Value::as_str) == Some("refused") {
                refused.push(format!(
                    "{} {tool_name} {:?}: {}",
                    at(p, task),
                    goal.arguments,
                    answer["error"]["message"]
                ));
            }
        }
    }
    assert!(acts >= 100, "only {acts} act goals in the corpus");
    assert!(
        refused.is_empty(),
        "{} of {acts} act goals the world refuses:\n{}",
        refused.len(),
        refused.join("\n")
    );
}

/// A person who asks past what the tool's schema takes (a goodwill credit
/// of 60 where `amount` takes at most 25) is declined for that reason, not
/// for one the world would give a call the person never made.
#[test]
fn a_value_past_the_schemas_bound_is_the_reason_to_decline() {
    let mut past = 0;
    // Someone else's record, a missing one or a choice come first.
    for (p, task, goal) in
        goals().filter(|(_, _, g)| matches!(g.kind, GoalKind::Act | GoalKind::Decline))
    {
        let Some(tool) = goal.tool.as_deref().and_then(|t| p.spec.tool(t)) else {
            continue;
        };
        let beyond = goal.arguments.iter().any(|(param, v)| {
            let max = tool
                .parameter(param)
                .and_then(|s| s.get("maximum"))
                .and_then(Value::as_f64);
            matches!((number(v), max), (Some(n), Some(max)) if n > max)
        });
        if !beyond {
            continue;
        }
        past += 1;
        assert_eq!(goal.kind, GoalKind::Decline, "{}", at(p, task));
        let because = goal.because.as_deref().unwrap_or_default();
        assert!(because.contains("at most"), "{}: {because}", at(p, task));
    }
    assert!(
        past >= 3,
        "only {past} asks past a schema's maximum in the corpus"
    );
}

/// The records a person names for one ask are consistent: a tool that takes
/// the situation's record and another it points at (a return of line item
/// `LI-7005` on order `BZ-1`) is asked with the record it points at, not
/// another of the person's.
#[test]
fn the_records_an_ask_names_belong_together() {
    use sparring::engine::identity::subject_entity;
    use sparring::world::World;
    let mut linked = 0;
    for p in corpus() {
        let base = World::new(&p.spec, 0);
        let entities = base.entities();
        for task in &p.plan.tasks {
            let Some(goal) = &task.situation.goal else {
                continue;
            };
            if !matches!(goal.kind, GoalKind::Act | GoalKind::Decline) {
                continue;
            }
            let Some(model) = p
                .plan
                .axes
                .models
                .iter()
                .find(|m| Some(m.name.as_str()) == goal.tool.as_deref())
            else {
                continue;
            };
            let (Some(subject), Some(id)) = (subject_entity(model), goal.record.as_deref()) else {
                continue;
            };
            let world = base.clone().with_seed(task.situation.world_seed);
            let Some(record) = world.record(subject, id) else {
                continue;
            };
            let links = world.owners().links_of(subject, &record, &entities);
            for (param, other) in &model.references {
                let Some(named) = goal.arguments.get(param).and_then(Value::as_str) else {
                    continue;
                };
                if world.owners().is_person(other) {
                    continue;
                }
                let Some(points_at) = links
                    .iter()
                    .find(|l| &l.entity == other)
                    .and_then(|l| record.get(&l.field))
                    .and_then(Value::as_str)
                else {
                    continue;
                };
                linked += 1;
                assert_eq!(
                    named,
                    points_at,
                    "{}: {param} names {named}, but {subject} {id} is on {points_at}",
                    at(p, task)
                );
            }
        }
    }
    assert!(linked >= 5, "only {linked} asks name two linked records");
}

/// A record that is missing or someone else's is never the person's own
/// (a ticket made for another employee is about that employee, not the
/// caller who is one).
#[test]
fn a_missing_or_other_record_is_never_the_persons_own() {
    let mut checked = 0;
    for (p, task, goal) in
        goals().filter(|(_, _, g)| matches!(g.kind, GoalKind::NotFound | GoalKind::OtherOwner))
    {
        let Some((_, own)) = &task.facts.identity_record else {
            continue;
        };
        checked += 1;
        assert_ne!(
            goal.record.as_deref(),
            Some(own.as_str()),
            "{} ({:?}) is about the person's own record: {}",
            at(p, task),
            goal.kind,
            task.ask
        );
    }
    assert!(checked >= 50, "only {checked} goals checked");
}

/// An ask for a tool that makes a record says what the tool does: a word of
/// its name past the verb (`appointment` of `book_appointment`, `course`
/// of `add_course`) or its description's verb, never only the world's name
/// for the record it makes ("a new enrollment" for `add_course`, which no
/// agent could tie to the tool).
#[test]
fn an_ask_to_make_a_record_says_what_the_tool_does() {
    use sparring::world::Operation;
    let mut asks = 0;
    for p in corpus() {
        for task in &p.plan.tasks {
            let Some(tool) = task.situation.axes.get("tool") else {
                continue;
            };
            let Some(model) = p.plan.axes.models.iter().find(|m| &m.name == tool) else {
                continue;
            };
            if model.operation != Operation::Create
                || task.arm == sparring_types::Arm::Seed
                || task.situation.tier == sparring_types::Tier::Ambiguous
                // Typos alter the words themselves.
                || task.persona.style == "typos"
            {
                continue;
            }
            let described = p
                .spec
                .tool(tool)
                .and_then(|t| t.description.split_whitespace().next())
                .unwrap_or_default()
                .to_lowercase();
            let ask = task.ask.to_lowercase();
            let names = tool
                .split('_')
                .skip(1)
                .filter(|w| w.len() > 2)
                .any(|w| ask.contains(w))
                || (!described.is_empty() && ask.contains(&described));
            asks += 1;
            assert!(names, "{} ({tool}): {}", at(p, task), task.ask);
        }
    }
    assert!(asks >= 50, "only {asks} asks to make a record");
}
