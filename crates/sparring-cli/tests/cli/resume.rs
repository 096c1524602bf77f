//! `--resume` after a crash or Ctrl-C.

use super::*;
use std::collections::BTreeMap;
use std::io::Write as _;

fn slow_agent() -> String {
    let script = agent_script("slow.py");
    format!("python3 {}", script.display())
}

fn simulate_into(out: &Path, resume: bool) -> Command {
    let mut c = simulate_cmd(example_spec(), &slow_agent(), out);
    c.args(["--repeats", "2", "--concurrency", "4", "--grade"]);
    if resume {
        c.arg("--resume");
    }
    c
}

#[test]
fn a_killed_run_resumes_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut child = simulate_into(&out, false)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let rows_path = out.join("rows.jsonl");
    let started = std::time::Instant::now();
    loop {
        let n = std::fs::read_to_string(&rows_path).map_or(0, |t| t.lines().count());
        if n >= 12 {
            break;
        }
        assert!(
            started.elapsed().as_secs() < 60,
            "the run never wrote 12 rows"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    let before = read_rows(&rows_path).len();
    // A row torn in the middle of its write, as a kill can leave it.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&rows_path)
        .unwrap();
    f.write_all(b"{\"schema_version\": 1, \"row_id\": \"row_")
        .unwrap();
    drop(f);

    let o = simulate_into(&out, true).run_ok();
    assert_stderr_has(&o, "repaired");
    let rows = read_rows(&rows_path);
    assert_valid_rows(&rows);
    assert!(rows.len() > before);
    let mut per_task: BTreeMap<String, u32> = BTreeMap::new();
    for r in &rows {
        *per_task
            .entry(r["task_id"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    assert!(
        per_task.values().all(|n| *n == 2),
        "every task exactly k=2 times: {per_task:?}"
    );
    let ids: std::collections::BTreeSet<&str> = texts(&rows, "row_id").into_iter().collect();
    assert_eq!(ids.len(), rows.len(), "no row twice");
    let summary = run_json(&out);
    assert_eq!(summary["counts"]["rows"], rows.len());
    assert_eq!(summary["stopped_because"], "situations_exhausted");

    // Resuming a finished run runs nothing more.
    simulate_into(&out, true).run_ok();
    assert_eq!(read_rows(&rows_path).len(), rows.len());
}

#[test]
fn resume_refuses_another_run_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = simulate_into(&out, true).run();
    assert_usage_error(&o, &["nothing to resume"]);
    simulate_cmd(example_spec(), &slow_agent(), &out)
        .args(["--budget", "2"])
        .run_ok();
    let o = simulate_into(&out, true).run();
    assert_usage_error(&o, &["holds rows of run", "same spec and options"]);
}
