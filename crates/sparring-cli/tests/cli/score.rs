//! The scoring commands over hand-written rows, with hand-computed figures.
//!
//! Figures that are exact (p-values from enumeration, constant differences)
//! are compared exactly; short names mirror the JSON they read.

#![allow(clippy::float_cmp, clippy::many_single_char_names)]

use super::*;
use serde_json::json;

const EPS: f64 = 1e-12;

/// A minimal row: only what the line says, plus `extra` merged in.
fn row(task: &str, reward: Option<f64>, extra: &Value) -> String {
    let mut r = json!({"task_id": task, "reward": reward});
    if let Some(map) = extra.as_object() {
        for (k, v) in map {
            r[k] = v.clone();
        }
    }
    r.to_string()
}

fn rows_file(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    write(dir, name, &(lines.join("\n") + "\n"))
}

/// `sparring COMMAND FILES… --json EXTRA…`, whatever its exit code.
fn json_run(command: &str, files: &[&Path], extra: &[&str]) -> Output {
    sparring()
        .arg(command)
        .args(files)
        .arg("--json")
        .args(extra)
        .run()
}

fn json_of(o: &Output) -> Value {
    assert_exit(o, 0);
    stdout_json(o)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Task a: 2 of 4 pass (tool x, ordinary); b: 4 of 4 (tool y, seed);
/// c: 0 of 1 (tool x); d: one ungraded row.
fn report_fixture(dir: &Path) -> PathBuf {
    let x =
        json!({"situation": {"axes": {"tool": "x"}, "tier": "ordinary"}, "ended_by": "agent_done"});
    let y = json!({"situation": {"axes": {"tool": "y"}, "tier": "seed"}});
    let fail =
        json!({"situation": {"axes": {"tool": "x"}}, "failure_class": "claimed_without_call"});
    let mut lines = Vec::new();
    for r in [1.0, 0.0, 1.0, 0.0] {
        lines.push(row("a", Some(r), &x));
    }
    for _ in 0..4 {
        lines.push(row("b", Some(1.0), &y));
    }
    lines.push(row("c", Some(0.0), &fail));
    lines.push(row("d", None, &x));
    rows_file(dir, "rows.jsonl", &lines)
}

#[test]
fn report_table_leaves_out_k_no_task_reaches() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|t| row(t, Some(1.0), &json!({})))
        .collect();
    let p = rows_file(dir.path(), "rows.jsonl", &lines);
    let o = sparring().arg("report").arg(&p).run_ok();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("   1   100.0%   100.0%      3"), "{text}");
    assert!(!text.contains("\n   2  "), "{text}");
    assert!(
        text.contains("k = 2, 4: no task has that many graded rows"),
        "{text}"
    );
    // With two rows a task, k = 2 is measured and shown.
    let lines: Vec<String> = ["a", "a", "b", "b"]
        .iter()
        .map(|t| row(t, Some(1.0), &json!({})))
        .collect();
    let p = rows_file(dir.path(), "rows2.jsonl", &lines);
    let o = sparring_on("report", &p);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("\n   2   100.0%   100.0%      2"), "{text}");
    assert!(text.contains("k = 4: no task"), "{text}");
}

