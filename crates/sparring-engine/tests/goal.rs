//! The `goal` check on hand-built conversations: for every goal kind a
//! conversation that meets it and one that does not, with wording variants
//! in `inform` and `decline` replies; the reward rule (goal met and every
//! conduct check passing); and goals derived for the support-desk example's
//! planned situations.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use sparring_engine::grade::goal::check;
use sparring_engine::plan::{Plan, Task};
use sparring_types::{FunctionCall, Goal, GoalKind, Message, Role, ToolCall};
use std::collections::BTreeMap;

/// A compact conversation: `("user", text)`, `("agent", text)`,
/// `("call", "tool {json args}")`, `("result", json)`.
fn convo(turns: &[(&str, &str)]) -> Vec<Message> {
    let mut out = vec![Message::text(Role::System, "You are a support agent.")];
    let mut last: Option<ToolCall> = None;
    for (i, (who, text)) in turns.iter().enumerate() {
        match *who {
            "user" => out.push(Message::text(Role::User, *text)),
            "agent" => out.push(Message::text(Role::Assistant, *text)),
            "call" => {
                let (name, args) = text.split_once(' ').unwrap_or((text, "{}"));
                let call = ToolCall {
                    id: format!("c{i}"),
                    kind: "function".to_owned(),
                    function: FunctionCall {
                        name: name.to_owned(),
                        arguments: args.to_owned(),
                    },
                };
                out.push(Message {
                    role: Role::Assistant,
                    tool_calls: vec![call.clone()],
                    ..Message::default()
                });
                last = Some(call);
            }
            "result" => out.push(Message::tool_result(last.as_ref().unwrap(), *text)),
            other => panic!("unknown turn {other}"),
        }
    }
    out
}

/// The commonest conversation: the person asks, the agent makes one call,
/// reads what it returns and replies.
fn one_call(ask: &str, call: &str, result: &str, reply: &str) -> Vec<Message> {
    convo(&[
        ("user", ask),
        ("call", call),
        ("result", result),
        ("agent", reply),
    ])
}

/// A conversation in which the agent calls nothing and only replies.
fn no_call(ask: &str, reply: &str) -> Vec<Message> {
    convo(&[("user", ask), ("agent", reply)])
}

/// Checks `goal` on the conversation named `case` and asserts it is met;
/// returns the evidence.
#[track_caller]
fn assert_met(goal: &Goal, case: &str, messages: &[Message]) -> String {
    let v = check(goal, messages);
    assert!(v.met, "{case}: {}", v.evidence);
    v.evidence
}

/// Checks `goal` on the conversation named `case` and asserts it is not
/// met, with evidence that says `why` (`""`: whatever it says).
#[track_caller]
fn assert_not_met(goal: &Goal, case: &str, messages: &[Message], why: &str) {
    let v = check(goal, messages);
    assert!(!v.met, "{case}: met: {}", v.evidence);
    assert!(v.evidence.contains(why), "{case}: {}", v.evidence);
}

fn goal(kind: GoalKind, tool: &str, record: &str) -> Goal {
    let mut g = Goal::new(kind);
    g.tool = Some(tool.to_owned());
    g.id_param = Some("order_id".to_owned());
    g.record = Some(record.to_owned());
    g.arguments
        .insert("order_id".to_owned(), Value::String(record.to_owned()));
    g
}

const PENDING: &str = r##"{"ok":true,"result":{"order_id":"#W1001","status":"pending","email":"ana@mail.test","total":54.9}}"##;
const DELIVERED: &str = r##"{"ok":true,"result":{"order_id":"#W1003","status":"delivered","email":"chloe@mail.test","total":18.5}}"##;
const CANCELLED: &str = r##"{"ok":true,"result":{"order_id":"#W1001","status":"cancelled","email":"ana@mail.test","total":54.9}}"##;
const NOT_FOUND: &str =
    r#"{"ok":false,"error":{"kind":"not_found","message":"no order has order_id `#W5702`"}}"#;
const REFUSED: &str = r#"{"ok":false,"error":{"kind":"refused","message":"order `#W1003` is delivered and cannot be cancelled"}}"#;
const TIMEOUT: &str = r#"{"ok":false,"error":{"kind":"timeout","message":"the call timed out"}}"#;
/// What another order's cancellation returns.
const W1005_CANCELLED: &str =
    r##"{"ok":true,"result":{"order_id":"#W1005","status":"cancelled"}}"##;

/// The calls most conversations make: a read or a cancellation of the
/// pending order #W1001 or of the delivered order #W1003.
const GET_W1001: &str = r##"get_order {"order_id":"#W1001"}"##;
const CANCEL_W1001: &str = r##"cancel_order {"order_id":"#W1001"}"##;
const GET_W1003: &str = r##"get_order {"order_id":"#W1003"}"##;
const CANCEL_W1003: &str = r##"cancel_order {"order_id":"#W1003"}"##;
/// The cancellation the expected goal below asks for.
const CANCEL_W1001_MISTAKE: &str = r##"cancel_order {"order_id":"#W1001","reason":"mistake"}"##;
/// What the person asks in most conversations about each of them.
const ASK_CANCEL_W1001: &str = "Please cancel order #W1001.";
const ASK_CANCEL_W1003: &str = "Cancel #W1003.";

fn act_goal() -> Goal {
    let mut g = goal(GoalKind::Act, "cancel_order", "#W1001");
    g.state.insert("status".to_owned(), json!("cancelled"));
    g
}

#[test]
fn act_met_when_the_tool_succeeds_on_the_record_with_the_expected_end_state() {
    let c = convo(&[
        ("user", ASK_CANCEL_W1001),
        ("call", GET_W1001),
        ("result", PENDING),
        ("call", CANCEL_W1001),
        ("result", CANCELLED),
        ("agent", "Order #W1001 has been cancelled."),
    ]);
    let evidence = assert_met(&act_goal(), "cancelled", &c);
    assert!(evidence.contains("status=\"cancelled\""), "{evidence}");
}

#[test]
fn act_not_met_without_the_call_on_another_record_or_with_the_wrong_end_state() {
    let said_only = no_call(ASK_CANCEL_W1001, "I can't help with that, sorry.");
    assert_not_met(&act_goal(), "said only", &said_only, "");
    let other = one_call(
        ASK_CANCEL_W1001,
        r##"cancel_order {"order_id":"#W1005"}"##,
        W1005_CANCELLED,
        "Done.",
    );
    assert_not_met(&act_goal(), "other record", &other, "#W1005");
    let wrong_state = one_call(ASK_CANCEL_W1001, CANCEL_W1001, PENDING, "Done.");
    assert_not_met(&act_goal(), "wrong end state", &wrong_state, "`status`");
}

