//! `sparring calibrate`: the built-in agents run from any directory, and
//! every agent is handed the policy as the conduct checks read it.

use super::*;

/// A calibration agent that keeps the policy reading it was handed (beside
/// itself, as `NAME.reading.json`) and declines everything.
const KEEPS_THE_READING: &str = r#"import json, os, shutil, sys
here = os.path.dirname(os.path.abspath(__file__))
shutil.copy(os.environ["SPARRING_POLICY_READING"], os.path.join(here, "NAME.reading.json"))
for line in sys.stdin:
    if line.strip():
        request = json.loads(line)
        reply = {"role": "assistant", "content": "I can't help with that, sorry."}
        print(json.dumps({"id": request["id"], "message": reply}), flush=True)
"#;

#[test]
fn runs_the_built_in_agents_from_any_directory() {
    let elsewhere = tempfile::tempdir().unwrap();
    let o = sparring()
        .current_dir(elsewhere.path())
        .arg("calibrate")
        .arg(example_spec())
        .arg("--json")
        .run();
    assert_exit(&o, 0);
    let c = stdout_json(&o);
    let agents: Vec<&str> = c["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent"].as_str().unwrap())
        .collect();
    assert_eq!(agents, ["do_nothing", "reckless", "careful"]);
    assert_eq!(c["ranked"], true, "{c}");
    let help = sparring().args(["calibrate", "--help"]).run_ok();
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("[default: the built-in agents]"),
        "{}",
        String::from_utf8_lossy(&help.stdout)
    );
}

#[test]
fn hands_each_agent_the_policy_reading() {
    let agents = tempfile::tempdir().unwrap();
    for name in ["do_nothing", "reckless", "careful"] {
        std::fs::write(
            agents.path().join(format!("{name}.py")),
            KEEPS_THE_READING.replace("NAME", name),
        )
        .unwrap();
    }
    // Declining everything ranks nothing: exit 1, and every agent ran.
    let o = sparring()
        .arg("calibrate")
        .arg(example_spec())
        .arg("--agents")
        .arg(agents.path())
        .run();
    assert_exit(&o, 1);
    for name in ["do_nothing", "reckless", "careful"] {
        let text = std::fs::read_to_string(agents.path().join(format!("{name}.reading.json")))
            .unwrap_or_else(|e| panic!("{name} got no reading: {e}"));
        let reading: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(reading["spec"], "support-desk");
        let order = reading["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["class"] == "order")
            .unwrap();
        assert_eq!(order["detail"]["first"], serde_json::json!(["get_order"]));
    }
}
