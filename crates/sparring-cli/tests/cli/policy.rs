//! `sparring policy` and the spec's `policy_rules` corrections.

use super::*;

#[test]
fn lists_every_rule_with_id_class_check_and_tools() {
    let spec = example_spec();
    let p = json_out(&["policy".as_ref(), spec.as_os_str(), "--json".as_ref()]);
    let rules = p["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 10);
    let confirm = rules
        .iter()
        .find(|r| r["id"] == "confirm-customer-before-issuing-refund")
        .unwrap();
    assert_eq!(confirm["class"], "confirm_before");
    assert_eq!(confirm["check"], "acted_without_confirmation");
    assert_eq!(confirm["tools"], serde_json::json!(["refund_order"]));
    assert!(
        confirm["text"]
            .as_str()
            .unwrap()
            .starts_with("You must confirm")
    );
    assert_eq!(p["classes"]["judge"], 5);
    let o = sparring().arg("policy").arg(example_spec()).run_ok();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("10 rules read from the policy of `support-desk`"),
        "{text}"
    );
    assert!(
        text.contains("confirm-customer-before-issuing-refund  [confirm_before, checked by acted_without_confirmation]"),
        "{text}"
    );
    assert!(text.contains("  tools: refund_order\n"), "{text}");
    // What a check reads is shown: the order rule's tools in order.
    assert!(
        text.contains("  reads: get_order succeeds before refund_order, cancel_order, update_shipping_address\n"),
        "{text}"
    );
    let order = rules.iter().find(|r| r["class"] == "order").unwrap();
    assert_eq!(
        order["reads"],
        serde_json::json!([
            "get_order succeeds before refund_order, cancel_order, update_shipping_address"
        ])
    );
    // And as data, for the calibration agents to act on.
    assert_eq!(
        order["detail"],
        serde_json::json!({
            "first": ["get_order"],
            "then": ["refund_order", "cancel_order", "update_shipping_address"]
        })
    );
}

#[test]
fn shows_the_bound_an_escalation_rule_reads() {
    let spec = workspace().join("examples/claims/spec.yaml");
    let o = sparring().arg("policy").arg(&spec).run_ok();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("never-file-claim-more-5000  [escalate, checked by missed_escalation]\n  tools: file_claim, transfer_to_adjuster\n  reads: file_claim's amount at most 5000, past which it hands off\n"),
        "{text}"
    );
}

#[test]
fn bad_corrections_are_named_with_where() {
    let dir = tempfile::tempdir().unwrap();
    for (block, needles) in [
        (
            "policy_rules:\n  drop: [never-guess-order-numbr]",
            &[
                "/policy_rules/drop/0",
                "did you mean `never-guess-order-number`",
            ][..],
        ),
        (
            "policy_rules:\n  reclasify: {}",
            &["/policy_rules/reclasify", "did you mean `reclassify`"][..],
        ),
        (
            "policy_rules:\n  add:\n    - {text: Be brief., class: juge}",
            &["/policy_rules/add/0/class", "did you mean `judge`"][..],
        ),
        (
            "policy_rules:\n  add:\n    - {text: Be brief., class: judge, tools: [get_ordr]}",
            &["/policy_rules/add/0/tools/0", "did you mean `get_order`"][..],
        ),
    ] {
        let spec = spec_with(dir.path(), block);
        assert_spec_refused_by(&spec, &["policy", "grid"], needles);
    }
    // A good correction shows in the listing and on the grid.
    let spec = spec_with(
        dir.path(),
        "policy_rules:\n  drop: [not-promise-anything-tools-cannot]\n  reclassify: {never-guess-order-number: precondition}",
    );
    let p = json_out(&["policy".as_ref(), spec.as_os_str(), "--json".as_ref()]);
    assert_eq!(p["rules"].as_array().unwrap().len(), 9);
    assert!(
        p["rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == "never-guess-order-number" && r["class"] == "precondition")
    );
    let g = json_out(&["grid".as_ref(), spec.as_os_str(), "--json".as_ref()]);
    let values = g["axes"]["policy_rule"].as_array().unwrap();
    assert_eq!(values.len(), 10, "nine rules and none");
    assert!(
        !values
            .iter()
            .any(|v| v == "not-promise-anything-tools-cannot")
    );
}
