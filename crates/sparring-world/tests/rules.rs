#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::needless_pass_by_value
)]
//! The rules the world keeps: read from the spec's words (tool
//! descriptions, policy sentences) and declared in its `world:` section;
//! memory after writes; role-prefixed ids and field reads; faults on tool
//! `none`.

use serde_json::{Value, json};
use sparring_io::spec_file::load_spec;
use sparring_types::Spec;
use sparring_world::{FaultKind, World};
use std::path::Path;

fn example(name: &str) -> Spec {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/{name}/spec.yaml"));
    load_spec(&path).unwrap()
}

fn call(w: &mut World, tool: &str, args: Value) -> Value {
    w.call(tool, &args).to_json()
}

/// Calls `tool` and checks it succeeded; the answer.
fn succeeds(w: &mut World, tool: &str, args: Value) -> Value {
    let answer = call(w, tool, args);
    assert_eq!(answer["ok"], true, "{tool}: {answer}");
    answer
}

/// Calls `tool` and checks the world refused it, saying each of `needles`.
fn refuses(w: &mut World, tool: &str, args: Value, needles: &[&str]) {
    refused_with(&call(w, tool, args), needles);
}

/// What `--explain` shows of `tool`'s rules: the rules, and the `field`
/// of each (`sentence`, `rule`).
fn explained(w: &World, tool: &str, field: &str) -> (Value, Vec<String>) {
    let explain = w.explain();
    let rules = explain["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == tool)
        .unwrap()["rules"]
        .clone();
    let fields = rules
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r[field].as_str().map(str::to_owned))
        .collect();
    (rules, fields)
}