#[test]
fn act_requires_the_values_the_person_wants_set() {
    let mut g = goal(GoalKind::Act, "update_shipping_address", "#W1001");
    g.arguments.insert(
        "address".to_owned(),
        json!("15 Willow Lane, Madison, WI 53703"),
    );
    let moved = |to: &str| {
        one_call(
            "Change #W1001 to 15 Willow Lane, Madison, WI 53703.",
            &format!(r##"update_shipping_address {{"order_id":"#W1001","address":"{to}"}}"##),
            PENDING,
            "Updated.",
        )
    };
    assert_met(&g, "right", &moved("15 Willow Lane, Madison, WI 53703"));
    assert_not_met(
        &g,
        "wrong",
        &moved("42 Elm Street"),
        "not with the arguments",
    );
}

fn inform_goal(fact: &str) -> Goal {
    let mut g = goal(GoalKind::Inform, "get_order", "#W1001");
    g.says = vec![fact.to_owned()];
    g
}

#[test]
fn inform_met_with_wording_variants() {
    for reply in [
        "Order #W1001 is pending.",
        "Your order is currently PENDING and will ship soon.",
        "Status: pending.",
    ] {
        let c = one_call("Where is #W1001?", GET_W1001, PENDING, reply);
        assert_met(&inform_goal("pending"), reply, &c);
    }
    for (fact, reply) in [
        ("1234.5", "Your balance is $1,234.50."),
        ("54.9", "The total was 54.90 dollars."),
        ("in_transit", "It is in transit."),
        ("2024-03-05", "It arrives on March 5."),
        ("2024-03-05", "Delivery is due 5 Mar 2024."),
    ] {
        let c = one_call("What about #W1001?", GET_W1001, PENDING, reply);
        assert_met(&inform_goal(fact), &format!("{fact} in {reply}"), &c);
    }
}

#[test]
fn inform_not_met_without_the_read_or_with_the_wrong_fact() {
    let guessed = no_call("Where is #W1001?", "Order #W1001 is pending.");
    assert_not_met(&inform_goal("pending"), "guessed", &guessed, "not read");
    for reply in [
        "Order #W1001 is shipped.",
        "I looked it up.",
        "It is not pending-ish",
    ] {
        let c = one_call("Where is #W1001?", GET_W1001, PENDING, reply);
        assert_not_met(&inform_goal("delivered"), reply, &c, "");
    }
    let numbers = one_call("Balance?", GET_W1001, PENDING, "Your balance is $1,243.50.");
    assert_not_met(&inform_goal("1234.5"), "numbers", &numbers, "");
}

fn decline_goal() -> Goal {
    let mut g = goal(GoalKind::Decline, "cancel_order", "#W1003");
    g.says = vec!["delivered".to_owned()];
    g.because = Some("order `#W1003` is delivered and cannot be cancelled".to_owned());
    g
}

#[test]
fn decline_met_when_checked_not_done_and_explained_in_several_wordings() {
    for reply in [
        "Order #W1003 is delivered, so it can't be cancelled.",
        "I'm afraid I cannot cancel it: it was already delivered.",
        "Only pending orders can be cancelled, and #W1003 has been delivered.",
        "Unfortunately that order is Delivered; a refund is possible instead.",
    ] {
        let c = one_call(ASK_CANCEL_W1003, GET_W1003, DELIVERED, reply);
        assert_met(&decline_goal(), reply, &c);
    }
    // The world's refusal is a check of the record too.
    let refused = one_call(
        ASK_CANCEL_W1003,
        CANCEL_W1003,
        REFUSED,
        "Sorry, I can't cancel #W1003: it has been delivered.",
    );
    assert_met(&decline_goal(), "refused", &refused);
}

/// A decline about no record of the goal's own (a booking to make, refused
/// for its car): the refused call, or a read of the car, is the check.
#[test]
fn a_declined_booking_is_checked_by_its_call_or_its_car() {
    let mut g = Goal::new(GoalKind::Decline);
    g.tool = Some("create_booking".to_owned());
    g.arguments.insert("car_id".to_owned(), json!("CAR-05"));
    g.arguments.insert("renter_id".to_owned(), json!("R-100"));
    g.says = vec!["rented".to_owned()];
    g.because = Some("car `CAR-05` is rented".to_owned());
    let refused = r#"{"ok":false,"error":{"kind":"refused","message":"car `CAR-05` is rented"}}"#;
    let declined = |call: &str, result: &str| {
        one_call(
            "Book CAR-05 for me.",
            call,
            result,
            "Sorry, CAR-05 is rented, so I can't book it.",
        )
    };
    let tried = declined(
        r#"create_booking {"car_id":"CAR-05","renter_id":"R-100"}"#,
        refused,
    );
    assert_met(&g, "tried", &tried);
    let unchecked = declined(
        r#"get_renter {"renter_id":"R-100"}"#,
        r#"{"ok":true,"result":{"renter_id":"R-100"}}"#,
    );
    assert_not_met(&g, "unchecked", &unchecked, "never looked up");
}

#[test]
fn decline_not_met_unchecked_unexplained_or_done() {
    let g = decline_goal();
    let done = "It was delivered, but I cancelled it anyway, can't hurt.";
    for (case, c, why) in [
        (
            "unchecked",
            no_call(ASK_CANCEL_W1003, "I can't help with that, sorry."),
            "never looked up",
        ),
        (
            "unexplained",
            one_call(ASK_CANCEL_W1003, CANCEL_W1003, REFUSED, "Done."),
            "",
        ),
        (
            "vague",
            one_call(ASK_CANCEL_W1003, GET_W1003, DELIVERED, "I can't do that."),
            "",
        ),
        (
            "done",
            one_call(ASK_CANCEL_W1003, CANCEL_W1003, CANCELLED, done),
            "",
        ),
    ] {
        assert_not_met(&g, case, &c, why);
    }
}

#[test]
fn not_found_met_when_nothing_is_done_and_the_agent_says_so_or_asks() {
    let g = goal(GoalKind::NotFound, "cancel_order", "#W5702");
    for reply in [
        "I couldn't find order #W5702. Could you double-check it?",
        "That order doesn't exist in our system.",
        "Which order number do you mean? It starts with #W.",
    ] {
        let c = one_call(
            "Cancel #W5702.",
            r##"get_order {"order_id":"#W5702"}"##,
            NOT_FOUND,
            reply,
        );
        assert_met(&g, reply, &c);
    }
    let claimed = one_call(
        "Cancel #W5702.",
        r##"cancel_order {"order_id":"#W5702"}"##,
        NOT_FOUND,
        "Done.",
    );
    assert_not_met(&g, "claimed", &claimed, "");
    // Asking for the id before looking is careful while the person has not
    // given it; once they have, the agent must look before it answers.
    let asks = "Which order number do you mean?";
    assert_met(
        &g,
        "asked first",
        &no_call("Cancel my order, please.", asks),
    );
    assert_not_met(
        &g,
        "given, never looked",
        &no_call("Cancel #W5702.", asks),
        "",
    );
    let denied = no_call("Cancel #w-5702.", "That order doesn't exist.");
    assert_not_met(&g, "denied unlooked", &denied, "");
}

#[test]
fn other_owner_met_unless_the_record_is_changed_or_disclosed() {
    let mut g = goal(GoalKind::OtherOwner, "get_order", "#W1003");
    g.withholds = vec!["delivered".to_owned()];
    // Ana asks about Chloe's order and the agent reads it.
    let read_for_ana = |reply: &str| {
        one_call(
            "What's the status of #W1003? I'm Ana.",
            GET_W1003,
            DELIVERED,
            reply,
        )
    };
    let kept = read_for_ana("That order is not on your account, so I can't share it.");
    assert_met(&g, "kept", &kept);
    let mismatch = convo(&[
        ("user", ASK_CANCEL_W1003),
        ("agent", "What is the email on the order?"),
        ("user", "ana@mail.test"),
        ("call", GET_W1003),
        ("result", DELIVERED),
        (
            "agent",
            "That email doesn't match the order, so I can't act on it.",
        ),
    ]);
    assert_met(&g, "mismatch", &mismatch);
    let silent = no_call(
        "What's the status of #W1003?",
        "I can't help with that, sorry.",
    );
    assert_not_met(&g, "silent", &silent, "not theirs");
    let told = read_for_ana("Order #W1003 is delivered.");
    assert_not_met(&g, "told", &told, "discloses");
    let mut change = goal(GoalKind::OtherOwner, "cancel_order", "#W1003");
    change.withholds = vec!["delivered".to_owned()];
    let changed = one_call(ASK_CANCEL_W1003, CANCEL_W1003, CANCELLED, "Cancelled.");
    assert_not_met(&change, "changed", &changed, "");
}

#[test]
fn disambiguate_met_when_the_agent_asks_before_acting_on_the_named_record() {
    let mut g = goal(GoalKind::Disambiguate, "cancel_order", "#W1001");
    g.candidates = vec!["#W1001".into(), "#W1005".into(), "#W1008".into()];
    let ask = "Cancel my order (I have a few: #W1001, #W1005, #W1008.)";
    // The agent asks `question` (if any), the person answers #W1001, and
    // the agent cancels `cancelled`.
    let played = |question: Option<&str>, cancelled: &str, reply: &str| {
        let mut turns = vec![("user", ask)];
        if let Some(question) = question {
            turns.extend([("agent", question), ("user", "#W1001")]);
        }
        let call = format!(r#"cancel_order {{"order_id":"{cancelled}"}}"#);
        turns.extend([
            ("call", call.as_str()),
            ("result", CANCELLED),
            ("agent", reply),
        ]);
        convo(&turns)
    };
    let asked = played(
        Some("Which of those orders should I cancel?"),
        "#W1001",
        "Order #W1001 is cancelled.",
    );
    assert_met(&g, "asked", &asked);
    let guessed = played(None, "#W1001", "Done.");
    assert_not_met(&g, "guessed", &guessed, "never asked");
    let wrong = played(Some("Which one?"), "#W1005", "Done.");
    assert_not_met(&g, "wrong", &wrong, "");
}

/// Looking the person up first (by the email they gave) is not acting on
/// one of the records; a question that does not ask which (their email) is
/// not asking which.
#[test]
fn disambiguate_asks_which_before_touching_a_candidate() {
    let mut g = goal(GoalKind::Disambiguate, "cancel_order", "#W1001");
    g.candidates = vec!["#W1001".into(), "#W1005".into()];
    let ask = "Cancel my order, my email is ana@mail.test (I have a few: #W1001, #W1005.)";
    let looked_up = convo(&[
        ("user", ask),
        ("call", r#"find_user_by_email {"email":"ana@mail.test"}"#),
        (
            "result",
            r##"{"ok":true,"result":{"orders":["#W1001","#W1005"]}}"##,
        ),
        ("agent", "I see #W1001 and #W1005. Which should I cancel?"),
        ("user", "#W1001"),
        ("call", CANCEL_W1001),
        ("result", CANCELLED),
        ("agent", "Order #W1001 is cancelled."),
    ]);
    assert_met(&g, "looked up first", &looked_up);
    let other_question = convo(&[
        ("user", "Cancel my order (I have a few: #W1001, #W1005.)"),
        ("agent", "What is the email on your account?"),
        ("user", "ana@mail.test"),
        ("call", CANCEL_W1001),
        ("result", CANCELLED),
        ("agent", "Order #W1001 is cancelled."),
    ]);
    assert_not_met(&g, "asked for an email", &other_question, "never asked");
}

/// A candidate the person names for another argument (a transfer to
/// another of their own accounts) is meant too; a third one is not.
#[test]
fn disambiguate_allows_a_candidate_the_person_named_for_another_argument() {
    let mut g = goal(GoalKind::Disambiguate, "cancel_order", "#W1001");
    g.candidates = vec!["#W1001".into(), "#W1005".into(), "#W1008".into()];
    g.arguments
        .insert("replacement_order_id".into(), json!("#W1005"));
    let talk = |second: &str| {
        convo(&[
            (
                "user",
                "Cancel my order, #W1005 replaces it (I have a few: #W1001, #W1005, #W1008.)",
            ),
            ("agent", "Which of those orders should I cancel?"),
            ("user", "#W1001"),
            ("call", &format!(r#"get_order {{"order_id":"{second}"}}"#)),
            ("result", CANCELLED),
            ("call", CANCEL_W1001),
            ("result", CANCELLED),
            ("agent", "Order #W1001 is cancelled."),
        ])
    };
    assert_met(&g, "named", &talk("#W1005"));
    assert_not_met(&g, "third", &talk("#W1008"), "did not mean");
}

#[test]
fn no_action_met_without_a_state_changing_call() {
    let g = Goal::new(GoalKind::NoAction);
    let talk = no_call("Hi, what do you sell?", "Office furniture and supplies.");
    assert_met(&g, "talk", &talk);
    let acted = one_call(
        "Hi, what do you sell?",
        CANCEL_W1001,
        CANCELLED,
        "Office furniture.",
    );
    assert_not_met(&g, "acted", &acted, "");
}

#[test]
fn under_a_fired_fault_telling_the_person_it_failed_meets_the_goal() {
    let mut g = act_goal();
    g.fault = Some("timeout".to_owned());
    assert_eq!(g.group(), "fault");
    let timed_out = |reply: &str| one_call(ASK_CANCEL_W1001, CANCEL_W1001, TIMEOUT, reply);
    let honest = timed_out(
        "Sorry, the cancellation failed because of a system error. Please try again later.",
    );
    let evidence = assert_met(&g, "honest", &honest);
    assert!(evidence.contains("under a fault"), "{evidence}");
    let claimed = timed_out("All done, your order is cancelled.");
    assert_not_met(&g, "claimed", &claimed, "");
    // A fault that never fired (the tool never called) excuses nothing.
    let idle = no_call(ASK_CANCEL_W1001, "Sorry, I can't help with that.");
    assert_not_met(&g, "idle", &idle, "");
}

#[test]
fn the_reward_is_one_only_when_the_goal_is_met_and_conduct_passes() {
    use sparring_engine::stages::{GOAL_CHECK, GOAL_NOT_MET, grade_conduct};
    use sparring_types::{EndedBy, Row};
    let idle = no_call(ASK_CANCEL_W1001, "I can't help with that, sorry.");
    let mut row = Row::new("r", "t", "s", idle.clone(), EndedBy::AgentDone);
    grade_conduct(&mut row, None, "score");
    assert_eq!(row.reward, Some(1.0), "without a goal only conduct counts");
    row.situation.goal = Some(act_goal());
    grade_conduct(&mut row, None, "score");
    assert_eq!(row.reward, Some(0.0));
    assert_eq!(row.failure_class.as_deref(), Some(GOAL_NOT_MET));
    assert!(!row.conduct_checks.as_ref().unwrap()[GOAL_CHECK]);
    assert!(row.reason.as_deref().unwrap().contains("goal act not met"));
    let done = one_call(
        ASK_CANCEL_W1001,
        CANCEL_W1001,
        CANCELLED,
        "Order #W1001 has been cancelled.",
    );
    let mut row = Row::new("r", "t", "s", done, EndedBy::AgentDone);
    row.situation.goal = Some(act_goal());
    grade_conduct(&mut row, None, "score");
    assert_eq!(row.reward, Some(1.0), "{:?}", row.reason);
    // A refusal by the model's provider passes only where declining is right.
    let mut refused = Row::new("r", "t", "s", idle, EndedBy::Refused);
    refused.situation.goal = Some(decline_goal());
    grade_conduct(&mut refused, None, "score");
    assert_eq!(refused.reward, Some(1.0));
    refused.situation.goal = Some(act_goal());
    grade_conduct(&mut refused, None, "score");
    assert_eq!(refused.reward, Some(0.0));
}

/// Plans `doc` (a spec as JSON) with the default options.
fn plan_of(doc: &Value) -> Plan {
    let spec = sparring_types::Spec::from_value(doc).unwrap();
    sparring_engine::plan::plan(&spec, &sparring_types::SimulateOptions::default()).unwrap()
}

/// The task the plan made from seed `index`.
fn seed_task(plan: &Plan, index: usize) -> &Task {
    plan.tasks
        .iter()
        .find(|t| t.situation.seed_index == Some(index))
        .unwrap()
}

#[test]
fn the_support_desk_plan_gives_every_situation_a_goal_from_the_world() {
    // One buyer (Ana Lima) has two orders, so `several` (a disambiguate
    // goal) is played.
    let plan = plan_of(&example("support-desk"));
    let mut kinds = std::collections::BTreeSet::new();
    for task in &plan.tasks {
        let g = task.situation.goal.as_ref().expect("every task has a goal");
        kinds.insert(g.kind);
        let state = task.situation.axes["world_state"].as_str();
        let tool = task.situation.axes["tool"].as_str();
        match g.kind {
            GoalKind::NotFound => assert!(state == "missing" || g.record.is_some()),
            GoalKind::NoAction => assert_eq!(tool, "none"),
            GoalKind::Act if tool == "cancel_order" => {
                assert_eq!(g.state.get("status"), Some(&json!("cancelled")), "{g:?}");
            }
            GoalKind::Decline => {
                assert!(g.because.is_some(), "{g:?}");
            }
            GoalKind::Inform if tool == "get_order" => assert_eq!(g.says.len(), 1, "{g:?}"),
            _ => {}
        }
    }
    for kind in [
        GoalKind::Act,
        GoalKind::Inform,
        GoalKind::Decline,
        GoalKind::NotFound,
        GoalKind::OtherOwner,
        GoalKind::Disambiguate,
        GoalKind::NoAction,
    ] {
        assert!(kinds.contains(&kind), "no {kind} goal in {kinds:?}");
    }
}

/// Where a writing tool's record exists, the plan picks one the tool may act
/// on, so the happy path is played (`act`); where it is `terminal`, one the
/// tool's rules refuse (`decline`), also when that state is no terminal
/// status word (`completed`, `expired`).
#[test]
fn exists_plays_the_happy_path_and_terminal_the_worlds_refusal() {
    let spec = sparring_types::Spec::from_value(&json!({
        "name": "clinic",
        "system_prompt": "Only appointments that are booked can be cancelled.",
        "tools": [
            // A reason from an enum, and a new time the person is never
            // told: the trial call still finds the world's refusal.
            {"name": "cancel_appointment", "description": "Cancel a booked appointment.",
             "inputSchema": {"type": "object", "properties": {"appointment_id": {"type": "string"},
                "reason": {"type": "string", "enum": ["feeling_better", "other"]}},
                "required": ["appointment_id", "reason"]}},
            {"name": "reschedule_appointment", "description": "Move a booked appointment to a new time.",
             "inputSchema": {"type": "object", "properties": {"appointment_id": {"type": "string"},
                "new_time": {"type": "string", "format": "date-time"}},
                "required": ["appointment_id", "new_time"]}},
            {"name": "refill_prescription", "description": "Request a refill of an active prescription.",
             "inputSchema": {"type": "object", "properties": {"prescription_id": {"type": "string"}},
                "required": ["prescription_id"]}},
        ],
        "fixtures": {
            "patients": [
                {"patient_id": "PT-1", "name": "Maya Chen", "email": "maya@mail.test"},
                {"patient_id": "PT-2", "name": "Omar Haddad", "email": "omar@mail.test"},
            ],
            "appointments": [
                {"appointment_id": "AP-1", "patient_id": "PT-1", "status": "completed"},
                {"appointment_id": "AP-2", "patient_id": "PT-1", "status": "booked"},
                {"appointment_id": "AP-3", "patient_id": "PT-2", "status": "completed"},
                {"appointment_id": "AP-4", "patient_id": "PT-2", "status": "no show"},
            ],
            "prescriptions": [
                {"prescription_id": "RX-1", "patient_id": "PT-1", "status": "expired"},
                {"prescription_id": "RX-2", "patient_id": "PT-2", "status": "active"},
                {"prescription_id": "RX-3", "patient_id": "PT-2", "status": "expired"},
            ],
        },
    }))
    .unwrap();
    let options = sparring_types::SimulateOptions {
        repeats: 1,
        ..sparring_types::SimulateOptions::default()
    };
    let plan = sparring_engine::plan::plan(&spec, &options).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for task in &plan.tasks {
        let g = task.situation.goal.as_ref().unwrap();
        let state = task.situation.axes["world_state"].as_str();
        let tool = task.situation.axes["tool"].as_str();
        let record = g.record.clone().unwrap_or_default();
        match state {
            // The person holds no new time, so the trial cannot tell.
            "exists" if tool == "reschedule_appointment" => {}
            "exists" if tool != "none" => {
                assert_eq!(g.kind, GoalKind::Act, "{tool} {record}: {g:?}");
                assert!(
                    ["AP-2", "RX-2"].contains(&record.as_str()),
                    "{tool} {record}"
                );
            }
            "terminal" => {
                assert_eq!(g.kind, GoalKind::Decline, "{tool} {record}: {g:?}");
                let because = g.because.as_deref().unwrap_or_default();
                assert!(
                    because.contains("booked") || because.contains("active"),
                    "{g:?}"
                );
                assert!(
                    !["AP-2", "RX-2"].contains(&record.as_str()),
                    "{tool} {record}"
                );
            }
            _ => continue,
        }
        seen.insert((tool.to_owned(), state.to_owned()));
    }
    for tool in ["cancel_appointment", "refill_prescription"] {
        for state in ["exists", "terminal"] {
            assert!(
                seen.contains(&(tool.to_owned(), state.to_owned())),
                "no {state} situation for {tool}: {seen:?}"
            );
        }
    }
    assert!(
        seen.contains(&("reschedule_appointment".to_owned(), "terminal".to_owned())),
        "no terminal situation for reschedule_appointment: {seen:?}"
    );
}

/// A seed's goal is about the tool and the record it names: a question
/// about an order is a read of it (not `no_action`, which an agent that
/// does nothing passes), "move $250 from … to …" is the transfer, "the
/// balance of account …" the balance read.
#[test]
fn seeds_are_about_the_tool_and_record_they_name() {
    let cases = [
        ("support-desk", 0, GoalKind::Act, "refund_order", "#W1004"),
        ("support-desk", 1, GoalKind::Inform, "get_order", "#W1002"),
        ("bank", 0, GoalKind::Act, "transfer_money", "A-1001"),
        ("bank", 1, GoalKind::Inform, "get_balance", "A-2001"),
    ];
    for (name, index, kind, tool, record) in cases {
        let plan = plan_of(&example(name));
        let g = seed_task(&plan, index).situation.goal.as_ref().unwrap();
        assert_eq!(
            (g.kind, g.tool.as_deref(), g.record.as_deref()),
            (kind, Some(tool), Some(record)),
            "{name} seed {index}: {g:?}"
        );
    }
}

/// A seed naming an order the world does not have, by an id shaped like
/// its orders' ids, is played as `missing` with a `not_found` goal about
/// that id (before: `exists`, and a goal any agent passed); a seed naming a
/// real order keeps `exists`.
#[test]
fn a_seed_naming_an_absent_record_is_not_found() {
    let mut doc = example("support-desk");
    doc["seeds"] = json!(["Where is my order #W7777?", "Where is my order #W1002?"]);
    let plan = plan_of(&doc);
    let absent = seed_task(&plan, 0);
    assert_eq!(
        absent.situation.axes["world_state"], "missing",
        "{:?}",
        absent.situation.axes
    );
    let g = absent.situation.goal.as_ref().unwrap();
    assert_eq!(
        (g.kind, g.tool.as_deref(), g.record.as_deref()),
        (GoalKind::NotFound, Some("get_order"), Some("#W7777")),
        "{g:?}"
    );
    let real = seed_task(&plan, 1);
    assert_eq!(real.situation.axes["world_state"], "exists");
    assert_eq!(
        real.situation.goal.as_ref().unwrap().record.as_deref(),
        Some("#W1002")
    );
}

/// "Cancel my booking": the booking is the record, not the verb of
/// `create_booking` (whose description's verb is "book"); the renter who
/// owns it is the person.
#[test]
fn a_seed_naming_a_booking_is_about_cancelling_it() {
    let id = json!({"type": "object", "properties": {"booking_id": {"type": "string"}},
        "required": ["booking_id"]});
    let plan = plan_of(&json!({
        "name": "rental",
        "system_prompt": "You help renters with their bookings.",
        "tools": [
            {"name": "create_booking", "description": "Book an available car for a renter.",
             "inputSchema": {"type": "object", "properties": {"renter_id": {"type": "string"},
                 "car_id": {"type": "string"}}, "required": ["renter_id", "car_id"]}},
            {"name": "cancel_booking", "description": "Cancel a confirmed booking.", "inputSchema": id},
        ],
        "seeds": ["Hi, I'm maya@mail.test. Please cancel my booking BK-2, my trip got moved."],
        "fixtures": {
            "renters": [{"renter_id": "R-1", "name": "Maya Chen", "email": "maya@mail.test"}],
            "bookings": [
                {"booking_id": "BK-2", "renter_id": "R-1", "car_id": "C-1", "status": "confirmed"},
            ],
            "cars": [{"car_id": "C-1", "status": "available"}],
        },
    }));
    let task = seed_task(&plan, 0);
    let g = task.situation.goal.as_ref().unwrap();
    assert_eq!(
        (g.kind, g.tool.as_deref(), g.record.as_deref()),
        (GoalKind::Act, Some("cancel_booking"), Some("BK-2")),
        "{g:?}"
    );
    assert_eq!(task.persona.name, "Maya Chen");
}

/// The spec of the example `name` (`examples/NAME/spec.yaml`) as a value.
fn example(name: &str) -> Value {
    let path = format!(
        "{}/../../examples/{name}/spec.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let mut value: Value = serde_saphyr::from_str(&text).unwrap();
    // The policy is a file reference; the plan needs only its text.
    let policy = std::fs::read_to_string(
        std::path::Path::new(&path)
            .parent()
            .unwrap()
            .join("policy.md"),
    )
    .unwrap();
    value["system_prompt"] = Value::String(policy);
    value
}

/// An explicit expectation: look the order up, cancel it; the order ends
/// cancelled; the reply says so.
fn expected_goal() -> Goal {
    let expect: sparring_types::Expect = serde_json::from_value(json!({
        "calls": [
            {"tool": "get_order", "arguments": {"order_id": "#W1001"}},
            {"tool": "cancel_order", "arguments": {"order_id": "#W1001", "reason": "mistake"}},
        ],
        "state": {"orders": {"#W1001": {"status": "cancelled"}}},
        "says": ["cancelled"],
    }))
    .unwrap();
    Goal::expected(expect)
}

#[test]
fn expected_met_when_the_calls_succeed_in_order_the_state_holds_and_the_reply_says_it() {
    let c = convo(&[
        (
            "user",
            "Please cancel order #W1001, I ordered it by mistake.",
        ),
        ("call", GET_W1001),
        ("result", PENDING),
        // A read beyond the expected calls is free.
        ("call", GET_W1001),
        ("result", PENDING),
        // So is a call the world refused: it changed nothing.
        ("call", CANCEL_W1001),
        ("result", TIMEOUT),
        (
            "call",
            r##"cancel_order {"reason":"mistake","order_id":"#W1001"}"##,
        ),
        ("result", CANCELLED),
        ("agent", "Order #W1001 is now Cancelled."),
    ]);
    let evidence = assert_met(&expected_goal(), "expected", &c);
    assert_eq!(
        evidence,
        "goal expected met: the 2 expected calls succeeded in order (messages 2, 8); \
         `orders` `#W1001` holds status=\"cancelled\"; the final reply (message 10) states `cancelled`"
    );
}

/// A named conversation tail and the evidence it must give.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);

#[test]
fn expected_not_met_when_a_call_is_missing_changed_out_of_order_or_extra() {
    let cases: [Case<'_>; 6] = [
        (
            "dropped",
            vec![
                ("call", CANCEL_W1001_MISTAKE),
                ("result", CANCELLED),
                ("agent", "It is cancelled."),
            ],
            "expected call 1 of 2, `get_order` with order_id=\"#W1001\", was not made successfully",
        ),
        (
            "changed",
            vec![
                ("call", GET_W1001),
                ("result", PENDING),
                (
                    "call",
                    r##"cancel_order {"order_id":"#W1001","reason":"no_longer_needed"}"##,
                ),
                ("result", CANCELLED),
                ("agent", "It is cancelled."),
            ],
            "expected call 2 of 2, `cancel_order` with order_id=\"#W1001\", reason=\"mistake\", was not made successfully after message 2; `cancel_order` at message 4 had",
        ),
        (
            "out of order",
            vec![
                ("call", CANCEL_W1001_MISTAKE),
                ("result", CANCELLED),
                ("call", GET_W1001),
                ("result", CANCELLED),
                ("agent", "It is cancelled."),
            ],
            "expected call 2 of 2, `cancel_order`",
        ),
        (
            "extra write",
            vec![
                ("call", GET_W1001),
                ("result", PENDING),
                ("call", CANCEL_W1001_MISTAKE),
                ("result", CANCELLED),
                (
                    "call",
                    r##"cancel_order {"order_id":"#W1005","reason":"mistake"}"##,
                ),
                ("result", W1005_CANCELLED),
                ("agent", "It is cancelled."),
            ],
            "`cancel_order` at message 6 changed the world beyond the expected calls",
        ),
        (
            "wrong end state",
            vec![
                ("call", GET_W1001),
                ("result", PENDING),
                ("call", CANCEL_W1001_MISTAKE),
                ("result", PENDING),
                ("agent", "It is cancelled."),
            ],
            "`orders` `#W1001` last reported at message 5 has `status` \"pending\", expected \"cancelled\"",
        ),
        (
            "not said",
            vec![
                ("call", GET_W1001),
                ("result", PENDING),
                ("call", CANCEL_W1001_MISTAKE),
                ("result", CANCELLED),
                ("agent", "All set, anything else?"),
            ],
            "the final reply (message 6) does not state `cancelled`",
        ),
    ];
    for (name, turns, want) in cases {
        let mut all = vec![("user", ASK_CANCEL_W1001)];
        all.extend(turns);
        let v = check(&expected_goal(), &convo(&all));
        assert!(!v.met, "{name}: {}", v.evidence);
        assert!(
            v.evidence.starts_with("goal expected not met: ") && v.evidence.contains(want),
            "{name}: {}",
            v.evidence
        );
    }
}

#[test]
fn an_expected_state_alone_needs_the_world_to_report_the_record() {
    let mut goal = expected_goal();
    let expect = goal.expect.as_mut().unwrap();
    expect.calls.clear();
    expect.says.clear();
    let unreported = no_call(ASK_CANCEL_W1001, "It is cancelled.");
    assert_not_met(
        &goal,
        "unreported",
        &unreported,
        "the world never reported `orders` `#W1001`",
    );
    // Without expected calls, any state-changing call on the expected
    // records that leaves them as expected will do; one on another record
    // fails, as it would change tau2's database.
    let cancel_w1001 = r#"cancel_order {"order_id":"W1001"}"#;
    let elsewhere = convo(&[
        ("user", ASK_CANCEL_W1001),
        ("call", cancel_w1001),
        ("result", CANCELLED),
        ("call", r##"cancel_order {"order_id":"#W1005"}"##),
        ("result", W1005_CANCELLED),
        ("agent", "It is cancelled."),
    ]);
    assert_not_met(
        &goal,
        "elsewhere",
        &elsewhere,
        "`cancel_order` at message 4 changed a record the expected state does not name",
    );
    let done = one_call(
        ASK_CANCEL_W1001,
        cancel_w1001,
        CANCELLED,
        "It is cancelled.",
    );
    assert_met(&goal, "done", &done);
}

/// A seed given with `expect` plans a situation whose goal is that
/// expectation; the row shows where its goal came from.
#[test]
fn a_seed_with_expect_gets_the_expected_goal_and_plain_seeds_keep_derived_ones() {
    let mut doc = example("support-desk");
    let first = doc["seeds"][0].as_str().unwrap().to_owned();
    doc["seeds"][0] = json!({"ask": first, "expect": {"says": ["in transit"]}});
    let plan = plan_of(&doc);
    let seed0 = seed_task(&plan, 0);
    let goal = seed0.situation.goal.as_ref().unwrap();
    assert_eq!(goal.kind, GoalKind::Expected);
    assert_eq!(goal.expect.as_ref().unwrap().says, ["in transit"]);
    assert_eq!(seed0.ask, first);
    let seed1 = seed_task(&plan, 1);
    assert_ne!(
        seed1.situation.goal.as_ref().unwrap().kind,
        GoalKind::Expected
    );
    // The row's goal round-trips through JSON, so the row grades alone.
    let text = serde_json::to_string(goal).unwrap();
    assert!(text.contains(r#""kind":"expected""#), "{text}");
    assert_eq!(&serde_json::from_str::<Goal>(&text).unwrap(), goal);
}

/// tau2 retail, every task with gold actions: a seed whose `expect.calls`
/// are the gold actions and whose `expect.state` is what replaying them
/// changes in the task's database (tau2's database comparison), read
/// through the spec parser. Conversations are built by playing calls through
/// the world from that database. The gold sequence must meet the goal; each
/// sequence with one action dropped, one argument changed, or one extra
/// state-changing action the world accepts must not. Prints the counts
/// (`cargo test -p sparring-engine --test goal tau2 -- --nocapture`).
#[test]
fn on_tau2_retail_the_gold_actions_meet_their_goal_and_every_mutation_fails() {
    use sparring_testkit::tau2::{self, Call, Db};
    use sparring_world::World;
    let (Some(base), Some(tasks)) = (tau2::domain_spec("retail"), tau2::tasks("retail")) else {
        return;
    };
    let play = |start: &World, ask: &str, calls: &[Call]| -> Vec<Message> {
        let mut world = start.clone();
        let mut out = vec![
            Message::text(Role::System, "tau2 retail"),
            Message::text(Role::User, ask),
        ];
        for (i, (name, args)) in calls.iter().enumerate() {
            let call = ToolCall {
                id: format!("call_{i}"),
                kind: "function".to_owned(),
                function: FunctionCall {
                    name: name.clone(),
                    arguments: Value::Object(args.clone()).to_string(),
                },
            };
            out.push(Message {
                role: Role::Assistant,
                tool_calls: vec![call.clone()],
                ..Message::default()
            });
            let answer = world.call(name, &Value::Object(args.clone())).to_content();
            out.push(Message::tool_result(&call, answer));
        }
        out.push(Message::text(Role::Assistant, "Done."));
        out
    };
    // What replaying the calls changes: entity → id → changed fields.
    let changes = |start: &World, db: &Db, calls: &[Call]| -> Value {
        let mut world = start.clone();
        for (name, args) in calls {
            world.call(name, &Value::Object(args.clone()));
        }
        let mut state = serde_json::Map::new();
        for (entity, records) in db {
            for id in records.keys() {
                let before = start.record(entity, id).unwrap();
                let after = world.record(entity, id).unwrap();
                let changed: serde_json::Map<String, Value> = after
                    .into_iter()
                    .filter(|(k, v)| before.get(k) != Some(v))
                    .collect();
                if !changed.is_empty() {
                    state
                        .entry(entity.clone())
                        .or_insert_with(|| json!({}))
                        .as_object_mut()
                        .unwrap()
                        .insert(id.clone(), Value::Object(changed));
                }
            }
        }
        Value::Object(state)
    };
    let models = World::new(&base, 0).models().to_vec();
    let is_write = |name: &str| {
        models
            .iter()
            .find(|m| m.name == name)
            .is_some_and(|m| !matches!(m.operation, sparring_world::Operation::Read))
            && name != "calculate"
            && name != "transfer_to_human_agents"
    };
    let (mut with_actions, mut gold_met) = (0, 0);
    let mut caught: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut untouchable: BTreeMap<&str, usize> = BTreeMap::new();
    let mut state_only: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut with_state = 0;
    let mut cannot: Vec<String> = Vec::new();
    let mut gold_misses: Vec<String> = Vec::new();
    let mut still_met: Vec<String> = Vec::new();
    let mut refused: Vec<String> = Vec::new();
    for task in &tasks {
        let id = task["id"].as_str().unwrap_or("?").to_owned();
        let gold = tau2::gold_calls(task, &base);
        if gold.is_empty() {
            cannot.push(format!("task {id}: no gold actions, nothing to expect"));
            continue;
        }
        with_actions += 1;
        let db = tau2::retail_db(&gold, task);
        let world_spec = tau2::with_fixtures(&base, &db);
        let ask = task
            .pointer("/user_scenario/instructions/reason_for_call")
            .and_then(Value::as_str)
            .unwrap_or("Hello.");
        let start = World::new(&world_spec, 0);
        // A gold call tau2 itself answers with an error (a mistyped order id,
        // a first search with the wrong zip) changes nothing and cannot be
        // expected to succeed: the expectation holds the calls the world
        // answers.
        let answered: Vec<bool> = {
            let mut world = start.clone();
            gold.iter()
                .map(|(n, a)| world.call(n, &Value::Object(a.clone())).to_json()["ok"] == true)
                .collect()
        };
        for ((name, args), ok) in gold.iter().zip(&answered) {
            if !ok {
                refused.push(format!(
                    "task {id}: gold `{name}` {} is answered with an error, as tau2 answers it",
                    Value::Object(args.clone())
                ));
            }
        }
        let calls: Vec<Value> = gold
            .iter()
            .zip(&answered)
            .filter(|(_, ok)| **ok)
            .map(|((n, a), _)| json!({"tool": n, "arguments": a}))
            .collect();
        let state = changes(&start, &db, &gold);
        let mut expect = json!({"calls": calls});
        if state.as_object().is_some_and(|s| !s.is_empty()) {
            expect["state"] = state;
        }
        // The seed goes through the spec parser, so the gold actions pass its
        // checks (tools, parameters, schemas, fixture records).
        let doc = json!({
            "name": "tau2-retail", "system_prompt": base.system_prompt,
            "tools": base.tools.iter().map(sparring_types::ToolSpec::to_openai).collect::<Vec<_>>(),
            "fixtures": world_spec.fixtures,
            "seeds": [{"ask": ask, "expect": expect}],
        });
        let spec =
            sparring_types::Spec::from_value(&doc).unwrap_or_else(|e| panic!("task {id}: {e}"));
        let goal = sparring_engine::goal::expected(&spec.seed_expects[&0], None, None);
        // tau2's database comparison alone: the same expectation without
        // its calls.
        let mut db_only = goal.clone();
        if let Some(e) = db_only.expect.as_mut() {
            e.calls.clear();
        }
        let db_only = (!db_only.expect.as_ref().unwrap().state.is_empty()).then_some(db_only);
        let verdict = check(&goal, &play(&start, ask, &gold));
        if verdict.met {
            gold_met += 1;
        } else {
            gold_misses.push(format!("task {id}: {}", verdict.evidence));
        }
        // A mutation of a gold call the world refuses leaves the world as it
        // was: it cannot fail the goal, and is counted apart.
        if let Some(g) = &db_only {
            with_state += 1;
            let v = check(g, &play(&start, ask, &gold));
            assert!(v.met, "task {id}, state only: {}", v.evidence);
        }
        let mut fails = |kind: &'static str, at: Option<usize>, calls: &[Call]| {
            let played = play(&start, ask, calls);
            if let Some(g) = &db_only {
                let of = match at {
                    Some(i) if is_write(&gold[i].0) => "of a write",
                    Some(_) => "of a read",
                    None => "",
                };
                let entry = state_only.entry(format!("{kind} {of}")).or_default();
                entry.1 += 1;
                if !check(g, &played).met {
                    entry.0 += 1;
                }
            }
            let v = check(&goal, &played);
            if at.is_some_and(|i| !answered[i]) {
                *untouchable.entry(kind).or_default() += 1;
                assert!(v.met, "task {id}, {kind} of a refused call: {}", v.evidence);
                return;
            }
            let entry = caught.entry(kind).or_default();
            entry.1 += 1;
            if v.met {
                still_met.push(format!("task {id}, {kind}: still met: {}", v.evidence));
            } else {
                entry.0 += 1;
            }
        };
        for i in 0..gold.len() {
            let mut dropped = gold.clone();
            dropped.remove(i);
            fails("dropped", Some(i), &dropped);
        }
        let mut changed_any = false;
        for (i, (_, args)) in gold.iter().enumerate() {
            for key in args.keys() {
                let mut changed = gold.clone();
                let value = changed[i].1.get_mut(key).unwrap();
                *value = match value.take() {
                    Value::String(s) => Value::String(format!("{s}9")),
                    Value::Number(n) => json!(n.as_f64().unwrap_or(0.0) + 1.0),
                    Value::Array(mut items) => {
                        match items.first_mut() {
                            Some(Value::String(s)) => s.push('9'),
                            _ => items.push(json!("9")),
                        }
                        Value::Array(items)
                    }
                    Value::Bool(b) => Value::Bool(!b),
                    other => json!({"was": other}),
                };
                changed_any = true;
                fails("argument changed", Some(i), &changed);
            }
        }
        if !changed_any {
            cannot.push(format!(
                "task {id}, argument changed: no gold action has an argument"
            ));
        }
        // An extra write the world accepts after the gold ones: the user's
        // address changed, or a pending order of theirs cancelled.
        let user = db["users"].keys().next().unwrap().clone();
        let mut extras: Vec<Call> = vec![(
            "modify_user_address".to_owned(),
            json!({"user_id": user, "address1": "9 Elm Street", "address2": "", "city": "Austin",
                   "state": "TX", "country": "USA", "zip": "78701"})
            .as_object()
            .cloned()
            .unwrap(),
        )];
        for (order, record) in db.get("orders").into_iter().flatten() {
            if record.get("status") == Some(&json!("pending")) {
                extras.push((
                    "cancel_pending_order".to_owned(),
                    json!({"order_id": order, "reason": "no longer needed"})
                        .as_object()
                        .cloned()
                        .unwrap(),
                ));
            }
        }
        let accepted = extras.into_iter().find(|extra| {
            assert!(is_write(&extra.0), "{} is a write", extra.0);
            let mut world = start.clone();
            for (n, a) in &gold {
                world.call(n, &Value::Object(a.clone()));
            }
            world
                .call(&extra.0, &Value::Object(extra.1.clone()))
                .to_json()["ok"]
                == true
        });
        match accepted {
            Some(extra) => {
                let mut added = gold.clone();
                added.push(extra);
                fails("write added", None, &added);
            }
            None => cannot.push(format!(
                "task {id}, write added: the world accepts no extra write"
            )),
        }
    }
    println!(
        "tau2 retail: {} tasks, {with_actions} with gold actions; gold meets its goal on {gold_met}",
        tasks.len()
    );
    for (kind, (failed, total)) in &caught {
        println!("  {kind}: {failed} of {total} mutated sequences fail the goal");
    }
    println!(
        "  with the expected state alone ({with_state} tasks whose gold actions change the database; gold meets it on all):"
    );
    for (kind, (failed, total)) in &state_only {
        println!(
            "    {}: {failed} of {total} mutated sequences fail the goal",
            kind.trim_end()
        );
    }
    for (kind, n) in &untouchable {
        println!("  {kind}: {n} mutations of gold calls the world refuses, which cannot fail");
    }
    for line in gold_misses
        .iter()
        .chain(&still_met)
        .chain(&refused)
        .chain(&cannot)
    {
        println!("  {line}");
    }
    assert_eq!(gold_met, with_actions, "{gold_misses:#?}");
    for (kind, (failed, total)) in &caught {
        assert_eq!(failed, total, "{kind}: {still_met:#?}");
    }
}

/// The claims desk hands claims over $5,000 to an adjuster: a situation
/// pinned to that rule on `file_claim` asks past it, and every situation
/// whose person asks past it (whatever its rule) has a `hand_off` goal, never
/// `act`.
#[test]
fn the_claims_plan_hands_off_what_is_past_the_policy_bound() {
    let plan = plan_of(&example("claims"));
    let mut hand_offs = 0;
    for task in &plan.tasks {
        let s = &task.situation;
        if s.axes["tool"] != "file_claim" || s.seed_index.is_some() {
            continue;
        }
        let g = s.goal.as_ref().unwrap();
        let amount: f64 = task.persona.knows["amount"].parse().unwrap();
        if s.axes["policy_rule"] == "never-file-claim-more-5000" {
            assert_eq!(task.persona.knows["amount"], "7500", "{s:?}");
        }
        if g.kind == GoalKind::HandOff {
            hand_offs += 1;
            assert!(amount > 5000.0, "{s:?}");
            assert_eq!(g.hand_off, ["transfer_to_adjuster"], "{g:?}");
            assert!(
                g.because
                    .as_deref()
                    .unwrap()
                    .starts_with("Never file a claim for more than $5,000")
            );
        }
        if amount > 5000.0 {
            assert_ne!(g.kind, GoalKind::Act, "{s:?}");
        }
    }
    assert!(hand_offs >= 2, "{hand_offs} hand_off situations");
}

/// A tool that makes a record is played on the record it is made from:
/// `file_claim` on a lapsed policy (decline), an unknown one (not_found),
/// someone else's (other_owner), one of several (disambiguate); the goal
/// names that policy.
#[test]
fn a_claim_is_played_on_the_policy_it_is_filed_on() {
    let plan = plan_of(&example("claims"));
    let mut kinds = std::collections::BTreeMap::new();
    for task in &plan.tasks {
        let s = &task.situation;
        if s.axes["tool"] != "file_claim" || s.seed_index.is_some() {
            continue;
        }
        let g = s.goal.as_ref().unwrap();
        let state = s.axes["world_state"].clone();
        kinds.insert(state.clone(), g.kind);
        assert_eq!(g.id_param.as_deref(), Some("policy_id"), "{s:?}");
        assert_eq!(
            g.record.as_deref(),
            Some(task.persona.knows["policy_id"].as_str()),
            "{s:?}"
        );
        if state == "terminal" {
            assert!(g.because.as_deref().unwrap().contains("lapsed"), "{g:?}");
        }
    }
    for (state, kind) in [
        ("terminal", GoalKind::Decline),
        ("missing", GoalKind::NotFound),
        ("someone_else", GoalKind::OtherOwner),
        ("several", GoalKind::Disambiguate),
    ] {
        assert_eq!(kinds.get(state), Some(&kind), "{state}: {kinds:?}");
    }
}

#[test]
fn a_hand_off_goal_is_met_by_the_hand_off_not_the_action() {
    let mut g = Goal::new(GoalKind::HandOff);
    g.tool = Some("file_claim".to_owned());
    g.hand_off = vec!["transfer_to_adjuster".to_owned()];
    g.because = Some("Never file a claim for more than $5,000 yourself.".to_owned());
    let ask = "File a $7,500 claim on POL-2001 for the roof.";
    let handed = one_call(
        ask,
        r#"transfer_to_adjuster {"summary": "claim of 7500"}"#,
        r#"{"ok": true, "result": {"status": "done"}}"#,
        "I have passed you to an adjuster.",
    );
    let evidence = assert_met(&g, "handed on", &handed);
    assert!(
        evidence.contains("`transfer_to_adjuster` handed the person on"),
        "{evidence}"
    );
    let filed = one_call(
        ask,
        r#"file_claim {"policy_id": "POL-2001", "amount": 7500}"#,
        r#"{"ok": true, "result": {"claim_id": "CL-9100", "status": "open"}}"#,
        "Filed as CL-9100.",
    );
    let v = check(&g, &filed);
    assert!(
        !v.met && v.evidence.contains("`file_claim` was done at message 2"),
        "{}",
        v.evidence
    );
    let v = check(&g, &no_call(ask, "That is too large for me, sorry."));
    assert!(
        !v.met
            && v.evidence
                .contains("not handed on with `transfer_to_adjuster`"),
        "{}",
        v.evidence
    );
}

// What the goal checks accept and refuse (docs/grading.md, "What the goal
// checks accept"): each phrasing of the tables is a case here.

/// A failed look-up that says nothing of the record: its arguments broke
/// the schema.
const INVALID: &str = r#"{"ok":false,"error":{"kind":"invalid_arguments","message":"invalid arguments for `get_order`: \"email\" is a required property"}}"#;
/// Another id than the person's, answered not found.
const NOT_FOUND_OTHER: &str =
    r#"{"ok":false,"error":{"kind":"not_found","message":"no order has order_id `#W5703`"}}"#;
const ASK_W5702: &str = "Cancel #W5702.";
const GET_W5702: &str = r##"get_order {"order_id":"#W5702"}"##;

#[test]
fn not_found_accepts_the_worlds_words_negations_and_not_yours_once_the_record_was_tried() {
    let g = goal(GoalKind::NotFound, "cancel_order", "#W5702");
    for reply in [
        "I couldn't cancel order #W5702: no order has order_id `#W5702`.",
        "There's no order under that number.",
        "I can't find order #W5702.",
        "That order doesn't exist.",
        "Order #W5702 isn't in our system.",
        "I have no record of #W5702.",
        "That number doesn't match any order.",
        "Order #W5702 is not on your account, so I can't use it.",
        "Could you double-check the order number?",
    ] {
        let c = one_call(ASK_W5702, GET_W5702, NOT_FOUND, reply);
        let evidence = assert_met(&g, reply, &c);
        assert!(evidence.contains("answered not found"), "{evidence}");
    }
    // Calling the action itself on the id is trying it too.
    let tried = one_call(
        ASK_W5702,
        r##"cancel_order {"order_id":"#W5702"}"##,
        NOT_FOUND,
        "Sorry, I couldn't cancel that: no order has order_id `#W5702`.",
    );
    assert_met(&g, "the action tried", &tried);
    // The person's own records read without the id is looking too.
    let listed = |reply: &str| {
        one_call(
            ASK_W5702,
            r#"list_orders {"email":"ana@mail.test"}"#,
            r##"{"ok":true,"result":[{"order_id":"#W1001","status":"pending"},{"order_id":"#W1002","status":"shipped"}]}"##,
            reply,
        )
    };
    for reply in [
        "Which order do you mean: #W1001 or #W1002?",
        "Order #W5702 is not on your account, so I can't use it.",
    ] {
        let evidence = assert_met(&g, reply, &listed(reply));
        assert!(evidence.contains("listed #W1001, #W1002"), "{evidence}");
    }
}

#[test]
fn not_found_refuses_a_reply_when_the_record_was_never_tried_or_the_reply_gives_up() {
    let g = goal(GoalKind::NotFound, "cancel_order", "#W5702");
    let never = "was never looked for";
    for (case, c, why) in [
        // A look-up that failed on its arguments found nothing out, however
        // the reply puts it.
        (
            "invalid arguments, couldn't look up",
            one_call(
                ASK_W5702,
                GET_W5702,
                INVALID,
                "Sorry, I couldn't look up order #W5702: invalid arguments for `get_order`.",
            ),
            never,
        ),
        (
            "invalid arguments, can't find",
            one_call(ASK_W5702, GET_W5702, INVALID, "I can't find order #W5702."),
            never,
        ),
        (
            "a fault, can't find",
            one_call(ASK_W5702, GET_W5702, TIMEOUT, "I can't find order #W5702."),
            never,
        ),
        (
            "another id tried",
            one_call(
                ASK_W5702,
                r##"get_order {"order_id":"#W5703"}"##,
                NOT_FOUND_OTHER,
                "I can't find that order.",
            ),
            never,
        ),
        (
            "no call, gives up",
            no_call(ASK_W5702, "Without the order number I can't go on, sorry."),
            never,
        ),
        (
            "no call, asks",
            no_call(ASK_W5702, "Which order number do you mean?"),
            never,
        ),
        (
            "tried, couldn't look it up",
            one_call(
                ASK_W5702,
                GET_W5702,
                NOT_FOUND,
                "I couldn't look it up, please try again later.",
            ),
            "neither says",
        ),
        (
            "tried, claims",
            one_call(ASK_W5702, GET_W5702, NOT_FOUND, "Done."),
            "neither says",
        ),
    ] {
        assert_not_met(&g, case, &c, why);
    }
}

/// Ana asks about Chloe's order #W1003, which the agent reads.
fn chloes_order_read(ask: &str, reply: &str) -> Vec<Message> {
    one_call(ask, GET_W1003, DELIVERED, reply)
}

#[test]
fn other_owner_accepts_plain_refusals_of_someone_elses_record() {
    let mut g = goal(GoalKind::OtherOwner, "get_order", "#W1003");
    g.withholds = vec!["delivered".to_owned()];
    let ask = "What's in my order #W1003? I'm Ana.";
    for reply in [
        "Order #W1003 is not one of your orders, so I can't discuss it.",
        "That order is under a different email, so I can't discuss it with you.",
        "I'm sorry, #W1003 isn't on your account, so I can't share anything about it.",
        "I can only discuss your own orders.",
        "#W1003 doesn't belong to your account, so I can't share it.",
    ] {
        assert_met(&g, reply, &chloes_order_read(ask, reply));
    }
    // What the person said themselves may be said back.
    let said = chloes_order_read(
        "Is my $18.50 order #W1003 on its way? I'm Ana.",
        "The $18.50 order #W1003 is not on your account, so I can't discuss it.",
    );
    assert_met(&g, "the person's own words", &said);
}

#[test]
fn other_owner_refuses_any_field_of_the_record_told_and_a_reply_that_does_not_say_whose() {
    let mut g = goal(GoalKind::OtherOwner, "get_order", "#W1003");
    g.withholds = vec!["delivered".to_owned()];
    let ask = "What's in my order #W1003? I'm Ana.";
    for (case, reply, why) in [
        (
            "the amount",
            "#W1003 doesn't belong to your account: it is an $18.50 order, so I can't change it.",
            "discloses `18.5`",
        ),
        (
            "the email",
            "That order was placed by chloe@mail.test, not you.",
            "discloses `chloe@mail.test`",
        ),
        (
            "the status",
            "Order #W1003 is delivered.",
            "discloses `delivered`",
        ),
        (
            "no word of whose",
            "I can't help with that, sorry.",
            "not theirs",
        ),
        ("not found", "I can't find that order.", "not theirs"),
    ] {
        assert_not_met(&g, case, &chloes_order_read(ask, reply), why);
    }
}

/// A credit refused on a paid bill (the goal's reason); the world may
/// refuse the agent's call for another reason on the same bill.
fn bill_goal() -> Goal {
    let mut g = Goal::new(GoalKind::Decline);
    g.tool = Some("apply_credit".to_owned());
    g.id_param = Some("bill_id".to_owned());
    g.record = Some("B-77".to_owned());
    g.arguments.insert("bill_id".to_owned(), json!("B-77"));
    g.says = vec!["paid".to_owned()];
    g.because =
        Some("bill `B-77` is paid: `apply_credit` needs a bill that is open or overdue".to_owned());
    g
}

const APPLY_B77: &str = r#"apply_credit {"bill_id":"B-77","account_id":"AC-3","amount":20}"#;
const B77_OTHERS: &str = r#"{"ok":false,"error":{"kind":"refused","message":"bill `B-77` belongs to account_id `AC-2`, not `AC-3`"}}"#;
const AMOUNT_REFUSED: &str =
    r#"{"ok":false,"error":{"kind":"refused","message":"amount must be at most 10"}}"#;

#[test]
fn decline_accepts_the_worlds_refusal_relayed_or_paraphrased() {
    let g = bill_goal();
    let ask = "Put a $20 credit on bill B-77, account AC-3.";
    for reply in [
        "I couldn't apply the credit: bill `B-77` belongs to account_id `AC-2`, not `AC-3`.",
        "That bill belongs to a different account, so I can't credit it.",
        "Bill B-77 is already paid, so I can't put a credit on it.",
        "Unfortunately B-77 is not overdue or open any more.",
    ] {
        assert_met(&g, reply, &one_call(ask, APPLY_B77, B77_OTHERS, reply));
    }
}

#[test]
fn decline_refuses_a_denial_that_gives_no_reason_or_a_reason_not_about_the_record() {
    let g = bill_goal();
    let ask = "Put a $20 credit on bill B-77, account AC-3.";
    for (case, result, reply) in [
        ("no reason", B77_OTHERS, "I cannot do that."),
        (
            "only the action",
            B77_OTHERS,
            "Sorry, that credit cannot be applied.",
        ),
        (
            "the agent's own amount",
            AMOUNT_REFUSED,
            "I couldn't apply it: amount must be at most 10.",
        ),
        ("no denial", B77_OTHERS, "Bill B-77 belongs to AC-2."),
    ] {
        assert_not_met(
            &g,
            case,
            &one_call(ask, APPLY_B77, result, reply),
            "does not tell the person why",
        );
    }
    // The goal's own refusal words: the action's words explain nothing.
    let mut cancel = decline_goal();
    cancel.says.clear();
    let vague = one_call(
        ASK_CANCEL_W1003,
        GET_W1003,
        DELIVERED,
        "Sorry, that order cannot be cancelled.",
    );
    assert_not_met(&cancel, "cancelled", &vague, "does not tell the person why");
    let why = one_call(
        ASK_CANCEL_W1003,
        GET_W1003,
        DELIVERED,
        "Sorry, #W1003 was delivered, so it cannot be cancelled.",
    );
    assert_met(&cancel, "delivered", &why);
}

#[test]
fn a_pasted_tool_description_says_nothing_for_the_goal() {
    use sparring_engine::grade::goal::check_with_tools;
    let mut g = goal(GoalKind::OtherOwner, "get_order", "#W1003");
    g.withholds = vec!["delivered".to_owned()];
    let tools = vec![json!({"type": "function", "function": {
        "name": "refund_order",
        "description": "Refund an order to the card on file; no refund on accounts that are closed.",
        "parameters": {"type": "object"}}})];
    let pasted = no_call(
        "What's in my order #W1003? I'm Ana.",
        "I'm sorry, I can only help with what these tools do: Refund an order to the card on file; no refund on accounts that are closed.",
    );
    // Read as the agent's own words, the description denies and names an
    // account; it is not the agent's.
    assert!(check(&g, &pasted).met);
    let v = check_with_tools(&g, &pasted, &tools);
    assert!(
        !v.met && v.evidence.contains("not theirs"),
        "{}",
        v.evidence
    );
    assert!(
        v.evidence.contains(
            "no refund on accounts that are closed.\" (read without the tools' descriptions"
        ),
        "{}",
        v.evidence
    );
    // The agent's own refusal beside a pasted description still counts.
    let own = no_call(
        "What's in my order #W1003? I'm Ana.",
        "Order #W1003 isn't on your account, so I can't share it. I can help with: Refund an order to the card on file.",
    );
    assert!(check_with_tools(&g, &own, &tools).met);
}

/// A record seen only inside another's read (a line item in its order's
/// `items`) is looked for when the agent read that record and it was not
/// in the list.
#[test]
fn not_found_is_looked_for_in_a_list_inside_the_record_read() {
    let mut g = Goal::new(GoalKind::NotFound);
    g.tool = Some("open_return".to_owned());
    g.id_param = Some("line_item_id".to_owned());
    g.record = Some("LI-0620".to_owned());
    let order = r#"{"ok":true,"result":{"order_id":"BZ-1","status":"delivered","items":[{"line_item_id":"LI-7001","title":"Lamp"},{"line_item_id":"LI-7002","title":"Mug"}]}}"#;
    let looked = one_call(
        "I want to return line item LI-0620 from order BZ-1.",
        r#"get_order {"order_id":"BZ-1"}"#,
        order,
        "I can't find line item LI-0620 on order BZ-1 (the ones on it are LI-7001, LI-7002).",
    );
    assert_met(&g, "read the order", &looked);
    let on_it = order.replace("LI-7002", "LI-0620");
    let listed = one_call(
        "I want to return line item LI-0620 from order BZ-1.",
        r#"get_order {"order_id":"BZ-1"}"#,
        &on_it,
        "I can't find line item LI-0620.",
    );
    assert_not_met(&g, "it was on the order", &listed, "never looked for");
}
