//! `sparring grade`, labels and judge-trust: conduct checks, grader hooks, judges.

use super::*;

fn script(name: &str, mode: &str) -> String {
    format!("python3 {} {mode}", agent_script(name).display())
}

/// The scripted command judge of `tests/agents/judge.py` in `mode`.
fn judge(mode: &str) -> String {
    format!("command:{}", script("judge.py", mode))
}

/// An ungraded run of the example, shared by the grading tests.
fn ungraded_run(dir: &Path) -> PathBuf {
    let out = dir.join("run");
    simulate_example(&out, &["--budget", "12", "--quiet"]).run_ok();
    out.join("rows.jsonl")
}

#[test]
fn conduct_grader_and_judge_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let rows = ungraded_run(dir.path());
    let rubric = rubric(dir.path());
    let out = dir.path().join("graded.jsonl");
    grade_cmd(&rows, &out)
        .args(["--grader", &script("grader.py", "ok")])
        .args(["--judge", &judge("strict"), "--rubric"])
        .arg(&rubric)
        .run_ok();
    let graded = read_rows(&out);
    assert_eq!(graded.len(), 12);
    assert_valid_rows(&graded);
    for r in &graded {
        let stages = texts(r["grades"].as_array().unwrap(), "stage");
        assert_eq!(stages, ["conduct", "grader", "judge"]);
        assert_eq!(r["reward"], 0.0, "the strict judge has the last word");
        assert!(r["markers"]["messages"].is_number(), "grader markers kept");
        assert!(r["markers"]["questions_asked"].is_number());
        assert_eq!(r["judge_meta"]["rubric_hash"].as_str().unwrap().len(), 64);
        assert!(r["conduct_checks"].is_object());
    }
    // Conduct alone (the default) fails some of the example's planted failures.
    let out2 = dir.path().join("conduct.jsonl");
    grade_cmd(&rows, &out2).run_ok();
    let conduct = read_rows(&out2);
    assert_valid_rows(&conduct);
    assert!(conduct.iter().any(|r| r["reward"] == 0.0));
    assert!(conduct.iter().any(|r| r["reward"] == 1.0));
}

#[test]
fn judge_without_a_rubric_grades_against_the_policys_judge_rules() {
    let dir = tempfile::tempdir().unwrap();
    let rows = ungraded_run(dir.path());
    let out = dir.path().join("judged.jsonl");
    grade_cmd(&rows, &out)
        .args(["--judge", &judge("strict")])
        .run_ok();
    let judged = read_rows(&out);
    assert_eq!(judged.len(), 12);
    let hashes: std::collections::BTreeSet<&str> = judged
        .iter()
        .map(|r| r["judge_meta"]["rubric_hash"].as_str().unwrap())
        .collect();
    assert_eq!(hashes.len(), 1, "one policy, one rubric");
    // Rows whose policy has no rule for the judge need a rubric.
    let text = std::fs::read_to_string(&rows).unwrap();
    let mut lines = Vec::new();
    for line in text.lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        v["messages"][0]["content"] =
            serde_json::json!("Confirm with the customer before issuing a refund.");
        lines.push(v.to_string());
    }
    let checked = write(dir.path(), "checked.jsonl", &(lines.join("\n") + "\n"));
    let o = grade_cmd(&checked, &dir.path().join("x.jsonl"))
        .args(["--judge", &judge("strict")])
        .run();
    assert_usage_error(&o, &["--judge", "no rule for the judge", "--rubric"]);
}

