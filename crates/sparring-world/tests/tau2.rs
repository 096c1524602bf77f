#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Every tool of the tau2-bench airline, retail and telecom domains answers
//! sensibly: reads find fixture records, writes change what later reads see,
//! unknown ids are not found.
//!
//! The tools, policies and tasks are read from `../shared/data/tau2` (see its
//! SOURCE.md) through spec files that point at them; nothing is copied into
//! the repository. Fixtures are built here from the ids the tasks' expected
//! actions use. Without the folder the tests print why and pass.

use serde_json::{Map, Value, json};
use sparring_io::spec_file::load_spec;
use sparring_testkit::tau2::{self, data_dir};
use sparring_types::Spec;
use sparring_world::{Operation, World};
use std::collections::BTreeMap;
use std::path::Path;

/// Writes a spec pointing at the domain's files, with `fixtures`, and loads it.
fn spec(dir: &Path, domain: &str, fixtures: &Value, tmp: &Path) -> Spec {
    let mut doc = tau2::spec_doc(dir, domain);
    doc["fixtures"] = fixtures.clone();
    let path = tmp.join(format!("{domain}.json"));
    std::fs::write(&path, doc.to_string()).unwrap();
    load_spec(&path).unwrap()
}

type Call = (String, Map<String, Value>);

/// The agent-side expected actions of every task, task by task.
fn actions(dir: &Path, domain: &str) -> Vec<Vec<Call>> {
    let tasks: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(domain).join("tasks.json")).unwrap(),
    )
    .unwrap();
    let mut out = Vec::new();
    for task in tasks.as_array().unwrap() {
        let list = task
            .pointer("/evaluation_criteria/actions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut calls = Vec::new();
        for a in list {
            if a.get("requestor").and_then(Value::as_str) == Some("user") {
                continue;
            }
            let name = a["name"].as_str().unwrap().to_owned();
            let args = a["arguments"].as_object().cloned().unwrap_or_default();
            calls.push((name, args));
        }
        out.push(calls);
    }
    out
}

const PAGING: &[&str] = &["limit"];

fn is_search(model: &sparring_world::ToolModel) -> bool {
    model.operation == Operation::Read && model.id_param.is_none() && !model.any_entity
}

