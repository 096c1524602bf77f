#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Fuzzing the world's argument validation by proptest (a nightly `cargo
//! fuzz` cannot be had here): sequences of calls from the corpus
//! (`tests/fuzz/arguments/*.json`, each a list of `[tool, arguments]`) and
//! random ones (any tool name, arguments of any JSON shape built from the
//! tools' own parameter names and the world's ids) against the example
//! spec. Every call must answer (never panic), with JSON the agent can
//! read, and the same calls on a world of the same seed must answer the
//! same.
//!
//! 500 random sequences run in a normal `cargo test` (about a
//! second); `SPARRING_FUZZ_CASES=N` runs N.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};
use sparring_types::Spec;
use sparring_world::World;
use std::path::Path;

fn spec() -> Spec {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/support-desk/spec.yaml");
    sparring_io::spec_file::load_spec(&path).unwrap()
}

type Calls = Vec<(String, Value)>;

fn corpus() -> Vec<Calls> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz/arguments");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

/// Plays `calls` on a fresh world; every answer checked, all returned.
fn play(spec: &Spec, seed: u64, calls: &Calls) -> Vec<Value> {
    let mut world = World::new(spec, seed);
    calls
        .iter()
        .map(|(tool, args)| {
            let answer = world.call(tool, args);
            let wire = answer.to_json();
            // What the agent receives is JSON text on one line.
            let text = serde_json::to_string(&wire).unwrap();
            assert!(!text.contains('\n'), "{text}");
            wire
        })
        .collect()
}

fn check(spec: &Spec, seed: u64, calls: &Calls) {
    let first = play(spec, seed, calls);
    let again = play(spec, seed, calls);
    assert_eq!(
        first, again,
        "the same calls answered differently: {calls:?}"
    );
}

fn leaf(ids: Vec<String>) -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        Just(json!(1e308)),
        Just(json!(-0.0)),
        ".{0,40}".prop_map(Value::String),
        prop::sample::select(ids).prop_map(Value::String),
        prop::sample::select(vec![
            "string",
            "user@example.com",
            "John Doe",
            "order_id",
            "",
            "#W1001",
            "pending",
        ])
        .prop_map(|s| Value::String(s.to_owned())),
    ]
}

fn value(ids: Vec<String>, keys: Vec<String>) -> impl Strategy<Value = Value> {
    leaf(ids).prop_recursive(4, 48, 6, move |inner| {
        let keys = keys.clone();
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(keys), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

#[test]
fn world_arguments() {
    let spec = spec();
    for (i, calls) in corpus().iter().enumerate() {
        for seed in [0, 7] {
            check(&spec, seed, calls);
        }
        assert!(!calls.is_empty(), "corpus file {i} is empty");
    }
    let world = World::new(&spec, 0);
    let mut tools: Vec<String> = spec.tools.iter().map(|t| t.name.clone()).collect();
    tools.extend([
        String::new(),
        "get_orders".to_owned(),
        "GET_ORDER".to_owned(),
    ]);
    let mut keys: Vec<String> = spec
        .tools
        .iter()
        .filter_map(|t| t.parameters.get("properties").and_then(Value::as_object))
        .flat_map(|p| p.keys().cloned())
        .collect();
    keys.extend([String::new(), "extra".to_owned()]);
    let mut ids: Vec<String> = world.entities().iter().flat_map(|e| world.ids(e)).collect();
    ids.push("#W9999".to_owned());
    let call = (
        prop::sample::select(tools),
        prop_oneof![
            4 => prop::collection::vec((prop::sample::select(keys.clone()), value(ids.clone(), keys.clone())), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
            1 => value(ids, keys),
        ],
    );
    let mut runner = TestRunner::new(Config {
        cases: sparring_testkit::fuzz_cases(500),
        source_file: Some(file!()),
        ..Config::default()
    });
    runner
        .run(
            &(any::<u64>(), prop::collection::vec(call, 1..8)),
            |(seed, calls)| {
                check(&spec, seed, &calls);
                Ok(())
            },
        )
        .unwrap();
}