#[test]
fn grader_crashes_and_timeouts_cost_only_their_row() {
    let dir = tempfile::tempdir().unwrap();
    let rows = ungraded_run(dir.path());
    for (mode, needle) in [
        ("crash", "exited"),
        ("slow", "did not answer within"),
        ("garbage", "not JSON"),
    ] {
        let out = dir.path().join(format!("{mode}.jsonl"));
        let o = grade_cmd(&rows, &out)
            .args([
                "--grader",
                &format!(
                    "{} {}",
                    script("grader.py", mode),
                    dir.path().join(format!("{mode}.marker")).display()
                ),
                "--timeout",
                "2",
            ])
            .run();
        assert!(o.status.success(), "{mode}: {}", stderr(&o));
        let graded = read_rows(&out);
        assert_eq!(graded.len(), 12);
        assert_valid_rows(&graded);
        let failed: Vec<&Value> = graded
            .iter()
            .filter(|r| r["grades"][1]["error"].is_string())
            .collect();
        assert_eq!(failed.len(), 1, "{mode}: exactly one row lost");
        assert!(
            failed[0]["grades"][1]["error"]
                .as_str()
                .unwrap()
                .contains(needle),
            "{mode}"
        );
        assert!(failed[0]["reward"].is_null());
        // The rows after it were graded by a fresh process.
        assert!(graded[11]["grades"][1]["reward"].is_number(), "{mode}");
        assert!(
            stderr(&o).contains("could not grade 1 rows"),
            "{mode}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn labels_attach_and_judge_trust() {
    let dir = tempfile::tempdir().unwrap();
    let rows_file = ungraded_run(dir.path());
    let rows = read_rows(&rows_file);
    let labels: String = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            serde_json::json!({"row_id": r["row_id"], "reward": i % 2}).to_string() + "\n"
        })
        .collect();
    let labels = write(dir.path(), "labels.jsonl", &labels);
    let out = dir.path().join("labelled.jsonl");
    // `labels attach` of the run's rows, by a human named ana.
    let attach = |labels: &Path, out: &Path| {
        sparring()
            .args(["labels", "attach"])
            .arg(&rows_file)
            .arg(labels)
            .args(["--kind", "human", "--author", "ana", "-o"])
            .arg(out)
            .run()
    };
    assert_exit(&attach(&labels, &out), 0);
    let labelled = read_rows(&out);
    assert_valid_rows(&labelled);
    assert!(
        labelled
            .iter()
            .all(|r| r["gold_author"] == "ana" && r["gold_kind"] == "human")
    );
    assert_eq!(labelled[1]["gold_reward"], 1.0);

    // A label for a row that is not there is bad input.
    let bad = write(
        dir.path(),
        "bad.jsonl",
        "{\"row_id\": \"row_0000000000000000\", \"reward\": 1}\n",
    );
    let o = attach(&bad, &dir.path().join("x.jsonl"));
    assert_usage_error(&o, &["row_0000000000000000", "not in"]);

    let rubric = rubric(dir.path());
    let o = judge_trust_cmd(&out, &judge("gullible"), &rubric, "3").run_ok();
    let report = stdout_json(&o);
    assert_eq!(report["gold_rows"], 12);
    assert_eq!(report["halves"].as_array().unwrap().len(), 2);
    assert_eq!(report["probes"].as_array().unwrap().len(), 12);
    assert_eq!(report["wrongly_passed_by_probe"]["injection"], 1.0);
    assert_eq!(report["wrongly_passed_by_probe"]["polite_padding"], 0.0);
    assert_stderr_has(&o, "injection");

    // A judge that never gives a verdict leaves rows ungraded, not the run.
    let ungraded = dir.path().join("ungraded.jsonl");
    grade_cmd(&out, &ungraded)
        .args(["--no-conduct", "--judge", &judge("garbage"), "--rubric"])
        .arg(&rubric)
        .run_ok();
    let ungraded = read_rows(&ungraded);
    assert!(ungraded.iter().all(|r| r["reward"].is_null()));
    assert!(
        ungraded[0]["grades"][0]["error"]
            .as_str()
            .unwrap()
            .contains("did not parse")
    );
}

#[test]
fn bad_grading_input() {
    let dir = tempfile::tempdir().unwrap();
    let rows = ungraded_run(dir.path());
    let rubric = write(dir.path(), "r.txt", "criteria");
    let rubric = rubric.to_str().unwrap();
    for (args, needles) in [
        (
            &["--judge", "openai:gpt-4o", "--rubric", rubric][..],
            &["--judge", "`OPENAI_API_KEY` is not set"][..],
        ),
        (
            &["--grader", "http://127.0.0.1:9/grade#token=X"],
            &["--grader", "unknown suffix"],
        ),
        // Without --rubric the judge takes the policy's judge rules
        // (`judge_without_a_rubric_…`); a rubric without a judge is an error.
        (&["--rubric", rubric], &["--rubric needs --judge"]),
        (
            &["--grader", "no-such-grader-xyz"],
            &["no-such-grader-xyz", "not found"],
        ),
    ] {
        let o = grade_cmd(&rows, &dir.path().join("o.jsonl"))
            .args(args)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .run();
        assert_usage_error(&o, needles);
    }
}

/// `--timeout` of `grade` and `judge-trust` is bounded like
/// `--agent-timeout`: a huge, infinite or zero value is a usage error, not
/// a panic (`Duration::from_secs_f64(1e300)` panicked with exit 101).
#[test]
fn a_grading_timeout_out_of_range_is_a_usage_error() {
    for value in ["1e300", "1e20", "inf", "NaN", "0"] {
        let o = sparring()
            .args(["grade", "rows.jsonl", "--timeout", value, "-o", "out.jsonl"])
            .output()
            .unwrap();
        assert_usage_error(&o, &["--timeout", "seconds"]);
        let o = sparring()
            .args([
                "judge-trust",
                "rows.jsonl",
                "--judge",
                "command:true",
                "--rubric",
                "r.txt",
                "--timeout",
                value,
            ])
            .output()
            .unwrap();
        assert_usage_error(&o, &["--timeout", "seconds"]);
    }
}