/// Fixtures from the tasks' actions: every id argument of a tool's target or
/// references becomes a record of that entity, and what a task searches a
/// record by (`find_user_id_by_email`) becomes fields of the record the same
/// task goes on to use. A search tool no task uses gets a made-up value on
/// the entity's first record, so it has something to find.
fn fixtures_from(world: &World, tasks: &[Vec<Call>]) -> Value {
    let mut records: BTreeMap<String, BTreeMap<String, Map<String, Value>>> = BTreeMap::new();
    let model = |tool: &str| world.models().iter().find(|m| m.name == tool).cloned();
    let entities = world.entities();
    for calls in tasks {
        let mut task_ids: BTreeMap<String, String> = BTreeMap::new();
        for (_, args) in calls {
            // Ids inside list arguments (`flights[].flight_number`,
            // `payment_methods[].payment_id`) are records too.
            for value in args.values() {
                for item in value.as_array().into_iter().flatten() {
                    for (k, v) in item.as_object().into_iter().flatten() {
                        let Some(stem) =
                            k.strip_suffix("_id").or_else(|| k.strip_suffix("_number"))
                        else {
                            continue;
                        };
                        let Some(entity) = entities
                            .iter()
                            .find(|e| sparring_types::singular(e) == stem)
                        else {
                            continue;
                        };
                        if let Some(id) = v.as_str() {
                            records
                                .entry(entity.clone())
                                .or_default()
                                .entry(id.to_owned())
                                .or_insert_with(|| {
                                    let key = format!("{stem}_id");
                                    [(key, json!(id)), (k.clone(), json!(id))]
                                        .into_iter()
                                        .collect()
                                });
                        }
                    }
                }
            }
        }
        for (tool, args) in calls {
            let Some(model) = model(tool) else { continue };
            let mut named: Vec<(String, String)> = model.references.clone();
            if let (Some(p), Some(e)) = (&model.id_param, &model.entity) {
                named.push((p.clone(), e.clone()));
            }
            for (param, entity) in named {
                if let Some(id) = args.get(&param).and_then(Value::as_str) {
                    let key = format!("{}_id", sparring_types::singular(&entity));
                    let record = records
                        .entry(entity.clone())
                        .or_default()
                        .entry(id.to_owned())
                        .or_insert_with(|| [(key, json!(id))].into_iter().collect());
                    // The owners the world knows for the entity, as this call
                    // names them (`customer_id` of a line).
                    let explain = world.explain();
                    if let Some(owners) = explain["entities"][&entity]["owners"].as_array() {
                        for o in owners {
                            let field = o["field"].as_str().unwrap();
                            let owner = field.starts_with("customer") || field.starts_with("user");
                            if owner && let Some(v) = args.get(field) {
                                record.entry(field.to_owned()).or_insert_with(|| v.clone());
                            }
                        }
                    }
                    task_ids.entry(entity).or_insert_with(|| id.to_owned());
                }
            }
        }
        for (at, (tool, args)) in calls.iter().enumerate() {
            let Some(found) = model(tool) else { continue };
            let Some(entity) = found.entity.as_ref().filter(|_| is_search(&found)) else {
                continue;
            };
            let about_a_person = args.keys().any(|k| {
                [
                    "email",
                    "first_name",
                    "last_name",
                    "full_name",
                    "zip",
                    "phone_number",
                    "dob",
                ]
                .contains(&k.as_str())
            });
            if !about_a_person {
                continue;
            }
            // The person found is the next one of the entity the task names.
            let next = calls[at + 1..].iter().find_map(|(t, a)| {
                let m = model(t)?;
                (m.entity.as_ref() == Some(entity))
                    .then(|| {
                        m.id_param
                            .as_ref()
                            .and_then(|p| a.get(p))
                            .and_then(Value::as_str)
                    })
                    .flatten()
                    .map(str::to_owned)
            });
            if let Some(id) = next {
                task_ids.insert(entity.clone(), id);
            } else {
                // The task finds someone it never names by id: they get an
                // id of the entity's shape.
                let taken = records.get(entity).map_or(0, BTreeMap::len);
                if let Some(id) = world.ids(entity).get(taken) {
                    let key = format!("{}_id", sparring_types::singular(entity));
                    records
                        .entry(entity.clone())
                        .or_default()
                        .insert(id.clone(), [(key, json!(id))].into_iter().collect());
                    task_ids.insert(entity.clone(), id.clone());
                }
            }
            if let Some(id) = task_ids.get(entity)
                && let Some(record) = records.get_mut(entity).and_then(|r| r.get_mut(id))
            {
                record.extend(args.clone());
            }
        }
    }
    for m in world.models().iter().filter(|m| is_search(m)) {
        let Some(first) = m
            .entity
            .as_ref()
            .and_then(|e| records.get_mut(e))
            .and_then(|r| r.values_mut().next())
        else {
            continue;
        };
        for p in ["phone_number", "full_name", "dob", "email"] {
            let value = match p {
                "phone_number" => json!("555-013-4477"),
                "full_name" => json!("Grace Kim"),
                "dob" => json!("1985-03-14"),
                _ => json!("grace.kim@mail.test"),
            };
            first.entry(p.to_owned()).or_insert(value);
        }
    }
    tau2::fixtures(records)
}

/// Valid arguments for a tool without a task action: ids that exist, values
/// that fit the schema.
fn made_up_args(world: &World, spec: &Spec, tool: &str) -> Map<String, Value> {
    let t = spec.tool(tool).unwrap();
    let model = world.models().iter().find(|m| m.name == tool).unwrap();
    let mut args = Map::new();
    for p in t.parameter_names() {
        let schema = t.parameter(p).unwrap();
        let entity = model.entity_of(p);
        let searched = is_search(model)
            .then_some(model.entity.as_ref())
            .flatten()
            .and_then(|e| world.ids(e).first().and_then(|id| world.record(e, id)))
            .and_then(|r| r.get(p).cloned());
        let value = if let Some(v) = searched {
            v
        } else if let Some(e) = entity {
            json!(world.ids(e).first().cloned().unwrap())
        } else if model.any_entity && p == "id" {
            let e = world
                .entities()
                .into_iter()
                .find(|e| !world.ids(e).is_empty())
                .unwrap();
            json!(world.ids(&e)[0])
        } else if let Some(options) = schema.get("enum") {
            options[0].clone()
        } else {
            match schema.get("type").and_then(Value::as_str) {
                Some("integer") => json!(1),
                Some("number") => json!(2.5),
                Some("array") => json!([]),
                Some("boolean") => json!(true),
                _ => match p {
                    "expression" => json!("3 * (4 + 1)"),
                    "summary" | "reason" => json!("the customer asked for a person"),
                    "date" | "dob" => json!("2024-05-17"),
                    "origin" => json!("SFO"),
                    "destination" => json!("JFK"),
                    _ => json!("Lake Drive 4"),
                },
            }
        };
        args.insert(p.to_owned(), value);
    }
    args
}

