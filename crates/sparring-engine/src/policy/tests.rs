use super::*;

fn tool(name: &str, params: &[(&str, &str)]) -> ToolSpec {
    let props: serde_json::Map<String, Value> = params
        .iter()
        .map(|(p, t)| ((*p).to_owned(), serde_json::json!({"type": t})))
        .collect();
    ToolSpec {
        name: name.to_owned(),
        description: String::new(),
        parameters: serde_json::json!({"type": "object", "properties": props}),
        output_schema: None,
    }
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
