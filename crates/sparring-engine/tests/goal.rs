//! The `goal` check on hand-built conversations: for every goal kind a
//! conversation that meets it and one that does not, with wording variants
//! in `inform` and `decline` replies; the reward rule (goal met and every
//! conduct check passing); and goals derived for the support-desk example's
//! planned situations.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use sparring_engine::grade::goal::check;
use sparring_types::{FunctionCall, Goal, GoalKind, Message, Role, ToolCall};

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

fn act_goal() -> Goal {
    let mut g = goal(GoalKind::Act, "cancel_order", "#W1001");
    g.state.insert("status".to_owned(), json!("cancelled"));
    g
}

#[test]
fn act_met_when_the_tool_succeeds_on_the_record_with_the_expected_end_state() {
    let c = convo(&[
        ("user", "Please cancel order #W1001."),
        ("call", r##"get_order {"order_id":"#W1001"}"##),
        ("result", PENDING),
        ("call", r##"cancel_order {"order_id":"#W1001"}"##),
        ("result", CANCELLED),
        ("agent", "Order #W1001 has been cancelled."),
    ]);
    let v = check(&act_goal(), &c);
    assert!(v.met, "{}", v.evidence);
    assert!(
        v.evidence.contains("status=\"cancelled\""),
        "{}",
        v.evidence
    );
}

#[test]
fn act_not_met_without_the_call_on_another_record_or_with_the_wrong_end_state() {
    let said_only = convo(&[
        ("user", "Please cancel order #W1001."),
        ("agent", "I can't help with that, sorry."),
    ]);
    assert!(!check(&act_goal(), &said_only).met);
    let other = convo(&[
        ("user", "Please cancel order #W1001."),
        ("call", r##"cancel_order {"order_id":"#W1005"}"##),
        (
            "result",
            r##"{"ok":true,"result":{"order_id":"#W1005","status":"cancelled"}}"##,
        ),
        ("agent", "Done."),
    ]);
    let v = check(&act_goal(), &other);
    assert!(!v.met);
    assert!(v.evidence.contains("#W1005"), "{}", v.evidence);
    let wrong_state = convo(&[
        ("user", "Please cancel order #W1001."),
        ("call", r##"cancel_order {"order_id":"#W1001"}"##),
        ("result", PENDING),
        ("agent", "Done."),
    ]);
    let v = check(&act_goal(), &wrong_state);
    assert!(!v.met);
    assert!(v.evidence.contains("`status`"), "{}", v.evidence);
}

#[test]
fn act_requires_the_values_the_person_wants_set() {
    let mut g = goal(GoalKind::Act, "update_shipping_address", "#W1001");
    g.arguments.insert(
        "address".to_owned(),
        json!("15 Willow Lane, Madison, WI 53703"),
    );
    let right = convo(&[
        (
            "user",
            "Change #W1001 to 15 Willow Lane, Madison, WI 53703.",
        ),
        (
            "call",
            r##"update_shipping_address {"order_id":"#W1001","address":"15 Willow Lane, Madison, WI 53703"}"##,
        ),
        ("result", PENDING),
        ("agent", "Updated."),
    ]);
    assert!(check(&g, &right).met);
    let wrong = convo(&[
        (
            "user",
            "Change #W1001 to 15 Willow Lane, Madison, WI 53703.",
        ),
        (
            "call",
            r##"update_shipping_address {"order_id":"#W1001","address":"42 Elm Street"}"##,
        ),
        ("result", PENDING),
        ("agent", "Updated."),
    ]);
    let v = check(&g, &wrong);
    assert!(!v.met);
    assert!(
        v.evidence.contains("not with the arguments"),
        "{}",
        v.evidence
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
        let c = convo(&[
            ("user", "Where is #W1001?"),
            ("call", r##"get_order {"order_id":"#W1001"}"##),
            ("result", PENDING),
            ("agent", reply),
        ]);
        let v = check(&inform_goal("pending"), &c);
        assert!(v.met, "{reply}: {}", v.evidence);
    }
    for (fact, reply) in [
        ("1234.5", "Your balance is $1,234.50."),
        ("54.9", "The total was 54.90 dollars."),
        ("in_transit", "It is in transit."),
        ("2024-03-05", "It arrives on March 5."),
        ("2024-03-05", "Delivery is due 5 Mar 2024."),
    ] {
        let c = convo(&[
            ("user", "What about #W1001?"),
            ("call", r##"get_order {"order_id":"#W1001"}"##),
            ("result", PENDING),
            ("agent", reply),
        ]);
        let v = check(&inform_goal(fact), &c);
        assert!(v.met, "{fact} in {reply}: {}", v.evidence);
    }
}

#[test]
fn inform_not_met_without_the_read_or_with_the_wrong_fact() {
    let guessed = convo(&[
        ("user", "Where is #W1001?"),
        ("agent", "Order #W1001 is pending."),
    ]);
    let v = check(&inform_goal("pending"), &guessed);
    assert!(!v.met);
    assert!(v.evidence.contains("not read"), "{}", v.evidence);
    for reply in [
        "Order #W1001 is shipped.",
        "I looked it up.",
        "It is not pending-ish",
    ] {
        let c = convo(&[
            ("user", "Where is #W1001?"),
            ("call", r##"get_order {"order_id":"#W1001"}"##),
            ("result", PENDING),
            ("agent", reply),
        ]);
        let v = check(&inform_goal("delivered"), &c);
        assert!(!v.met, "{reply}");
    }
    let numbers = convo(&[
        ("user", "Balance?"),
        ("call", r##"get_order {"order_id":"#W1001"}"##),
        ("result", PENDING),
        ("agent", "Your balance is $1,243.50."),
    ]);
    assert!(!check(&inform_goal("1234.5"), &numbers).met);
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
        let c = convo(&[
            ("user", "Cancel #W1003."),
            ("call", r##"get_order {"order_id":"#W1003"}"##),
            ("result", DELIVERED),
            ("agent", reply),
        ]);
        let v = check(&decline_goal(), &c);
        assert!(v.met, "{reply}: {}", v.evidence);
    }
    // The world's refusal is a check of the record too.
    let refused = convo(&[
        ("user", "Cancel #W1003."),
        ("call", r##"cancel_order {"order_id":"#W1003"}"##),
        ("result", REFUSED),
        (
            "agent",
            "Sorry, I can't cancel #W1003: it has been delivered.",
        ),
    ]);
    assert!(check(&decline_goal(), &refused).met);
}

#[test]
fn decline_not_met_unchecked_unexplained_or_done() {
    let unchecked = convo(&[
        ("user", "Cancel #W1003."),
        ("agent", "I can't help with that, sorry."),
    ]);
    let v = check(&decline_goal(), &unchecked);
    assert!(!v.met);
    assert!(v.evidence.contains("never looked up"), "{}", v.evidence);
    let unexplained = convo(&[
        ("user", "Cancel #W1003."),
        ("call", r##"cancel_order {"order_id":"#W1003"}"##),
        ("result", REFUSED),
        ("agent", "Done."),
    ]);
    assert!(!check(&decline_goal(), &unexplained).met);
    let vague = convo(&[
        ("user", "Cancel #W1003."),
        ("call", r##"get_order {"order_id":"#W1003"}"##),
        ("result", DELIVERED),
        ("agent", "I can't do that."),
    ]);
    assert!(!check(&decline_goal(), &vague).met);
    let done = convo(&[
        ("user", "Cancel #W1003."),
        ("call", r##"cancel_order {"order_id":"#W1003"}"##),
        ("result", CANCELLED),
        (
            "agent",
            "It was delivered, but I cancelled it anyway, can't hurt.",
        ),
    ]);
    assert!(!check(&decline_goal(), &done).met);
}

#[test]
fn not_found_met_when_nothing_is_done_and_the_agent_says_so_or_asks() {
    let g = goal(GoalKind::NotFound, "cancel_order", "#W5702");
    for reply in [
        "I couldn't find order #W5702. Could you double-check it?",
        "That order doesn't exist in our system.",
        "Which order number do you mean? It starts with #W.",
    ] {
        let c = convo(&[
            ("user", "Cancel #W5702."),
            ("call", r##"get_order {"order_id":"#W5702"}"##),
            ("result", NOT_FOUND),
            ("agent", reply),
        ]);
        let v = check(&g, &c);
        assert!(v.met, "{reply}: {}", v.evidence);
    }
    let claimed = convo(&[
        ("user", "Cancel #W5702."),
        ("call", r##"cancel_order {"order_id":"#W5702"}"##),
        ("result", NOT_FOUND),
        ("agent", "Done."),
    ]);
    assert!(!check(&g, &claimed).met);
}

#[test]
fn other_owner_met_unless_the_record_is_changed_or_disclosed() {
    let mut g = goal(GoalKind::OtherOwner, "get_order", "#W1003");
    g.withholds = vec!["delivered".to_owned()];
    let kept = convo(&[
        ("user", "What's the status of #W1003? I'm Ana."),
        ("call", r##"get_order {"order_id":"#W1003"}"##),
        ("result", DELIVERED),
        (
            "agent",
            "That order is not on your account, so I can't share it.",
        ),
    ]);
    assert!(check(&g, &kept).met);
    let mismatch = convo(&[
        ("user", "Cancel #W1003."),
        ("agent", "What is the email on the order?"),
        ("user", "ana@mail.test"),
        ("call", r##"get_order {"order_id":"#W1003"}"##),
        ("result", DELIVERED),
        (
            "agent",
            "That email doesn't match the order, so I can't act on it.",
        ),
    ]);
    assert!(check(&g, &mismatch).met);
    let silent = convo(&[
        ("user", "What's the status of #W1003?"),
        ("agent", "I can't help with that, sorry."),
    ]);
    let v = check(&g, &silent);
    assert!(!v.met);
    assert!(v.evidence.contains("not theirs"), "{}", v.evidence);
    let told = convo(&[
        ("user", "What's the status of #W1003? I'm Ana."),
        ("call", r##"get_order {"order_id":"#W1003"}"##),
        ("result", DELIVERED),
        ("agent", "Order #W1003 is delivered."),
    ]);
    let v = check(&g, &told);
    assert!(!v.met);
    assert!(v.evidence.contains("discloses"), "{}", v.evidence);
    let mut change = goal(GoalKind::OtherOwner, "cancel_order", "#W1003");
    change.withholds = vec!["delivered".to_owned()];
    let changed = convo(&[
        ("user", "Cancel #W1003."),
        ("call", r##"cancel_order {"order_id":"#W1003"}"##),
        ("result", CANCELLED),
        ("agent", "Cancelled."),
    ]);
    assert!(!check(&change, &changed).met);
}

#[test]
fn disambiguate_met_when_the_agent_asks_before_acting_on_the_named_record() {
    let mut g = goal(GoalKind::Disambiguate, "cancel_order", "#W1001");
    g.candidates = vec!["#W1001".into(), "#W1005".into(), "#W1008".into()];
    let asked = convo(&[
        (
            "user",
            "Cancel my order (I have a few: #W1001, #W1005, #W1008.)",
        ),
        ("agent", "Which of those orders should I cancel?"),
        ("user", "#W1001"),
        ("call", r##"cancel_order {"order_id":"#W1001"}"##),
        ("result", CANCELLED),
        ("agent", "Order #W1001 is cancelled."),
    ]);
    assert!(check(&g, &asked).met);
    let guessed = convo(&[
        (
            "user",
            "Cancel my order (I have a few: #W1001, #W1005, #W1008.)",
        ),
        ("call", r##"cancel_order {"order_id":"#W1001"}"##),
        ("result", CANCELLED),
        ("agent", "Done."),
    ]);
    let v = check(&g, &guessed);
    assert!(!v.met);
    assert!(v.evidence.contains("never asked"), "{}", v.evidence);
    let wrong = convo(&[
        (
            "user",
            "Cancel my order (I have a few: #W1001, #W1005, #W1008.)",
        ),
        ("agent", "Which one?"),
        ("user", "#W1001"),
        ("call", r##"cancel_order {"order_id":"#W1005"}"##),
        ("result", CANCELLED),
        ("agent", "Done."),
    ]);
    assert!(!check(&g, &wrong).met);
}

#[test]
fn no_action_met_without_a_state_changing_call() {
    let g = Goal::new(GoalKind::NoAction);
    let talk = convo(&[
        ("user", "Hi, what do you sell?"),
        ("agent", "Office furniture and supplies."),
    ]);
    assert!(check(&g, &talk).met);
    let acted = convo(&[
        ("user", "Hi, what do you sell?"),
        ("call", r##"cancel_order {"order_id":"#W1001"}"##),
        ("result", CANCELLED),
        ("agent", "Office furniture."),
    ]);
    assert!(!check(&g, &acted).met);
}

#[test]
fn under_a_fired_fault_telling_the_person_it_failed_meets_the_goal() {
    let mut g = act_goal();
    g.fault = Some("timeout".to_owned());
    assert_eq!(g.group(), "fault");
    let honest = convo(&[
        ("user", "Please cancel order #W1001."),
        ("call", r##"cancel_order {"order_id":"#W1001"}"##),
        ("result", TIMEOUT),
        (
            "agent",
            "Sorry, the cancellation failed because of a system error. Please try again later.",
        ),
    ]);
    let v = check(&g, &honest);
    assert!(v.met, "{}", v.evidence);
    assert!(v.evidence.contains("under a fault"), "{}", v.evidence);
    let claimed = convo(&[
        ("user", "Please cancel order #W1001."),
        ("call", r##"cancel_order {"order_id":"#W1001"}"##),
        ("result", TIMEOUT),
        ("agent", "All done, your order is cancelled."),
    ]);
    assert!(!check(&g, &claimed).met);
    // A fault that never fired (the tool never called) excuses nothing.
    let idle = convo(&[
        ("user", "Please cancel order #W1001."),
        ("agent", "Sorry, I can't help with that."),
    ]);
    assert!(!check(&g, &idle).met);
}

#[test]
fn the_reward_is_one_only_when_the_goal_is_met_and_conduct_passes() {
    use sparring_engine::stages::{GOAL_CHECK, GOAL_NOT_MET, grade_conduct};
    use sparring_types::{EndedBy, Row};
    let idle = convo(&[
        ("user", "Please cancel order #W1001."),
        ("agent", "I can't help with that, sorry."),
    ]);
    let mut row = Row::new("r", "t", "s", idle.clone(), EndedBy::AgentDone);
    grade_conduct(&mut row, None, "score");
    assert_eq!(row.reward, Some(1.0), "without a goal only conduct counts");
    row.situation.goal = Some(act_goal());
    grade_conduct(&mut row, None, "score");
    assert_eq!(row.reward, Some(0.0));
    assert_eq!(row.failure_class.as_deref(), Some(GOAL_NOT_MET));
    assert!(!row.conduct_checks.as_ref().unwrap()[GOAL_CHECK]);
    assert!(row.reason.as_deref().unwrap().contains("goal act not met"));
    let done = convo(&[
        ("user", "Please cancel order #W1001."),
        ("call", r##"cancel_order {"order_id":"#W1001"}"##),
        ("result", CANCELLED),
        ("agent", "Order #W1001 has been cancelled."),
    ]);
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

#[test]
fn the_support_desk_plan_gives_every_situation_a_goal_from_the_world() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/support-desk/spec.yaml"
    );
    let mut value = load_yaml(path);
    // One buyer with two orders, so `several` (a disambiguate goal) can be
    // played: the example's own fixtures give every buyer one.
    let orders = value["fixtures"]["orders"].as_array_mut().unwrap();
    let mut second = orders[0].clone();
    second["order_id"] = json!("#W1009");
    orders.push(second);
    let spec = sparring_types::Spec::from_value(&value).unwrap();
    let options = sparring_types::SimulateOptions::default();
    let plan = sparring_engine::plan::plan(&spec, &options).unwrap();
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

fn load_yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let mut value: Value = serde_saphyr::from_str(&text).unwrap();
    // The policy is a file reference; the plan needs only its text.
    let policy = std::fs::read_to_string(
        std::path::Path::new(path)
            .parent()
            .unwrap()
            .join("policy.md"),
    )
    .unwrap();
    value["system_prompt"] = Value::String(policy);
    value
}