fn refused_with(answer: &Value, needles: &[&str]) {
    assert_eq!(answer["error"]["kind"], "refused", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    for n in needles {
        assert!(message.contains(n), "`{n}` not in: {message}");
    }
}

#[test]
fn support_desk_refuses_the_three_forbidden_calls_with_the_rule() {
    let mut w = World::new(&example("support-desk"), 0);
    // #W1002 is shipped, #W1001 pending, #W1003 delivered.
    refuses(
        &mut w,
        "cancel_order",
        json!({"order_id": "#W1002"}),
        &["#W1002", "shipped", "\"Cancel a pending order.\""],
    );
    refuses(
        &mut w,
        "refund_order",
        json!({"order_id": "#W1001", "reason": "changed my mind"}),
        &[
            "pending",
            "\"Refund a shipped or delivered order in full.\"",
        ],
    );
    refuses(
        &mut w,
        "update_shipping_address",
        json!({"order_id": "#W1003", "address": "4 Lake Drive, Austin, TX 78701"}),
        &[
            "delivered",
            "\"Change the shipping address of a pending order.\"",
        ],
    );
    // What the rules allow goes through and is remembered.
    let ok = call(&mut w, "cancel_order", json!({"order_id": "#W1001"}));
    assert_eq!(ok["result"]["status"], "cancelled", "{ok}");
    let refund = call(
        &mut w,
        "refund_order",
        json!({"order_id": "#W1002", "reason": "arrived broken"}),
    );
    assert_eq!(refund["result"]["status"], "refunded", "{refund}");
    succeeds(
        &mut w,
        "update_shipping_address",
        json!({"order_id": "#W1005", "address": "4 Lake Drive, Austin, TX 78701"}),
    );
    // The explanation shows each rule beside the sentence it came from.
    let (cancel_rules, sentences) = explained(&w, "cancel_order", "sentence");
    assert!(
        sentences.contains(&"Cancel a pending order.".to_owned()),
        "{cancel_rules}"
    );
    assert!(
        sentences.contains(&"Only orders that are pending can be cancelled.".to_owned()),
        "{cancel_rules}"
    );
    assert!(
        sentences
            .contains(&"Shipped or delivered orders can be refunded, not cancelled.".to_owned()),
        "{cancel_rules}"
    );
}

#[test]
fn bank_moves_money_and_a_later_read_shows_it() {
    let mut w = World::new(&example("bank"), 0);
    let before = call(&mut w, "get_balance", json!({"account_id": "A-1001"}));
    assert_eq!(
        before["result"],
        json!({"account_id": "A-1001", "balance": 2500.0}),
        "{before}"
    );
    succeeds(
        &mut w,
        "transfer_money",
        json!({"from_account_id": "A-1001", "to_account_id": "A-1002", "amount": 250}),
    );
    let after = call(&mut w, "get_balance", json!({"account_id": "A-1001"}));
    assert_eq!(after["result"]["balance"], 2250.0, "{after}");
    let into = call(&mut w, "get_account", json!({"account_id": "A-1002"}));
    assert_eq!(into["result"]["balance"], 10450.5, "{into}");
    // Too much: insufficient funds, nothing moves.
    refuses(
        &mut w,
        "transfer_money",
        json!({"from_account_id": "A-1001", "to_account_id": "A-1002", "amount": 5000}),
        &["insufficient funds", "2250"],
    );
    assert_eq!(
        call(&mut w, "get_balance", json!({"account_id": "A-1001"}))["result"]["balance"],
        2250.0
    );
    // Out of a frozen account: the policy's sentence.
    refuses(
        &mut w,
        "transfer_money",
        json!({"from_account_id": "A-2001", "to_account_id": "A-2002", "amount": 10}),
        &[
            "A-2001",
            "frozen",
            "\"Never move money out of an account that is frozen.\"",
        ],
    );
    // Into a frozen account: "Money can only be moved into an account that is active."
    refuses(
        &mut w,
        "transfer_money",
        json!({"from_account_id": "A-2002", "to_account_id": "A-2001", "amount": 10}),
        &["A-2001", "only be moved into an account that is active"],
    );
    // Between two customers' accounts is fine for the world (a transfer
    // reaches anyone); an unknown account is not found.
    let unknown = call(
        &mut w,
        "transfer_money",
        json!({"from_account_id": "A-1001", "to_account_id": "A-9999", "amount": 1}),
    );
    assert_eq!(unknown["error"]["kind"], "not_found", "{unknown}");
}

#[test]
fn declared_rules_require_and_change() {
    let mut w = World::new(&example("bank"), 0);
    succeeds(
        &mut w,
        "pay_payee",
        json!({"account_id": "A-1001", "payee_id": "P-1", "amount": 80.25}),
    );
    assert_eq!(w.record("payees", "P-1").unwrap()["total_paid"], 80.25);
    assert_eq!(w.record("accounts", "A-1001").unwrap()["balance"], 2419.75);
    // `payee.status == active`, declared: the closed payee is refused.
    refuses(
        &mut w,
        "pay_payee",
        json!({"account_id": "A-1001", "payee_id": "P-3", "amount": 5}),
        &["payee.status == active", "P-3", "closed", "`world` section"],
    );
    // Another customer's payee is someone else's.
    refuses(
        &mut w,
        "pay_payee",
        json!({"account_id": "A-1001", "payee_id": "P-2", "amount": 5}),
        &["P-2", "C-200", "C-100"],
    );
    // A created payee is in its customer's list, and can be paid.
    let added = call(
        &mut w,
        "add_payee",
        json!({"customer_id": "C-100", "name": "Harbor Gym", "iban": "GB82WEST12345698765432"}),
    );
    let id = added["result"]["payee_id"].as_str().unwrap().to_owned();
    assert_eq!(added["result"]["customer_id"], "C-100");
    let customer = w.record("customers", "C-100").unwrap();
    assert!(
        customer["payee_ids"]
            .as_array()
            .unwrap()
            .contains(&json!(id)),
        "{customer:?}"
    );
    let listed = call(&mut w, "list_payees", json!({"customer_id": "C-100"}));
    assert!(
        listed["result"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["payee_id"] == id.as_str()),
        "{listed}"
    );
    // A search with no match is an empty list.
    let none = call(&mut w, "list_transfers", json!({"account_id": "A-1002"}));
    assert_eq!(none["result"], json!([]), "{none}");
    // The explanation shows what was declared beside what was read.
    let (pay, rules) = explained(&w, "pay_payee", "rule");
    assert!(
        rules.contains(&"payee.status == active".to_owned())
            && rules.contains(&"payee.total_paid += amount".to_owned()),
        "{pay}"
    );
}

#[test]
fn a_verb_the_world_does_not_know_still_keeps_the_records_rules() {
    // `refill` is no verb the world knows; the description and the policy
    // still say the prescription must be active.
    let spec = Spec::from_value(&json!({
        "name": "clinic",
        "system_prompt": "A prescription can only be refilled while it is active.",
        "tools": [
            {"name": "refill_prescription", "description": "Request a refill of a prescription.",
             "inputSchema": {"type": "object", "properties": {"prescription_id": {"type": "string"}}}},
            {"name": "order_status", "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
        ],
        "fixtures": {
            "prescriptions": [
                {"prescription_id": "RX-1", "status": "active"},
                {"prescription_id": "RX-2", "status": "expired"},
            ],
            "orders": [{"order_id": "O-1", "status": "expired"}],
        },
    }))
    .unwrap();
    let mut w = World::new(&spec, 0);
    refuses(
        &mut w,
        "refill_prescription",
        json!({"prescription_id": "RX-2"}),
        &[
            "expired",
            "\"A prescription can only be refilled while it is active.\"",
        ],
    );
    let ok = call(
        &mut w,
        "refill_prescription",
        json!({"prescription_id": "RX-1"}),
    );
    assert_eq!(ok["result"]["status"], "active", "{ok}");
    // A noun-noun name (`order_status`) is a read, not an action.
    succeeds(&mut w, "order_status", json!({"order_id": "O-1"}));
}

/// An action of an unknown verb whose description says what it leaves
/// ("will be changed to 'under appeal'") leaves it, so it cannot be done
/// twice; a sentence about what to tell the customer is no rule; a filed
/// claim is a new record, made as its description says, and the state it
/// needs is its policy's.
#[test]
fn claims_are_filed_appealed_and_told_about_by_their_words() {
    let spec = Spec::from_value(&json!({
        "name": "claims",
        "system_prompt": "Only claims that are denied can be appealed. Never tell the policyholder \
            that a claim was filed, cancelled or appealed unless the tool succeeded.",
        "tools": [
            {"name": "appeal_claim",
             "description": "Appeal a denied claim. The claim status will be changed to 'under appeal'.",
             "inputSchema": {"type": "object", "properties": {"claim_id": {"type": "string"}},
                             "required": ["claim_id"]}},
            {"name": "cancel_claim", "description": "Cancel an open claim.",
             "inputSchema": {"type": "object", "properties": {"claim_id": {"type": "string"}},
                             "required": ["claim_id"]}},
            {"name": "file_claim",
             "description": "File a new claim on an active policy. The claim starts as open.",
             "inputSchema": {"type": "object", "properties": {"policy_id": {"type": "string"},
                             "amount": {"type": "number"}}, "required": ["policy_id", "amount"]}},
        ],
        "fixtures": {
            "claims": [
                {"claim_id": "CL-1", "policy_id": "POL-1", "status": "denied"},
                {"claim_id": "CL-2", "policy_id": "POL-1", "status": "cancelled"},
            ],
            "policies": [
                {"policy_id": "POL-1", "status": "active"},
                {"policy_id": "POL-2", "status": "lapsed"},
            ],
        },
    }))
    .unwrap();
    let mut w = World::new(&spec, 0);
    let ok = call(&mut w, "appeal_claim", json!({"claim_id": "CL-1"}));
    assert_eq!(ok["result"]["status"], "under appeal", "{ok}");
    refuses(
        &mut w,
        "appeal_claim",
        json!({"claim_id": "CL-1"}),
        &["under appeal"],
    );
    // The cancelled claim is refused for not being denied, never allowed
    // for being cancelled.
    refuses(
        &mut w,
        "appeal_claim",
        json!({"claim_id": "CL-2"}),
        &["cancelled"],
    );
    let explain = w.explain().to_string();
    assert!(!explain.contains("must be cancelled"), "{explain}");
    // Filing makes a claim, open as its description says, on an active
    // policy only.
    let filed = call(
        &mut w,
        "file_claim",
        json!({"policy_id": "POL-1", "amount": 90}),
    );
    assert_eq!(filed["result"]["status"], "open", "{filed}");
    assert_eq!(filed["result"]["policy_id"], "POL-1", "{filed}");
    refuses(
        &mut w,
        "file_claim",
        json!({"policy_id": "POL-2", "amount": 90}),
        &["lapsed", "File a new claim on an active policy."],
    );
}

#[test]
fn a_new_value_replaces_the_field_it_renews() {
    let spec = Spec::from_value(&json!({
        "name": "clinic", "system_prompt": "",
        "tools": [
            {"name": "reschedule_appointment", "inputSchema": {"type": "object", "properties": {
                "appointment_id": {"type": "string"}, "new_time": {"type": "string", "format": "date-time"},
                "new_room": {"type": "string"}, "new_note": {"type": "string"}}}},
        ],
        "fixtures": {"appointments": [
            {"appointment_id": "AP-1", "time": "2026-12-10T09:30:00", "where": {"room": "3B"}},
        ]},
    }))
    .unwrap();
    let mut w = World::new(&spec, 0);
    succeeds(
        &mut w,
        "reschedule_appointment",
        json!({"appointment_id": "AP-1", "new_time": "2026-12-11T10:00:00", "new_room": "4A", "new_note": "late"}),
    );
    let record = w.record("appointments", "AP-1").unwrap();
    // A local time without its offset is a date-time, as the fixture
    // writes it. The record's own `time` and nested `room` change; a `new_` field the
    // record has no base for is kept as given.
    assert_eq!(record["time"], "2026-12-11T10:00:00", "{record:?}");
    assert_eq!(record["where"]["room"], "4A", "{record:?}");
    assert_eq!(record["new_note"], "late", "{record:?}");
    assert!(record.get("new_time").is_none(), "{record:?}");
}

#[test]
fn declared_ids_returns_and_creates() {
    let spec = Spec::from_value(&json!({
        "name": "ledger", "system_prompt": "",
        "tools": [
            {"name": "move_funds", "inputSchema": {"type": "object", "properties": {
                "src": {"type": "string"}, "dst": {"type": "string"}, "sum": {"type": "number"}}}},
            {"name": "peek", "inputSchema": {"type": "object", "properties": {"acct": {"type": "string"}}}},
            {"name": "open_box", "inputSchema": {"type": "object", "properties": {
                "acct": {"type": "string"}, "label": {"type": "string"}}}},
        ],
        "world": {
            "move_funds": {"ids": {"src": "account", "dst": "account"},
                "requires": ["account.balance >= sum", "account.status in [active, 'on hold']"],
                "effects": ["account.balance -= sum"]},
            "peek": {"ids": {"acct": "account"}, "returns": "account.balance"},
            "open_box": {"ids": {"acct": "account"}, "creates": "box", "effects": ["box.owner = acct", "account.boxes append label"]},
        },
        "fixtures": {"accounts": [
            {"account_id": "X1", "status": "active", "balance": 10},
            {"account_id": "X2", "status": "dormant", "balance": 99},
        ]},
    }))
    .unwrap();
    let mut w = World::new(&spec, 0);
    succeeds(
        &mut w,
        "move_funds",
        json!({"src": "X1", "dst": "X2", "sum": 4}),
    );
    assert_eq!(
        call(&mut w, "peek", json!({"acct": "X1"}))["result"],
        json!({"account_id": "X1", "balance": 6})
    );
    refuses(
        &mut w,
        "move_funds",
        json!({"src": "X1", "dst": "X2", "sum": 7}),
        &["account.balance >= sum", "6"],
    );
    refused_with(
        &call(
            &mut w,
            "move_funds",
            json!({"src": "X2", "dst": "X1", "sum": 1}),
        ),
        &["in [active, 'on hold']", "dormant"],
    );
    assert_eq!(
        call(&mut w, "peek", json!({"acct": "X9"}))["error"]["kind"],
        "not_found"
    );
    let boxed = call(
        &mut w,
        "open_box",
        json!({"acct": "X1", "label": "savings jar"}),
    );
    assert_eq!(boxed["result"]["owner"], "X1", "{boxed}");
    assert_eq!(
        w.record("accounts", "X1").unwrap()["boxes"],
        json!(["savings jar"])
    );
}

fn tau2_like() -> Spec {
    Spec::from_value(&json!({
        "name": "shop", "system_prompt": "# Exchange delivered order\n\nAfter user confirmation, the order status will be changed to 'exchange requested'.\n",
        "tools": [
            {"name": "get_order_details", "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
            {"name": "get_user_details", "inputSchema": {"type": "object", "properties": {"user_id": {"type": "string"}}}},
            {"name": "modify_pending_order_address", "description": "Modify the shipping address of a pending order.",
             "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"},
                "address1": {"type": "string"}, "city": {"type": "string"}, "zip": {"type": "string"}}}},
            {"name": "modify_pending_order_items", "description": "Modify items in a pending order. For a pending order, this function can only be called once.",
             "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"},
                "item_ids": {"type": "array", "items": {"type": "string"}}, "new_item_ids": {"type": "array", "items": {"type": "string"}}}}},
            {"name": "exchange_delivered_order_items", "description": "Exchange items in a delivered order.",
             "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"},
                "item_ids": {"type": "array", "items": {"type": "string"}}, "payment_method_id": {"type": "string"}}}},
            {"name": "return_delivered_order_items", "description": "Return some items of a delivered order. The order status will be changed to 'return requested'.",
             "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}, "item_ids": {"type": "array", "items": {"type": "string"}}}}},
            {"name": "cancel_pending_order", "description": "Cancel a pending order.",
             "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"},
                "reason": {"type": "string", "description": "The reason, which should be either 'no longer needed' or 'ordered by mistake'."}}}},
            {"name": "book_order", "inputSchema": {"type": "object", "properties": {"user_id": {"type": "string"}, "note": {"type": "string"}}}},
        ],
        "fixtures": {
            "users": [{"user_id": "u1", "orders": ["#W1"]}, {"user_id": "u2", "orders": []}],
            "orders": [
                {"order_id": "#W1", "user_id": "u1", "status": "pending",
                 "address": {"address1": "1 Oak Street", "city": "Austin", "zip": "78701"},
                 "items": [{"item_id": "I1", "price": 5}, {"item_id": "I2", "price": 7}]},
                {"order_id": "#W2", "user_id": "u1", "status": "delivered", "items": [{"item_id": "I3"}]},
                {"order_id": "#W3", "user_id": "u1", "status": "delivered", "items": [{"item_id": "I4"}]},
            ],
            "payment_methods": [{"payment_method_id": "pm1", "user_id": "u1"}, {"payment_method_id": "pm2", "user_id": "u2"}],
        },
    }))
    .unwrap()
}

