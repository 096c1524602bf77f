//! `sparring evaluate SPEC --eval-set FILE`, and the seeds' names for
//! simulate's flags (`--simulator`, `--backend`, `--timeout`,
//! `--fault-rate`, `--dimensions`).

use super::*;

#[test]
fn every_ask_runs_once_per_repeat_and_the_table_says_how_each_scored() {
    let dir = tempfile::tempdir().unwrap();
    let asks = [
        "Where is my order #W1001?",
        "Please refund order #W1003.",
        "hello, can you help me",
    ];
    let set = write(dir.path(), "asks.txt", &format!("{}\n\n", asks.join("\n")));
    let out = dir.path().join("eval");
    let printed = json_out(&[
        "evaluate".as_ref(),
        example_spec().as_os_str(),
        "--eval-set".as_ref(),
        set.as_os_str(),
        "--agent".as_ref(),
        example_agent().as_ref(),
        "--repeats".as_ref(),
        "2".as_ref(),
        "--seed".as_ref(),
        "3".as_ref(),
        "--quiet".as_ref(),
        "--json".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    let table = printed["asks"]["asks"].as_array().unwrap();
    assert_eq!(texts(table, "ask"), asks);
    for a in table {
        assert_eq!(a["rows"], 2, "{a}");
        assert_eq!(a["graded"], 2, "{a}");
    }
    let rows = read_rows(&out.join("rows.jsonl"));
    assert_eq!(rows.len(), 6);
    // Nothing but the asks ran, word for word, each graded.
    for row in &rows {
        let opening = row["messages"][1]["content"].as_str().unwrap();
        assert!(asks.contains(&opening), "{opening}");
        assert!(row["reward"].is_number(), "{row}");
    }
    assert_eq!(printed["report"]["n_rows"], 6);
}

#[test]
fn a_bad_eval_set_is_a_usage_error_naming_the_ask() {
    let dir = tempfile::tempdir().unwrap();
    let set = write(
        dir.path(),
        "asks.txt",
        "Where is #W1001?\nhello\nWhere is #W1001?\n",
    );
    // The example spec with `--agent true`: the set is read first.
    let evaluate = |set: &Path| {
        sparring()
            .arg("evaluate")
            .arg(example_spec())
            .arg("--eval-set")
            .arg(set)
            .args(["--agent", "true"])
            .run()
    };
    assert_usage_error(&evaluate(&set), &["asks.txt", "ask 3 repeats ask 1"]);
    assert_usage_error(
        &evaluate(&dir.path().join("missing.txt")),
        &["cannot read eval set", "missing.txt"],
    );
}

#[test]
fn the_seeds_flag_names_reach_the_options() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    sparring()
        .arg("simulate")
        .arg(example_spec())
        .args(["--backend", &example_agent()])
        .args([
            "--simulator",
            "template",
            "--timeout",
            "7",
            "--fault-rate",
            "0.3",
        ])
        .args(["--dimensions", "stance=hurried", "--budget", "3", "--quiet"])
        .arg("--out")
        .arg(&out)
        .run_ok();
    let run = run_json(&out);
    let options = &run["options"];
    assert_eq!(options["writer"], "template");
    assert_eq!(options["agent_timeout"], 7.0);
    assert_eq!(options["world"]["fault_rate"], 0.3);
    for row in read_rows(&out.join("rows.jsonl")) {
        assert_eq!(row["situation"]["axes"]["stance"], "hurried", "{row}");
    }
    let o = simulate_spec_with(&example_spec(), &["--dimensions", "stanse=hurried"]);
    assert_usage_error(&o, &["dimensions", "did you mean `stance`"]);
}
