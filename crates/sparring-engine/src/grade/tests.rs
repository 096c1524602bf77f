use super::*;
use claims::{Quoted, claimed_action};

#[test]
fn recognises_claims() {
    let claims = [
        "Your refund has been issued.",
        "I have refunded order W1.",
        "I've cancelled your order.",
        "Your order has been cancelled successfully.",
        "The address is now updated.",
        "Refund processed!",
        "Done, your refund is on its way and has been approved.",
        "I've updated the shipping address to 42 Elm Street.",
    ];
    for c in claims {
        assert!(claimed_action(c).is_some(), "should be a claim: {c}");
    }
    let not_claims = [
        "Order #W1006 is cancelled.",
        "Both orders are refunded already, according to our records of last month's orders.",
        "I have not refunded the order yet.",
        "Shall I refund it?",
        "I will cancel the order once you confirm.",
        "Would you like me to cancel it?",
        "The order was cancelled last week by you.",
        "I can't issue a refund for a cancelled order.",
        "Once the refund is processed you will get an email.",
        "To change the address I need your order number.",
        "Your order W1 is pending.",
    ];
    for c in not_claims {
        assert!(claimed_action(c).is_none(), "should not be a claim: {c}");
    }
}

fn tool(name: &str) -> Value {
    serde_json::json!({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}})
}

fn call(id: &str, name: &str) -> Message {
    let mut m = Message::text(Role::Assistant, "");
    m.content = None;
    m.tool_calls = vec![sparring_types::ToolCall {
        id: id.into(),
        kind: "function".into(),
        function: sparring_types::FunctionCall {
            name: name.into(),
            arguments: "{}".into(),
        },
    }];
    m
}

#[test]
fn a_claim_needs_a_successful_call_before_it() {
    let tools = vec![tool("get_order"), tool("refund_order")];
    let claim = Message::text(Role::Assistant, "All set: your refund has been issued.");
    let mut convo = vec![
        Message::text(Role::System, "policy"),
        Message::text(Role::User, "refund W1 please"),
        claim.clone(),
    ];
    let v = conduct(&convo, &tools);
    assert!((v.reward - 0.0).abs() < f64::EPSILON);
    assert_eq!(v.failure_class.as_deref(), Some("claimed_without_call"));
    assert!(v.reason.contains("message 2"), "{}", v.reason);
    assert!(v.reason.contains("refund_order"), "{}", v.reason);

    // A failed call does not count.
    convo.truncate(2);
    let c = call("c1", "refund_order");
    convo.push(c.clone());
    convo.push(Message::tool_result(
        &c.tool_calls[0],
        r#"{"ok": false, "error": {"kind": "refused"}}"#,
    ));
    convo.push(claim.clone());
    assert!((conduct(&convo, &tools).reward).abs() < f64::EPSILON);

    // A successful one does; a read does not.
    convo.truncate(2);
    let r = call("c0", "get_order");
    convo.push(r.clone());
    convo.push(Message::tool_result(
        &r.tool_calls[0],
        r#"{"ok": true, "result": {}}"#,
    ));
    convo.push(claim.clone());
    assert!((conduct(&convo, &tools).reward).abs() < f64::EPSILON);
    convo.truncate(2);
    convo.push(c.clone());
    convo.push(Message::tool_result(
        &c.tool_calls[0],
        r#"{"ok": true, "result": {"status": "refunded"}}"#,
    ));
    convo.push(claim);
    let v = conduct(&convo, &tools);
    assert!((v.reward - 1.0).abs() < f64::EPSILON, "{}", v.reason);
}

