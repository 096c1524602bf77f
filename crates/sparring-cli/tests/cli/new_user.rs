//! What a new user ran into (issue 21), each pinned: nothing a user made is
//! lost, foreign conversations read, failures never pass, the right exit
//! codes and words, one meaning per thing.

use super::*;
use std::collections::{BTreeMap, BTreeSet};

/// `sparring ARGS` in `dir`.
fn run(dir: &Path, args: &[&str]) -> Command {
    let mut c = sparring();
    c.args(args).current_dir(dir);
    c
}

fn simulate(out: &Path, agent: &str, extra: &[&str]) -> Command {
    let mut c = simulate_cmd(example_spec(), agent, out);
    c.arg("--quiet").args(extra);
    c
}

/// An agent that answers its first three requests with an error, then
/// slowly.
const LATE_AGENT: &str = "import json, sys, time\nn = 0\nfor line in sys.stdin:\n    r = json.loads(line)\n    n += 1\n    if n <= 3:\n        print(json.dumps({'id': r['id'], 'error': 'warming up'}), flush=True)\n        continue\n    time.sleep(0.3)\n    print(json.dumps({'id': r['id'], 'message': {'role': 'assistant', 'content': 'All done.'}}), flush=True)\n";

/// An agent whose tool call carries no `id`.
const NOID_AGENT: &str = "import json, sys\nfor line in sys.stdin:\n    r = json.loads(line)\n    if r['messages'][-1]['role'] == 'tool':\n        m = {'role': 'assistant', 'content': 'Here is what I found.'}\n    else:\n        m = {'role': 'assistant', 'tool_calls': [{'type': 'function', 'function': {'name': 'get_order', 'arguments': '{\"order_id\": \"#W1001\"}'}}]}\n    print(json.dumps({'id': r['id'], 'message': m}), flush=True)\n";

/// A Python agent with this source, written to `dir/NAME.py`, as the
/// command that runs it.
fn python_agent(dir: &Path, name: &str, source: &str) -> String {
    let script = write(dir, &format!("{name}.py"), source);
    format!("python3 {}", script.display())
}

fn files(out: &Path) -> BTreeMap<String, Vec<u8>> {
    ["rows.jsonl", "run.json", "run.log"]
        .into_iter()
        .map(|f| (f.to_owned(), std::fs::read(out.join(f)).unwrap()))
        .collect()
}

/// A finished run is refused without `--force` (exit 2, nothing
/// touched), also in the default `runs/<spec name>`; with `--force` an
/// agent that cannot start leaves rows, `run.json` and `run.log` as
/// they were; a good one replaces them.
#[test]
fn a_finished_run_is_never_replaced_by_accident() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    simulate(&out, &example_agent(), &["--budget", "6", "--grade"]).run_ok();
    let before = files(&out);
    assert!(!before["run.log"].is_empty());

    // A typo in the agent's path: refused, nothing changed.
    let typo = "python3 examples/support-desk/agnet.py";
    let o = simulate(&out, typo, &["--budget", "10"]).run();
    assert_usage_error(
        &o,
        &["holds a finished run", "6 rows", "nothing was changed"],
    );
    assert_stderr_has(&o, "hint: pass --force");
    assert_eq!(files(&out), before);

    // With --force, an agent binary that is not found starts nothing.
    let o = simulate(
        &out,
        "/no/such/agent-binary",
        &["--budget", "10", "--force"],
    )
    .run();
    assert_exit(&o, 2);
    assert_eq!(
        files(&out),
        before,
        "a run that never started replaced nothing"
    );
    assert!(!out.join("run.log.new").exists());

    // --force with an agent that starts replaces the run.
    simulate(&out, &example_agent(), &["--budget", "3", "--force"]).run_ok();
    assert_eq!(read_rows(&out.join("rows.jsonl")).len(), 3);
    assert_eq!(run_json(&out)["counts"]["rows"], 3);
    assert!(!out.join("run.log.new").exists());

    // The rows of a run that did not finish are refused too.
    std::fs::remove_file(out.join("run.json")).unwrap();
    let o = simulate(&out, &example_agent(), &["--budget", "3"]).run();
    assert_usage_error(&o, &["did not finish", "nothing was changed"]);
    assert_stderr_has(&o, "--resume");

    // The default directory: a second agent on the same spec is refused.
    let cwd = tempfile::tempdir().unwrap();
    let default = |agent: &str| {
        sparring()
            .arg("simulate")
            .arg(example_spec())
            .args(["--agent", agent, "--budget", "2", "--quiet"])
            .current_dir(cwd.path())
            .run()
    };
    let o = default(&example_agent());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = default(&flaky("die", cwd.path()));
    assert_usage_error(&o, &["runs/support-desk", "holds a finished run"]);
}