#[test]
fn report_json_contract_with_hand_computed_figures() {
    let dir = tempfile::tempdir().unwrap();
    let p = report_fixture(dir.path());
    let run = |extra: &[&str]| json_run("report", &[&p], extra);
    let r = json_of(&run(&[]));
    assert_eq!(r["n_rows"], 10);
    assert_eq!(r["n_tasks"], 4);
    assert_eq!(r["n_ungraded"], 1);
    // pass@1 = mean(2/4, 4/4, 0/1).
    assert!((f(&r["pass_at_1"]["value"]) - 0.5).abs() < EPS);
    let (lo, hi) = (f(&r["pass_at_1"]["ci95"][0]), f(&r["pass_at_1"]["ci95"][1]));
    assert!((0.0..=0.5).contains(&lo) && (0.5..=1.0).contains(&hi) && lo < hi);
    // Default k = 1, 2, 4. pass@2: a 1 − C(2,2)/C(4,2) = 5/6, b 1.
    // pass^2: a C(2,2)/C(4,2) = 1/6, b 1. pass@4: 1, 1; pass^4: 0, 1.
    assert!((f(&r["pass_at_k"]["1"]) - 0.5).abs() < EPS);
    assert!((f(&r["pass_at_k"]["2"]) - 11.0 / 12.0).abs() < EPS);
    assert!((f(&r["pass_hat_k"]["2"]) - 7.0 / 12.0).abs() < EPS);
    assert!((f(&r["pass_at_k"]["4"]) - 1.0).abs() < EPS);
    assert!((f(&r["pass_hat_k"]["4"]) - 0.5).abs() < EPS);
    assert_eq!(r["tasks_at_k"], json!({"1": 3, "2": 2, "4": 2}));
    // tool=x holds a (2/4) and c (0/1); d is ungraded.
    let x = &r["by_category"]["tool=x"];
    assert_eq!(x["n_tasks"], 2);
    assert!((f(&x["pass_at_1"]["value"]) - 0.25).abs() < EPS);
    let y = &r["by_category"]["tool=y"];
    assert_eq!(y["pass_at_1"], json!({"value": 1.0, "ci95": [1.0, 1.0]}));
    assert_eq!(r["by_category"]["tier=seed"]["n_tasks"], 1);
    assert_eq!(r["by_category"]["tier=ordinary"]["n_tasks"], 1);
    assert_eq!(
        r["failures"],
        json!({"claimed_without_call": 1, "unspecified": 2})
    );
    assert_eq!(r["ended_by"]["agent_done"], 5);

    // Seeded: the same seed gives the same bytes.
    assert_eq!(run(&["--seed", "7"]).stdout, run(&["--seed", "7"]).stdout);
    // Other k.
    let r = json_of(&run(&["--k", "3"]));
    assert_eq!(r["tasks_at_k"], json!({"3": 2}));
    assert!((f(&r["pass_hat_k"]["3"]) - 0.5).abs() < EPS);
    // No task has 9 graded rows.
    let r = json_of(&run(&["--k", "9"]));
    assert_eq!(r["pass_at_k"]["9"], Value::Null);
    assert_eq!(run(&["--k", "0"]).status.code(), Some(2));

    // The table.
    let o = sparring_on("report", &p);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("pass@1 50.0% ["), "{text}");
    assert!(text.contains("tool=x"), "{text}");
    assert!(text.contains("failures: claimed_without_call 1"), "{text}");
}

#[test]
fn bad_rows_are_one_line_errors_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let ok = row("a", Some(1.0), &json!({}));
    let cases: [(&str, String, &[&str]); 4] = [
        (
            "no_task.jsonl",
            format!("{ok}\n{{\"reward\": 1}}\n"),
            &["no_task.jsonl", "line 2", "missing `task_id`"],
        ),
        (
            "text_reward.jsonl",
            format!("{ok}\n\n{}\n", json!({"task_id": "a", "reward": "yes"})),
            &["text_reward.jsonl", "line 3", "`reward` must be a number"],
        ),
        ("empty.jsonl", String::new(), &["empty.jsonl", "no rows"]),
        (
            "not_json.jsonl",
            format!("{ok}\nnope\n"),
            &["not_json.jsonl", "line 2", "not JSON"],
        ),
    ];
    for (name, text, needles) in cases {
        let p = write(dir.path(), name, &text);
        for command in ["report", "hack-scan", "eval-variance"] {
            assert_usage_error(&sparring_on(command, &p), needles);
        }
        let good = write(dir.path(), "good.jsonl", &ok);
        let o = sparring().arg("delta").arg(&good).arg(&p).run();
        assert_usage_error(&o, needles);
    }
    // Other tools' rows: only task_id and reward, integer ids, no reward.
    let p = write(
        dir.path(),
        "foreign.jsonl",
        "{\"task_id\": 1, \"reward\": 1}\n{\"task_id\": 1, \"reward\": null, \"extra\": [1]}\n",
    );
    let r = json_of(&json_run("report", &[&p], &[]));
    assert_eq!(r["n_ungraded"], 1);
    assert_eq!(r["by_category"], json!({}));
}

/// BEFORE: a 0/2, b 1/2, c 1/1, e (only before). AFTER: a 1/1, b 2/2,
/// c 1/1, f (only after). Markers: `politeness` falls by 2 on every
/// task, `speed` rises by 1.
fn delta_fixture(dir: &Path) -> (PathBuf, PathBuf) {
    let m = |tool: &str, politeness: f64, speed: f64| {
        json!({"situation": {"axes": {"tool": tool}, "tier": "ordinary"},
               "markers": {"politeness": politeness, "speed": speed, "note": "not a number"}})
    };
    // Each task's tool, its rewards before and its rewards after.
    let tasks: [(&str, &str, &[f64], &[f64]); 5] = [
        ("a", "x", &[0.0, 0.0], &[1.0]),
        ("b", "y", &[1.0, 0.0], &[1.0, 1.0]),
        ("c", "y", &[1.0], &[1.0]),
        ("e", "y", &[1.0], &[]),
        ("f", "y", &[], &[0.0]),
    ];
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for (task, tool, rewards_before, rewards_after) in tasks {
        before.extend(
            rewards_before
                .iter()
                .map(|&r| row(task, Some(r), &m(tool, 5.0, 1.0))),
        );
        after.extend(
            rewards_after
                .iter()
                .map(|&r| row(task, Some(r), &m(tool, 3.0, 2.0))),
        );
    }
    (
        rows_file(dir, "before.jsonl", &before),
        rows_file(dir, "after.jsonl", &after),
    )
}

