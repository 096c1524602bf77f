//! Prints every answer of a fixed stream of calls, for comparing two builds
//! of the world byte for byte (a speed change must not change an answer).
//!
//! `cargo run --release -p sparring-world --example answers_dump > answers.txt`
//! then the same at the other commit, and `cmp` the two files. The stream:
//! the examples' specs and, when `../shared/data/tau2` is present, tau2's
//! three domains with every record generated and retail with fixtures built
//! from each task's gold calls; per world several seeds, with and without
//! random faults; per seed every tool called with ids of each entity (first,
//! middle, last, an unknown one), a placeholder, a real-looking value, a
//! number, an empty object, wrong types; then tau2's gold calls. After the
//! calls, the ids of every entity and the faults are printed too.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value, json};
use sparring_io::spec_file::load_spec;
use sparring_testkit::tau2;
use sparring_types::{Spec, WorldOptions};
use sparring_world::World;
use std::fmt::Write as _;
use std::path::Path;

/// A small deterministic generator (no `rand`: the stream must be the same
/// at both commits whatever their dependencies).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            Some(&items[(self.next() % items.len() as u64) as usize])
        }
    }
}

const TEXTS: &[&str] = &[
    "user@example.com",
    "ana.lima12@mail.test",
    "John Smith",
    "<order_id>",
    "no longer needed",
    "ordered by mistake",
    "pending",
    "12345",
    "4 Lake Drive",
    "Austin",
    "TX",
    "USA",
    "",
];

/// Arguments for one call of `tool`: each parameter from the ids the world
/// holds (for id parameters) or from a list of values, chosen by `rng`.
fn arguments(world: &World, index: usize, spec: &Spec, rng: &mut Lcg) -> Value {
    let model = &world.models()[index];
    let tool = &spec.tools[index];
    let mut args = Map::new();
    for p in tool.parameter_names() {
        let entity = model.entity_of(p);
        let schema = tool.parameter(p).cloned().unwrap_or(Value::Null);
        let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
        let roll = rng.next() % 10;
        if roll == 0 && !tool.required().contains(&p) {
            continue;
        }
        let value = if let Some(e) = entity {
            let ids = world.ids(e);
            match roll {
                1 => json!("#W0000001"),
                2 => json!(format!("<{p}>")),
                _ => rng.pick(&ids).map_or(json!("X1"), |id| json!(id)),
            }
        } else if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            rng.pick(options).cloned().unwrap_or(Value::Null)
        } else {
            match ty {
                "integer" => json!(rng.next() % 7),
                "number" => json!((rng.next() % 900) as f64 / 10.0 - 5.0),
                "boolean" => json!(rng.next().is_multiple_of(2)),
                "array" => {
                    let pool: Vec<String> = world
                        .entities()
                        .iter()
                        .flat_map(|e| world.ids(e).into_iter().take(3))
                        .collect();
                    let n = rng.next() % 3;
                    Value::Array(
                        (0..n)
                            .filter_map(|_| rng.pick(&pool).map(|s| json!(s)))
                            .collect(),
                    )
                }
                "object" => json!({}),
                _ if roll == 3 => json!(7),
                _ => json!(rng.pick(TEXTS).copied().unwrap_or("")),
            }
        };
        args.insert(p.to_owned(), value);
    }
    Value::Object(args)
}

fn play(out: &mut String, label: &str, spec: &Spec, gold: &[tau2::Call]) {
    for (seed, fault_rate) in [(0u64, 0.0), (7, 0.0), (42, 0.0), (3, 0.3)] {
        let options = WorldOptions {
            fault_rate,
            ..World::new(spec, seed).options().clone()
        };
        let mut world = World::with_options(spec, seed, options);
        let _ = writeln!(out, "== {label} seed {seed} faults {fault_rate}");
        let mut rng = Lcg(seed ^ 0x5eed);
        let n = spec.tools.len();
        for round in 0..6 {
            for index in 0..n {
                let args = if round == 5 {
                    json!({})
                } else {
                    arguments(&world, index, spec, &mut rng)
                };
                let name = &spec.tools[index].name;
                let answer = world.call(name, &args);
                let _ = writeln!(out, "{name} {args} -> {}", answer.to_content());
                let _ = writeln!(out, "  json {}", answer.to_json());
            }
        }
        for (name, args) in gold {
            let args = Value::Object(args.clone());
            let answer = world.call(name, &args).to_content();
            let _ = writeln!(out, "{name} {args} -> {answer}");
        }
        let _ = world.call("no_such_tool", &json!({}));
        let _ = writeln!(
            out,
            "unknown {}",
            world.call("get_ordr", &json!({})).to_content()
        );
        let _ = writeln!(
            out,
            "not an object {}",
            world.call(&spec.tools[0].name, &json!([1])).to_content()
        );
        for e in world.entities() {
            let _ = writeln!(out, "ids {e} {:?}", world.ids(&e));
        }
        let _ = writeln!(
            out,
            "faults {}",
            serde_json::to_string(world.faults()).unwrap()
        );
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = String::new();
    for name in ["support-desk", "bank"] {
        let spec = load_spec(&root.join(format!("examples/{name}/spec.yaml"))).unwrap();
        play(&mut out, name, &spec, &[]);
    }
    for domain in ["retail", "airline", "telecom"] {
        let Some(spec) = tau2::domain_spec(domain) else {
            eprintln!("skipped tau2: no data");
            break;
        };
        let tasks = tau2::tasks(domain).unwrap_or_default();
        let gold: Vec<tau2::Call> = tasks
            .iter()
            .take(40)
            .flat_map(|t| tau2::gold_calls(t, &spec))
            .collect();
        play(&mut out, &format!("tau2 {domain}"), &spec, &gold);
        if domain == "retail" {
            for (i, task) in tasks.iter().enumerate().step_by(3) {
                let calls = tau2::gold_calls(task, &spec);
                let db = tau2::retail_db(&calls, task);
                let fixed = tau2::with_fixtures(&spec, &db);
                play(&mut out, &format!("tau2 retail task {i}"), &fixed, &calls);
            }
        }
    }
    print!("{out}");
}
