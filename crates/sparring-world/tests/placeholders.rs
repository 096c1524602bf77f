#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! False refusals on a corpus of real-looking values: every tau2-bench user
//! detail the tasks give (names, emails, zips, street addresses, phone
//! numbers, dates of birth, read from `../shared/data/tau2`) and every
//! fixture value of the shipped examples, each sent to a tool that takes
//! it in a world that does not hold it. None may be refused as a schema
//! echo; every canonical placeholder must be. The figures are printed
//! (`cargo test -p sparring-world --test placeholders -- --nocapture`) and
//! recorded in `docs/world.md`.

use serde_json::{Map, Value, json};
use sparring_io::spec_file::load_spec;
use sparring_types::Spec;
use sparring_world::World;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A spec's tools and policy, without its fixtures.
fn bare(spec: &Spec) -> Spec {
    let mut s = spec.clone();
    s.fixtures.clear();
    s
}

fn tau2_spec(dir: &Path, domain: &str, tmp: &Path) -> Spec {
    let d = dir.join(domain).canonicalize().unwrap();
    let doc = json!({"name": domain, "system_prompt": {"file": d.join("policy.md")}, "tools": {"file": d.join("tools.json")}});
    let path = tmp.join(format!("{domain}.json"));
    std::fs::write(&path, doc.to_string()).unwrap();
    load_spec(&path).unwrap()
}