#[test]
fn delta_json_contract_and_must_not_regress() {
    let dir = tempfile::tempdir().unwrap();
    let (before, after) = delta_fixture(dir.path());
    let run = |extra: &[&str]| json_run("delta", &[&before, &after], extra);
    let d = json_of(&run(&[]));
    assert_eq!(d["n_paired"], 3);
    assert_eq!(d["n_unpaired"], 2);
    // Differences 1, 0.5, 0.
    assert!((f(&d["before"]) - 0.5).abs() < EPS);
    assert!((f(&d["after"]) - 1.0).abs() < EPS);
    assert!((f(&d["delta"]) - 0.5).abs() < EPS);
    // Two non-zero differences: ±1 ± 0.5; |sum| ≥ 1.5 in 2 of 4.
    assert_eq!(f(&d["p_value"]), 0.5);
    // All three resampled as 0 has chance 1/27 > 2.5 %: lo is 0.
    assert_eq!(f(&d["ci95"][0]), 0.0);
    assert!(f(&d["ci95"][1]) <= 1.0);
    assert_eq!(d["verdict"], "inconclusive");
    let x = &d["by_category"]["tool=x"];
    assert_eq!(x["n_paired"], 1);
    assert_eq!(f(&x["delta"]), 1.0);
    assert_eq!(x["ci95"], json!([1.0, 1.0]));
    assert_eq!(f(&x["p_value"]), 1.0, "one flip of one difference");
    assert_eq!(d["by_category"]["tier=ordinary"]["n_paired"], 3);
    let pol = &d["markers"]["politeness"];
    assert_eq!(f(&pol["delta"]), -2.0);
    assert_eq!(pol["ci95"], json!([-2.0, -2.0]));
    assert_eq!(pol["must_not_regress"], false);
    assert_eq!(pol["failed"], false);
    assert!(d["markers"].get("note").is_none(), "non-numeric marker");

    // Guarded: politeness regresses, so exit 1 naming it; speed passes.
    let o = run(&[
        "--must-not-regress",
        "politeness",
        "--must-not-regress",
        "speed",
    ]);
    assert_exit(&o, 1);
    let d = stdout_json(&o);
    assert_eq!(d["markers"]["politeness"]["failed"], true);
    assert_eq!(d["markers"]["speed"]["must_not_regress"], true);
    assert_eq!(d["markers"]["speed"]["failed"], false);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("must-not-regress") && err.contains("`politeness`"),
        "{err}"
    );
    assert!(!err.contains("speed"), "{err}");
    assert_eq!(run(&["--must-not-regress", "speed"]).status.code(), Some(0));

    // A guard on a marker no row carries is bad input.
    assert_usage_error(
        &run(&["--must-not-regress", "kindness"]),
        &["kindness", "politeness, speed"],
    );
    // No task in common.
    let other = rows_file(
        dir.path(),
        "other.jsonl",
        &[row("z", Some(1.0), &json!({}))],
    );
    let o = sparring().arg("delta").arg(&before).arg(&other).run();
    assert_usage_error(&o, &["no graded task in common", "other.jsonl"]);
    // The table says the verdict.
    let o = sparring().arg("delta").arg(&before).arg(&after).run();
    assert!(String::from_utf8_lossy(&o.stdout).contains("inconclusive"));
}

#[test]
fn delta_verdict_improved_when_the_interval_clears_zero() {
    let dir = tempfile::tempdir().unwrap();
    let tasks: Vec<String> = (0..30).map(|i| format!("t{i}")).collect();
    let before: Vec<String> = tasks
        .iter()
        .map(|t| row(t, Some(0.0), &json!({})))
        .collect();
    let after: Vec<String> = tasks
        .iter()
        .map(|t| row(t, Some(1.0), &json!({})))
        .collect();
    let b = rows_file(dir.path(), "b.jsonl", &before);
    let a = rows_file(dir.path(), "a.jsonl", &after);
    let d = json_of(&json_run("delta", &[&b, &a], &[]));
    assert_eq!(d["verdict"], "improved");
    // 30 non-zero differences: Monte Carlo, p = (1 + 2·~0) / (1 + 100,000).
    assert!(f(&d["p_value"]) < 1e-4);
    let d = json_of(&json_run("delta", &[&a, &b], &[]));
    assert_eq!(d["verdict"], "regressed");
}

