#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Property tests: determinism per seed, variety across seeds, and records
//! that validate against the output schema they were generated from.

use proptest::prelude::*;
use serde_json::{Value, json};
use sparring_types::Spec;
use sparring_world::World;

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "string"})),
        (0u64..4, 4u64..9)
            .prop_map(|(a, b)| json!({"type": "string", "minLength": a, "maxLength": b})),
        prop::sample::select(vec![
            "date",
            "date-time",
            "email",
            "uuid",
            "time",
            "ipv4",
            "uri"
        ])
        .prop_map(|f| json!({"type": "string", "format": f})),
        (-50i64..50, 0i64..100)
            .prop_map(|(lo, span)| json!({"type": "integer", "minimum": lo, "maximum": lo + span})),
        (1i64..5).prop_map(|m| json!({"type": "integer", "minimum": 0, "multipleOf": m})),
        (-5.0f64..5.0)
            .prop_map(|lo| json!({"type": "number", "exclusiveMinimum": lo, "maximum": lo + 3.0})),
        Just(json!({"type": "boolean"})),
        Just(json!({"type": "null"})),
        Just(json!({"enum": ["open", "closed", 3, null]})),
        Just(json!({"const": "fixed"})),
        Just(json!({"type": ["string", "null"], "format": "date"})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::btree_map("[a-z]{1,8}", inner.clone(), 1..4).prop_flat_map(|props| {
                let names: Vec<String> = props.keys().cloned().collect();
                let n = names.len();
                (Just(props), prop::collection::vec(any::<bool>(), n), any::<bool>()).prop_map(
                    move |(props, req, closed)| {
                        let required: Vec<&String> =
                            names.iter().zip(&req).filter(|(_, r)| **r).map(|(k, _)| k).collect();
                        json!({"type": "object", "properties": props, "required": required,
                               "additionalProperties": !closed})
                    },
                )
            }),
            (inner.clone(), 0u64..2, 2u64..4).prop_map(|(items, lo, hi)| {
                json!({"type": "array", "items": items, "minItems": lo, "maxItems": hi})
            }),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|b| json!({"anyOf": b})),
            // oneOf branches of disjoint types, so exactly one matches.
            (inner.clone(),).prop_map(|(o,)| json!({"oneOf": [
                {"type": "integer", "minimum": 0},
                {"type": "object", "required": ["x"], "properties": {"x": o}},
            ]})),
            inner.prop_map(|i| json!({"allOf": [{"type": "object", "required": ["a"], "properties": {"a": i}},
                                                  {"type": "object", "properties": {"b": {"type": "boolean"}}}]})),
        ]
    })
}

fn spec_with(output: &Value) -> Spec {
    Spec::from_value(&json!({
        "name": "p", "system_prompt": "",
        "tools": [
            {"name": "get_ticket", "inputSchema": {"type": "object",
                "properties": {"ticket_id": {"type": "string", "description": "such as 'TK-1234'"}},
                "required": ["ticket_id"]},
             "outputSchema": output},
            {"name": "close_ticket", "inputSchema": {"type": "object",
                "properties": {"ticket_id": {"type": "string"}}, "required": ["ticket_id"]}},
            {"name": "search_tickets", "inputSchema": {"type": "object",
                "properties": {"topic": {"type": "string"}}}},
        ],
    }))
    .unwrap()
}

fn output_schema(body: &Value, def: &Value) -> Value {
    json!({
        "type": "object",
        "required": ["ticket_id", "body", "linked"],
        "properties": {
            "ticket_id": {"type": "string"},
            "body": body,
            "linked": {"$ref": "#/$defs/Linked"},
        },
        "$defs": {"Linked": def},
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn generated_records_validate_against_their_output_schema(body in schema(), def in schema(), seed in any::<u64>()) {
        let output = output_schema(&body, &def);
        let validator = jsonschema::options().should_validate_formats(true).build(&output).unwrap();
        let mut world = World::new(&spec_with(&output), seed);
        for id in world.ids("tickets").into_iter().take(4) {
            let answer = world.call("get_ticket", &json!({"ticket_id": id})).to_json();
            prop_assert_eq!(&answer["ok"], &json!(true), "{}", answer);
            let record = &answer["result"];
            let errors: Vec<String> = validator.iter_errors(record).map(|e| e.to_string()).collect();
            prop_assert!(errors.is_empty(), "{} against {}: {:?}", record, output, errors);
            prop_assert_eq!(&record["ticket_id"], &json!(id));
        }
    }

    #[test]
    fn same_seed_and_calls_give_identical_answers(seed in any::<u64>(), picks in prop::collection::vec((0usize..3, 0usize..25, "[a-z ]{0,12}"), 1..30)) {
        let spec = spec_with(&output_schema(&json!({"type": "string"}), &json!({"type": "integer"})));
        let play = || {
            let mut world = World::new(&spec, seed);
            let ids = world.ids("tickets");
            picks.iter().map(|(tool, id, text)| {
                let id = ids.get(*id).cloned().unwrap_or_else(|| format!("TK-{id:04}"));
                let (name, args) = match tool {
                    0 => ("get_ticket", json!({"ticket_id": id})),
                    1 => ("close_ticket", json!({"ticket_id": id})),
                    _ => ("search_tickets", json!({"topic": text})),
                };
                world.call(name, &args).to_content()
            }).collect::<Vec<String>>()
        };
        prop_assert_eq!(play(), play());
    }

    #[test]
    fn different_seeds_give_different_records(a in any::<u64>(), b in any::<u64>()) {
        prop_assume!(a != b);
        let spec = spec_with(&output_schema(&json!({"type": "string"}), &json!({"type": "integer"})));
        let wa = World::new(&spec, a);
        let wb = World::new(&spec, b);
        prop_assert_ne!(wa.ids("tickets"), wb.ids("tickets"));
        let ra = wa.record("tickets", &wa.ids("tickets")[0]).unwrap();
        let rb = wb.record("tickets", &wb.ids("tickets")[0]).unwrap();
        prop_assert_ne!(ra, rb);
        // The same id reads the same within a seed, across fresh copies.
        let id = &wa.ids("tickets")[5];
        prop_assert_eq!(wa.record("tickets", id), wa.clone().with_seed(a).record("tickets", id));
    }
}
