#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The sandbox world through its public API: memory, every refusal kind,
//! what must not be refused, generated records, faults.

use serde_json::{Value, json};
use sparring_types::{Spec, WorldOptions};
use sparring_world::{FaultKind, FaultRecord, FaultSource, World};

fn shop() -> Spec {
    Spec::from_value(&json!({
        "name": "shop", "system_prompt": "",
        "tools": [
            {"name": "get_order", "description": "Look up an order.", "inputSchema": {"type": "object",
                "properties": {"order_id": {"type": "string", "title": "Order Id",
                    "description": "The order id, such as '#W0000000'."}},
                "required": ["order_id"], "additionalProperties": false}},
            {"name": "cancel_pending_order", "inputSchema": {"type": "object",
                "properties": {"order_id": {"type": "string"},
                    "reason": {"type": "string", "description": "Either 'no longer needed' or 'ordered by mistake'."}},
                "required": ["order_id", "reason"], "additionalProperties": false}},
            {"name": "update_shipping_address", "inputSchema": {"type": "object",
                "properties": {"order_id": {"type": "string"}, "address": {"type": "string", "description": "The full new shipping address."}},
                "required": ["order_id", "address"]}},
            {"name": "find_orders_by_email", "inputSchema": {"type": "object",
                "properties": {"email": {"type": "string", "format": "email", "description": "The customer's email address."}},
                "required": ["email"]}},
            {"name": "find_customer", "inputSchema": {"type": "object",
                "properties": {"full_name": {"type": "string", "description": "The customer's full name."}},
                "required": ["full_name"]}},
            {"name": "set_priority", "inputSchema": {"type": "object",
                "properties": {"order_id": {"type": "string"}, "level": {"type": "string", "enum": ["low", "high"]},
                    "count": {"type": "integer", "minimum": 1}},
                "required": ["order_id", "level"]}},
            {"name": "get_ticket", "inputSchema": {"type": "object",
                "properties": {"ticket_id": {"type": "string", "description": "e.g. 'TK-1234'"}},
                "required": ["ticket_id"]},
             "outputSchema": {"type": "object", "required": ["ticket_id", "opened", "owner"],
                "properties": {"ticket_id": {"type": "string"}, "opened": {"type": "string", "format": "date"},
                    "owner": {"type": "string", "format": "email"}, "state": {"enum": ["new", "open", "solved"]}}}},
            {"name": "calculate", "inputSchema": {"type": "object",
                "properties": {"expression": {"type": "string"}}, "required": ["expression"]}},
        ],
        "fixtures": {
            "orders": [
                {"order_id": "#W1001", "status": "pending", "email": "ana.lima@mail.test", "name": "Ana Lima"},
                {"order_id": "#W1002", "status": "delivered", "email": "ben.okafor@mail.test", "name": "Ben Okafor"},
                {"order_id": "#W1003", "status": "cancelled", "email": "ben.okafor@mail.test", "name": "Ben Okafor"},
            ],
            "customers": [{"customer_id": "C-1", "full_name": "Grace Kim"}],
        },
    }))
    .unwrap()
}

fn kind(answer: &sparring_world::ToolResult) -> String {
    answer.error_kind().unwrap_or("ok").to_owned()
}

#[test]
fn memory_cancelled_reads_back_and_is_refused_again() {
    let mut w = World::new(&shop(), 1);
    let r = w.call(
        "cancel_pending_order",
        &json!({"order_id": "#W1001", "reason": "no longer needed"}),
    );
    assert!(r.is_ok(), "{r:?}");
    let read = w
        .call("get_order", &json!({"order_id": "#W1001"}))
        .to_json();
    assert_eq!(read["result"]["status"], "cancelled");
    assert_eq!(read["result"]["reason"], "no longer needed");
    let again = w.call(
        "cancel_pending_order",
        &json!({"order_id": "#W1001", "reason": "no longer needed"}),
    );
    assert_eq!(kind(&again), "refused");
    assert!(
        again.to_json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already cancelled")
    );
    // The required status: a delivered order is not pending.
    let delivered = w.call(
        "cancel_pending_order",
        &json!({"order_id": "#W1002", "reason": "ordered by mistake"}),
    );
    assert_eq!(kind(&delivered), "refused");
    let message = delivered.to_json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("is delivered") && message.contains("needs an order that is pending"),
        "{message}"
    );
    // Terminal records take no updates.
    let update = w.call(
        "update_shipping_address",
        &json!({"order_id": "#W1003", "address": "1 Oak Street, Austin"}),
    );
    assert_eq!(kind(&update), "refused");
    let ok = w.call(
        "update_shipping_address",
        &json!({"order_id": "#W1002", "address": "1 Oak Street, Austin"}),
    );
    assert!(ok.is_ok());
    assert_eq!(
        w.record("orders", "#W1002").unwrap()["address"],
        "1 Oak Street, Austin"
    );
    // A fresh world (another seed) forgets.
    let fresh = w.clone().with_seed(2);
    assert_eq!(
        fresh.record("orders", "#W1002").unwrap().get("address"),
        None
    );
}

