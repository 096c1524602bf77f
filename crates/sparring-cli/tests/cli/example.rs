//! The shipped example end to end: rows valid against the schema, the report, the run summary.

use super::*;

#[test]
fn support_desk_runs_graded_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    let o = simulate_example(&out, &["--grade"]).run_ok();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("pass@1"), "{stdout}");
    assert_stderr_has(&o, "simulated ");

    let rows = valid_rows(&out);
    assert!(rows.len() >= 20, "{} rows", rows.len());
    assert!(
        rows.iter()
            .all(|r| r["usage"].is_null() && r["requests"].is_null() && r["sampling"].is_null()),
        "a command agent says nothing about sampling or tokens"
    );
    // Every row graded; the example agent's planted failure is caught,
    // and not every row fails.
    assert!(rows.iter().all(|r| r["reward"].is_number()));
    let failed: Vec<&Value> = rows.iter().filter(|r| r["reward"] == 0.0).collect();
    assert!(
        !failed.is_empty() && failed.len() < rows.len() / 2,
        "{} failed",
        failed.len()
    );
    assert!(
        failed
            .iter()
            .any(|r| r["failure_class"] == "claimed_without_call")
    );
    // Both seeds ran, word for word.
    let seeds: Vec<&str> = rows
        .iter()
        .filter(|r| r["situation"]["tier"] == "seed")
        .map(|r| r["messages"][1]["content"].as_str().unwrap())
        .collect();
    assert_eq!(seeds.len(), 2);
    assert!(seeds.contains(&"Where is my package? The order is #W1002."));
    let summary = run_json(&out);
    assert_eq!(summary["counts"]["rows"], rows.len());
    for key in [
        "stopped_because",
        "warnings",
        "degraded",
        "coverage",
        "options",
        "sparring_version",
    ] {
        assert!(summary.get(key).is_some(), "run.json lacks {key}");
    }
    assert_eq!(summary["options"]["grade"], true);
    assert_eq!(summary["options"]["max_turns"], 8, "spec options apply");

    // The report reads the run back, as a table and as JSON.
    let o = sparring().arg("report").arg(&out).arg("--json").run_ok();
    let report = stdout_json(&o);
    assert_eq!(report["n_rows"], rows.len());
    let passed = rows.len() - failed.len();
    let p = report["pass_at_1"]["value"].as_f64().unwrap();
    assert!(
        (p - passed as f64 / rows.len() as f64).abs() < 1e-9,
        "one row per task: pass@1 is the pass rate"
    );
    let ci = &report["pass_at_1"]["ci95"];
    assert!(ci[0].as_f64().unwrap() <= p && p <= ci[1].as_f64().unwrap());
    let category = &report["by_category"]["tool=refund_order"];
    assert!(category["pass_at_1"]["value"].is_number());
    assert!(category["n_tasks"].as_u64().unwrap() >= 1);
    assert!(report["by_category"]["tier=seed"]["n_tasks"] == 2);
}

#[test]
fn command_line_wins_over_spec_options_and_seed_is_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, concurrency: &str| {
        let out = dir.path().join(name);
        simulate_example(
            &out,
            &[
                "--budget",
                "7",
                "--seed",
                "5",
                "--concurrency",
                concurrency,
                "--quiet",
            ],
        )
        .run_ok();
        let mut rows: Vec<Value> = read_rows(&out.join("rows.jsonl"));
        for r in &mut rows {
            r["timings"] = Value::Null;
        }
        rows.sort_by_key(|r| r["row_id"].as_str().unwrap().to_owned());
        rows
    };
    let a = run("a", "1");
    let b = run("b", "4");
    assert_eq!(a.len(), 7);
    assert!(a == b, "same seed, same rows at concurrency 1 and 4");
    assert!(
        a.iter().all(|r| r["reward"].is_null()),
        "ungraded without --grade"
    );
}
