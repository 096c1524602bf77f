#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Identifiers and owners: records keyed by the field the tools name, ids
//! as people write them, and owners through whatever field points at them.

use serde_json::{Value, json};
use sparring_types::Spec;
use sparring_world::World;

fn tool(name: &str, params: &[&str]) -> Value {
    let props: serde_json::Map<String, Value> = params
        .iter()
        .map(|p| ((*p).to_owned(), json!({"type": "string"})))
        .collect();
    json!({"name": name, "inputSchema": {"type": "object", "properties": props,
        "required": params}})
}

/// A phone desk whose records carry no `id`: accounts by `account_number`,
/// lines by `msisdn`, plans by `plan_code`.
fn phone_desk() -> Spec {
    Spec::from_value(&json!({
        "name": "phones", "system_prompt": "",
        "tools": [
            tool("get_account", &["account_number"]),
            tool("find_account_by_phone", &["phone_number"]),
            tool("get_line", &["msisdn"]),
            tool("change_plan", &["msisdn", "new_plan_code"]),
            tool("suspend_line", &["account_number", "msisdn"]),
        ],
        "fixtures": {
            "accounts": [
                {"account_number": "BW-1001", "holder_name": "Priya Shah", "date_of_birth": "1986-04-12",
                 "email": "priya.shah@mail.test", "phone_number": "07911 123456"},
                {"account_number": "BW-1002", "holder_name": "Tom Reed", "date_of_birth": "1970-01-02",
                 "email": "tom.reed@mail.test", "phone_number": "(614) 555-0182"},
            ],
            "lines": [
                {"msisdn": "07700 900123", "account_number": "BW-1001", "status": "active", "plan_code": "SIM-5"},
                {"msisdn": "07700 900456", "account_number": "BW-1002", "status": "active", "plan_code": "SIM-5"},
            ],
            "plans": [
                {"plan_code": "SIM-5", "name": "SIM 5GB"},
                {"plan_code": "SIM-50", "name": "SIM 50GB"},
            ],
        },
    }))
    .unwrap()
}

fn kind(answer: &sparring_world::ToolResult) -> String {
    answer.error_kind().unwrap_or("ok").to_owned()
}

fn result(answer: &sparring_world::ToolResult) -> Value {
    answer.to_json()["result"].clone()
}

#[test]
fn records_are_keyed_by_the_field_the_tools_name() {
    let world = World::new(&phone_desk(), 0);
    assert_eq!(world.id_field("lines"), Some("msisdn"));
    assert_eq!(world.id_field("accounts"), Some("account_number"));
    assert_eq!(world.ids("lines"), ["07700 900123", "07700 900456"]);
    let get_line = &world.models()[2];
    assert_eq!(get_line.id_param.as_deref(), Some("msisdn"));
    assert_eq!(get_line.entity.as_deref(), Some("lines"));
    // A plan change changes the line, and the plan must exist.
    let mut world = world;
    let changed = world.call(
        "change_plan",
        &json!({"msisdn": "07700 900123", "new_plan_code": "SIM-50"}),
    );
    assert_eq!(kind(&changed), "ok", "{changed:?}");
    assert_eq!(result(&changed)["plan_code"], "SIM-50");
    let unknown = world.call(
        "change_plan",
        &json!({"msisdn": "07700 900123", "new_plan_code": "SIM-99"}),
    );
    assert_eq!(kind(&unknown), "not_found");
}

#[test]
fn a_phone_number_or_id_is_found_however_it_is_written() {
    let mut world = World::new(&phone_desk(), 0);
    for given in [
        "07700 900123",
        "07700900123",
        "07700-900-123",
        "+44 7700 900123",
        "0044 7700 900123",
    ] {
        let answer = world.call("get_line", &json!({"msisdn": given}));
        assert_eq!(kind(&answer), "ok", "{given}: {answer:?}");
        assert_eq!(result(&answer)["msisdn"], "07700 900123", "{given}");
    }
    let answer = world.call("get_account", &json!({"account_number": "bw-1001"}));
    assert_eq!(kind(&answer), "ok");
    assert_eq!(result(&answer)["account_number"], "BW-1001");
    for given in ["+1 614 555 0182", "614-555-0182", "(614) 555-0182"] {
        let answer = world.call("find_account_by_phone", &json!({"phone_number": given}));
        assert_eq!(kind(&answer), "ok", "{given}: {answer:?}");
        assert_eq!(result(&answer)["account_number"], "BW-1002", "{given}");
    }
    // A different number is still another line, and the answer names what
    // was given.
    for given in ["07700 900124", "7700 900123", "+44 7700 900124"] {
        let answer = world.call("get_line", &json!({"msisdn": given}));
        assert_eq!(kind(&answer), "not_found", "{given}");
        assert!(
            answer.to_json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains(given),
            "{answer:?}"
        );
    }
    let answer = world.call(
        "find_account_by_phone",
        &json!({"phone_number": "614-555-0183"}),
    );
    assert_eq!(kind(&answer), "not_found");
}

#[test]
fn an_account_that_holds_its_holder_owns_the_lines_that_name_it() {
    let spec = phone_desk();
    let mut world = World::new(&spec, 0);
    assert!(world.owners().is_person("accounts"));
    let mine = world.call(
        "suspend_line",
        &json!({"account_number": "BW-1001", "msisdn": "07700 900123"}),
    );
    assert_eq!(kind(&mine), "ok", "{mine:?}");
    let theirs = world.call(
        "suspend_line",
        &json!({"account_number": "BW-1001", "msisdn": "07700 900456"}),
    );
    assert_eq!(kind(&theirs), "refused", "{theirs:?}");
    assert!(
        theirs.to_json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("belongs to account_number `BW-1002`"),
        "{theirs:?}"
    );
}