/// A second `simulate` (or a `--resume`) on a directory a run is
/// writing exits 2 naming the first's pid; once the first is dead
/// (`kill -9`, its lock file left behind) the lock is taken over.
#[test]
fn one_process_per_run_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let slow = format!("python3 {} 0.2", agent_script("slow.py").display());
    let mut first = simulate_cmd(example_spec(), &slow, &out)
        .args(["--budget", "40", "--concurrency", "2", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while std::fs::read_to_string(out.join("rows.jsonl")).map_or(0, |t| t.lines().count()) < 1 {
        assert!(
            started.elapsed().as_secs() < 60,
            "the first run wrote nothing"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = first.id().to_string();
    for extra in [&["--resume"][..], &[][..], &["--force"][..]] {
        let o = simulate(&out, &example_agent(), extra).run();
        assert_usage_error(
            &o,
            &["is in use by another sparring", &format!("pid {pid}")],
        );
    }
    assert_eq!(
        std::fs::read_to_string(out.join("run.lock"))
            .unwrap()
            .trim(),
        pid
    );
    first.kill().unwrap();
    first.wait().unwrap();
    // The dead run's pid is still in the file; its lock is gone.
    simulate(
        &out,
        &slow,
        &["--budget", "40", "--concurrency", "2", "--resume"],
    )
    .run_ok();
    let rows = read_rows(&out.join("rows.jsonl"));
    let ids: BTreeSet<&str> = texts(&rows, "row_id").into_iter().collect();
    assert_eq!((rows.len(), ids.len()), (40, 40));
}

const FOREIGN: &str = r#"{"messages": [{"role": "system", "content": "Refund only delivered orders."}, {"role": "user", "content": "Refund order #W1004 please."}, {"role": "assistant", "content": "I have refunded order #W1004."}], "tools": [{"type": "function", "function": {"name": "refund_order", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}}]}
{"messages": [{"role": "system", "content": "Refund only delivered orders."}, {"role": "user", "content": "Refund order #W1004 please."}, {"role": "assistant", "content": "I have refunded order #W1004."}], "tools": [{"type": "function", "function": {"name": "refund_order", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}}]}
{"task_id": "mine", "row_id": "r-3", "reward": 1, "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"}]}
"#;

/// `FOREIGN` as `chat.jsonl` in `d`, graded into `graded.jsonl`: its
/// rows.
fn graded_foreign(d: &Path) -> Vec<Value> {
    write(d, "chat.jsonl", FOREIGN);
    run(d, &["grade", "chat.jsonl", "-o", "graded.jsonl"]).run_ok();
    read_rows(&d.join("graded.jsonl"))
}

/// `grade`, `select` and `export` read chat-format lines sparring did
/// not write: ids derived stably (two identical conversations get two
/// row ids, the same each time), the rest defaulted and `imported`; a
/// line that is neither names every missing field at once.
#[test]
fn foreign_conversations_are_graded_selected_and_exported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let graded = graded_foreign(d);
    assert_eq!(graded.len(), 3);
    // The derived ids are sparring's shapes (the third line keeps its own).
    assert_valid_rows(&graded[..2]);
    for r in &graded {
        assert_eq!(r["model_version"], "imported");
        assert_eq!(r["lineage"]["arm"], "imported");
    }
    // Repeats of one ask under one policy are one task; two identical
    // lines still get two rows.
    assert_eq!(graded[0]["task_id"], graded[1]["task_id"]);
    assert_ne!(graded[0]["row_id"], graded[1]["row_id"]);
    assert!(graded[0]["task_id"].as_str().unwrap().starts_with("task_"));
    assert_eq!(
        (graded[2]["task_id"].as_str(), graded[2]["row_id"].as_str()),
        (Some("mine"), Some("r-3"))
    );
    // The claim without a call fails the conduct checks.
    assert_eq!(graded[0]["reward"], 0.0);
    assert_eq!(graded[0]["failure_class"], "claimed_without_call");
    // Stable: graded again, the same ids.
    run(d, &["grade", "chat.jsonl", "-o", "again.jsonl"]).run_ok();
    let again = read_rows(&d.join("again.jsonl"));
    for (a, b) in graded.iter().zip(&again) {
        assert_eq!((&a["row_id"], &a["task_id"]), (&b["row_id"], &b["task_id"]));
    }
    run(
        d,
        &["select", "chat.jsonl", "-c", "graded", "-o", "kept.jsonl"],
    )
    .run_ok();
    assert_eq!(
        read_rows(&d.join("kept.jsonl")).len(),
        1,
        "only the graded line"
    );
    run(
        d,
        &["export", "chat.jsonl", "-f", "trl-kto", "-o", "kto.jsonl"],
    )
    .run_ok();
    let o = run(d, &["report", "chat.jsonl", "--json"]).run_ok();
    let report = stdout_json(&o);
    assert_eq!(report["n_tasks"], 2);

    // Unusable lines: every missing field in one error.
    write(d, "bad.jsonl", "{\"conversation\": []}\n");
    let o = run(d, &["grade", "bad.jsonl", "-o", "x.jsonl"]).run();
    assert_usage_error(
        &o,
        &[
            "line 1",
            "`messages`",
            "`schema_version`",
            "`row_id`",
            "`timings`",
        ],
    );
    write(
        d,
        "partial.jsonl",
        "{\"schema_version\": 1, \"row_id\": \"r\", \"messages\": []}\n",
    );
    let o = run(
        d,
        &["export", "partial.jsonl", "-f", "trl-kto", "-o", "x.jsonl"],
    )
    .run();
    assert_usage_error(
        &o,
        &[
            "not a sparring row: missing",
            "`task_id`",
            "`tools`",
            "`lineage`",
            "`timings`",
        ],
    );
    assert!(!stderr(&o).contains("`messages`"), "{}", stderr(&o));
}

