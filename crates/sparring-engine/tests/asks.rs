//! Asks read like a person in any domain, and the person is the owner of
//! its records: 10,000 asks over six specs (the support-desk, bank and
//! clinic examples, tau2-bench's retail, airline and telecom domains read from
//! `../shared/data/tau2`; a missing folder or example is skipped with a note).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use sparring_engine::identity;
use sparring_engine::plan::{Task, draw_unique, plan};
use sparring_types::{SimulateOptions, Spec};
use sparring_world::World;
use std::path::{Path, PathBuf};

fn example(dir: &Path) -> Option<Spec> {
    let path = dir.join("spec.yaml");
    let text = std::fs::read_to_string(&path).ok()?;
    let mut value: Value = serde_saphyr::from_str(&text).unwrap();
    let policy = std::fs::read_to_string(dir.join("policy.md")).unwrap();
    value["system_prompt"] = Value::String(policy);
    Some(Spec::from_value(&value).unwrap())
}

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn tau2(domain: &str) -> Option<Spec> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/tau2")
        .join(domain);
    let tools = std::fs::read_to_string(dir.join("tools.json")).ok()?;
    let policy = std::fs::read_to_string(dir.join("policy.md")).ok()?;
    let tools: Value = serde_json::from_str(&tools).unwrap();
    let value = json!({"name": format!("tau2-{domain}"), "system_prompt": policy, "tools": tools});
    Some(Spec::from_value(&value).unwrap())
}

/// The six specs, each that is present.
pub fn six_specs() -> Vec<(String, Spec)> {
    let mut out = Vec::new();
    for name in ["support-desk", "bank", "clinic"] {
        match example(&examples_dir().join(name)) {
            Some(spec) => out.push((name.to_owned(), spec)),
            None => eprintln!("skipped: examples/{name} not found"),
        }
    }
    for domain in ["retail", "airline", "telecom"] {
        match tau2(domain) {
            Some(spec) => out.push((format!("tau2-{domain}"), spec)),
            None => eprintln!("skipped: tau2 {domain} not found"),
        }
    }
    out
}

fn tasks(spec: &Spec, situations: u64, phrasings: u32) -> Vec<Task> {
    let options = SimulateOptions {
        situations: Some(situations),
        unique_situations: true,
        phrasings,
        ..SimulateOptions::default()
    };
    let plan = plan(spec, &options).unwrap();
    let (more, _) =
        draw_unique(spec, &options, &plan, 0, plan.unique_left, plan.tasks.len()).unwrap();
    let mut tasks = plan.tasks;
    tasks.extend(more);
    tasks
}

const PLACEHOLDERS: &[&str] = &[
    "a detail",
    "(request)",
    "my user",
    "sort out my request",
    "{",
    "}",
    "your rule \"",
];

#[test]
fn ten_thousand_asks_read_like_people_and_come_from_the_owner() {
    let specs = six_specs();
    assert!(!specs.is_empty());
    let per_spec = 10_000 / specs.len();
    let mut total = 0;
    for (name, spec) in &specs {
        let tasks = tasks(spec, (per_spec / 5) as u64, 5);
        assert!(tasks.len() >= per_spec * 9 / 10, "{name}: {}", tasks.len());
        total += tasks.len();
        let world = World::with_options(spec, 0, SimulateOptions::default().world);
        let snake_tools: Vec<&str> = spec
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .filter(|n| n.contains('_'))
            .collect();
        for task in &tasks {
            let ask = &task.ask;
            let lower = ask.to_lowercase();
            for p in PLACEHOLDERS {
                assert!(!lower.contains(p), "{name}: placeholder `{p}` in {ask:?}");
            }
            for t in &snake_tools {
                assert!(!ask.contains(t), "{name}: tool name `{t}` in {ask:?}");
            }
            // A hand-off is asked for as a person asks for one, not in the
            // tool's words ("hand the conversation to my nurse, with a
            // short summary").
            for w in ["the conversation", "summary"] {
                assert!(!lower.contains(w), "{name}: the tool's words in {ask:?}");
            }
            for w in ask.split_whitespace() {
                let snake =
                    w.contains('_') && !w.contains('@') && !w.chars().any(|c| c.is_ascii_digit());
                assert!(!snake, "{name}: snake_case `{w}` in {ask:?}");
            }
            if let Some(rule) = &task.situation.rule_text {
                let rule = rule.trim_end_matches(['.', '!']);
                assert!(
                    rule.len() < 24 || !ask.contains(rule),
                    "{name}: the rule quoted word for word in {ask:?}"
                );
            }
            // A name the person gives as its own is its own (a payee's is not).
            // (In any case: a person writing in lowercase writes its name so.)
            if let Some(at) = lower.find("my name is ") {
                let said = &lower[at + "my name is ".len()..];
                assert!(
                    said.starts_with(&task.persona.name.to_lowercase()),
                    "{name}: {ask:?} is not {}",
                    task.persona.name
                );
            }
            // One person: the persona's name is the name it knows.
            assert_eq!(
                Some(&task.persona.name),
                task.persona.knows.get("name"),
                "{name}"
            );
            let state = task
                .situation
                .axes
                .get("world_state")
                .map_or("", String::as_str);
            let tool = task.situation.axes.get("tool").cloned().unwrap_or_default();
            let entity = world
                .models()
                .iter()
                .find(|m| m.name == tool)
                .and_then(|m| m.entity.clone());
            let task_world = world.clone().with_seed(task.situation.world_seed);
            if let (Some((_, id)), Some(entity)) = (&task.facts.id, &entity) {
                let owner = identity::owner_of(&task_world, 0, entity, id);
                match state {
                    "exists" | "several" | "terminal" => assert_eq!(
                        owner.map(|o| o.key),
                        task.persona.owner,
                        "{name}: {state} {id}"
                    ),
                    "someone_else" => {
                        if let (Some(owner), Some(claimed)) = (owner, &task.persona.owner)
                            && !claimed.starts_with("generated/")
                        {
                            assert_ne!(&owner.key, claimed, "{name}: {id}");
                        }
                    }
                    _ => {}
                }
            }
            if state == "several"
                && let (Some(list), Some(entity)) = (task.persona.knows.get("other_ids"), &entity)
            {
                for id in list.split(", ") {
                    let owner = identity::owner_of(&task_world, 0, entity, id).map(|o| o.key);
                    assert_eq!(owner, task.persona.owner, "{name}: several {list}");
                }
            }
        }
    }
    assert!(total >= 9_000, "{total}");
}

