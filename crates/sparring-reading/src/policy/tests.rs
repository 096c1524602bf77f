use super::*;

fn tool(name: &str, params: &[(&str, &str)]) -> ToolSpec {
    ToolSpec::with_parameters(name, params)
}

fn shop() -> Vec<ToolSpec> {
    vec![
        tool("get_order", &[("order_id", "string")]),
        tool("find_orders_by_email", &[("email", "string")]),
        tool(
            "refund_order",
            &[("order_id", "string"), ("amount", "number")],
        ),
        tool("cancel_order", &[("order_id", "string")]),
        tool(
            "update_shipping_address",
            &[("order_id", "string"), ("address", "string")],
        ),
    ]
}

#[test]
fn reads_classes_and_tools() {
    let policy = Policy::read(
        "# Shop\n\n- Always look an order up with `get_order` before you act on it.\n- Never guess an order number.\n- You must confirm with the customer before issuing a refund.\n- Only orders that are pending can be cancelled.\n- Refund at most $500 per order.",
        &shop(),
    );
    let got: Vec<(&str, RuleClass, Vec<&str>)> = policy
        .rules()
        .iter()
        .map(|r| {
            (
                r.id.as_str(),
                r.class,
                r.tools.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "always-look-order-up-get_order",
                RuleClass::Order,
                vec![
                    "get_order",
                    "refund_order",
                    "cancel_order",
                    "update_shipping_address"
                ]
            ),
            (
                "never-guess-order-number",
                RuleClass::Judge,
                vec![
                    "get_order",
                    "find_orders_by_email",
                    "refund_order",
                    "cancel_order"
                ]
            ),
            (
                "confirm-customer-before-issuing-refund",
                RuleClass::ConfirmBefore,
                vec!["refund_order"]
            ),
            (
                "only-orders-pending-cancelled",
                RuleClass::Precondition,
                vec!["cancel_order"]
            ),
            (
                "refund-most-500-order",
                RuleClass::Limit,
                vec!["refund_order"]
            ),
        ]
    );
    assert_eq!(
        policy.rules()[0].detail,
        Detail::Order {
            first: vec!["get_order".to_owned()],
            then: vec![
                "refund_order".to_owned(),
                "cancel_order".to_owned(),
                "update_shipping_address".to_owned()
            ]
        }
    );
    assert_eq!(
        policy.rules()[4].detail,
        Detail::Limit(vec![Bound {
            counted: Counted::Argument {
                tool: "refund_order".to_owned(),
                param: "amount".to_owned()
            },
            max: 500.0
        }])
    );
}

/// The triggers of each rule of `policy`, all of which must be `escalate`
/// rules handing off with `read` and `hand_off`.
fn escalation_triggers(policy: &str, read: &str, hand_off: &str) -> Vec<Vec<Trigger>> {
    let tools = vec![
        tool(read, &[("id", "string")]),
        tool(hand_off, &[("summary", "string")]),
    ];
    Policy::read(policy, &tools)
        .rules()
        .iter()
        .map(|r| match &r.detail {
            Detail::Escalate { triggers, to, .. } => {
                assert_eq!(to, &vec![hand_off.to_owned()]);
                triggers.clone()
            }
            other => panic!("{}: {other:?}", r.text),
        })
        .collect()
}

#[test]
fn hand_off_triggers_come_from_conditions_whose_instruction_hands_off() {
    let triggers = escalation_triggers(
        "- If the customer reports fraud or a stolen card, or asks for a human, transfer them with `transfer_to_human_agents`.\n- If the user still wants a human agent, tell them you can help and try first.\n- If the user asks for a human agent 4 times, then you may invoke the transfer_to_human_agents tool.\n- If it shows \"Locked\", escalate to technical support.",
        "get_card",
        "transfer_to_human_agents",
    );
    assert_eq!(
        triggers[0],
        vec![
            Trigger::HumanRequest { times: 1 },
            Trigger::Words(vec!["fraud".to_owned()]),
            Trigger::Words(vec!["stolen".to_owned(), "card".to_owned()]),
        ]
    );
    assert!(triggers[1].is_empty(), "{:?}", triggers[1]);
    assert_eq!(triggers[2], vec![Trigger::HumanRequest { times: 4 }]);
    assert_eq!(triggers[3], vec![Trigger::Words(vec!["locked".to_owned()])]);
}

