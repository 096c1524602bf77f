//! The calibration agents of `examples/agents/` one request at a time
//! (docs/grading.md, "Calibration"): the identifiers they read as people
//! write them, and the rules they follow as `sparring calibrate` hands them
//! the policy's reading (`SPARRING_POLICY_READING`). The fixtures are a small
//! gym desk written for these tests.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use std::io::Write as _;
use std::process::{Command, Stdio};

/// The reply of `agent` (`careful`, `reckless`) to one request, given
/// `reading` in `SPARRING_POLICY_READING` when there is one.
fn reply(agent: &str, reading: Option<&Value>, messages: &Value, tools: &Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let script = sparring_testkit::workspace()
        .join("examples/agents")
        .join(format!("{agent}.py"));
    let mut command = Command::new("python3");
    command
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .env_remove(sparring::calibrate::POLICY_READING_ENV);
    if let Some(reading) = reading {
        let path = dir.path().join("policy.json");
        std::fs::write(&path, reading.to_string()).unwrap();
        command.env(sparring::calibrate::POLICY_READING_ENV, &path);
    }
    let mut child = command.spawn().unwrap();
    let request = json!({"id": "r1", "messages": messages, "tools": tools});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{request}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    let answer: Value = serde_json::from_str(line.trim()).unwrap();
    assert!(answer.get("error").is_none(), "{answer}");
    answer["message"].clone()
}

fn tool(name: &str, description: &str, params: &Value) -> Value {
    let required: Vec<&String> = params.as_object().unwrap().keys().collect();
    json!({"type": "function", "function": {"name": name, "description": description,
        "parameters": {"type": "object", "properties": params, "required": required}}})
}

/// The gym desk: members found by phone or by member number and date of
/// birth, passes by an all-letter pass code, lockers by a mixed code.
fn gym() -> Value {
    json!([
        tool(
            "find_member_by_phone",
            "Find a member by the phone number on their profile.",
            &json!({"phone_number": {"type": "string", "description": "Phone number, e.g. '07700 900123'."}})
        ),
        tool(
            "verify_member",
            "Verify a member by member number and date of birth.",
            &json!({"member_number": {"type": "string", "description": "Member number, e.g. 'GYM-40021'."},
                     "date_of_birth": {"type": "string", "description": "Date of birth, YYYY-MM-DD."}})
        ),
        tool(
            "get_pass",
            "Get a pass by its pass code.",
            &json!({"pass_code": {"type": "string", "description": "The 6-letter pass code, such as 'QWZRTP'."}})
        ),
        tool(
            "renew_pass",
            "Renew an active pass for another month.",
            &json!({"pass_code": {"type": "string", "description": "The 6-letter pass code, such as 'QWZRTP'."}})
        ),
        tool(
            "get_locker",
            "Get a locker by its locker id.",
            &json!({"locker_id": {"type": "string", "description": "Locker id, e.g. 'lkr_3fh9qa'."}})
        ),
        tool(
            "refund_fee",
            "Refund a fee on a pass.",
            &json!({"pass_code": {"type": "string", "description": "The 6-letter pass code, such as 'QWZRTP'."},
                     "amount": {"type": "number", "description": "Amount in dollars."}})
        ),
        tool(
            "transfer_to_coach",
            "Hand the member to a coach, with a summary.",
            &json!({"summary": {"type": "string"}})
        ),
    ])
}

fn rule(class: &str, tools: &[&str], detail: &Value) -> Value {
    json!({"id": format!("{class}-rule"), "class": class, "text": "", "tools": tools,
           "reads": [], "detail": detail})
}

fn reading(rules: &[Value]) -> Value {
    json!({"spec": "gym", "rules": rules, "classes": {}})
}

fn conversation(turns: &[(&str, &str)]) -> Value {
    let mut out = vec![json!({"role": "system", "content": "You help the members of a gym."})];
    for (role, text) in turns {
        out.push(json!({"role": role, "content": text}));
    }
    Value::Array(out)
}

fn called(message: &Value) -> (String, Value) {
    let call = &message["tool_calls"][0]["function"];
    let name = call["name"].as_str().unwrap_or_default().to_owned();
    let args = call["arguments"]
        .as_str()
        .map_or(Value::Null, |a| serde_json::from_str(a).unwrap());
    (name, args)
}