/// The person holds a new time for a tool that moves a record to one
/// (`reschedule_appointment(new_time)`, format date-time): the record's own
/// time moved by a few days, which the schema accepts and the asks speak as
/// a date at a clock (`2026-12-16 at 11:00`), never raw.
#[test]
fn a_new_time_is_held_near_the_record_time_and_spoken() {
    let Some(spec) = example(&examples_dir().join("clinic")) else {
        eprintln!("skipped: examples/clinic not found");
        return;
    };
    let tool = spec.tool("reschedule_appointment").unwrap();
    let format = tool.parameter("new_time").unwrap();
    let mut held = 0;
    for task in tasks(&spec, 150, 1) {
        if task.situation.axes.get("tool").map(String::as_str) != Some("reschedule_appointment") {
            continue;
        }
        assert!(
            !task.persona.lacks.contains(&"new_time".to_owned()),
            "{:?}",
            task.persona
        );
        let Some(time) = task.persona.knows.get("new_time") else {
            continue;
        };
        assert!(sparring_types::is_date_time(time), "{time}");
        assert_eq!(format["format"], "date-time");
        assert!(
            !task.ask.contains(time.as_str()),
            "raw {time} in {:?}",
            task.ask
        );
        if task.situation.axes.get("world_state").map(String::as_str) == Some("exists") {
            // AP-501 at 2026-12-10T09:30:00 or AP-503 at 2026-12-12T11:00:00:
            // the new day is in the same month, at most a week away.
            assert!(time.starts_with("2026-12-"), "{time}");
        }
        held += 1;
    }
    assert!(held >= 5, "{held}");
}

/// Prints a sample of asks per spec (`cargo test -p sparring-engine --test
/// asks sample -- --ignored --nocapture`), for reading by hand.
#[test]
#[ignore = "prints a sample for reading"]
fn sample() {
    for (name, spec) in six_specs() {
        for task in tasks(&spec, 12, 1) {
            println!(
                "{name} [{} {} {}] {} | {}",
                task.situation.axes["tool"],
                task.situation.axes["world_state"],
                task.situation.tier.as_str(),
                task.persona.name,
                task.ask
            );
            println!(
                "    knows {:?} lacks {:?}",
                task.persona.knows, task.persona.lacks
            );
        }
    }
}

/// On tau2 retail and airline the person's email is built from its name,
/// and an owner known by an id that spells a name (`yusuf_rossi_9620`) is
/// that person.
#[test]
fn tau2_people_have_names_that_match_their_emails() {
    let mut checked = 0;
    for (name, spec) in six_specs() {
        if !matches!(name.as_str(), "tau2-retail" | "tau2-airline") {
            continue;
        }
        for task in tasks(&spec, 60, 1) {
            let knows = &task.persona.knows;
            let (Some(full), Some(email)) = (knows.get("name"), knows.get("email")) else {
                continue;
            };
            let want: Vec<String> = full.split_whitespace().map(str::to_lowercase).collect();
            assert!(
                email.starts_with(&want.join(".")),
                "{name}: {full} has {email}"
            );
            // The person's own id (not a record it claims, `someone_else`).
            if let Some(id) = knows.get("user_id")
                && id.split('_').count() == 3
                && task.persona.owner.as_deref() == Some(format!("users/{id}").as_str())
            {
                assert!(id.starts_with(&want.join("_")), "{name}: {full} is {id}");
            }
            checked += 1;
        }
    }
    assert!(checked == 0 || checked >= 60, "{checked}");
}