#[test]
fn not_found_examples() {
    let mut w = World::new(&shop(), 1);
    for args in [
        json!({"order_id": "#W9999"}),
        json!({"order_id": "W1001"}),
        json!({"order_id": "#W10010"}),
    ] {
        let r = w.call("get_order", &args);
        assert_eq!(kind(&r), "not_found", "{args}");
        assert!(
            r.to_json()["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("#W1001")
        );
    }
    let shape = w.call("get_order", &json!({"order_id": "W1001"})).to_json();
    assert!(
        shape["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not look like")
    );
    // A list that matches nothing is empty; a lookup of one is not found.
    let none = w
        .call(
            "find_orders_by_email",
            &json!({"email": "zed.nobody@mail.test"}),
        )
        .to_json();
    assert_eq!(none, json!({"ok": true, "result": []}));
    let person = w.call("find_customer", &json!({"full_name": "Omar Haddad"}));
    assert_eq!(kind(&person), "not_found");
}

#[test]
fn refused_schema_echoes() {
    let mut w = World::new(&shop(), 1);
    for (tool, args) in [
        ("get_order", json!({"order_id": "order_id"})),
        ("get_order", json!({"order_id": "Order Id"})),
        ("get_order", json!({"order_id": "<order_id>"})),
        ("get_order", json!({"order_id": "{order_id}"})),
        ("get_order", json!({"order_id": "#W0000000"})),
        ("get_order", json!({"order_id": "string"})),
        ("get_order", json!({"order_id": "xxx"})),
        ("get_order", json!({"order_id": "123"})),
        ("get_order", json!({"order_id": "the order id"})),
        ("find_orders_by_email", json!({"email": "user@example.com"})),
        ("find_orders_by_email", json!({"email": "test@test.com"})),
        ("find_customer", json!({"full_name": "John Doe"})),
        ("find_customer", json!({"full_name": "first name"})),
        (
            "find_customer",
            json!({"full_name": "customer's full name"}),
        ),
        (
            "update_shipping_address",
            json!({"order_id": "#W1002", "address": "new shipping address"}),
        ),
    ] {
        let r = w.call(tool, &args).to_json();
        assert_eq!(r["error"]["kind"], "refused", "{tool} {args}: {r}");
        let hint = r["error"]["hint"].as_str().unwrap();
        let param = if tool == "update_shipping_address" {
            "address".to_owned()
        } else {
            args.as_object()
                .unwrap()
                .keys()
                .next()
                .unwrap()
                .replace('_', " ")
        };
        assert!(hint.contains(&param), "{hint} should name {param}");
    }
    let hint = w
        .call("get_order", &json!({"order_id": "<order_id>"}))
        .to_json();
    assert!(
        hint["error"]["hint"].as_str().unwrap().contains("#W1001"),
        "{hint}"
    );
}

#[test]
fn real_values_are_not_refused() {
    let mut w = World::new(&shop(), 1);
    let email = w
        .call(
            "find_orders_by_email",
            &json!({"email": "ben.okafor@mail.test"}),
        )
        .to_json();
    assert_eq!(email["ok"], true);
    assert_eq!(email["result"].as_array().unwrap().len(), 2);
    let name = w
        .call("find_customer", &json!({"full_name": "Grace Kim"}))
        .to_json();
    assert_eq!(name["ok"], true, "{name}");
    assert_eq!(name["result"]["customer_id"], "C-1");
    // An id of the right shape that does not exist is not found, not refused.
    let shaped = w.call("get_order", &json!({"order_id": "#W4817320"}));
    assert_eq!(kind(&shaped), "not_found");
    // Quoted values of a description are allowed values, not echoes.
    let reason = w.call(
        "cancel_pending_order",
        &json!({"order_id": "#W1001", "reason": "ordered by mistake"}),
    );
    assert!(reason.is_ok(), "{reason:?}");
    let generated = w.ids("tickets");
    assert_eq!(generated.len(), 20);
    let ticket = w.call("get_ticket", &json!({"ticket_id": generated[3]}));
    assert!(ticket.is_ok(), "{ticket:?}");
    assert!(
        generated[3].starts_with("TK-") && generated[3].len() == 7,
        "{}",
        generated[3]
    );
    let sum = w
        .call("calculate", &json!({"expression": "(2 + 3) * 4"}))
        .to_json();
    assert_eq!(sum["result"], 20.0);
}

#[test]
fn invalid_arguments_carry_the_validation_message() {
    let mut w = World::new(&shop(), 1);
    for (args, needle) in [
        (json!({}), "required"),
        (json!({"order_id": 5}), "string"),
        (json!({"order_id": "#W1001", "extra": 1}), "extra"),
        (json!("#W1001"), "object"),
    ] {
        let r = w.call("get_order", &args).to_json();
        assert_eq!(r["error"]["kind"], "invalid_arguments", "{args}");
        let m = r["error"]["message"].as_str().unwrap();
        assert!(m.contains(needle), "{m} should mention {needle}");
        assert!(
            r["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("order_id (string, required)")
        );
    }
    for args in [
        json!({"order_id": "#W1001", "level": "urgent"}),
        json!({"order_id": "#W1001", "level": "low", "count": 0}),
        json!({"order_id": "#W1001", "level": "low", "count": "2"}),
    ] {
        let r = w.call("set_priority", &args);
        assert_eq!(kind(&r), "invalid_arguments", "{args}");
    }
    let email = w.call("find_orders_by_email", &json!({"email": "not an email"}));
    assert_eq!(kind(&email), "invalid_arguments");
    let unknown = w.call("get_ordr", &json!({})).to_json();
    assert_eq!(unknown["error"]["kind"], "unknown_tool");
    assert!(
        unknown["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("did you mean `get_order`")
    );
    assert_eq!(
        kind(&w.call("delete_everything", &json!({}))),
        "unknown_tool"
    );
    let calc = w.call("calculate", &json!({"expression": "2 +"}));
    assert_eq!(kind(&calc), "invalid_arguments");
}

#[test]
fn scheduled_faults_hit_the_first_call_and_are_recorded() {
    let mut w = World::new(&shop(), 1);
    w.schedule("get_order", FaultKind::RateLimited);
    assert!(w.call("calculate", &json!({"expression": "1+1"})).is_ok());
    let first = w
        .call("get_order", &json!({"order_id": "#W1001"}))
        .to_json();
    assert_eq!(first["error"]["kind"], "fault");
    assert!(
        first["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("retry after 2 seconds")
    );
    assert!(w.call("get_order", &json!({"order_id": "#W1001"})).is_ok());
    assert_eq!(
        serde_json::to_value(w.faults()).unwrap(),
        json!([
            {"tool": "get_order", "kind": "rate_limited", "source": "scheduled", "fired": true, "call": 2}
        ])
    );
    // Malformed and empty answers are performed, then garbled.
    let mut w = World::new(&shop(), 1);
    // A situation's faults as a replayed row holds them: the random one is
    // not the situation's and is not scheduled again.
    w.schedule_all(&[
        FaultRecord::scheduled("cancel_pending_order", FaultKind::Malformed),
        FaultRecord::fired("get_order", FaultKind::Timeout, FaultSource::Random, 1),
        FaultRecord::scheduled("get_order", FaultKind::Empty),
        FaultRecord::scheduled("find_customer", FaultKind::Timeout),
    ]);
    let garbled = w.call(
        "cancel_pending_order",
        &json!({"order_id": "#W1001", "reason": "no longer needed"}),
    );
    assert!(serde_json::from_str::<Value>(&garbled.to_content()).is_err());
    assert_eq!(w.record("orders", "#W1001").unwrap()["status"], "cancelled");
    assert_eq!(
        w.call("get_order", &json!({"order_id": "#W1001"}))
            .to_content(),
        r#"{"ok":true,"result":{}}"#
    );
    let faults = w.faults();
    assert_eq!(faults.len(), 3);
    assert_eq!(faults[2].fired, Some(false));
    assert!(faults[2].call.is_none());
}

#[test]
fn random_faults_follow_fault_rate() {
    let spec = shop();
    let options = WorldOptions {
        fault_rate: 0.3,
        ..WorldOptions::default()
    };
    let mut w = World::with_options(&spec, 5, options);
    let mut blocked = 0;
    for _ in 0..1000 {
        if w.call("get_order", &json!({"order_id": "#W1001"}))
            .error_kind()
            == Some("fault")
        {
            blocked += 1;
        }
    }
    let recorded = w.faults();
    assert!((240..360).contains(&recorded.len()), "{}", recorded.len());
    assert!(
        recorded
            .iter()
            .all(|f| f.source == FaultSource::Random && f.has_fired())
    );
    // Three kinds of five block the call; malformed and empty answer.
    let blocking = recorded
        .iter()
        .filter(|f| {
            matches!(
                f.kind,
                FaultKind::Timeout | FaultKind::ServerError | FaultKind::RateLimited
            )
        })
        .count();
    assert_eq!(blocked, blocking);
    assert!(blocking < recorded.len());
    let mut none = World::new(&spec, 5);
    for _ in 0..200 {
        assert!(
            none.call("get_order", &json!({"order_id": "#W1001"}))
                .is_ok()
        );
    }
    assert!(none.faults().is_empty());
}

#[test]
fn options_come_from_the_spec() {
    let mut value = serde_json::to_value(json!({
        "name": "s", "system_prompt": "",
        "tools": [{"name": "get_ticket", "inputSchema": {"type": "object", "properties": {"ticket_id": {"type": "string"}}}}],
        "options": {"world": {"records_per_entity": 5, "id_digits": 4}},
    }))
    .unwrap();
    let spec = Spec::from_value(&value).unwrap();
    let w = World::new(&spec, 0);
    let ids = w.ids("tickets");
    assert_eq!(ids.len(), 5);
    assert!(
        ids.iter().all(|id| id.starts_with("TIC-") && id.len() == 8),
        "{ids:?}"
    );
    value["options"]["world"]["records_per_entty"] = json!(3);
    let err = Spec::from_value(&value).unwrap_err();
    assert_eq!(err.pointer, "/options/world/records_per_entty");
    assert!(
        err.message.contains("did you mean `records_per_entity`"),
        "{}",
        err.message
    );
}

/// Orders that carry their buyer's email, with no fixtures; and users, who
/// are people themselves.
fn desk_without_fixtures() -> Spec {
    let by_id =
        |p: &str| json!({"type": "object", "properties": {p: {"type": "string"}}, "required": [p]});
    Spec::from_value(&json!({
        "name": "desk", "system_prompt": "",
        "tools": [
            {"name": "get_order", "description": "Look up an order.", "inputSchema": by_id("order_id")},
            {"name": "find_orders_by_email", "description": "List the orders placed with an email.",
                "inputSchema": by_id("email")},
            {"name": "get_user", "description": "Look up a user.", "inputSchema": {"type": "object",
                "properties": {"user_id": {"type": "string"}, "email": {"type": "string"}},
                "required": ["user_id"]}},
        ],
    }))
    .unwrap()
}

#[test]
fn generated_owners_have_several_records_and_people_stay_one_each() {
    let spec = desk_without_fixtures();
    let (mut shared, mut odd) = (0, 0);
    for seed in 0..30 {
        let world = World::new(&spec, seed);
        let ids = world.ids("orders");
        let email = |id: &str| world.record("orders", id).unwrap()["email"].clone();
        assert!(
            email(&ids[0]).is_string(),
            "{:?}",
            world.record("orders", &ids[0])
        );
        // The second order is always its first's person's; later odd-placed
        // ones at SHARED_OWNER_SHARE.
        assert_eq!(email(&ids[1]), email(&ids[0]), "seed {seed}");
        for at in (3..ids.len()).step_by(2) {
            odd += 1;
            shared += usize::from(email(&ids[at]) == email(&ids[at - 1]));
        }
        // The search by email finds all of that person's orders.
        let found = world
            .clone()
            .call("find_orders_by_email", &json!({"email": email(&ids[0])}))
            .to_json();
        assert!(
            found["result"].as_array().unwrap().len() >= 2,
            "seed {seed}: {found}"
        );
        // A person's own records are not shared.
        let users = world.ids("users");
        let emails: std::collections::BTreeSet<String> = users
            .iter()
            .filter_map(|u| {
                world.record("users", u)?["email"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(emails.len(), users.len(), "seed {seed}");
    }
    let share = shared as f64 / f64::from(odd);
    let want = sparring_types::defaults::world::SHARED_OWNER_SHARE;
    assert!((share - want).abs() < 0.08, "{share} of {odd}");
}

/// A search argument no fixture record has a field for (a car search's
/// dates) narrows nothing: the cars at the place are found, not none.
#[test]
fn a_search_ignores_what_the_fixtures_cannot_answer() {
    let spec = Spec::from_value(&json!({
        "name": "rental",
        "system_prompt": "You help renters find cars.",
        "tools": [{"name": "search_cars", "description": "Search the cars free at a location.",
            "inputSchema": {"type": "object", "properties": {
                "location": {"type": "string"}, "pickup_date": {"type": "string", "format": "date"}},
                "required": ["location", "pickup_date"]}}],
        "fixtures": {"cars": [
            {"car_id": "CAR-01", "location": "Lisbon Airport", "model": "Golf"},
            {"car_id": "CAR-02", "location": "Porto", "model": "Clio"},
        ]},
    }))
    .unwrap();
    let mut w = World::new(&spec, 0);
    let found = w
        .call(
            "search_cars",
            &json!({"location": "Lisbon Airport", "pickup_date": "2026-12-20"}),
        )
        .to_json();
    let ids: Vec<&str> = found["result"]
        .as_array()
        .unwrap_or_else(|| panic!("{found}"))
        .iter()
        .filter_map(|c| c["car_id"].as_str())
        .collect();
    assert_eq!(ids, ["CAR-01"], "{found}");
}