fn check_domain(domain: &str) {
    let Some(dir) = data_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let bare = spec(&dir, domain, &json!({}), tmp.path());
    let tasks: Vec<Vec<Call>> = actions(&dir, domain)
        .into_iter()
        .map(|calls| {
            calls
                .into_iter()
                .filter(|(name, _)| bare.tool(name).is_some())
                .collect()
        })
        .collect();
    let acts: Vec<Call> = tasks.iter().flatten().cloned().collect();
    let fixtures = fixtures_from(&World::new(&bare, 0), &tasks);
    assert!(
        fixtures.as_object().unwrap().len() >= 2 || domain == "telecom",
        "{fixtures}"
    );
    let spec = spec(&dir, domain, &fixtures, tmp.path());
    let base = World::new(&spec, 7);
    for tool in &spec.tools {
        let model = base
            .models()
            .iter()
            .find(|m| m.name == tool.name)
            .unwrap()
            .clone();
        // The tasks' own calls where there are some, else made-up valid ones.
        let mut calls: Vec<Map<String, Value>> = acts
            .iter()
            .filter(|(n, _)| *n == tool.name)
            .map(|(_, a)| a.clone())
            .collect();
        if calls.is_empty() {
            calls.push(made_up_args(&base, &spec, &tool.name));
        }
        for args in &calls {
            let mut world = base.clone();
            let answer = world
                .call(&tool.name, &Value::Object(args.clone()))
                .to_json();
            // A search finds a fixture record exactly when it holds the
            // details searched by (a task may try a wrong zip first);
            // everything else succeeds.
            let expect_ok = match model.entity.as_ref().filter(|_| is_search(&model)) {
                Some(e) if fixtures.get(e).is_some() => {
                    fixtures[e].as_array().unwrap().iter().any(|r| {
                        args.iter().all(|(k, v)| {
                            PAGING.contains(&k.as_str()) || r.get(k).is_some_and(|f| f == v)
                        })
                    })
                }
                _ => true,
            };
            if !expect_ok {
                // A list with no match is empty; a lookup of one record
                // is not found.
                if model.list {
                    assert_eq!(
                        answer["result"],
                        json!([]),
                        "{domain}/{}: {answer}",
                        tool.name
                    );
                } else {
                    assert_eq!(
                        answer["error"]["kind"], "not_found",
                        "{domain}/{}: {answer}",
                        tool.name
                    );
                }
                continue;
            }
            assert_eq!(
                answer["ok"],
                true,
                "{domain}/{}: {} -> {answer}",
                tool.name,
                Value::Object(args.clone())
            );
            // A read by id finds the record it was asked about.
            if let (Operation::Read, Some(p)) = (&model.operation, &model.id_param) {
                let id = args[p].as_str().unwrap();
                let text = answer["result"].to_string();
                assert!(
                    text.contains(id),
                    "{domain}/{}: {id} not in {text}",
                    tool.name
                );
            }
            // A write changes what a later read of the same record sees.
            let acts_on_record = matches!(
                model.operation,
                Operation::Update | Operation::StateChange(_)
            );
            if acts_on_record && let (Some(p), Some(entity)) = (&model.id_param, &model.entity) {
                let id = args[p].as_str().unwrap();
                let before = base.record(entity, id).unwrap();
                let after = world.record(entity, id).unwrap();
                assert_ne!(before, after, "{domain}/{}: {id} unchanged", tool.name);
                if let Some(reader) = base.models().iter().find(|m| {
                    m.operation == Operation::Read
                        && m.entity.as_deref() == Some(entity)
                        && m.id_param.is_some()
                }) {
                    let read = world
                        .call(&reader.name, &json!({reader.id_param.clone().unwrap(): id}))
                        .to_json();
                    assert_eq!(
                        read["result"],
                        Value::Object(after.clone()),
                        "{domain}/{}",
                        reader.name
                    );
                }
            }
            // An unknown id is not found.
            if let Some(p) = &model.id_param {
                let mut unknown = args.clone();
                unknown.insert(p.clone(), json!("ZZ-NOPE-404"));
                let missing = base
                    .clone()
                    .call(&tool.name, &Value::Object(unknown))
                    .to_json();
                assert_eq!(
                    missing["error"]["kind"], "not_found",
                    "{domain}/{}: {missing}",
                    tool.name
                );
            }
        }
    }
}