#[test]
fn memory_keeps_the_record_shape_and_refuses_repeats() {
    let mut w = World::new(&tau2_like(), 0);
    // A nested address is replaced in place, not pasted beside it.
    succeeds(
        &mut w,
        "modify_pending_order_address",
        json!({"order_id": "#W1", "address1": "9 Elm Road", "city": "Denver", "zip": "80202"}),
    );
    let order = call(&mut w, "get_order_details", json!({"order_id": "#W1"}))["result"].clone();
    assert_eq!(
        order["address"],
        json!({"address1": "9 Elm Road", "city": "Denver", "zip": "80202"})
    );
    assert!(
        order.get("address1").is_none() && order.get("zip").is_none(),
        "{order}"
    );
    // New items replace old ones in the order's items; once only.
    let items = call(
        &mut w,
        "modify_pending_order_items",
        json!({"order_id": "#W1", "item_ids": ["I2"], "new_item_ids": ["I9"]}),
    );
    assert_eq!(
        items["result"]["items"],
        json!([{"item_id": "I1", "price": 5}, {"item_id": "I9", "price": 7}]),
        "{items}"
    );
    refuses(
        &mut w,
        "modify_pending_order_items",
        json!({"order_id": "#W1", "item_ids": ["I1"], "new_item_ids": ["I8"]}),
        &["only once", "this function can only be called once"],
    );
    // The status the words name; a second exchange is refused.
    let exchanged = call(
        &mut w,
        "exchange_delivered_order_items",
        json!({"order_id": "#W2", "item_ids": ["I3"], "payment_method_id": "pm1"}),
    );
    assert_eq!(
        exchanged["result"]["status"], "exchange requested",
        "{exchanged}"
    );
    refuses(
        &mut w,
        "exchange_delivered_order_items",
        json!({"order_id": "#W2", "item_ids": ["I3"], "payment_method_id": "pm1"}),
        &["already exchange requested"],
    );
    // Another user's payment method is someone else's.
    refuses(
        &mut w,
        "exchange_delivered_order_items",
        json!({"order_id": "#W3", "item_ids": ["I4"], "payment_method_id": "pm2"}),
        &["pm2", "u2", "u1"],
    );
    let returned = call(
        &mut w,
        "return_delivered_order_items",
        json!({"order_id": "#W3", "item_ids": ["I4"]}),
    );
    assert_eq!(
        returned["result"]["status"], "return requested",
        "{returned}"
    );
    // An enum in words is enforced like a schema enum.
    let reason = w
        .call(
            "cancel_pending_order",
            &json!({"order_id": "#W1", "reason": "changed my mind"}),
        )
        .to_json();
    assert_eq!(reason["error"]["kind"], "invalid_arguments", "{reason}");
    assert!(
        reason["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'no longer needed', 'ordered by mistake'")
    );
    // A create joins the list of the record it names.
    let booked = call(
        &mut w,
        "book_order",
        json!({"user_id": "u2", "note": "gift"}),
    );
    let id = booked["result"]["order_id"].as_str().unwrap().to_owned();
    let user = call(&mut w, "get_user_details", json!({"user_id": "u2"}));
    assert_eq!(user["result"]["orders"], json!([id]), "{user}");
}

