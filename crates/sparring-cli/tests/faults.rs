//! Fault injection, end to end: agents that hang, crash, reply twice, print
//! garbage or bad UTF-8, close stdout; backends that hang, answer 401 or
//! reset the connection; a wrapper whose child keeps stdout open while
//! sparring is killed. For each: rows written, rows lost (rows that ended
//! in an error), duplicates, invalid lines, exit code and message — the
//! figures of `docs/reliability.md` (run with `--nocapture` to print its
//! table rows). Then the secrets test: every verb run with marker keys in
//! the environment, in URLs and on command lines, and every output file and
//! stream grepped for them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::Value;
use sparring_testkit::fake_llm::{BackgroundFake as Fake, Behaviour, FakeOptions, Reply};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn sparring() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sparring"));
    c.current_dir(workspace());
    c.env("NO_PROGRESS", "1");
    c
}

fn spec() -> PathBuf {
    workspace().join("examples/support-desk/spec.yaml")
}

fn agent_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/agents")
        .join(name)
}

/// What a run left behind.
#[derive(Debug)]
struct Outcome {
    rows: usize,
    /// Rows that ended in `agent_error` or `backend_error`.
    lost: usize,
    duplicates: usize,
    invalid: usize,
    exit: Option<i32>,
    stopped: String,
    stderr: String,
    seconds: f64,
}

impl Outcome {
    /// One row of the table in docs/reliability.md.
    fn print(&self, fault: &str) {
        let message = self
            .stderr
            .lines()
            .find(|l| l.starts_with("error") || l.starts_with("warning"))
            .unwrap_or("")
            .chars()
            .take(110)
            .collect::<String>();
        println!(
            "| {fault} | {} | {} | {} | {} | {} | {} | {:.1} | {message} |",
            self.rows,
            self.lost,
            self.duplicates,
            self.invalid,
            self.exit
                .map_or_else(|| "signal".to_owned(), |c| c.to_string()),
            self.stopped,
            self.seconds
        );
    }
}

fn outcome(out: &Path, o: &Output, seconds: f64) -> Outcome {
    let text = std::fs::read_to_string(out.join("rows.jsonl")).unwrap_or_default();
    let (mut rows, mut lost, mut invalid) = (0, 0, 0);
    let mut ids = BTreeSet::new();
    let mut duplicates = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(row) = serde_json::from_str::<Value>(line) else {
            invalid += 1;
            continue;
        };
        rows += 1;
        if !ids.insert(row["row_id"].as_str().unwrap_or("").to_owned()) {
            duplicates += 1;
        }
        if matches!(
            row["ended_by"].as_str(),
            Some("agent_error" | "backend_error")
        ) {
            lost += 1;
        }
    }
    let stopped = std::fs::read_to_string(out.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["stopped_because"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "(no run.json)".to_owned());
    Outcome {
        rows,
        lost,
        duplicates,
        invalid,
        exit: o.status.code(),
        stopped,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        seconds,
    }
}

const BUDGET: &str = "24";

fn simulate(agent: &str, out: &Path, extra: &[&str]) -> Outcome {
    let started = Instant::now();
    let o = sparring()
        .arg("simulate")
        .arg(spec())
        .args(["--agent", agent, "--budget", BUDGET, "--concurrency", "8"])
        .args(["--seed", "5", "--quiet", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    outcome(out, &o, started.elapsed().as_secs_f64())
}

/// Each agent fault, at concurrency 8, with a one-at-a-time agent whose
/// one culprit conversation gets the fault on every request: the fault
/// costs that row only (none for a second reply), nothing is duplicated or
/// torn, the run finishes and exits 0.
#[test]
fn agent_faults_cost_their_own_row_only() {
    for mode in [
        "ok",
        "hang",
        "crash",
        "garbage",
        "twice",
        "unknown-id",
        "badutf8",
        "closeout",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let agent = format!(
            "python3 {} {mode} {}",
            agent_script("faults.py").display(),
            dir.path().join("culprit").display()
        );
        let out = dir.path().join("run");
        let o = simulate(&agent, &out, &["--agent-timeout", "3"]);
        o.print(&format!("agent: {mode}"));
        assert_eq!(o.exit, Some(0), "{mode}: {}", o.stderr);
        assert_eq!(o.rows.to_string(), BUDGET, "{mode}: {o:?}");
        assert_eq!((o.duplicates, o.invalid), (0, 0), "{mode}: {o:?}");
        let expected = usize::from(!matches!(mode, "ok" | "twice"));
        assert_eq!(o.lost, expected, "{mode}: {o:?}");
        assert!(!o.stderr.contains("panicked"), "{mode}: {}", o.stderr);
        let log = std::fs::read_to_string(out.join("run.log")).unwrap();
        if expected == 1 {
            assert!(log.contains("restarting it"), "{mode}: {log}");
        }
    }
}

fn fake(options: FakeOptions) -> Fake {
    Fake::start(options).unwrap()
}

/// A server that accepts connections and resets them at once.
fn resetting_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        // Unread data at close makes the kernel send a reset.
        for stream in listener.incoming().flatten() {
            std::thread::sleep(Duration::from_millis(20));
            drop(stream);
        }
    });
    format!("http://{addr}/v1")
}