#[test]
fn an_escalate_rule_bounds_the_action_it_hands_off() {
    let tools = vec![
        tool(
            "file_claim",
            &[
                ("policy_id", "string"),
                ("amount", "number"),
                ("description", "string"),
            ],
        ),
        tool("transfer_to_adjuster", &[("summary", "string")]),
    ];
    let policy = Policy::read(
        "- Never file a claim for more than $5,000 yourself: transfer the policyholder to an adjuster with `transfer_to_adjuster` instead.",
        &tools,
    );
    let rule = &policy.rules()[0];
    assert_eq!(rule.class, RuleClass::Escalate, "{rule:?}");
    assert_eq!(
        rule.tools,
        ["file_claim", "transfer_to_adjuster"],
        "{rule:?}"
    );
    let Detail::Escalate { to, bounds, .. } = &rule.detail else {
        panic!("{rule:?}");
    };
    assert_eq!(to, &["transfer_to_adjuster"]);
    assert_eq!(
        bounds,
        &[Bound {
            counted: Counted::Argument {
                tool: "file_claim".to_owned(),
                param: "amount".to_owned()
            },
            max: 5000.0
        }]
    );
}

#[test]
fn asking_for_the_hand_off_is_a_request_not_the_word_ask() {
    let triggers = escalation_triggers(
        "- Transfer the patient to a pharmacist with `transfer_to_pharmacist` when they ask for it.",
        "get_prescription",
        "transfer_to_pharmacist",
    );
    assert_eq!(triggers, [vec![Trigger::HumanRequest { times: 1 }]]);
}

#[test]
fn an_authentication_rule_that_names_its_means_identifies_with_it_only() {
    let tools = vec![
        tool(
            "verify_employee",
            &[("employee_id", "string"), ("badge_number", "string")],
        ),
        tool("get_employee", &[("employee_id", "string")]),
        tool("find_employee_by_email", &[("email", "string")]),
        tool("find_employee_by_phone", &[("phone", "string")]),
        tool("reset_password", &[("employee_id", "string")]),
        tool("get_customer", &[("customer_id", "string")]),
    ];
    let via = |prompt: &str| -> Vec<String> {
        let policy = Policy::read(prompt, &tools);
        let rule = policy
            .of_class(RuleClass::AuthenticateFirst)
            .next()
            .expect("an authentication rule");
        match &rule.detail {
            Detail::Auth { via } => via.clone(),
            other => panic!("not an auth detail: {other:?}"),
        }
    };
    // Named after `with`: that tool, not the other person look-ups.
    assert_eq!(
        via("Always verify the caller with `verify_employee` before you change anything."),
        ["verify_employee"]
    );
    // Named after `against`.
    assert_eq!(
        via(
            "Confirm who you are talking to: ask for the employee ID and check it against `get_employee` before anything else."
        ),
        ["get_employee"]
    );
    // Two named, joined by `or`.
    assert_eq!(
        via(
            "Identify the customer with `find_employee_by_email` or `find_employee_by_phone` before you change anything."
        ),
        ["find_employee_by_email", "find_employee_by_phone"]
    );
    // Named but not as the means: the person look-ups the rule's words
    // allow, as before.
    assert_eq!(
        via("Authenticate the customer before you use `reset_password`."),
        ["get_customer"]
    );
}

/// A rule that keeps money details or pay private names their fields: a
/// sort code, an IBAN, a salary (`annual_salary` holds `salary`).
#[test]
fn a_never_reveal_rule_names_bank_details_and_pay() {
    let policy = Policy::read(
        "- Never read out the direct debit sort code or IBAN.\n- Never disclose anyone's salary.",
        &shop(),
    );
    let fields: Vec<Vec<String>> = policy
        .rules()
        .iter()
        .filter_map(|r| match &r.detail {
            Detail::Reveal { fields, .. } => Some(fields.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        fields,
        vec![
            vec!["sort_code".to_owned(), "iban".to_owned()],
            vec!["salary".to_owned()]
        ]
    );
}