#[test]
fn judge_agreement_json_contract() {
    let dir = tempfile::tempdir().unwrap();
    // Judge (reward) T T F T F against gold T F F T T on r1..r5.
    let judge = [1.0, 1.0, 0.0, 1.0, 0.0];
    let mut lines: Vec<String> = judge
        .iter()
        .enumerate()
        .map(|(i, &r)| row("t", Some(r), &json!({"row_id": format!("r{}", i + 1)})))
        .collect();
    lines.push(row("t", None, &json!({"row_id": "r6"})));
    let rows = rows_file(dir.path(), "rows.jsonl", &lines);
    let labels = write(
        dir.path(),
        "labels.jsonl",
        &[
            json!({"row_id": "r1", "label": true, "author": "ann"}),
            json!({"row_id": "r2", "label": "fail", "author": "ann"}),
            json!({"row_id": "r3", "label": 0, "author": "bo"}),
            json!({"row_id": "r4", "label": 1.0, "author": "bo"}),
            json!({"row_id": "r5", "label": "pass", "author": "bo"}),
            json!({"row_id": "r1", "label": false}),
            json!({"row_id": "r9", "label": true, "author": "ann"}),
            json!({"row_id": "r6", "label": true, "author": "ann"}),
        ]
        .map(|v| v.to_string())
        .join("\n"),
    );
    let run = |labels: &Path| {
        json_run(
            "judge-agreement",
            &[&rows],
            &["--labels", labels.to_str().unwrap()],
        )
    };
    let j = json_of(&run(&labels));
    assert_eq!(j["n"], 5);
    assert!((f(&j["agreement"]) - 0.6).abs() < EPS);
    // statsmodels proportion_confint(3, 5, method="wilson").
    assert!((f(&j["agreement_ci95"][0]) - 0.230_724_281_276_012_9).abs() < 1e-9);
    assert!((f(&j["agreement_ci95"][1]) - 0.882_379_225_767_352_2).abs() < 1e-9);
    // p_o = 0.6, p_e = 0.6·0.6 + 0.4·0.4 = 0.52: kappa = 0.08 / 0.48.
    assert!((f(&j["kappa"]) - 1.0 / 6.0).abs() < 1e-9);
    // Gold fails r2 (judge passed) and r3 (judge failed).
    assert!((f(&j["pass_when_gold_fail"]) - 0.5).abs() < EPS);
    assert_eq!(j["unmeasured"], 1);
    assert_eq!(j["unmatched"], 1);
    assert_eq!(j["ungraded"], 1);
    assert_eq!(j["authors"], json!({"ann": 2, "bo": 3}));

    // Bad labels files: each a one-line usage error.
    for (name, text, needles) in [
        (
            "bad.jsonl",
            format!(
                "{}\n{}\n",
                json!({"row_id": "r1", "label": true, "author": "a"}),
                json!({"row_id": "r2", "label": "maybe"})
            ),
            &["bad.jsonl", "line 2", "`label` must be"][..],
        ),
        (
            "unsigned.jsonl",
            json!({"row_id": "r1", "label": true}).to_string(),
            &["no authored label", "1 unmeasured"],
        ),
        (
            "twice.jsonl",
            format!(
                "{}\n{}\n",
                json!({"row_id": "r1", "label": true, "author": "a"}),
                json!({"row_id": "r1", "label": false, "author": "b"})
            ),
            &["twice.jsonl", "line 2", "second label"],
        ),
        (
            "empty_labels.jsonl",
            "\n".to_owned(),
            &["empty_labels.jsonl", "no labels"],
        ),
    ] {
        let labels = write(dir.path(), name, &text);
        assert_usage_error(&run(&labels), needles);
    }
}

