//! `sparring report` on simulated runs.

use super::*;

#[test]
fn bad_rows_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "rows.jsonl", "{\"schema_version\": 1}\n");
    let o = sparring_on("report", &p);
    assert_usage_error(&o, &["rows.jsonl", "line 1", "missing `task_id`"]);
    let p = write(dir.path(), "empty.jsonl", "");
    let o = sparring_on("report", &p);
    assert_usage_error(&o, &["empty.jsonl", "no rows"]);
    let o = sparring_on("report", &dir.path().join("missing.jsonl"));
    assert_usage_error(&o, &["missing.jsonl", "no such file"]);
}

#[test]
fn a_torn_last_line_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    simulate_example(&out, &["--budget", "3", "--grade"]).run_ok();
    let rows = std::fs::read_to_string(out.join("rows.jsonl")).unwrap();
    let torn = &rows[..rows.len() - 20];
    let p = write(dir.path(), "torn.jsonl", torn);
    let o = sparring_on("report", &p);
    assert_usage_error(&o, &["line 3", "incomplete"]);
}