/// A model endpoint nobody serves stops the run like a command agent
/// that never answers (`agent_unavailable`, exit 1), and its rows,
/// graded by `--grade`, get reward 0 with the error as the reason.
#[test]
fn a_dead_model_agent_stops_early_and_its_rows_fail() {
    let port = sparring_testkit::closed_port();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let agent = format!("openai:m@http://127.0.0.1:{port}/v1");
    let o = simulate_cmd(example_spec(), &agent, &out)
        .args(["--retries", "0", "--concurrency", "1", "--grade"])
        .env("OPENAI_API_KEY", "x")
        .run();
    assert_exit(&o, 1);
    assert_stderr_has(&o, "never replied");
    assert_eq!(run_json(&out)["stopped_because"], "agent_unavailable");
    let rows = read_rows(&out.join("rows.jsonl"));
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert_eq!(r["ended_by"], "backend_error");
        assert_eq!(r["reward"], 0.0, "{r}");
        assert_eq!(r["failure_class"], "backend_error");
        assert!(
            r["reason"].as_str().unwrap().contains("cannot connect"),
            "{r}"
        );
    }
}

/// The stop's warning counts every row written (the rollouts in flight
/// finish after it) and says "never replied" only when none replied.
#[test]
fn the_agent_unavailable_warning_counts_right() {
    let dir = tempfile::tempdir().unwrap();
    let agent = python_agent(dir.path(), "late", LATE_AGENT);
    let out = dir.path().join("out");
    let o = simulate(&out, &agent, &["--concurrency", "6", "--budget", "30"]).run();
    assert_exit(&o, 1);
    let rows = read_rows(&out.join("rows.jsonl"));
    let replied = rows
        .iter()
        .filter(|r| {
            r["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["role"] == "assistant")
        })
        .count();
    assert!(rows.len() > 3 && replied > 0, "{rows:?}");
    let summary = run_json(&out);
    let warning = warning(&summary["warnings"], "stopped after");
    assert!(
        warning.starts_with(&format!("stopped after {} rows", rows.len())),
        "{warning}"
    );
    assert!(
        warning.contains(&format!("{replied} of the {} rows", rows.len())),
        "{warning}"
    );
    assert!(!warning.contains("never replied"), "{warning}");
}

/// An agent's tool call without an `id` is given one
/// (docs/agent-protocol.md), not an `agent_error`.
#[test]
fn a_tool_call_without_an_id_is_filled_in() {
    let dir = tempfile::tempdir().unwrap();
    let agent = python_agent(dir.path(), "noid", NOID_AGENT);
    let out = dir.path().join("out");
    simulate(&out, &agent, &["--budget", "3"]).run_ok();
    for r in read_rows(&out.join("rows.jsonl")) {
        assert_ne!(r["ended_by"], "agent_error", "{r}");
        let msgs = r["messages"].as_array().unwrap();
        let call = msgs.iter().find(|m| m.get("tool_calls").is_some()).unwrap();
        let id = call["tool_calls"][0]["id"].as_str().unwrap();
        assert!(!id.is_empty());
        assert!(msgs.iter().any(|m| m["tool_call_id"] == id));
    }
}

fn other_spec(dir: &Path) -> PathBuf {
    let text = example_spec_text().replace("name: support-desk", "name: other-desk");
    write(dir, "other.yaml", &text)
}

/// `--tasks` from a run of another spec is refused, naming both; a
/// pinned re-run comes back at the pinned run's resolved k.
#[test]
fn pinned_tasks_belong_to_their_spec_and_keep_their_k() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    simulate(
        &base,
        &example_agent(),
        &[
            "--mode",
            "rl",
            "--repeats",
            "4",
            "--situations",
            "4",
            "--grade",
        ],
    )
    .run_ok();
    let k_base = run_json(&base)["options"]["repeats"].clone();
    assert_eq!(k_base, 4);
    let o = simulate_cmd(
        other_spec(dir.path()),
        &example_agent(),
        dir.path().join("other"),
    )
    .args(["--quiet", "--tasks"])
    .arg(&base)
    .run();
    assert_usage_error(
        &o,
        &["--tasks", "spec `support-desk`", "spec is `other-desk`"],
    );
    let again = dir.path().join("again");
    simulate(
        &again,
        &example_agent(),
        &["--mode", "rl", "--grade", "--tasks", base.to_str().unwrap()],
    )
    .run_ok();
    assert_eq!(run_json(&again)["options"]["repeats"], 4);
    assert_eq!(run_json(&again)["search"]["pinned"]["repeats"], 4);
}

