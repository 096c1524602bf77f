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

mod common;

use common::{Run, agent_script, assert_exit, example_spec, simulate_cmd, sparring};
use serde_json::Value;
use sparring_testkit::fake_llm::{BackgroundFake as Fake, Behaviour, FakeOptions, Reply};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

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
    /// The error of the first row that ended in one.
    first_error: String,
}

impl Outcome {
    /// One row of the table in docs/reliability.md.
    fn print(&self, fault: &str) {
        let message = self
            .stderr
            .lines()
            .find(|l| l.starts_with("error") || l.starts_with("warning"))
            .unwrap_or(&self.first_error)
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
    let mut first_error = String::new();
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
            if first_error.is_empty() {
                row["error"]
                    .as_str()
                    .unwrap_or("")
                    .clone_into(&mut first_error);
            }
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
        first_error,
    }
}

const BUDGET: &str = "24";

/// The example run of the fault tests with `agent` into `out`: seed 5,
/// [`BUDGET`] rows, eight at a time.
fn fault_run(agent: &str, out: &Path) -> Command {
    fault_run_of(agent, out, BUDGET)
}

/// [`fault_run`] of `budget` rows.
fn fault_run_of(agent: &str, out: &Path, budget: &str) -> Command {
    let mut c = simulate_cmd(example_spec(), agent, out);
    c.args([
        "--budget",
        budget,
        "--concurrency",
        "8",
        "--seed",
        "5",
        "--quiet",
    ]);
    c
}

fn simulate(agent: &str, out: &Path, extra: &[&str]) -> Outcome {
    let started = Instant::now();
    let o = fault_run(agent, out).args(extra).run();
    outcome(out, &o, started.elapsed().as_secs_f64())
}

/// `tests/agents/faults.py` in `mode`, with its culprit marker in `dir`.
fn faults_agent(mode: &str, dir: &Path) -> String {
    format!(
        "python3 {} {mode} {}",
        agent_script("faults.py").display(),
        dir.join("culprit").display()
    )
}

