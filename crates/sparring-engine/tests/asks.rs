//! Asks read like a person in any domain, and the person is the owner of
//! its records: 10,000 asks over five specs (the support-desk and bank
//! examples, tau2-bench's retail, airline and telecom domains read from
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

/// The five specs, each that is present.
pub fn five_specs() -> Vec<(String, Spec)> {
    let mut out = Vec::new();
    for name in ["support-desk", "bank"] {
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
    let specs = five_specs();
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
            if let Some(at) = ask.find("my name is ") {
                let said = &ask[at + "my name is ".len()..];
                assert!(
                    said.starts_with(task.persona.name.as_str()),
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

/// Prints a sample of asks per spec (`cargo test -p sparring-engine --test
/// asks sample -- --ignored --nocapture`), for reading by hand.
#[test]
#[ignore = "prints a sample for reading"]
fn sample() {
    for (name, spec) in five_specs() {
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