#[test]
fn role_prefixed_ids_and_field_reads() {
    let spec = Spec::from_value(&json!({
        "name": "telco", "system_prompt": "",
        "tools": [
            {"name": "get_data_usage", "inputSchema": {"type": "object", "properties": {"customer_id": {"type": "string"}, "line_id": {"type": "string"}}}},
            {"name": "refuel_data", "description": "Refuels data for a line.", "inputSchema": {"type": "object", "properties": {
                "customer_id": {"type": "string"}, "line_id": {"type": "string"}, "gb_amount": {"type": "number"}}}},
            {"name": "move_line", "inputSchema": {"type": "object", "properties": {
                "line_id": {"type": "string"}, "new_customer_id": {"type": "string"}}}},
        ],
        "fixtures": {
            "customers": [{"customer_id": "C1"}, {"customer_id": "C2"}],
            "lines": [{"line_id": "L1", "customer_id": "C1", "data_used_gb": 15.1, "data_refueling_gb": 0, "status": "Active", "plan": "P9"}],
        },
    }))
    .unwrap();
    let mut w = World::new(&spec, 0);
    let usage = call(
        &mut w,
        "get_data_usage",
        json!({"customer_id": "C1", "line_id": "L1"}),
    );
    assert_eq!(
        usage["result"],
        json!({"line_id": "L1", "data_used_gb": 15.1, "data_refueling_gb": 0}),
        "{usage}"
    );
    refuses(
        &mut w,
        "get_data_usage",
        json!({"customer_id": "C2", "line_id": "L1"}),
        &["belongs to customer_id `C1`"],
    );
    assert_eq!(
        call(
            &mut w,
            "refuel_data",
            json!({"customer_id": "C1", "line_id": "L1", "gb_amount": 2.0})
        )["ok"],
        true
    );
    assert_eq!(
        call(
            &mut w,
            "get_data_usage",
            json!({"customer_id": "C1", "line_id": "L1"})
        )["result"]["data_refueling_gb"],
        2.0
    );
    // `new_customer_id` names a customer, not a `new_customers` entity.
    let explain = w.explain();
    assert!(
        explain["entities"].get("new_customers").is_none(),
        "{}",
        explain["entities"]
    );
    assert_eq!(
        call(
            &mut w,
            "move_line",
            json!({"line_id": "L1", "new_customer_id": "C9"})
        )["error"]["kind"],
        "not_found"
    );
    assert_eq!(
        call(
            &mut w,
            "move_line",
            json!({"line_id": "L1", "new_customer_id": "C2"})
        )["ok"],
        true
    );
}