/// A run of the faults agent that does nothing wrong into `dir/run`, which
/// must succeed: for the tests that break something afterwards. Returns
/// the agent and the run directory.
fn clean_run(dir: &Path) -> (String, PathBuf) {
    let agent = faults_agent("ok", dir);
    let run = dir.join("run");
    let o = simulate(&agent, &run, &[]);
    assert_eq!(o.exit, Some(0), "{}", o.stderr);
    (agent, run)
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
        let agent = faults_agent(mode, dir.path());
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

/// The support-desk example agent (tool calls across several requests of
/// one conversation) writing every reply of one, then four, conversations
/// twice (`tests/agents/tools_twice.py`), 48 rows at concurrency 8: no row
/// is lost, the agent is never restarted for it, and `run.json` warns.
/// Before, each such request restarted the agent and the innocent requests
/// in flight, sent again, met the next restart: 7 of 48 rows were lost with
/// one culprit; with four the run stopped as `agent_unavailable` after 10.
#[test]
fn an_agent_replying_twice_across_tool_calls_costs_no_row() {
    for culprits in [1, 4] {
        let dir = tempfile::tempdir().unwrap();
        let agent = format!(
            "python3 {} {} {culprits}",
            agent_script("tools_twice.py").display(),
            dir.path().join("culprits").display()
        );
        let out = dir.path().join("run");
        let started = Instant::now();
        let o = fault_run_of(&agent, &out, "48").run();
        let o = outcome(&out, &o, started.elapsed().as_secs_f64());
        o.print(&format!(
            "agent: twice, {culprits} conversation(s) with tool calls"
        ));
        assert_eq!(o.exit, Some(0), "{culprits}: {}", o.stderr);
        assert_eq!((o.rows, o.lost), (48, 0), "{culprits}: {o:?}");
        assert_eq!((o.duplicates, o.invalid), (0, 0), "{culprits}: {o:?}");
        let chosen = std::fs::read_to_string(dir.path().join("culprits")).unwrap();
        assert_eq!(chosen.lines().count(), culprits, "{chosen}");
        let log = std::fs::read_to_string(out.join("run.log")).unwrap();
        assert!(!log.contains("restarting it"), "{culprits}: {log}");
        assert!(log.contains("the second reply was dropped"), "{log}");
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        let warned = summary["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("replied twice to"));
        assert!(warned, "{culprits}: {}", summary["warnings"]);
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
/// stops the run early, as a command agent that never replies does
/// (`agent_unavailable`, exit 1, after `DEAD_AGENT_ROWS` errors and no
/// reply): every row written is a `backend_error` with the reason, none
/// torn or repeated, and the run does not spend its budget on more of the
/// same. A backend that fails one request costs that row only.
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
        // The rollouts in flight at the stop are written, no more.
        assert!(
            o.rows >= 3 && o.rows.to_string() != BUDGET,
            "{fault}: {o:?}"
        );
        assert_eq!(o.lost, o.rows, "{fault}: {o:?}");
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
    let mut child = simulate_cmd(example_spec(), &agent, dir.path().join("run"))
        .args(["--budget", "4", "--quiet"])
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

/// Marker secrets: each a distinct string a leak would show verbatim.
const ENV_KEY: &str = "sk-MARKERenv0001keyvalue";
const FLAG_KEY: &str = "MARKERflag0002opensesame";
const HEADER_KEY: &str = "MARKERhdr0003bearertoken";
const AUTH_VALUE: &str = "MARKERauth0004value";
const URL_PASSWORD: &str = "MARKERurlpw0005";
const STRIPE_KEY: &str = "sk_live_MARKER0006stripe";
const AWS_KEY: &str = "AKIAMARKER0007AWSKEY";
const JUDGE_KEY: &str = "MARKERjudge0008keyvalue";

/// Every form of every marker that must never appear: as given and in
/// base64 (a Basic header or an encoded key quoted back).
fn forbidden() -> Vec<String> {
    let mut out = Vec::new();
    for m in [
        ENV_KEY,
        FLAG_KEY,
        HEADER_KEY,
        AUTH_VALUE,
        URL_PASSWORD,
        STRIPE_KEY,
        AWS_KEY,
        JUDGE_KEY,
    ] {
        out.push(m.to_owned());
        out.push(sparring::types::secrets::base64(m.as_bytes()));
        out.push(sparring::types::secrets::base64(
            format!("u:{m}").as_bytes(),
        ));
    }
    // The bare marker word catches any partial echo too.
    out.push("MARKER".to_owned());
    out
}

fn assert_clean(what: &str, text: &str) {
    for f in forbidden() {
        assert!(!text.contains(&f), "`{f}` leaked into {what}:\n{text}");
    }
}

fn assert_dir_clean(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            assert_dir_clean(&path);
        } else if let Ok(bytes) = std::fs::read(&path) {
            assert_clean(
                &path.display().to_string(),
                &String::from_utf8_lossy(&bytes),
            );
        }
    }
}

/// Runs `sparring ARGS` in `dir` with the marker environment (and `stdin`
/// when given) and checks its stdout and stderr.
fn run_clean(dir: &Path, envs: &[(&str, String)], args: &[String], stdin: Option<&str>) -> Output {
    let mut c = sparring();
    c.args(args).current_dir(dir);
    for (k, v) in envs {
        c.env(k, v);
    }
    let o = if let Some(input) = stdin {
        c.run_with_stdin(input)
    } else {
        c.run()
    };
    let shown = format!("`sparring {}`", args.join(" "));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{shown}: {err}");
    assert_clean(
        &format!("stdout of {shown}"),
        &String::from_utf8_lossy(&o.stdout),
    );
    assert_clean(&format!("stderr of {shown}"), &err);
    o
}

fn words(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_owned()).collect()
}

/// Every verb, with marker keys in the environment, in URLs (with a
/// password, against a server that quotes back every credential it is
/// sent) and on command lines (every documented pattern): no marker, in any
/// form, reaches stdout, stderr or any file written.
#[test]
fn no_secret_reaches_any_output_of_any_verb() {
    let agent_server = fake(FakeOptions {
        behaviour: Behaviour::Text,
        ..FakeOptions::default()
    });
    let echo = fake(FakeOptions {
        behaviour: Behaviour::EchoKey(401),
        record: true,
        ..FakeOptions::default()
    });
    let with_password = |f: &Fake| format!("http://u:{URL_PASSWORD}@{}/v1", f.server.addr());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let envs = [
        ("OPENAI_API_KEY", ENV_KEY.to_owned()),
        ("ANTHROPIC_API_KEY", ENV_KEY.to_owned()),
        ("JUDGE_KEY", JUDGE_KEY.to_owned()),
        ("OPENAI_BASE_URL", with_password(&echo)),
    ];
    let run = |args: &[&str]| run_clean(d, &envs, &words(args), None);
    let spec = example_spec().display().to_string();
    let script = agent_script("secrets_agent.py").display().to_string();
    let agent = format!(
        "AUTH={AUTH_VALUE} python3 {script} --api-key {FLAG_KEY} --header 'Authorization: Bearer {HEADER_KEY}' -H 'x-api-key: {HEADER_KEY}' --url=http://u:{URL_PASSWORD}@h/v1 {STRIPE_KEY} {AWS_KEY}"
    );
    // The program is `AUTH=…`, which does not exist: the error must not
    // show the value. Then the real run, through `env`.
    let o = run(&["simulate", &spec, "--agent", &agent, "--out", "bad"]);
    assert_exit(&o, 2);
    let agent = format!("env {agent}");
    let writer = format!("openai:w@{}", with_password(&echo));
    let person = format!("openai:p@{}#key=JUDGE_KEY", with_password(&echo));
    let world = format!("{}/chat/completions", with_password(&echo));
    let o = run(&[
        "simulate",
        &spec,
        "--agent",
        &agent,
        "--budget",
        "6",
        "--writer",
        &writer,
        "--person",
        &person,
        "--execute",
        &world,
        "--grade",
        "--out",
        "run",
    ]);
    assert_exit(&o, 0);
    // A model agent at a URL with a password, the key from the environment.
    let model = format!("openai:m@{}", with_password(&agent_server));
    let o = run(&[
        "simulate", &spec, "--agent", &model, "--budget", "4", "--out", "model",
    ]);
    assert_exit(&o, 0);
    // A backend quoting every credential back: the rows' errors.
    let quoting = format!("openai:m@{}", with_password(&echo));
    run(&[
        "simulate",
        &spec,
        "--agent",
        &quoting,
        "--budget",
        "4",
        "--retries",
        "0",
        "--out",
        "echoed",
    ]);
    // The key from OPENAI_BASE_URL's environment alone.
    run(&[
        "simulate",
        &spec,
        "--agent",
        "openai:m",
        "--budget",
        "2",
        "--retries",
        "0",
        "--out",
        "base-url",
    ]);
    std::fs::write(d.join("rubric.txt"), "Pass when the agent helps.").unwrap();
    let grader = format!("{}/chat/completions", with_password(&echo));
    let judge = format!("openai:j@{}#key=JUDGE_KEY", with_password(&echo));
    let command_judge = format!("command:python3 {script} --token {FLAG_KEY}");
    let command_grader = format!("python3 {script} --password {FLAG_KEY}");
    run(&["grade", "run", "--grader", &grader, "-o", "graded.jsonl"]);
    run(&[
        "grade",
        "run",
        "--judge",
        &judge,
        "--rubric",
        "rubric.txt",
        "-o",
        "judged.jsonl",
    ]);
    run(&[
        "grade",
        "run",
        "--judge",
        &command_judge,
        "--rubric",
        "rubric.txt",
        "-o",
        "cjudged.jsonl",
    ]);
    run(&[
        "grade",
        "run",
        "--grader",
        &command_grader,
        "-o",
        "cgraded.jsonl",
    ]);
    let first_id = std::fs::read_to_string(d.join("run/rows.jsonl"))
        .unwrap()
        .lines()
        .next()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["row_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .unwrap();
    std::fs::write(
        d.join("labels.jsonl"),
        format!("{{\"row_id\": \"{first_id}\", \"reward\": 1}}\n"),
    )
    .unwrap();
    run(&[
        "labels",
        "attach",
        "run",
        "labels.jsonl",
        "--kind",
        "human",
        "--author",
        "ana",
        "-o",
        "labelled.jsonl",
    ]);
    run(&[
        "judge-trust",
        "labelled.jsonl",
        "--judge",
        &judge,
        "--rubric",
        "rubric.txt",
    ]);
    run(&["report", "run"]);
    run(&["delta", "run", "model"]);
    run(&["hack-scan", "run"]);
    run(&["eval-variance", "run"]);
    run(&[
        "judge-agreement",
        "labelled.jsonl",
        "--labels",
        "labels.jsonl",
    ]);
    run(&["grid", &spec]);
    std::fs::write(d.join("asks.txt"), "where is my order?\n").unwrap();
    run(&["coverage-gap", &spec, "asks.txt"]);
    run(&["asks", &spec, "--n", "2", "--writer", &writer]);
    run(&["asks", &spec, "--n", "2", "--writer", &command_judge]);
    run_clean(
        d,
        &envs,
        &words(&["world", &spec]),
        Some("{\"tool\": \"get_order\", \"arguments\": {\"order_id\": \"#W1001\"}}\n"),
    );
    run(&["select", "run", "-c", "rm", "-o", "selected.jsonl"]);
    run(&["export", "run", "-f", "openai-sft", "-o", "export.jsonl"]);
    // Every file any verb wrote.
    assert_dir_clean(d);
    // The markers really were there to leak: the agent echoed its command
    // line (masked in run.log), the server was sent the credentials.
    let log = std::fs::read_to_string(d.join("run/run.log")).unwrap();
    assert!(log.contains("stderr: argv: --api-key ***"), "{log}");
    let sent = echo.server.requests();
    assert!(
        sent.iter()
            .any(|r| r.authorizations.iter().any(|a| a.starts_with("Basic "))),
        "no Basic credentials were ever sent"
    );
    assert!(
        sent.iter()
            .any(|r| r.authorization.as_deref() == Some(format!("Bearer {JUDGE_KEY}").as_str())),
        "the judge's key was never sent"
    );
}

/// A judge nobody answers (a closed port): `grade` grades 8 rows at a time
/// and stops after 8 rows in a row whose hooks all failed, exit 1, naming
/// the failure — instead of a timeout and its retries on every row, then
/// exit 0.
#[test]
fn a_dead_judge_stops_the_grading_pass() {
    let dir = tempfile::tempdir().unwrap();
    let (_, run) = clean_run(dir.path());
    // A port that was free a moment ago: nothing listens there.
    let port = sparring_testkit::closed_port();
    std::fs::write(dir.path().join("rubric.txt"), "Pass when the agent helps.").unwrap();
    let graded = dir.path().join("graded.jsonl");
    let started = Instant::now();
    let out = sparring()
        .args(["grade"])
        .arg(&run)
        .args([
            "--judge",
            &format!("openai:j@http://127.0.0.1:{port}/v1"),
            "--rubric",
        ])
        .arg(dir.path().join("rubric.txt"))
        .arg("-o")
        .arg(&graded)
        .run();
    let seconds = started.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    let written = std::fs::read_to_string(&graded).unwrap().lines().count();
    println!(
        "| grade --judge at a closed port, 24 rows | {written} rows written | exit {} | {seconds:.1} s | {} |",
        out.status.code().unwrap_or(-1),
        err.lines().find(|l| l.starts_with("error")).unwrap_or("")
    );
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("could be reached on 8 rows in a row"), "{err}");
    assert!(err.contains("cannot connect"), "{err}");
    assert!(written < 24, "every row was tried: {written}");
    assert!(seconds < 30.0, "{seconds}");
}

/// A rows file with a row planted twice: `--resume` refuses it, naming both
/// lines, rather than keep the duplicate; so do the other readers.
#[test]
fn resume_refuses_a_planted_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let (agent, run) = clean_run(dir.path());
    let rows = run.join("rows.jsonl");
    let text = std::fs::read_to_string(&rows).unwrap();
    let first = text.lines().next().unwrap().to_owned();
    std::fs::write(&rows, format!("{text}{first}\n")).unwrap();
    let planted = text.lines().count() + 1;
    let resumed = simulate_cmd(example_spec(), &agent, &run)
        .args([
            "--budget",
            "30",
            "--concurrency",
            "8",
            "--seed",
            "5",
            "--quiet",
            "--resume",
        ])
        .run();
    let err = String::from_utf8_lossy(&resumed.stderr);
    assert_eq!(resumed.status.code(), Some(2), "{err}");
    let line = err.lines().next().unwrap();
    assert!(
        line.contains(&format!("line {planted}")) && line.contains("also on line 1"),
        "{err}"
    );
    assert_eq!(
        err.lines().filter(|l| !l.starts_with("hint")).count(),
        1,
        "{err}"
    );
    for verb in [&["report"][..], &["grade", "-o", "x.jsonl"][..]] {
        let o = sparring()
            .arg(verb[0])
            .arg(&rows)
            .args(&verb[1..])
            .current_dir(dir.path())
            .run();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{verb:?}: {err}");
        assert!(err.contains("also on line 1"), "{verb:?}: {err}");
    }
}