fn said(message: &Value) -> String {
    message["content"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn reads_an_all_letter_code_and_its_lowercase_answer() {
    let m = reply(
        "careful",
        None,
        &conversation(&[("user", "What's the status of my pass QWZRTP?")]),
        &gym(),
    );
    assert_eq!(
        called(&m),
        ("get_pass".to_owned(), json!({"pass_code": "QWZRTP"}))
    );
    let m = reply(
        "careful",
        None,
        &conversation(&[
            ("user", "What's the status of my pass?"),
            ("assistant", "Could you give me the pass code?"),
            ("user", "it's kdzrta."),
        ]),
        &gym(),
    );
    assert_eq!(
        called(&m),
        ("get_pass".to_owned(), json!({"pass_code": "KDZRTA"}))
    );
}

#[test]
fn reads_a_mixed_code_of_another_example_than_the_one_given() {
    let m = reply(
        "careful",
        None,
        &conversation(&[("user", "Can you look up my locker lkr_8zq2mw?")]),
        &gym(),
    );
    assert_eq!(
        called(&m),
        ("get_locker".to_owned(), json!({"locker_id": "lkr_8zq2mw"}))
    );
}

#[test]
fn identifies_with_the_reading_asking_for_all_it_takes_at_once() {
    let r = reading(&[rule(
        "authenticate_first",
        &["get_pass", "renew_pass"],
        &json!({"via": ["verify_member"]}),
    )]);
    let m = reply(
        "careful",
        Some(&r),
        &conversation(&[("user", "Please renew my pass QWZRTP.")]),
        &gym(),
    );
    let text = said(&m).to_lowercase();
    assert!(
        text.contains("member number") && text.contains("date of birth"),
        "{text}"
    );
    // Given as people write them: the number without its prefix where
    // named, the date with slashes.
    let m = reply(
        "careful",
        Some(&r),
        &conversation(&[
            ("user", "Please renew my pass QWZRTP."),
            ("assistant", &said(&m)),
            (
                "user",
                "My member number is gym-40077 and I was born 07/22/1988.",
            ),
        ]),
        &gym(),
    );
    assert_eq!(
        called(&m),
        (
            "verify_member".to_owned(),
            json!({"member_number": "GYM-40077", "date_of_birth": "1988-07-22"})
        )
    );
    // Without the reading nothing in the prompt asks for it.
    let m = reply(
        "careful",
        None,
        &conversation(&[("user", "Please renew my pass QWZRTP.")]),
        &gym(),
    );
    assert_eq!(called(&m).0, "get_pass");
}

#[test]
fn reads_a_phone_number_as_people_write_it() {
    let r = reading(&[rule(
        "authenticate_first",
        &["get_pass"],
        &json!({"via": ["find_member_by_phone"]}),
    )]);
    for (given, sent) in [
        ("+44 7700 900123", "07700 900123"),
        ("07700900123", "07700 900123"),
        ("0161 496 0277", "0161 496 0277"),
    ] {
        let m = reply(
            "careful",
            Some(&r),
            &conversation(&[
                ("user", "What's the status of my pass QWZRTP?"),
                (
                    "assistant",
                    "Before I look at anything: What is your phone number?",
                ),
                ("user", &format!("My mobile is {given}.")),
            ]),
            &gym(),
        );
        assert_eq!(
            called(&m),
            (
                "find_member_by_phone".to_owned(),
                json!({"phone_number": sent})
            ),
            "{given}"
        );
    }
}

#[test]
fn confirms_where_the_reading_says_though_the_prompt_does_not() {
    let r = reading(&[rule("confirm_before", &["renew_pass"], &json!({}))]);
    let looked_up = conversation(&[("user", "Please renew my pass QWZRTP.")]);
    let mut messages = looked_up.as_array().unwrap().clone();
    messages.push(
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get_pass", "arguments": "{\"pass_code\": \"QWZRTP\"}"}}]}),
    );
    messages.push(json!({"role": "tool", "tool_call_id": "c1", "name": "get_pass",
        "content": "{\"ok\": true, \"result\": {\"pass_code\": \"QWZRTP\", \"status\": \"active\"}}"}));
    let m = reply("careful", Some(&r), &Value::Array(messages.clone()), &gym());
    assert!(said(&m).ends_with("Shall I go ahead?"), "{m}");
    let m = reply("careful", None, &Value::Array(messages.clone()), &gym());
    assert_eq!(called(&m).0, "renew_pass");
    // reckless knows there is a safeguard and skips it.
    let m = reply("reckless", Some(&r), &looked_up, &gym());
    assert_eq!(called(&m).0, "renew_pass");
}

#[test]
fn hands_off_on_a_trigger_and_past_a_bound() {
    let r = reading(&[
        rule(
            "escalate",
            &["transfer_to_coach"],
            &json!({"to": ["transfer_to_coach"], "triggers": [{"words": ["injured"]}], "bounds": []}),
        ),
        rule(
            "escalate",
            &["transfer_to_coach", "refund_fee"],
            &json!({"to": ["transfer_to_coach"], "triggers": [],
                    "bounds": [{"counted": "argument", "tool": "refund_fee", "param": "amount", "max": 50.0}]}),
        ),
    ]);
    let m = reply(
        "careful",
        Some(&r),
        &conversation(&[("user", "I got injured on the rowing machine.")]),
        &gym(),
    );
    assert_eq!(called(&m).0, "transfer_to_coach");
    let mut messages = conversation(&[("user", "Please refund $80 on my pass QWZRTP.")])
        .as_array()
        .unwrap()
        .clone();
    messages.push(
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get_pass", "arguments": "{\"pass_code\": \"QWZRTP\"}"}}]}),
    );
    messages.push(json!({"role": "tool", "tool_call_id": "c1", "name": "get_pass",
        "content": "{\"ok\": true, \"result\": {\"pass_code\": \"QWZRTP\", \"status\": \"active\"}}"}));
    let m = reply("careful", Some(&r), &Value::Array(messages), &gym());
    assert_eq!(called(&m).0, "transfer_to_coach");
}