#[test]
fn a_fault_on_tool_none_fires_on_the_first_call_of_any_tool() {
    let mut w = World::new(&example("support-desk"), 0);
    w.schedule("none", FaultKind::ServerError);
    assert_eq!(w.faults()[0].fired, Some(false));
    let first = call(
        &mut w,
        "find_orders_by_email",
        json!({"email": "ana.lima@mail.test"}),
    );
    assert_eq!(first["error"]["kind"], "fault", "{first}");
    assert_eq!(
        call(&mut w, "get_order", json!({"order_id": "#W1001"}))["ok"],
        true
    );
    assert_eq!(
        serde_json::to_value(w.faults()).unwrap(),
        json!([
            {"tool": "none", "kind": "server_error", "source": "scheduled", "fired": true, "call": 1, "fired_on": "find_orders_by_email"}
        ])
    );
    // A fault on a tool never called never fires, and says so.
    let mut w = World::new(&example("support-desk"), 0);
    w.schedule("refund_order", FaultKind::Timeout);
    let _ = call(&mut w, "get_order", json!({"order_id": "#W1001"}));
    assert_eq!(w.faults()[0].fired, Some(false));
}

/// The `world:` examples of `docs/world.md` (shop, bank, airline) load
/// against tools of their kind, and the bank's declared transfer moves money.
#[test]
fn the_documented_world_sections_load_and_work() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/world.md"))
            .unwrap();
    let blocks: Vec<&str> = doc
        .split("```yaml\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .filter(|b| b.starts_with("world:"))
        .collect();
    assert_eq!(blocks.len(), 3, "shop, bank, airline");
    let tool = |name: &str, params: &[(&str, &str)]| {
        let props: serde_json::Map<String, Value> = params
            .iter()
            .map(|(p, t)| ((*p).to_owned(), json!({"type": t})))
            .collect();
        json!({"name": name, "inputSchema": {"type": "object", "properties": props}})
    };
    let tools = [
        vec![
            tool(
                "refund_order",
                &[("order_id", "string"), ("amount", "number")],
            ),
            tool("get_order_total", &[("order_id", "string")]),
        ],
        vec![
            tool(
                "transfer_money",
                &[
                    ("from_account_id", "string"),
                    ("to_account_id", "string"),
                    ("amount", "number"),
                ],
            ),
            tool(
                "pay_payee",
                &[
                    ("account_id", "string"),
                    ("payee_id", "string"),
                    ("amount", "number"),
                ],
            ),
            tool(
                "add_payee",
                &[("customer_id", "string"), ("name", "string")],
            ),
            tool("get_account", &[("account_id", "string")]),
        ],
        vec![
            tool(
                "update_reservation_baggages",
                &[
                    ("reservation_id", "string"),
                    ("total_baggages", "integer"),
                    ("nonfree_baggages", "integer"),
                    ("payment_id", "string"),
                ],
            ),
            tool(
                "send_certificate",
                &[("user_id", "string"), ("amount", "integer")],
            ),
            tool(
                "get_flight_status",
                &[("flight_number", "string"), ("date", "string")],
            ),
        ],
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, (block, tools)) in blocks.iter().zip(tools).enumerate() {
        let path = dir.path().join(format!("spec{i}.yaml"));
        let tools_json = serde_json::to_string(&tools).unwrap();
        let fixtures = if i == 1 {
            "fixtures:\n  accounts:\n    - {account_id: A1, status: active, balance: 100}\n    - {account_id: A2, status: active, balance: 5}\n"
        } else {
            ""
        };
        std::fs::write(
            &path,
            format!("name: doc\nsystem_prompt: ''\ntools: {tools_json}\n{block}{fixtures}"),
        )
        .unwrap();
        let spec = load_spec(&path).unwrap_or_else(|e| panic!("block {i}: {e}"));
        assert!(!spec.world.tools.is_empty());
        if i == 1 {
            let mut w = World::new(&spec, 0);
            succeeds(
                &mut w,
                "transfer_money",
                json!({"from_account_id": "A1", "to_account_id": "A2", "amount": 30}),
            );
            assert_eq!(w.record("accounts", "A1").unwrap()["balance"], 70);
            assert_eq!(w.record("accounts", "A2").unwrap()["balance"], 35);
            let much = call(
                &mut w,
                "transfer_money",
                json!({"from_account_id": "A1", "to_account_id": "A2", "amount": 300}),
            );
            assert_eq!(much["error"]["kind"], "refused", "{much}");
        }
    }
}