/// Seeds go first with all their repeats: a budget of seeds × k rows
/// is all seeds; `seeds_dropped` lists only seeds with no row.
#[test]
fn seeds_take_the_budget_first_and_dropped_means_not_run() {
    let dir = tempfile::tempdir().unwrap();
    for (budget, seed_rows, dropped) in [
        ("4", vec![2, 2], 0),
        ("3", vec![2, 1], 0),
        ("1", vec![1], 1),
    ] {
        let out = dir.path().join(format!("b{budget}"));
        simulate(
            &out,
            &example_agent(),
            &["--repeats", "2", "--budget", budget],
        )
        .run_ok();
        let rows = read_rows(&out.join("rows.jsonl"));
        let mut per_seed: BTreeMap<u64, usize> = BTreeMap::new();
        for r in &rows {
            assert_eq!(
                r["situation"]["tier"], "seed",
                "budget {budget}: a non-seed row"
            );
            *per_seed
                .entry(r["situation"]["seed_index"].as_u64().unwrap())
                .or_default() += 1;
        }
        assert_eq!(
            per_seed.into_values().collect::<Vec<_>>(),
            seed_rows,
            "budget {budget}"
        );
        let s = run_json(&out);
        assert_eq!(
            s["search"]["seeds_dropped"].as_array().unwrap().len(),
            dropped,
            "budget {budget}: {s}"
        );
        let warned = s["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("cannot pay for every seed"));
        assert_eq!(warned, budget != "4", "budget {budget}: {s}");
    }
}

/// `asks --n N` shows N situations, past the covering array when N
/// asks for more; `--situations` is its long name.
#[test]
fn asks_shows_as_many_situations_as_asked() {
    for (flag, n) in [("--n", 300), ("--situations", 3)] {
        let o = sparring()
            .arg("asks")
            .arg(example_spec())
            .args([flag, &n.to_string(), "--json"])
            .run_ok();
        let lines = json_lines(&String::from_utf8_lossy(&o.stdout));
        assert_eq!(lines.len(), n, "{flag} {n}");
    }
}

/// `report` shows the run's warnings and degraded flags before any
/// number, and an ungraded run says what to run.
#[test]
fn report_puts_warnings_first_and_names_an_ungraded_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    simulate(&out, &example_agent(), &["--repeats", "2", "--budget", "3"]).run_ok();
    let o = run(dir.path(), &["report", out.to_str().unwrap()]).run_ok();
    let text = String::from_utf8_lossy(&o.stdout);
    // Every warning comes before the first figure.
    let lines: Vec<&str> = text.lines().collect();
    let warned = lines
        .iter()
        .take_while(|l| l.starts_with("warning: "))
        .count();
    assert!(
        lines[..warned]
            .iter()
            .any(|l| l.starts_with("warning: budget 3 cannot pay for every seed")),
        "{text}"
    );
    assert!(
        !lines[warned..].iter().any(|l| l.starts_with("warning: ")),
        "{text}"
    );
    assert!(
        text.contains("no row is graded: run `sparring grade` or `simulate --grade`"),
        "{text}"
    );
    assert!(!text.contains("--repeats"), "{text}");
    assert!(!text.contains("pass@k"), "{text}");
    let o = run(dir.path(), &["report", out.to_str().unwrap(), "--json"]).run();
    let json = stdout_json(&o);
    assert!(warns(&json["warnings"], "cannot pay"), "{json}");
}