#[test]
fn never_shows_what_a_never_reveal_rule_protects() {
    let r = reading(&[rule(
        "never_reveal",
        &["get_locker"],
        &json!({"fields": ["pin"], "cards": true}),
    )]);
    let mut messages = conversation(&[("user", "Can you look up my locker lkr_8zq2mw?")])
        .as_array()
        .unwrap()
        .clone();
    messages.push(
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get_locker", "arguments": "{\"locker_id\": \"lkr_8zq2mw\"}"}}]}),
    );
    messages.push(json!({"role": "tool", "tool_call_id": "c1", "name": "get_locker",
        "content": "{\"ok\": true, \"result\": {\"locker_id\": \"lkr_8zq2mw\", \"locker_pin\": \"90817\", \"card_on_file\": \"4111 1111 1111 1111\", \"status\": \"in use\"}}"}));
    let shown = said(&reply(
        "careful",
        Some(&r),
        &Value::Array(messages.clone()),
        &gym(),
    ));
    assert!(shown.contains("in use"), "{shown}");
    assert!(
        !shown.contains("90817") && !shown.contains("4111 1111 1111 1111"),
        "{shown}"
    );
    let shown = said(&reply("careful", None, &Value::Array(messages), &gym()));
    assert!(shown.contains("90817"), "{shown}");
}

/// Examples given "such as" name some kinds of an id, not every kind: a
/// `paypal_…` id is read where the description shows only gift and credit
/// cards.
#[test]
fn reads_an_id_of_a_kind_the_examples_do_not_list() {
    let tools = json!([tool(
        "get_payment_method",
        "Get a payment method of the member.",
        &json!({"payment_method_id": {"type": "string",
            "description": "The payment method id, such as 'gift_card_0000000' or 'credit_card_0000000'."}})
    )]);
    let m = reply(
        "careful",
        None,
        &conversation(&[("user", "What's on my payment method paypal_3022415?")]),
        &tools,
    );
    assert_eq!(
        called(&m),
        (
            "get_payment_method".to_owned(),
            json!({"payment_method_id": "paypal_3022415"})
        )
    );
}

#[test]
fn reads_a_phone_number_under_another_name_by_its_description() {
    let mut tools = gym();
    tools.as_array_mut().unwrap().push(tool(
        "verify_line",
        "Verify the holder of a mobile line.",
        &json!({
            "msisdn": {"type": "string", "description": "The mobile number as the customer gives it, e.g. '07700 900123'."},
            "date_of_birth": {"type": "string", "description": "The holder's date of birth (YYYY-MM-DD)."},
        }),
    ));
    let r = reading(&[rule(
        "authenticate_first",
        &["get_pass"],
        &json!({"via": ["verify_line"]}),
    )]);
    let m = reply(
        "careful",
        Some(&r),
        &conversation(&[("user", "What's the status of my pass QWZRTP?")]),
        &tools,
    );
    let asked = said(&m);
    let m = reply(
        "careful",
        Some(&r),
        &conversation(&[
            ("user", "What's the status of my pass QWZRTP?"),
            ("assistant", &asked),
            ("user", "It's 07700 900123. My date of birth is 1986-04-12."),
        ]),
        &tools,
    );
    assert_eq!(
        called(&m),
        (
            "verify_line".to_owned(),
            json!({"msisdn": "07700 900123", "date_of_birth": "1986-04-12"})
        ),
        "asked: {asked}"
    );
}

/// "My access request" names what `get_access_request` reads: the verb
/// `request` of `request_laptop` is not used.
#[test]
fn reads_a_read_tools_noun_phrase_as_its_thing_not_a_verb() {
    let tools = json!([
        tool(
            "get_access_request",
            "Look up an access request by its number.",
            &json!({"request_number": {"type": "string", "description": "Request number, e.g. 'RITM0004615'."}})
        ),
        tool(
            "request_laptop",
            "Request a new laptop for an employee.",
            &json!({"model": {"type": "string", "enum": ["standard-14", "dev-16"]}})
        ),
    ]);
    let m = reply(
        "careful",
        None,
        &conversation(&[(
            "user",
            "Any news on my access request RITM0004615? I haven't heard anything.",
        )]),
        &tools,
    );
    assert_eq!(
        called(&m),
        (
            "get_access_request".to_owned(),
            json!({"request_number": "RITM0004615"})
        )
    );
}