#[test]
fn hack_scan_flags_a_feature_that_tracks_reward_within_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let reply = |chars: usize| {
        json!({"messages": [
            {"role": "user", "content": "help"},
            {"role": "assistant", "content": "x".repeat(chars)}
        ]})
    };
    let mut lines = Vec::new();
    // 12 tasks × 6 rows, 3 passing and 3 failing in each: passing
    // replies are long, failing ones short; the lengths vary a little.
    for t in 0..12 {
        for i in 0..6 {
            let pass = i % 2 == 0;
            let chars = if pass { 200 + 7 * i + t } else { 40 + 5 * i };
            lines.push(row(
                &format!("t{t}"),
                Some(f64::from(u8::from(pass))),
                &reply(chars),
            ));
        }
    }
    let p = rows_file(dir.path(), "rows.jsonl", &lines);
    let h = json_of(&json_run("hack-scan", &[&p], &[]));
    // Each task: rewards 0/1 half and half, mean 0.5 everywhere.
    assert!((f(&h["within_task_var"]) - 0.25).abs() < EPS);
    assert!(f(&h["between_task_var"]).abs() < EPS);
    let floor = f(&h["floor"]);
    let features = h["features"].as_array().unwrap();
    let get = |name: &str| features.iter().find(|x| x["name"] == name).unwrap();
    assert!(f(&get("reply_chars")["corr"]) > 0.9);
    assert!(f(&get("reply_chars")["corr"]) > floor && floor > 0.0);
    assert_eq!(get("reply_chars")["flagged"], true);
    assert_eq!(get("tool_calls")["corr"], 0.0);
    assert_eq!(get("tool_calls")["flagged"], false);
    assert_eq!(get("turns")["flagged"], false);
    assert_eq!(features.len(), 8);

    let ungraded = rows_file(dir.path(), "ungraded.jsonl", &[row("a", None, &json!({}))]);
    let o = sparring_on("hack-scan", &ungraded);
    assert_usage_error(&o, &["ungraded.jsonl", "no graded row"]);
}

#[test]
fn eval_variance_per_eval_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = |r: u64| json!({"lineage": {"eval_run": r}});
    let mut lines = Vec::new();
    // Runs 0, 1, 2 over tasks a and b: pass@1 0.5, 0.75, 1.0.
    for (r, a, b) in [
        (0, [1.0, 0.0], [1.0, 0.0]),
        (1, [1.0, 1.0], [1.0, 0.0]),
        (2, [1.0, 1.0], [1.0, 1.0]),
    ] {
        for x in a {
            lines.push(row("a", Some(x), &run(r)));
        }
        for x in b {
            lines.push(row("b", Some(x), &run(r)));
        }
    }
    lines.push(row("a", None, &run(3)));
    let p = rows_file(dir.path(), "rows.jsonl", &lines);
    let v = json_of(&json_run("eval-variance", &[&p], &[]));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "run 3 has no graded row");
    assert_eq!(runs[1]["eval_run"], 1);
    assert!((f(&runs[1]["pass_at_1"]) - 0.75).abs() < EPS);
    assert!((f(&v["mean"]) - 0.75).abs() < EPS);
    assert!((f(&v["std"]) - 0.25).abs() < EPS);
    // One run: no spread.
    let one = rows_file(dir.path(), "one.jsonl", &lines[..4]);
    let v = json_of(&json_run("eval-variance", &[&one], &[]));
    assert_eq!(v["std"], Value::Null);
}

/// The end-to-end check on a simulated run with repeats.
#[test]
fn simulated_run_report_order_and_self_delta() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    simulate_example(&out, &["--grade", "--repeats", "4"]).run_ok();
    let r = json_of(&json_run("report", &[&out], &[]));
    let p1 = f(&r["pass_at_1"]["value"]);
    assert!(p1 > 0.0 && p1 < 1.0, "{p1}");
    for k in ["1", "2", "4"] {
        let at = f(&r["pass_at_k"][k]);
        let hat = f(&r["pass_hat_k"][k]);
        assert!(at + EPS >= p1 && p1 + EPS >= hat, "k={k}: {at} {p1} {hat}");
        assert_eq!(r["tasks_at_k"][k], r["n_tasks"], "every task ran 4 times");
    }
    let d = json_of(&json_run("delta", &[&out, &out], &[]));
    assert_eq!(d["delta"], 0.0);
    assert_eq!(d["ci95"], json!([0.0, 0.0]));
    assert_eq!(d["p_value"], 1.0);
    assert_eq!(d["verdict"], "inconclusive");
    assert_eq!(d["n_paired"], r["n_tasks"]);
    assert_eq!(d["n_unpaired"], 0);
    let h = json_of(&json_run("hack-scan", &[&out], &[]));
    let total = f(&h["within_task_var"]) + f(&h["between_task_var"]);
    assert!(
        (total - p1 * (1.0 - p1)).abs() < 1e-9,
        "0/1 rewards, equal repeats"
    );
    let v = json_of(&json_run("eval-variance", &[&out], &[]));
    assert!((f(&v["mean"]) - p1).abs() < 1e-12);
}