/// (kind, value): kinds are the parameter a value goes in.
fn tau2_values(dir: &Path) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let kinds = [
        "email",
        "first_name",
        "last_name",
        "zip",
        "address1",
        "address2",
        "city",
        "state",
        "dob",
        "full_name",
    ];
    for domain in ["retail", "airline", "telecom"] {
        let tasks: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(domain).join("tasks.json")).unwrap(),
        )
        .unwrap();
        let mut stack: Vec<Value> = tasks.as_array().unwrap().clone();
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(map) => {
                    for (k, x) in map {
                        if let (true, Some(text)) = (kinds.contains(&k.as_str()), x.as_str())
                            && !text.is_empty()
                        {
                            out.insert((k.clone(), text.to_owned()));
                        }
                        stack.push(x);
                    }
                }
                Value::Array(items) => stack.extend(items),
                Value::String(text) => {
                    // "You are John Smith with phone number 555-123-2002",
                    // "your email is noah.brown7@example.com".
                    for w in text.split(|c: char| c.is_whitespace() || c == ',' || c == ';') {
                        let w = w.trim_end_matches(['.', ')']).trim_start_matches('(');
                        if w.contains('@') && w.contains('.') {
                            out.insert(("email".into(), w.to_owned()));
                        }
                        if w.len() == 12
                            && w.chars().filter(|c| *c == '-').count() == 2
                            && w.chars().filter(char::is_ascii_digit).count() == 10
                        {
                            out.insert(("phone_number".into(), w.to_owned()));
                        }
                    }
                    for pre in ["You are ", "Your name is ", "Customer name: "] {
                        if let Some(rest) = text.split(pre).nth(1) {
                            let name: Vec<&str> = rest
                                .split_whitespace()
                                .take(2)
                                .map(|w| w.trim_end_matches(['.', ',']))
                                .collect();
                            if name.len() == 2
                                && name
                                    .iter()
                                    .all(|w| w.chars().next().is_some_and(char::is_uppercase))
                            {
                                out.insert(("full_name".into(), name.join(" ")));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Fixture values of the shipped examples, by field.
fn example_values() -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for name in ["support-desk", "bank"] {
        let spec = load_spec(&root().join(format!("examples/{name}/spec.yaml"))).unwrap();
        for records in spec.fixtures.values() {
            for r in records {
                for (k, v) in r.as_object().unwrap() {
                    if let Some(text) = v.as_str()
                        && ["email", "name", "iban"].contains(&k.as_str())
                    {
                        out.insert((k.clone(), text.to_owned()));
                    }
                }
            }
        }
    }
    out
}

/// A tool of `spec` that takes `param`, with the other required arguments
/// filled with plain values.
fn call_with(world: &mut World, spec: &Spec, param: &str, value: &str) -> Option<Value> {
    let tool = spec
        .tools
        .iter()
        .filter(|t| t.parameter(param).is_some())
        .min_by_key(|t| t.required().len())?;
    let mut args = Map::new();
    for p in tool.required() {
        let fill = match tool
            .parameter(p)
            .and_then(|s| s.get("type"))
            .and_then(Value::as_str)
        {
            Some("integer" | "number") => json!(1),
            Some("array") => json!([]),
            Some("boolean") => json!(true),
            _ => json!("Lake Drive 4"),
        };
        args.insert(p.to_owned(), fill);
    }
    args.insert(param.to_owned(), json!(value));
    Some(world.call(&tool.name, &Value::Object(args)).to_json())
}

/// Which spec takes a value of this kind, and in which parameter.
fn targets(kind: &str) -> Vec<(&'static str, &'static str)> {
    match kind {
        "email" => vec![
            ("retail", "email"),
            ("support-desk", "email"),
            ("bank", "email"),
        ],
        "first_name" => vec![("retail", "first_name")],
        "last_name" => vec![("retail", "last_name")],
        "zip" => vec![("retail", "zip")],
        "address1" => vec![("retail", "address1")],
        "address2" => vec![("retail", "address2")],
        "city" => vec![("retail", "city")],
        "state" => vec![("retail", "state")],
        "dob" | "full_name" => vec![("telecom", kind_static(kind))],
        "phone_number" => vec![("telecom", "phone_number")],
        "name" => vec![("bank", "name")],
        "iban" => vec![("bank", "iban")],
        _ => vec![],
    }
}

fn kind_static(kind: &str) -> &'static str {
    if kind == "dob" { "dob" } else { "full_name" }
}

#[test]
fn real_values_are_accepted_and_placeholders_refused() {
    let dir = root().join("../shared/data/tau2");
    if !dir.join("retail/tools.json").exists() {
        eprintln!("skipped: tau2 data not found at {}", dir.display());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let specs: Vec<(&str, Spec)> = vec![
        ("retail", tau2_spec(&dir, "retail", tmp.path())),
        ("telecom", tau2_spec(&dir, "telecom", tmp.path())),
        (
            "support-desk",
            bare(&load_spec(&root().join("examples/support-desk/spec.yaml")).unwrap()),
        ),
        (
            "bank",
            bare(&load_spec(&root().join("examples/bank/spec.yaml")).unwrap()),
        ),
    ];
    // One world per spec, a fresh copy per call.
    let worlds: Vec<(&str, World)> = specs.iter().map(|(n, s)| (*n, World::new(s, 0))).collect();
    let world_of = |name: &str| worlds.iter().find(|(n, _)| *n == name).unwrap().1.clone();
    let mut corpus = tau2_values(&dir);
    let tau2_count = corpus.len();
    corpus.extend(example_values());
    let mut sent = 0;
    let mut refused: Vec<String> = Vec::new();
    for (kind, value) in &corpus {
        for (spec_name, param) in targets(kind) {
            let spec = &specs.iter().find(|(n, _)| *n == spec_name).unwrap().1;
            let mut world = world_of(spec_name);
            let Some(answer) = call_with(&mut world, spec, param, value) else {
                continue;
            };
            sent += 1;
            if answer["error"]["kind"] == "refused"
                && answer["error"]["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains("repeats the schema")
            {
                refused.push(format!(
                    "{spec_name}.{param} = {value}: {}",
                    answer["error"]["message"]
                ));
            }
        }
    }
    let placeholders = [
        ("email", "user@example.com"),
        ("email", "test@test.com"),
        ("email", "your.email@example.com"),
        ("email", "something@example.com"),
        ("email", "john.doe@gmail.com"),
        ("email", "<email>"),
        ("full_name", "John Doe"),
        ("full_name", "Jane Doe"),
        ("full_name", "first name"),
        ("full_name", "string"),
        ("full_name", "foo"),
        ("first_name", "first_name"),
        ("last_name", "xxx"),
        ("zip", "{zip}"),
        ("city", "N/A"),
        ("address1", "string"),
        ("phone_number", "XXX-XXX-XXXX"),
    ];
    let mut caught = 0;
    let mut missed: Vec<&str> = Vec::new();
    for (kind, value) in placeholders {
        let (spec_name, param) = targets(kind)[0];
        let spec = &specs.iter().find(|(n, _)| *n == spec_name).unwrap().1;
        let mut world = world_of(spec_name);
        let answer = call_with(&mut world, spec, param, value).unwrap();
        if answer["error"]["kind"] == "refused" {
            caught += 1;
        } else {
            missed.push(value);
        }
    }
    println!(
        "real-looking values: {} ({} from tau2's tasks, {} from the examples' fixtures), {sent} calls, {} refused as placeholders",
        corpus.len(),
        tau2_count,
        corpus.len() - tau2_count,
        refused.len()
    );
    println!(
        "canonical placeholders: {} of {} refused",
        caught,
        placeholders.len()
    );
    for r in &refused {
        println!("  false refusal: {r}");
    }
    assert!(corpus.len() > 100, "the corpus is {} values", corpus.len());
    assert!(
        refused.is_empty(),
        "{} false refusals: {refused:#?}",
        refused.len()
    );
    assert!(missed.is_empty(), "placeholders accepted: {missed:?}");
}