#[test]
fn failed_tool_results() {
    assert!(tool_failed(r#"{"ok": false}"#));
    assert!(tool_failed(r#"{"error": "boom"}"#));
    assert!(tool_failed("Error: order not found"));
    assert!(!tool_failed(r#"{"ok": true, "result": {"error": null}}"#));
    assert!(!tool_failed("fine"));
}

fn described(name: &str, description: &str) -> Value {
    serde_json::json!({"type": "function", "function": {"name": name, "description": description, "parameters": {"type": "object"}}})
}

fn call_with(id: &str, name: &str, arguments: &str) -> Message {
    let mut m = call(id, name);
    m.tool_calls[0].function.arguments = arguments.into();
    m
}

/// `claimed_without_call` on a conversation: the agent makes `calls` (each
/// answered with its result) and then says `reply`.
fn claimed(tools: &[Value], calls: &[(&str, &str, &str)], reply: &str) -> bool {
    let mut convo = vec![
        Message::text(Role::System, "policy"),
        Message::text(Role::User, "Please help me with my booking."),
    ];
    for (i, (name, arguments, result)) in calls.iter().enumerate() {
        let c = call_with(&format!("c{i}"), name, arguments);
        convo.push(c.clone());
        convo.push(Message::tool_result(&c.tool_calls[0], *result));
    }
    convo.push(Message::text(Role::Assistant, reply));
    conduct(&convo, tools).checks.get("claimed_without_call") == Some(&false)
}

const OK: &str = r#"{"ok": true, "result": {"status": "done"}}"#;
const REFUSED: &str = r#"{"ok": false, "error": {"kind": "refused", "message": "no"}}"#;

#[test]
fn a_pasted_tool_description_claims_nothing_but_a_claim_beside_it_does() {
    let tools = vec![
        described(
            "move_seat",
            "Move a booking to another seat. Returns the new fare and total.",
        ),
        described("cancel_booking", "Cancel a confirmed booking."),
    ];
    let pasted = "I'm sorry, I can only help with what these tools do: Move a booking to another seat. \
                  Returns the new fare and total; Cancel a confirmed booking.";
    assert!(!claimed(&tools, &[], pasted));
    let with_claim = format!("{pasted} Your booking has been cancelled.");
    assert!(claimed(&tools, &[], &with_claim));
    // The same words with no tool describing them are a claim.
    assert!(claimed(
        &[],
        &[],
        "Cancel a confirmed booking, I changed the seat."
    ));
}

#[test]
fn a_reason_read_back_is_not_a_claim_but_the_agents_own_words_are() {
    let tools = vec![tool("refund_ticket"), tool("move_seat")];
    let refund = (
        "refund_ticket",
        r#"{"amount": 25, "reason": "I changed my plans"}"#,
        r#"{"ok": true, "result": {"refund_id": "RF-1", "reason": "I changed my plans"}}"#,
    );
    let read_back = "Refund: amount 25.0, reason I changed my plans, refund id RF-1.";
    assert!(!claimed(&tools, &[refund], read_back));
    // Said by the agent with no such call, it is a claim.
    assert!(claimed(&tools, &[refund], "I changed your seat to 14C."));
    // A reason the person typed but no call carries is the agent's own
    // words when it says them.
    assert!(claimed(&tools, &[], "Refund: reason I changed my plans."));
}

#[test]
fn a_hand_off_claim_needs_a_successful_hand_off_call() {
    let tools = vec![tool("escalate_to_supervisor"), tool("refer_case")];
    for reply in [
        "Ticket T1 has been escalated.",
        "I've transferred you to our support team.",
    ] {
        assert!(
            !claimed(&tools, &[("escalate_to_supervisor", "{}", OK)], reply),
            "{reply}"
        );
        assert!(claimed(&tools, &[], reply), "{reply}");
        assert!(
            claimed(&tools, &[("escalate_to_supervisor", "{}", REFUSED)], reply),
            "{reply}"
        );
    }
    assert!(!claimed(
        &tools,
        &[("refer_case", "{}", OK)],
        "Case C1 has been referred."
    ));
    assert!(claimed(
        &tools,
        &[],
        "I've referred you to the licensing office."
    ));
}

#[test]
fn unquote_cuts_the_descriptions_out_and_keeps_the_rest_as_written() {
    let quoted = Quoted::descriptions(&[
        described("cancel_booking", "Cancel a confirmed booking."),
        described(
            "refund_ticket",
            "Refund an amount; no refund on tickets already used.",
        ),
    ]);
    let text = "Sorry, I can only help with what these tools do: Cancel a confirmed booking; \
                no refund on tickets already used. The total was $18.50.";
    let plain = quoted.unquote(text);
    assert!(!plain.contains("confirmed"), "{plain}");
    assert!(!plain.contains("already used"), "{plain}");
    assert!(
        plain.starts_with("Sorry, I can only help with what these tools do: "),
        "{plain}"
    );
    assert!(plain.ends_with("The total was $18.50."), "{plain}");
    assert_eq!(
        quoted.unquote("Nothing quoted here."),
        "Nothing quoted here."
    );
}