/// A single format or a cut that keeps nothing writes no file and says
/// so (an earlier file stays); the DPO report counts tasks with one
/// row.
#[test]
fn an_empty_cut_writes_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Ungraded foreign rows: every cut keeps nothing.
    let ungraded: String = FOREIGN.lines().take(2).flat_map(|l| [l, "\n"]).collect();
    write(d, "ungraded.jsonl", &ungraded);
    write(d, "old.jsonl", "keep me\n");
    let o = run(
        d,
        &[
            "export",
            "ungraded.jsonl",
            "-f",
            "openai-sft",
            "-o",
            "old.jsonl",
        ],
    )
    .run_ok();
    assert_stderr_has(
        &o,
        "warning: the sft cut kept nothing, so no file was written",
    );
    assert_eq!(
        std::fs::read_to_string(d.join("old.jsonl")).unwrap(),
        "keep me\n"
    );
    assert!(!d.join("old.jsonl.index.jsonl").exists());
    assert!(!d.join("old.jsonl.partial").exists());
    let o = run(
        d,
        &["select", "ungraded.jsonl", "-c", "sft", "-o", "sel.jsonl"],
    )
    .run_ok();
    assert_stderr_has(&o, "warning: the sft cut kept nothing");
    assert!(!d.join("sel.jsonl").exists());
    // DPO over graded rows, one task with a single row.
    graded_foreign(d);
    let o = run(
        d,
        &[
            "select",
            "graded.jsonl",
            "-c",
            "dpo",
            "-o",
            "dpo.jsonl",
            "--json",
        ],
    )
    .run_ok();
    let j = stdout_json(&o);
    assert_eq!(j["cut"]["excluded"]["single_row_task"]["count"], 1, "{j}");
}

fn strict_judge() -> String {
    let script = agent_script("judge.py");
    format!(
        "command:sh -c 'echo judge-stderr-line >&2; exec python3 {} strict'",
        script.display()
    )
}