/// Backend faults. A dead backend (every request hangs, 401s or is reset)
/// fails every row it is asked for, so the run stops after the first few
/// (`agent_unavailable`, exit 1) instead of failing them all; a backend that
/// fails one request costs that row only.
#[test]
fn backend_faults() {
    let flags = ["--agent-timeout", "1", "--retries", "1"];
    let hang = fake(FakeOptions {
        latency: Duration::from_secs(30),
        ..FakeOptions::default()
    });
    let unauthorized = fake(FakeOptions {
        behaviour: Behaviour::Status(401),
        ..FakeOptions::default()
    });
    let reset = resetting_server();
    for (fault, url) in [
        ("backend: hangs", hang.server.base_url()),
        ("backend: 401", unauthorized.server.base_url()),
        ("backend: resets", reset),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let o = simulate(&format!("openai:m@{url}"), &out, &flags);
        o.print(fault);
        assert_eq!(o.exit, Some(1), "{fault}: {}", o.stderr);
        assert_eq!(o.stopped, "agent_unavailable", "{fault}: {o:?}");
        assert_eq!(o.lost, o.rows, "{fault}: {o:?}");
        assert!(o.rows < 24 && o.rows >= 3, "{fault}: {o:?}");
        assert_eq!((o.duplicates, o.invalid), (0, 0), "{fault}: {o:?}");
        assert!(o.seconds < 60.0, "{fault}: {o:?}");
    }
    // One request fails, the rest answer.
    for (fault, reply) in [
        ("backend: one 401", Reply::error(401, "invalid key")),
        (
            "backend: one hang",
            Reply::Delayed(Duration::from_secs(5), Box::new(Reply::Text("late".into()))),
        ),
    ] {
        let f = fake(FakeOptions {
            behaviour: Behaviour::Text,
            ..FakeOptions::default()
        });
        // No retry: the one scripted fault is the first request's, whose
        // retry another request's first attempt could otherwise take.
        f.server.push([reply]);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let o = simulate(
            &format!("openai:m@{}", f.server.base_url()),
            &out,
            &["--agent-timeout", "1", "--retries", "0"],
        );
        o.print(fault);
        assert_eq!(o.exit, Some(0), "{fault}: {}", o.stderr);
        assert_eq!(o.rows.to_string(), BUDGET, "{fault}: {o:?}");
        assert_eq!(o.lost, 1, "{fault}: {o:?}");
        assert_eq!((o.duplicates, o.invalid), (0, 0), "{fault}: {o:?}");
    }
}

/// Processes whose process group is `pgid` (Linux `/proc`), zombies left
/// out (they are dead, waiting to be reaped by whoever adopted them).
#[cfg(target_os = "linux")]
fn group_members(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split(' ').collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
            out.push(pid);
        }
    }
    out
}

#[cfg(target_os = "linux")]
fn process_group_of(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(stat.rsplit_once(") ")?.1.split(' ').nth(2)?.to_owned())
}

/// sparring killed with SIGKILL mid-run, its agent a wrapper (`sh`) whose
/// child (`sleep`) keeps stdout open and whose other child is the real
/// agent, hung: no process of the agent's group outlives sparring. The
/// agent's group is not sparring's, so a terminal's Ctrl-C never reaches it.
#[cfg(target_os = "linux")]
#[test]
fn children_die_with_sparring_even_under_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("agent.pid");
    let agent = format!(
        "sh -c 'echo $$ > {}; sleep 1000 & python3 {} hang {} 1'",
        pidfile.display(),
        agent_script("faults.py").display(),
        dir.path().join("culprit").display()
    );
    let mut child = sparring()
        .arg("simulate")
        .arg(spec())
        .args(["--agent", &agent, "--budget", "4", "--quiet", "--out"])
        .arg(dir.path().join("run"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let leader: u32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            && group_members(pid).len() >= 3
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the agent never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_ne!(
        process_group_of(leader),
        process_group_of(child.id()),
        "the agent shares sparring's process group"
    );
    let before = group_members(leader);
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !group_members(leader).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let after = group_members(leader);
    println!(
        "| kill -9 of sparring, agent a wrapper with a child holding stdout | processes in the agent's group: {} before, {} after |",
        before.len(),
        after.len()
    );
    assert!(after.is_empty(), "orphans left: {after:?} (of {before:?})");
}