#[test]
fn a_closed_record_is_read_but_not_changed() {
    let locator = json!({"type": "object", "properties": {
        "record_locator": {"type": "string"}, "last_name": {"type": "string"}},
        "required": ["record_locator", "last_name"]});
    let spec = Spec::from_value(&json!({
        "name": "bookings",
        "system_prompt": "You help travellers with their bookings.",
        "tools": [
            {"name": "retrieve_booking", "description": "Retrieve a booking.", "inputSchema": locator},
            {"name": "cancel_booking", "description": "Cancel a booking.", "inputSchema": locator},
        ],
        "fixtures": {"bookings": [
            {"record_locator": "PLNVUC", "last_name": "Tanaka", "status": "cancelled"},
            {"record_locator": "FJDKEL", "last_name": "Haddad", "status": "ticketed"},
        ]},
        "world": {
            "retrieve_booking": {"ids": {"record_locator": "booking"},
                                 "requires": ["booking.last_name == last_name"]},
            "cancel_booking": {"ids": {"record_locator": "booking"},
                               "requires": ["booking.last_name == last_name"]},
        },
    }))
    .unwrap();
    let mut w = World::new(&spec, 0);
    // Read: the declared rule holds, the status does not bar a read.
    let read = succeeds(
        &mut w,
        "retrieve_booking",
        json!({"record_locator": "PLNVUC", "last_name": "Tanaka"}),
    );
    assert_eq!(read["result"]["status"], "cancelled", "{read}");
    // Its declared rule still refuses.
    refuses(
        &mut w,
        "retrieve_booking",
        json!({"record_locator": "PLNVUC", "last_name": "Haddad"}),
        &["last_name"],
    );
    // A change of the closed record is refused for its status.
    refuses(
        &mut w,
        "cancel_booking",
        json!({"record_locator": "PLNVUC", "last_name": "Tanaka"}),
        &["cancelled"],
    );
}