/// `--combine all` makes every stage count; the default (the last stage
/// decides) counts the rows it overturned, in `grade`'s summary and in
/// `report`. The stderr of a command judge and grader is shown.
#[test]
fn combine_all_and_overturned_verdicts_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "chat.jsonl", FOREIGN);
    let grader = dir.path().join("pass.py");
    std::fs::write(
        &grader,
        "import json, sys\nprint('grader-stderr-line', file=sys.stderr, flush=True)\nfor line in sys.stdin:\n    r = json.loads(line)\n    print(json.dumps({'id': r['id'], 'reward': 1.0, 'reason': 'lenient'}), flush=True)\n",
    )
    .unwrap();
    let grader = format!("python3 {}", grader.display());
    let o = run(
        d,
        &[
            "grade",
            "chat.jsonl",
            "--grader",
            &grader,
            "-o",
            "last.jsonl",
        ],
    )
    .run_ok();
    assert_stderr_has(
        &o,
        "warning: 2 rows passed although an earlier stage failed them",
    );
    assert_stderr_has(&o, "grader-stderr-line");
    let last = read_rows(&d.join("last.jsonl"));
    assert_eq!(last[0]["reward"], 1.0);
    let o = run(d, &["report", "last.jsonl", "--json"]).run();
    let j = stdout_json(&o);
    assert_eq!(j["n_overturned"], 2);
    let o = run(d, &["report", "last.jsonl"]).run();
    assert!(String::from_utf8_lossy(&o.stdout).contains("overturned: 2 passing rows"));

    let o = run(
        d,
        &[
            "grade",
            "chat.jsonl",
            "--grader",
            &grader,
            "--combine",
            "all",
            "-o",
            "all.jsonl",
        ],
    )
    .run_ok();
    assert!(
        !stderr(&o).contains("earlier stage failed"),
        "{}",
        stderr(&o)
    );
    let all = read_rows(&d.join("all.jsonl"));
    assert_eq!(all[0]["reward"], 0.0);
    assert_eq!(all[0]["failure_class"], "claimed_without_call");
    assert_ne!(
        all[0]["lineage"]["scoring_run_id"],
        last[0]["lineage"]["scoring_run_id"]
    );
    let o = run(
        d,
        &["grade", "chat.jsonl", "--combine", "some", "-o", "x.jsonl"],
    )
    .run();
    assert_usage_error(&o, &["--combine `some`", "`last` or `all`"]);

    std::fs::write(d.join("rubric.txt"), "Pass when the agent helps.").unwrap();
    let o = run(
        d,
        &[
            "grade",
            "chat.jsonl",
            "--judge",
            &strict_judge(),
            "--rubric",
            "rubric.txt",
            "-o",
            "j.jsonl",
        ],
    )
    .run_ok();
    assert_stderr_has(&o, "judge-stderr-line");
}

/// One labels format for `labels attach` and `judge-agreement`, and
/// `judge-agreement` reads the gold `labels attach` put on the rows.
#[test]
fn one_labels_format_and_gold_from_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rows = graded_foreign(d);
    let id = |i: usize| rows[i]["row_id"].as_str().unwrap().to_owned();
    let labels = format!(
        "{{\"row_id\": \"{}\", \"label\": \"fail\", \"author\": \"ana\"}}\n{{\"row_id\": \"{}\", \"label\": true, \"author\": \"ana\"}}\n{{\"row_id\": \"r-3\", \"label\": 1, \"author\": \"bo\"}}\n",
        id(0),
        id(1)
    );
    write(d, "labels.jsonl", &labels);
    // The file judge-agreement reads, attached as it is.
    // `labels attach` of LABELS, human ones, to the graded rows, with EXTRA.
    let attach = |labels: &str, extra: &[&str]| {
        let args = [
            "labels",
            "attach",
            "graded.jsonl",
            labels,
            "--kind",
            "human",
        ];
        run(d, &[&args[..], extra].concat()).run()
    };
    assert_exit(&attach("labels.jsonl", &["-o", "labelled.jsonl"]), 0);
    let labelled = read_rows(&d.join("labelled.jsonl"));
    assert_eq!(labelled[0]["gold_reward"], 0.0);
    assert_eq!(labelled[2]["gold_author"], "bo");
    let from_file = run(
        d,
        &[
            "judge-agreement",
            "graded.jsonl",
            "--labels",
            "labels.jsonl",
            "--json",
        ],
    )
    .run_ok();
    let from_rows = run(d, &["judge-agreement", "labelled.jsonl", "--json"]).run_ok();
    let a = stdout_json(&from_file);
    let b = stdout_json(&from_rows);
    assert_eq!(a, b);
    assert_eq!(a["n"], 3);
    // The old attach format still reads; a label with no author needs --author.
    write(
        d,
        "old.jsonl",
        &format!("{{\"row_id\": \"{}\", \"reward\": 1}}\n", id(0)),
    );
    let o = attach("old.jsonl", &["-o", "x.jsonl"]);
    assert_usage_error(&o, &["old.jsonl", "no `author`", "--author"]);
    assert_exit(
        &attach("old.jsonl", &["--author", "cy", "-o", "x.jsonl"]),
        0,
    );
    let o = run(d, &["judge-agreement", "graded.jsonl"]).run();
    assert_exit(&o, 2);
    assert_stderr_has(&o, "labels attach");
}

