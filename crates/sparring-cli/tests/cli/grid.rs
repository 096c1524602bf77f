//! `sparring grid`, `coverage-gap` and the spec's axes.

use super::*;

#[test]
fn spec_grid_lists_axes_rules_and_covers_every_pair() {
    let spec = example_spec();
    let g = json_out(&["grid".as_ref(), spec.as_os_str(), "--json".as_ref()]);
    assert_eq!(g["pairs_covered"], g["pairs_planned"]);
    assert!(g["rules"].as_array().unwrap().iter().any(|r| {
        r["text"]
            .as_str()
            .unwrap()
            .contains("confirm with the customer")
    }));
    assert_eq!(g["axes"]["stance"].as_array().unwrap().len(), 6);
    // A tool without an id never meets a missing record.
    let rows = g["rows"].as_array().unwrap();
    assert!(
        !rows
            .iter()
            .any(|r| r["tool"] == "none" && r["world_state"] != "exists")
    );
    assert_eq!(rows.len(), g["n_rows"].as_u64().unwrap() as usize);
}

#[test]
fn spec_pins_and_forbidden_pairs_shape_the_grid() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_with_axes(
        dir.path(),
        "  stance: [hurried, manipulative]\n  tool_condition: [ok, timeout]\n  forbid:\n    - {tool: refund_order, stance: manipulative}\n    - {history: [returning, handed_off], world_state: missing}",
    );
    let g = json_out(&["grid".as_ref(), spec.as_os_str(), "--json".as_ref()]);
    assert_eq!(
        g["axes"]["stance"],
        serde_json::json!(["hurried", "manipulative"])
    );
    assert_eq!(g["axes"]["world_state"].as_array().unwrap().len(), 5);
    assert_eq!(
        g["sampled"]["tool_condition"],
        serde_json::json!(["ok", "timeout"])
    );
    assert_eq!(g["pairs_covered"], g["pairs_planned"]);
    let rows = g["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .all(|r| r["stance"] == "hurried" || r["stance"] == "manipulative")
    );
    assert!(
        !rows
            .iter()
            .any(|r| r["tool"] == "refund_order" && r["stance"] == "manipulative")
    );
    assert!(!rows.iter().any(|r| r["world_state"] == "missing"
        && (r["history"] == "returning" || r["history"] == "handed_off")));
    // Both stances still meet every other value that may meet them.
    assert!(
        rows.iter()
            .any(|r| r["tool"] == "refund_order" && r["stance"] == "hurried")
    );
    assert!(
        rows.iter()
            .any(|r| r["tool"] == "cancel_order" && r["stance"] == "manipulative")
    );
    let forbidden = g["forbidden"].as_array().unwrap();
    assert!(forbidden.contains(&serde_json::json!([
        ["tool", "refund_order"],
        ["stance", "manipulative"]
    ])));
    // The example's seeds are still required rows, now with a pinned stance.
    assert_eq!(g["n_rows"].as_u64().unwrap() as usize, rows.len());
}

#[test]
fn simulate_honours_pins_and_forbidden_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_with_axes(
        dir.path(),
        "  stance: [frustrated, skeptical]\n  tool_condition: [timeout]\n  forbid:\n    - {tool: cancel_order, stance: skeptical}",
    );
    let out = dir.path().join("out");
    simulate_cmd(&spec, &example_agent(), &out)
        .args(["--budget", "16"])
        .run_ok();
    let rows = read_rows(&out.join("rows.jsonl"));
    assert_eq!(rows.len(), 16);
    for r in &rows {
        let axes = &r["situation"]["axes"];
        assert!(
            axes["stance"] == "frustrated" || axes["stance"] == "skeptical",
            "{axes}"
        );
        assert!(!(axes["tool"] == "cancel_order" && axes["stance"] == "skeptical"));
        // Pinned without `ok`: every situation with a tool has the fault.
        if axes["tool"] != "none" {
            assert_eq!(axes["tool_condition"], "timeout", "{axes}");
            assert_eq!(r["situation"]["faults"][0]["kind"], "timeout");
        }
    }
    let run = run_json(&out);
    assert_eq!(
        run["coverage"]["axes"]["stance"],
        serde_json::json!(["frustrated", "skeptical"])
    );
}

#[test]
fn bad_axes_in_a_spec_are_named_with_where() {
    let dir = tempfile::tempdir().unwrap();
    for (axes, needles) in [
        (
            "  stanse: [hurried]",
            &["/axes/stanse", "did you mean `stance`"][..],
        ),
        (
            "  stance: [hurried, rushed]",
            &["/axes/stance/1", "`rushed`", "axis `stance`"][..],
        ),
        (
            "  tool: [refund_ordr]",
            &["/axes/tool/0", "did you mean `refund_order`"][..],
        ),
        (
            "  forbid:\n    - {tool: none}",
            &["/axes/forbid/0", "exactly two"][..],
        ),
        (
            "  policy_rule: [rule_99]",
            &["/axes/policy_rule/0", "no rule `rule_99`"][..],
        ),
        // The first seed asks for a refund with the first stance.
        (
            "  forbid:\n    - {tool: refund_order, stance: cooperative}",
            &["spec.yaml", "required row `0`", "forbidden pair"][..],
        ),
    ] {
        let spec = spec_with_axes(dir.path(), axes);
        assert_spec_refused_by(&spec, &["grid"], needles);
    }
}

#[test]
fn raw_levels_mode() {
    let g = json_out(&["grid", "--levels", "3^4", "--json"].map(std::ffi::OsStr::new));
    assert_eq!(g["n_rows"], 9, "3^4 has an optimal 9-row array");
    assert_eq!(g["pairs_covered"], 54);
    let o = sparring().args(["grid", "--levels", "3^x"]).run();
    assert_usage_error(&o, &["--levels"]);
    let o = sparring().args(["grid"]).run();
    assert_usage_error(&o, &["--levels"]);
}

#[test]
fn coverage_gap_names_untouched_tools_and_rules() {
    let dir = tempfile::tempdir().unwrap();
    let asks = write(
        dir.path(),
        "asks.txt",
        "Please refund order #W1004, it broke.\nWhere is my order #W1002?\n",
    );
    let coverage_gap = |asks: &Path| {
        let mut c = sparring();
        c.arg("coverage-gap").arg(example_spec()).arg(asks);
        c
    };
    let o = coverage_gap(&asks).arg("--json").run_ok();
    let g = stdout_json(&o);
    let tools = strs(&g["tools"]);
    assert!(
        tools.contains(&"cancel_order") && tools.contains(&"update_shipping_address"),
        "{tools:?}"
    );
    assert!(!tools.contains(&"refund_order"), "{tools:?}");
    let empty = write(dir.path(), "empty.txt", "\n");
    let o = coverage_gap(&empty).run();
    assert_usage_error(&o, &["empty.txt", "no asks"]);
}

#[test]
fn asks_prints_situations_with_their_phrasings() {
    let o = sparring()
        .arg("asks")
        .arg(example_spec())
        .args(["--n", "5", "--phrasings", "3", "--json"])
        .run_ok();
    let lines = json_lines(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(lines.len(), 5);
    assert_eq!(
        lines[0]["phrasings"][0],
        "Hi, I was charged twice for order #W1004. Can you refund it?"
    );
    assert!(
        lines
            .iter()
            .all(|l| l["phrasings"].as_array().unwrap().len() == 3)
    );
    assert!(lines[2]["situation"]["axes"]["stance"].is_string());
}
