//! The bank example end to end: `sparring simulate examples/bank/spec.yaml`
//! with the scripted teller moves money, and a later read in the same
//! conversation shows the new balance; `sparring world --explain` shows the
//! rules with their sentences and the declared ones.

use super::*;

#[test]
fn the_teller_moves_money_and_a_later_read_shows_the_new_balance() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bank");
    sparring()
        .args([
            "simulate",
            "examples/bank/spec.yaml",
            "--agent",
            "python3 examples/bank/teller.py",
        ])
        .args(["--budget", "3", "--out"])
        .arg(&out)
        .run_ok();
    let rows = valid_rows(&out);
    assert_eq!(rows.len(), 3);
    for row in &rows {
        let results: Vec<Value> = row["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
            .collect();
        assert_eq!(results.len(), 4, "{row}");
        assert_eq!(results[0]["result"]["balance"], 2500.0, "{}", results[0]);
        assert_eq!(results[1]["ok"], true, "the transfer: {}", results[1]);
        assert_eq!(
            results[2]["result"]["balance"], 2250.0,
            "read after the transfer: {}",
            results[2]
        );
        assert_eq!(
            results[3]["result"]["balance"], 10450.5,
            "the other account: {}",
            results[3]
        );
    }
}

#[test]
fn explain_shows_read_and_declared_rules() {
    let o = sparring()
        .args(["world", "examples/bank/spec.yaml", "--explain"])
        .run_ok();
    let explain = stdout_json(&o);
    let tool = |name: &str| entry(&explain["tools"], "name", name).clone();
    let transfer = tool("transfer_money").to_string();
    assert!(
        transfer.contains("Never move money out of an account that is frozen."),
        "{transfer}"
    );
    let pay = tool("pay_payee").to_string();
    assert!(
        pay.contains("payee.status == active") && pay.contains("the spec's `world` section"),
        "{pay}"
    );
}

#[test]
fn a_bad_world_section_is_one_line_with_its_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(workspace().join("examples/bank/spec.yaml"))
        .unwrap()
        .replace("payee.total_paid += amount", "payee.total_paid += amout")
        .replace("system_prompt: {file: policy.md}", "system_prompt: be kind");
    let spec = write(dir.path(), "spec.yaml", &text);
    let o = sparring().arg("world").arg(&spec).arg("--explain").run();
    assert_usage_error(&o, &["/world/pay_payee/effects/0", "did you mean `amount`"]);
}
