//! The text tables of the reports over rows whose values are long: a
//! category value (an axis value, a goal kind), a marker name or an eval
//! run's name is data, never a format width (issue 39: `report` panicked
//! with "Formatting argument out of range" at 65,535 characters; a tier is
//! one of a closed list, refused when unknown).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring_score::input::{ScoreRow, parse_score_rows};
use sparring_score::{delta, eval_variance, report};
use std::path::Path;

/// Longer than the widest format width (`u16::MAX`).
const LONG: usize = 70_000;

fn rows() -> Vec<ScoreRow> {
    let long = "x".repeat(LONG);
    let line = |task: &str, reward: u8, value: &str| {
        serde_json::json!({
            "task_id": task,
            "reward": reward,
            "situation": {
                "tier": "seed",
                "axes": {"stance": value, "tool": "get_order"},
                "goal": {"kind": value},
            },
            "markers": {value: 1.0, "turns": 2.0},
            "lineage": {"eval_run": value},
        })
        .to_string()
    };
    let text = [
        line("t1", 1, &long),
        line("t2", 0, &long),
        line("t3", 1, "short"),
        line("t4", 0, "short"),
    ]
    .join("\n");
    parse_score_rows(Path::new("rows.jsonl"), &text).unwrap()
}

/// No line but the long value's own is stretched to its width.
fn assert_short_lines_stay_short(text: &str) {
    assert!(
        text.contains(&"x".repeat(LONG)),
        "the long value is shown whole"
    );
    for line in text.lines().filter(|l| !l.contains("xxxx")) {
        assert!(
            line.chars().count() < 300,
            "a padded line: {} chars",
            line.len()
        );
    }
}

#[test]
fn report_renders_a_category_value_longer_than_any_format_width() {
    let rows = rows();
    let r = report::report(&rows, &report::ReportOptions::default()).unwrap();
    let text = report::render(&r);
    assert!(text.contains("tool=get_order"), "{}", &text[..200]);
    assert_short_lines_stay_short(&text);
}

#[test]
fn delta_renders_a_long_category_and_marker() {
    let rows = rows();
    let d = delta::delta(&rows, &rows, ("a", "b"), &delta::DeltaOptions::default()).unwrap();
    let text = delta::render(&d);
    assert!(text.contains("turns"));
    assert_short_lines_stay_short(&text);
}

#[test]
fn eval_variance_renders_a_long_run_name() {
    let rows = rows();
    let r = eval_variance::eval_variance(&rows, "rows.jsonl").unwrap();
    let text = eval_variance::render(&r);
    assert!(text.contains("short"));
    assert_short_lines_stay_short(&text);
}