/// The model writer gets the facts the template writer states, as prose:
/// the request a writer backend receives names the person, its record and
/// every argument value it holds (schema words spoken as the templates
/// speak them), each in a sentence that names the field in words, never a
/// snake_case label.
#[tokio::test]
async fn the_model_writer_is_told_every_fact_as_prose() {
    use sparring_engine::run::{RunConfig, run};
    use sparring_testkit::ScriptedAgent;
    use sparring_types::{Message, Role};
    use std::sync::{Arc, Mutex};
    let mut checked = 0;
    let mut specs = 0;
    for (name, spec) in six_specs() {
        specs += 1;
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = Arc::clone(&seen);
        // A writer backend that records what it was asked and answers with
        // the facts it was told (so it is never given up on).
        let writer = ScriptedAgent::new("capture", move |messages| {
            let user = messages[1].content_str().to_owned();
            let n: usize = messages[0]
                .content_str()
                .split("Write ")
                .nth(1)
                .and_then(|t| t.split_whitespace().next())
                .and_then(|w| w.parse().ok())
                .unwrap();
            let phrasings: Vec<String> = (0..n).map(|k| format!("{k}: {user}")).collect();
            log.lock().unwrap().push(user);
            Message::text(
                Role::Assistant,
                serde_json::json!({ "phrasings": phrasings }).to_string(),
            )
        });
        let agent = ScriptedAgent::new("done", |_| Message::text(Role::Assistant, "All done."));
        let options = SimulateOptions {
            situations: Some(40),
            phrasings: 1,
            ..SimulateOptions::default()
        };
        let config = RunConfig {
            writer: Some(Arc::new(writer)),
            ..RunConfig::new(Arc::new(spec.clone()), options, Arc::new(agent))
        };
        let mut rows = Vec::new();
        run(config, &mut rows, &mut |_| {}).await.unwrap();
        let prompts = seen.lock().unwrap().clone();
        // Each row's person and facts, as the run played them.
        let (played, _) = sparring_engine::plan::pinned_tasks(&rows);
        for task in played.iter().filter(|t| t.arm != sparring_types::Arm::Seed) {
            let facts = &task.facts;
            // The request about this person and this record.
            let Some(prompt) = prompts.iter().find(|p| {
                p.contains(&format!("The person is {}.", task.persona.name))
                    && facts.args.iter().all(|(_, v)| p.contains(&writer_value(v)))
                    && facts
                        .id
                        .as_ref()
                        .is_none_or(|(_, id)| p.contains(id.as_str()))
                    && facts
                        .known
                        .get("other_ids")
                        .is_none_or(|o| p.contains(o.as_str()))
            }) else {
                panic!(
                    "{name}: no writer request states {:?} ({:?})",
                    facts.args, task.persona.name
                )
            };
            for (param, value) in &facts.args {
                let spoken = writer_value(value);
                let line = prompt
                    .lines()
                    .find(|l| l.contains(&spoken))
                    .unwrap_or_else(|| panic!("{name}: {param} = {value} missing in {prompt}"));
                let label = line.split(':').next().unwrap_or(line);
                assert!(!label.contains('_'), "{name}: a label, not prose: {line}");
            }
            // The facts' sentences speak (the rule and the policy, given
            // for context, may name tools).
            let fact_lines = prompt
                .lines()
                .filter(|l| l.starts_with("Their ") || l.starts_with("They "));
            for word in fact_lines.flat_map(str::split_whitespace) {
                let snake = word.contains('_')
                    && !word.contains('@')
                    && !word.chars().any(|c| c.is_ascii_digit());
                assert!(!snake, "{name}: snake_case `{word}` in {prompt}");
            }
            checked += 1;
        }
    }
    // 40 situations a spec, seeds and unplayable ones aside; the tau2 specs
    // count only where ../shared/data/tau2 is present.
    assert!(
        specs >= 2 && checked >= 30 * specs,
        "{checked} over {specs} specs"
    );
}

/// A value as the template writer says it.
fn writer_value(value: &str) -> String {
    sparring_engine::writer::spoken(value)
}

/// An ask says only what its tool takes and keeps to what no tool does: a
/// search by name and date of birth (`find_patient`) never mentions an
/// email, and where a tool hands the person over (`transfer_to_nurse`) a
/// question about no tool never asks for a human.
#[test]
fn asks_keep_to_what_the_tool_takes_and_leave_hand_offs_to_their_tool() {
    let Some(spec) = example(&examples_dir().join("clinic")) else {
        eprintln!("skipped: examples/clinic not found");
        return;
    };
    let (mut searches, mut nones) = (0, 0);
    for t in tasks(&spec, 200, 3) {
        let tool = t.situation.axes.get("tool").map(String::as_str);
        let lower = t.ask.to_lowercase();
        match tool {
            Some("find_patient") => {
                searches += 1;
                assert!(!lower.contains("email"), "{}", t.ask);
            }
            Some("none") => {
                nones += 1;
                assert!(!lower.contains("human"), "{}", t.ask);
            }
            _ => {}
        }
    }
    assert!(searches >= 5 && nones >= 5, "{searches} {nones}");
}