/// Help says each default once and truly; `--n` means situations only.
#[test]
fn help_says_each_default_once() {
    for command in [
        "simulate",
        "report",
        "delta",
        "judge-agreement",
        "hack-scan",
        "eval-variance",
        "grid",
        "coverage-gap",
        "asks",
        "grade",
        "judge-trust",
        "world",
        "select",
        "export",
    ] {
        let o = sparring().args([command, "--help"]).run();
        let text = String::from_utf8_lossy(&o.stdout).replace('\n', " ");
        let words: Vec<&str> = text.split_whitespace().collect();
        let joined = words.join(" ");
        assert!(
            !joined.contains("] [default:"),
            "`{command} --help` says a default twice: {joined}"
        );
    }
    let o = sparring().args(["simulate", "--help"]).run();
    let text = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let effort = text.split("--grid-effort").nth(1).unwrap();
    assert!(
        effort.split("--").next().unwrap().contains(&format!(
            "[default: {}]",
            sparring::types::defaults::GRID_EFFORT
        )),
        "{effort}"
    );
    let o = sparring().args(["simulate", "x.yaml", "--n", "3"]).run();
    assert_eq!(o.status.code(), Some(2));
}

/// `| head` closes the pipe early: quiet, exit 0, no panic.
#[test]
fn a_closed_pipe_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    simulate(&out, &example_agent(), &["--budget", "4", "--grade"]).run_ok();
    std::fs::write(dir.path().join("rubric.txt"), "Pass when the agent helps.").unwrap();
    let judge = format!(
        "command:python3 {} strict",
        agent_script("judge.py").display()
    );
    let out_s = out.display().to_string();
    let spec = example_spec().display().to_string();
    let rubric = dir.path().join("rubric.txt").display().to_string();
    for args in [
        vec!["world", spec.as_str(), "--explain"],
        vec![
            "judge-trust",
            out_s.as_str(),
            "--judge",
            judge.as_str(),
            "--rubric",
            rubric.as_str(),
            "--json",
        ],
        vec!["report", out_s.as_str()],
        vec!["asks", spec.as_str(), "--n", "40"],
        vec!["policy", spec.as_str()],
        vec!["policy", spec.as_str(), "--json"],
        vec!["grid", spec.as_str()],
    ] {
        let mut child = sparring()
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
    }
}

/// "an order", not "a order".
#[test]
fn an_order_not_a_order() {
    let mut child = sparring()
        .arg("world")
        .arg(example_spec())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(b"{\"tool\": \"get_order\", \"arguments\": {\"order_id\": \"12\"}}\n")
            .unwrap();
    }
    let o = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("does not look like an order id"), "{text}");
    assert!(!text.contains("a order"), "{text}");
}

/// Grading a run's rows in place keeps `run.json` true; a resumed run
/// says how many rows it ran and kept; a run that ends before its first
/// rollout exits 0.
#[test]
fn grade_in_place_resume_counts_and_a_tiny_time_budget() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    simulate(&out, &example_agent(), &["--budget", "5"]).run_ok();
    assert_eq!(run_json(&out)["counts"]["graded"], 0);
    let rows = out.join("rows.jsonl");
    let o = run(
        dir.path(),
        &["grade", out.to_str().unwrap(), "-o", rows.to_str().unwrap()],
    )
    .run_ok();
    assert_stderr_has(&o, "updated the counts");
    assert_eq!(run_json(&out)["counts"]["graded"], 5);
    assert_eq!(read_rows(&rows).len(), 5);

    let o = simulate_cmd(example_spec(), &example_agent(), &out)
        .args(["--budget", "9", "--resume"])
        .run();
    assert_eq!(
        o.status.code(),
        Some(2),
        "another budget is another run: {}",
        stderr(&o)
    );
    simulate_cmd(example_spec(), &example_agent(), &out)
        .args(["--budget", "5", "--force"])
        .run_ok();
    let kept: Vec<String> = std::fs::read_to_string(&rows)
        .unwrap()
        .lines()
        .take(2)
        .map(str::to_owned)
        .collect();
    std::fs::write(&rows, format!("{}\n", kept.join("\n"))).unwrap();
    let o = simulate_cmd(example_spec(), &example_agent(), &out)
        .args(["--budget", "5", "--resume"])
        .run_ok();
    assert_stderr_has(
        &o,
        "simulated 3 rows (and kept 2 of the earlier attempt: 5 in the file)",
    );

    let tiny = dir.path().join("tiny");
    let o = simulate_cmd(example_spec(), &example_agent(), &tiny)
        .args(["--time-budget", "0.001"])
        .run_ok();
    assert!(!stderr(&o).contains("error"), "{}", stderr(&o));
    assert_eq!(run_json(&tiny)["stopped_because"], "time_budget");
}