#[test]
fn a_verification_checks_what_it_is_given_against_the_record_and_its_account() {
    let spec = Spec::from_value(&json!({
        "name": "lines",
        "system_prompt": "You help mobile customers.",
        "tools": [
            {"name": "verify_account_holder", "description": "Verify the holder of a mobile number.",
             "inputSchema": {"type": "object", "properties": {
                 "msisdn": {"type": "string"}, "date_of_birth": {"type": "string"}},
                 "required": ["msisdn", "date_of_birth"]}},
            {"name": "get_line", "description": "Get a line.",
             "inputSchema": {"type": "object", "properties": {
                 "msisdn": {"type": "string"}, "date_of_birth": {"type": "string"}},
                 "required": ["msisdn"]}},
        ],
        "fixtures": {
            "accounts": [
                {"account_number": "BW-1", "holder_name": "Priya Shah", "date_of_birth": "1986-04-12"},
                {"account_number": "BW-2", "holder_name": "Tom Gallagher", "date_of_birth": "1979-11-30"},
            ],
            "lines": [
                {"msisdn": "07700 900123", "account_number": "BW-1", "status": "active"},
                {"msisdn": "07700 900789", "account_number": "BW-2", "status": "active"},
            ],
        },
        "world": {
            "verify_account_holder": {"ids": {"msisdn": "line"}, "returns": "line"},
            "get_line": {"ids": {"msisdn": "line"}, "returns": "line"},
        },
    }))
    .unwrap();
    let mut w = World::new(&spec, 0);
    // The holder's date of birth, on the line's account: verified.
    succeeds(
        &mut w,
        "verify_account_holder",
        json!({"msisdn": "07700 900123", "date_of_birth": "1986-04-12"}),
    );
    // Another's: refused, saying what did not match.
    refuses(
        &mut w,
        "verify_account_holder",
        json!({"msisdn": "07700 900123", "date_of_birth": "1979-11-30"}),
        &["date of birth", "does not match", "07700 900123"],
    );
    // A read that is no verification answers whatever else it is given.
    succeeds(
        &mut w,
        "get_line",
        json!({"msisdn": "07700 900123", "date_of_birth": "1979-11-30"}),
    );
}