#[test]
fn airline() {
    check_domain("airline");
}

#[test]
fn retail() {
    check_domain("retail");
}

#[test]
fn telecom() {
    check_domain("telecom");
}

#[test]
fn retail_ids_follow_the_descriptions() {
    let Some(dir) = data_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(&dir, "retail", &json!({}), tmp.path());
    let world = World::new(&spec, 3);
    let orders = world.ids("orders");
    assert!(
        orders
            .iter()
            .all(|id| id.starts_with("#W") && id.len() == 9),
        "{orders:?}"
    );
    let users = world.ids("users");
    assert!(
        users.iter().all(|id| id.split('_').count() == 3 && id.chars().next().unwrap().is_ascii_lowercase()),
        "{users:?}"
    );
    // The description's own example is an echo, a generated id is not.
    let mut w = world.clone();
    let echo = w
        .call("get_order_details", &json!({"order_id": "#W0000000"}))
        .to_json();
    assert_eq!(echo["error"]["kind"], "refused", "{echo}");
    let real = w
        .call("get_order_details", &json!({"order_id": orders[0]}))
        .to_json();
    assert_eq!(real["ok"], true, "{real}");
    let explain = world.explain();
    assert_eq!(
        explain["entities"]["orders"]["id_shape_from"],
        "the example in `cancel_pending_order.order_id`"
    );
}

/// A generated person's name follows an id that spells one, and its email
/// is built from its name: on tau2 retail and airline, with the fixtures
/// the tasks give and without any, over several world seeds.
#[test]
fn generated_people_have_names_that_match_their_emails() {
    let Some(dir) = data_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let name_of = |r: &Map<String, Value>| -> Option<(String, String)> {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let n = r.get("name").and_then(Value::as_object).unwrap_or(r);
        Some((text(n.get("first_name"))?, text(n.get("last_name"))?))
    };
    for domain in ["retail", "airline"] {
        let bare = spec(&dir, domain, &json!({}), tmp.path());
        let tasks: Vec<Vec<Call>> = actions(&dir, domain);
        let fixtures = fixtures_from(&World::new(&bare, 0), &tasks);
        let with = spec(&dir, domain, &fixtures, tmp.path());
        let mut people = 0;
        for spec in [&bare, &with] {
            let fixed: Vec<String> = spec.fixtures.keys().cloned().collect();
            for seed in 0..5 {
                let world = World::new(spec, seed);
                for entity in world.entities().iter().filter(|e| !fixed.contains(e)) {
                    for id in world.ids(entity) {
                        let record = world.record(entity, &id).unwrap();
                        let (Some((first, last)), Some(email)) = (
                            name_of(&record),
                            record.get("email").and_then(Value::as_str),
                        ) else {
                            continue;
                        };
                        people += 1;
                        let want = format!("{}.{}", first.to_lowercase(), last.to_lowercase());
                        assert!(
                            email.starts_with(&want),
                            "{domain} {entity}/{id}: {first} {last} has {email}"
                        );
                        let spelled: Vec<&str> = id.split('_').collect();
                        if spelled.len() == 3 {
                            assert_eq!(
                                format!("{}_{}", spelled[0], spelled[1]),
                                format!("{}_{}", first.to_lowercase(), last.to_lowercase()),
                                "{domain} {entity}/{id}"
                            );
                        }
                    }
                }
            }
        }
        assert!(
            domain == "airline" || people >= 50,
            "{domain}: {people} generated people"
        );
    }
}