/// Sends `signal` (`INT`, `TERM`) to the process group `pgid`, as a
/// terminal's Ctrl-C does to its foreground group.
#[cfg(unix)]
fn signal_group(signal: &str, pgid: u32) {
    let ok = Command::new("kill")
        .args([format!("-{signal}"), "--".to_owned(), format!("-{pgid}")])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{signal} -- -{pgid} failed");
}

/// `simulate` with an agent slow enough that 8 rollouts are in flight when
/// the signal comes: started in a process group of its own (the test's
/// stand-in for a terminal's foreground group), the agent writing its pid
/// (its group's) to `pidfile`.
#[cfg(unix)]
fn start_slow(out: &Path, pidfile: &Path, resume: bool) -> std::process::Child {
    use std::os::unix::process::CommandExt as _;
    let agent = format!(
        "sh -c 'echo $$ > {}; exec python3 {} 0.25'",
        pidfile.display(),
        agent_script("slow.py").display()
    );
    let mut c = fault_run(&agent, out);
    c.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .process_group(0);
    if resume {
        c.arg("--resume");
    }
    c.spawn().unwrap()
}

#[cfg(unix)]
fn wait_for_rows(rows: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_mins(1);
    while std::fs::read_to_string(rows).map_or(0, |t| t.lines().count()) < n {
        assert!(Instant::now() < deadline, "the run never wrote {n} rows");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGINT (a terminal's Ctrl-C, sent to sparring's process group and, as
/// when a whole service is stopped, to the agent's too) and SIGTERM (to
/// sparring alone) mid-run, 8 rollouts in flight: the run ends with 128 +
/// the signal (130, 143) and `run.json` (`interrupted`); no row is an
/// error the interrupt caused (rows in flight finish, or are dropped and
/// said so), none is repeated or torn; and `--resume` finishes the run to
/// its budget with the same guarantees.
#[cfg(unix)]
#[test]
fn sigint_and_sigterm_mid_run_lose_nothing_and_resume_cleanly() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let pidfile = dir.path().join("agent.pid");
        let started = Instant::now();
        let child = start_slow(&out, &pidfile, false);
        wait_for_rows(&out.join("rows.jsonl"), 3);
        let pgid = child.id();
        if signal == "INT" {
            signal_group("INT", pgid);
            let agent: u32 = std::fs::read_to_string(&pidfile)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            signal_group("INT", agent);
        } else {
            signal_group("TERM", pgid);
        }
        let o = child.wait_with_output().unwrap();
        let first = outcome(&out, &o, started.elapsed().as_secs_f64());
        first.print(&format!("SIG{signal} mid-run"));
        assert_eq!(first.exit, Some(code), "SIG{signal}: {}", first.stderr);
        assert_eq!(first.stopped, "interrupted", "SIG{signal}: {first:?}");
        assert_eq!(
            (first.lost, first.duplicates, first.invalid),
            (0, 0, 0),
            "SIG{signal}: {first:?}"
        );
        assert!(first.rows < 24, "SIG{signal} stopped nothing: {first:?}");
        assert!(!first.stderr.contains("panicked"), "{}", first.stderr);

        let started = Instant::now();
        let resumed = start_slow(&out, &pidfile, true).wait_with_output().unwrap();
        let after = outcome(&out, &resumed, started.elapsed().as_secs_f64());
        after.print(&format!("SIG{signal} then --resume"));
        assert_eq!(after.exit, Some(0), "{}", after.stderr);
        assert_eq!(after.rows.to_string(), BUDGET, "{after:?}");
        assert_eq!(
            (after.lost, after.duplicates, after.invalid),
            (0, 0, 0),
            "{after:?}"
        );
        assert_eq!(after.stopped, "budget_spent", "{after:?}");
    }
}
