//! `--agent openai:…` and `anthropic:…` (and model writers, people and
//! judges) against the testkit's fake server, run in this process while the
//! binary talks to it.

use super::*;
use serde_json::json;
use sparring_testkit::fake_llm::{Behaviour, FakeLlm, FakeOptions, Reply, Responder, request_text};
use std::collections::BTreeMap;

const KEY: &str = "sk-cli-test-7f3a91b2c4";

struct Fake {
    server: FakeLlm,
    _runtime: tokio::runtime::Runtime,
}

fn fake(options: FakeOptions) -> Fake {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(FakeLlm::with(options)).unwrap();
    Fake {
        server,
        _runtime: runtime,
    }
}

/// `sparring simulate` of the example with `agent` into `out`, the test
/// key in the environment and OpenAI's variables out of it.
fn simulate(agent: &str, out: &Path, extra: &[&str]) -> Command {
    let mut c = simulate_cmd(example_spec(), agent, out);
    c.args(extra)
        .env("SPARRING_TEST_KEY", KEY)
        .env("ANTHROPIC_API_KEY", KEY)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL");
    c
}

/// The rows of `simulate(agent, out, args)`, which must succeed and write
/// `n` rows, each checked against docs/row.schema.json.
fn simulated_rows(agent: &str, out: &Path, args: &[&str], n: usize) -> Vec<Value> {
    simulate(agent, out, args).run_ok();
    let rows = valid_rows(out);
    assert_eq!(rows.len(), n, "{args:?}");
    rows
}

#[test]
fn openai_agent_runs_the_tool_loop_and_records_sampling() {
    let f = fake(FakeOptions {
        record: true,
        ..FakeOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let agent = openai_spec(&f);
    let rows = simulated_rows(
        &agent,
        &out,
        &[
            "--budget",
            "6",
            "--temperature",
            "0.4",
            "--max-tokens",
            "200",
            "--logprobs",
            "--sampling-seed",
            "5",
            "--grade",
        ],
        6,
    );
    for row in &rows {
        assert_eq!(row["ended_by"], "agent_done", "{row}");
        // The fake calls the first tool, gets the world's answer, replies.
        assert_eq!(
            row["messages"][2]["tool_calls"].as_array().unwrap().len(),
            1
        );
        assert_eq!(row["messages"][3]["role"], "tool");
        assert_eq!(row["sampling"]["temperature"], 0.4);
        assert_eq!(row["sampling"]["max_tokens"], 200);
        assert_eq!(row["sampling"]["model"], "fake-model");
        let turns = row["logprobs"].as_array().unwrap();
        assert_eq!(turns.len(), 2, "one entry per agent request");
        assert_eq!(turns[1]["tokens"], 1);
        assert_eq!(turns[1]["policy_version"], "fp_fake");
        // Every request is recorded with its own seed and its tokens;
        // the fake reports 10 in, 5 out per request.
        let requests = row["requests"].as_array().unwrap();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0]["message"], 2);
        assert_eq!(requests[1]["message"], 4);
        assert_eq!(requests[0]["sampling"], row["sampling"]);
        assert_ne!(
            requests[0]["sampling"]["seed"], requests[1]["sampling"]["seed"],
            "each request has its own seed"
        );
        assert_eq!(requests[1]["sampling"]["temperature"], 0.4);
        assert_eq!(requests[1]["usage"]["output_tokens"], 5);
        // How each reply ended, as the server said.
        assert_eq!(requests[0]["finish_reason"], "tool_calls");
        assert_eq!(requests[1]["finish_reason"], "stop");
        assert_eq!(requests[1]["stop"], "complete");
        assert_eq!(requests[1]["refusal"], Value::Null);
        assert_eq!(row["usage"]["requests"], 2);
        assert_eq!(row["usage"]["input_tokens"], 20);
        assert_eq!(row["usage"]["output_tokens"], 10);
        assert!(
            row["model_version"]
                .as_str()
                .unwrap()
                .starts_with("openai:fake-model@http://127.0.0.1:")
        );
    }
    assert_eq!(f.server.count(), 12);
    let summary = run_json(&out);
    assert_eq!(summary["options"]["temperature"], 0.4);
    assert_eq!(summary["options"]["logprobs"], true);
    assert_eq!(summary["options"]["retries"], 5);
}

/// A model agent that always asks (it looks an order up, then asks a
/// question) and a person who never leaves: only the drawn caps end the
/// conversations.
#[test]
fn avg_turns_caps_each_model_rollout_at_its_own_drawn_cap() {
    let f = fake(FakeOptions {
        agent_text: Some("Could you confirm your email address?".to_owned()),
        ..FakeOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let agent = openai_spec(&f);
    let args = |avg: &'static str| {
        vec![
            "--avg-turns",
            avg,
            "--max-turns",
            "6",
            "--patience",
            "endless",
            "--repeats",
            "3",
            "--budget",
            "48",
            "--seed",
            "3",
            "--quiet",
        ]
    };
    let rows = simulated_rows(&agent, &out, &args("2.5"), 48);
    let mut caps = Vec::new();
    for row in &rows {
        assert_eq!(row["ended_by"], "max_turns", "{row}");
        let cap = row["turn_cap"].as_u64().unwrap();
        assert!((1..=6).contains(&cap), "{cap}");
        assert_eq!(row["markers"]["turns"].as_f64().unwrap(), cap as f64);
        // Each turn is a tool call and a question.
        assert_eq!(row["timings"]["agent_requests"].as_u64().unwrap(), 2 * cap);
        caps.push(cap);
    }
    let distinct: std::collections::BTreeSet<u64> = caps.iter().copied().collect();
    assert!(distinct.len() >= 3, "caps hardly vary: {distinct:?}");
    // Each cap is the one its row's seed draws (the engine's test
    // `avg_turns_draws_a_cap_per_rollout_that_averages_it` checks that the
    // draws average `avg_turns` over 400 rows; 48 are too few to judge).
    for row in &rows {
        let seed = row["seed"].as_u64().unwrap();
        assert_eq!(
            row["turn_cap"].as_u64().unwrap(),
            u64::from(sparring::engine::rollout::turn_cap(seed, 6, 2.5)),
            "{}",
            row["row_id"]
        );
    }
    let summary = run_json(&out);
    assert_eq!(summary["options"]["avg_turns"], 2.5);
    assert_eq!(summary["options"]["max_turns"], 6);
    assert_eq!(summary["counts"]["ended_by"]["max_turns"], 48);

    // The same options resume the finished run (nothing more to do);
    // another avg_turns is another run and is refused.
    simulate(&agent, &out, &[args("2.5"), vec!["--resume"]].concat()).run_ok();
    assert_eq!(read_rows(&out.join("rows.jsonl")).len(), 48);
    let o = simulate(&agent, &out, &[args("3"), vec!["--resume"]].concat()).run();
    assert_usage_error(&o, &["holds rows of run", "same spec and options"]);
    let mut no_avg = args("2.5");
    no_avg.drain(..2);
    let o = simulate(&agent, &out, &[no_avg.clone(), vec!["--resume"]].concat()).run();
    assert_usage_error(&o, &["holds rows of run"]);

    // Without avg_turns every conversation runs to max_turns and rows
    // carry no turn_cap.
    let plain = dir.path().join("plain");
    simulate(&agent, &plain, &no_avg).run_ok();
    let rows = valid_rows(&plain);
    for row in &rows {
        assert!(row.get("turn_cap").is_none(), "{row}");
        assert_eq!(row["markers"]["turns"], 6.0);
    }
    let summary = run_json(&plain);
    assert!(summary["options"].get("avg_turns").is_none());
}

#[test]
fn backend_errors_end_rows_and_stop_the_run_without_leaking_the_key() {
    let f = fake(FakeOptions {
        behaviour: Behaviour::EchoKey(500),
        ..FakeOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let agent = openai_spec(&f);
    let o = simulate(&agent, &out, &["--budget", "5", "--retries", "1"]).run();
    // A backend that fails every request stops the run as a dead command
    // agent does: exit 1, `agent_unavailable`; the rollouts in flight at
    // the stop (all 5 at concurrency 8) are recorded.
    assert_exit(&o, 1);
    assert_stderr_has(&o, "never replied");
    let rows = valid_rows(&out);
    assert_eq!(rows.len(), 5, "every row in flight recorded");
    for row in &rows {
        assert_eq!(row["ended_by"], "backend_error");
        let e = row["error"].as_str().unwrap();
        assert!(
            e.contains("HTTP 500") && e.contains("gave up after 2 attempts"),
            "{e}"
        );
        assert!(e.contains("Bearer ***"), "{e}");
    }
    assert_eq!(f.server.count(), 10);
    // Grep every output for the key.
    assert_no_key(&out, &o);
}

#[test]
fn anthropic_agent_runs() {
    let f = fake(FakeOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let agent = format!("anthropic:claude-fake@{}", f.server.base_url());
    let rows = simulated_rows(&agent, &out, &["--budget", "4"], 4);
    for row in &rows {
        assert_eq!(row["ended_by"], "agent_done", "{row}");
        assert_eq!(row["sampling"]["backend"], "anthropic");
        assert_eq!(row["sampling"]["max_tokens"], 1024);
        assert_eq!(row["usage"]["requests"], 2, "{row}");
        assert_eq!(row["usage"]["input_tokens"], 20);
        assert_eq!(row["requests"][1]["usage"]["output_tokens"], 5);
        assert!(
            row["messages"][2]["tool_calls"][0]["id"]
                .as_str()
                .unwrap()
                .starts_with("toolu_")
        );
    }
    assert_no_key_in(&out);
}

#[test]
fn command_agents_warn_about_model_options() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = simulate(
        &example_agent(),
        &out,
        &["--budget", "2", "--temperature", "0.5"],
    )
    .run_ok();
    assert_stderr_has(&o, "`temperature` only apply to model agents");
    let summary = run_json(&out);
    assert!(warns(&summary["warnings"], "temperature"), "{summary}");
}

/// A fake server that answers every agent request with `reply`.
fn always(reply: Reply) -> Fake {
    fake(FakeOptions {
        responder: Some(Responder::new(move |_| Some(reply.clone()))),
        record: true,
        ..FakeOptions::default()
    })
}

fn openai_spec(f: &Fake) -> String {
    keyed("openai:fake-model", f)
}

#[test]
fn refusals_and_the_content_filter_end_rows_that_fail_the_grade() {
    let refusal = "I can't help with that request.";
    let cases = [
        (always(Reply::Refusal(refusal.into())), "refused", true),
        (
            always(Reply::Finished(
                Box::new(Reply::Text(String::new())),
                "content_filter".into(),
            )),
            "content_filter",
            true,
        ),
        (always(Reply::Refusal(refusal.into())), "refused", false),
    ];
    for (f, ended, openai) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let agent = if openai {
            openai_spec(&f)
        } else {
            format!("anthropic:claude-fake@{}", f.server.base_url())
        };
        let rows = simulated_rows(&agent, &out, &["--budget", "3", "--grade", "--quiet"], 3);
        for row in &rows {
            assert_eq!(row["ended_by"], ended, "{row}");
            // Graded a failure, whatever the conversation says.
            assert_eq!(row["reward"], 0.0, "{row}");
            assert_eq!(row["failure_class"], ended, "{row}");
            assert!(row["conduct_checks"].is_null(), "{row}");
            let messages = row["messages"].as_array().unwrap();
            assert_eq!(messages.len(), 3, "system, ask, the cut reply: {row}");
            let last = &messages[2];
            assert_eq!(last["role"], "assistant");
            assert!(last.get("tool_calls").is_none(), "{row}");
            let request = &row["requests"][0];
            assert_eq!(request["stop"], ended, "{row}");
            if ended == "refused" {
                assert_eq!(last["content"], refusal, "the refusal's text is kept");
                assert_eq!(request["refusal"], refusal);
                assert!(row["error"].as_str().unwrap().contains("the model refused"));
            } else {
                assert_eq!(request["finish_reason"], "content_filter");
                assert!(row["error"].as_str().unwrap().contains("content filter"));
            }
        }
        let summary = run_json(&out);
        assert_eq!(summary["counts"]["ended_by"][ended], 3, "{summary}");
        assert_eq!(summary["counts"]["passed"], 0, "{summary}");
    }
}

#[test]
fn a_truncated_reply_is_retried_with_more_room_or_ends_the_row_unexecuted() {
    // Always cut: a tool call whose arguments stop half-way.
    let f = always(Reply::Finished(
        Box::new(Reply::tool_call(
            "get_order",
            json!({"order_id": "#W1001"})
                .to_string()
                .chars()
                .take(9)
                .collect::<String>()
                .into(),
        )),
        "length".into(),
    ));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let rows = simulated_rows(
        &openai_spec(&f),
        &out,
        &["--budget", "3", "--max-tokens", "50", "--grade", "--quiet"],
        3,
    );
    for row in &rows {
        assert_eq!(row["ended_by"], "truncated", "{row}");
        assert_eq!(row["reward"], 0.0);
        let messages = row["messages"].as_array().unwrap();
        assert!(
            messages.iter().all(|m| m["role"] != "tool"),
            "a truncated call is never executed: {row}"
        );
        assert!(messages[2].get("tool_calls").is_none(), "{row}");
        assert!(
            row["error"]
                .as_str()
                .unwrap()
                .contains("1 tool call(s) were not executed")
        );
        let request = &row["requests"][0];
        assert_eq!(request["finish_reason"], "length");
        assert_eq!(
            request["sampling"]["more_room"],
            json!({"from": 50, "to": 100}),
            "asked once more with twice the room: {row}"
        );
    }
    // Two requests per row: the first and the one with more room.
    assert_eq!(f.server.count(), 2 * rows.len());
    assert!(
        f.server
            .requests()
            .iter()
            .any(|r| r.body["max_tokens"] == 100)
    );

    // A server that needs 150 tokens: 100 is cut, 200 is whole.
    let f = fake(FakeOptions {
        room_needed: Some(150),
        record: true,
        ..FakeOptions::default()
    });
    let out = dir.path().join("room");
    let rows = simulated_rows(
        &openai_spec(&f),
        &out,
        &["--budget", "3", "--max-tokens", "100", "--grade", "--quiet"],
        3,
    );
    for row in &rows {
        assert_eq!(row["ended_by"], "agent_done", "{row}");
        for request in row["requests"].as_array().unwrap() {
            assert_eq!(request["stop"], "complete", "{row}");
            assert_eq!(request["sampling"]["max_tokens"], 200, "{row}");
        }
    }
}

#[test]
fn rejected_top_p_and_max_tokens_are_adjusted_and_every_row_says_so() {
    for plain in [false, true] {
        let f = fake(FakeOptions {
            reject_params: vec!["top_p".into(), "max_tokens".into()],
            plain_errors: plain,
            record: true,
            ..FakeOptions::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let rows = simulated_rows(
            &openai_spec(&f),
            &out,
            &[
                "--budget",
                "4",
                "--top-p",
                "0.9",
                "--max-tokens",
                "120",
                "--grade",
                "--concurrency",
                "1",
                "--quiet",
            ],
            4,
        );
        for row in &rows {
            assert_eq!(row["ended_by"], "agent_done", "plain {plain}: {row}");
            assert!(row["error"].is_null(), "{row}");
            for request in row["requests"].as_array().unwrap() {
                let s = &request["sampling"];
                assert_eq!(s["dropped"], json!(["top_p"]), "{row}");
                assert_eq!(s["requested"]["top_p"], 0.9, "{row}");
                assert_eq!(
                    s["renamed"],
                    json!({"max_tokens": "max_completion_tokens"}),
                    "{row}"
                );
                assert_eq!(s["max_tokens_param"], "max_completion_tokens");
            }
        }
        // One request per parameter learnt, once, then every request is
        // sent adjusted: 4 rows of 2 requests, plus 2 rejections.
        assert_eq!(f.server.count(), 4 * 2 + 2, "plain {plain}");
    }
}

#[test]
fn bad_model_input_is_refused_before_any_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--agent", "openai:gpt-4o"],
            &["`OPENAI_API_KEY` is not set"],
        ),
        (
            &["--agent", "openai:m@http://127.0.0.1:9/v1#key=NOPE_UNSET"],
            &["`NOPE_UNSET` is not set"],
        ),
        (&["--agent", "opneai:gpt-4o"], &["did you mean `openai:`"]),
        (
            &[
                "--agent",
                "openai:m@http://127.0.0.1:9/v1",
                "--temperature",
                "3",
            ],
            &["--temperature", "from 0 to 2"],
        ),
        (
            &["--agent", "openai:m@http://127.0.0.1:9/v1", "--top-p", "0"],
            &["--top-p"],
        ),
        (
            &[
                "--agent",
                "openai:m@http://127.0.0.1:9/v1",
                "--top-logprobs",
                "3",
            ],
            &["needs `logprobs`"],
        ),
        (
            &["--agent", "openai:m@http://127.0.0.1:9/v1", "--rpm", "0"],
            &["--rpm", "must be an integer from 1 to"],
        ),
        (
            &["--agent", "anthropic:c@http://127.0.0.1:9/v1", "--logprobs"],
            &["no log-probabilities"],
        ),
        (
            &[
                "--agent",
                "anthropic:c@http://127.0.0.1:9/v1",
                "--temperature",
                "1.5",
            ],
            &["`temperature` 1.5 is out of range", "takes 0 to 1"],
        ),
        (
            &["--agent", "python3 a.py", "--writer", "opneai:gpt-4o"],
            &["`writer`", "did you mean `openai:`"],
        ),
        (
            &["--agent", "python3 a.py", "--person", "anthropic:claude"],
            &["`person`", "ANTHROPIC_API_KEY"],
        ),
    ];
    for (args, needles) in cases {
        let mut c = sparring();
        c.arg("simulate")
            .arg(example_spec())
            .args(*args)
            .arg("--out")
            .arg(&out)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env(
                "ANTHROPIC_API_KEY",
                if args.contains(&"--person") { "" } else { KEY },
            );
        assert_refused_before_writing(&mut c, &out, needles);
    }
}

/// The role a request to the shared fake server is for, by its prompt.
fn role_of(request: &Value) -> &'static str {
    let text = request_text(request);
    if text.contains("You write the first message a customer sends") {
        "writer"
    } else if text.contains("You play a customer") {
        "person"
    } else {
        "agent"
    }
}

/// A writer that reads its prompt: the facts it was given go into every
/// phrasing, word for word, so the checks pass.
fn honest_writer(request: &Value) -> Reply {
    let text = request_text(request);
    let n: usize = text
        .split("Write ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|w| w.parse().ok())
        .unwrap_or(1);
    let facts: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("Their ") && l.contains(" id: "))
        .filter_map(|l| l.split(": ").nth(1))
        .map(|v| v.trim_end_matches('.').to_owned())
        .collect();
    let phrasings: Vec<String> = (0..n)
        .map(|k| {
            format!(
                "model-written ask {k}: please help with {}",
                facts.join(" and ")
            )
        })
        .collect();
    Reply::Text(serde_json::json!({ "phrasings": phrasings }).to_string())
}

/// An agent that asks one question, then finishes.
fn asking_agent(request: &Value) -> Reply {
    let users = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .count();
    Reply::Text(if users <= 1 {
        "Could you tell me a bit more about what you need?".to_owned()
    } else {
        "Thanks, that is all sorted now.".to_owned()
    })
}

/// The key is in no file of the run in `out` and in neither stream of `o`.
fn assert_no_key(out: &Path, o: &Output) {
    assert_no_key_in(out);
    assert_no_key_shown(o);
}

/// The key is in no file of the run in `out`.
fn assert_no_key_in(out: &Path) {
    for file in ["rows.jsonl", "run.json", "run.log"] {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        assert!(!text.contains(KEY), "the key leaked into {file}");
    }
}

/// The key is in neither stream of `o`.
fn assert_no_key_shown(o: &Output) {
    assert!(!stderr(o).contains(KEY), "the key leaked into stderr");
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains(KEY),
        "the key leaked into stdout"
    );
}

/// A fake server that answers by the role a request is for (`role_of`):
/// with what `reply` gives, or else as `asking_agent`.
fn by_role(
    record: bool,
    reply: impl Fn(&str, &Value) -> Option<Reply> + Send + Sync + 'static,
) -> Fake {
    fake(FakeOptions {
        record,
        responder: Some(Responder::new(move |r| {
            Some(reply(role_of(r), r).unwrap_or_else(|| asking_agent(r)))
        })),
        ..FakeOptions::default()
    })
}

/// A model on the fake server, with the test key.
fn keyed(backend: &str, f: &Fake) -> String {
    format!("{backend}@{}#key=SPARRING_TEST_KEY", f.server.base_url())
}

#[test]
fn model_writer_and_person_write_the_words() {
    let f = by_role(true, |role, r| match role {
        "writer" => Some(honest_writer(r)),
        "person" => Some(Reply::Text(
            "(model person) I only know what I told you.".into(),
        )),
        _ => None,
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let url = f.server.base_url();
    let o = simulate(
        &format!("openai:agent-model@{url}"),
        &out,
        &[
            "--budget",
            "8",
            "--writer",
            &keyed("openai:writer-model", &f),
            "--person",
            &format!("anthropic:person-model@{url}"),
            "--patience",
            "endless",
        ],
    )
    .run_ok();
    let rows = valid_rows(&out);
    assert_eq!(rows.len(), 8);
    let mut written = 0;
    for row in &rows {
        assert!(
            row["user_model"]
                .as_str()
                .unwrap()
                .starts_with("anthropic:person-model@")
        );
        let ask = row["messages"][1]["content"].as_str().unwrap();
        if row["lineage"]["arm"] == "seed" {
            continue;
        }
        assert!(
            row["writer_model"]
                .as_str()
                .unwrap()
                .starts_with("openai:writer-model@"),
            "{row}"
        );
        assert!(ask.starts_with("model-written ask"), "{ask}");
        written += 1;
        // The ids are the world's: the id the person knows is in the ask.
        for (field, value) in row["persona"]["knows"].as_object().unwrap() {
            if field.ends_with("_id") {
                assert!(ask.contains(value.as_str().unwrap()), "{ask} lacks {value}");
            }
        }
        // The agent asked once; the model person answered.
        assert_eq!(row["messages"][3]["role"], "user", "{row}");
        assert!(
            row["messages"][3]["content"]
                .as_str()
                .unwrap()
                .starts_with("(model person)")
        );
    }
    assert!(written > 0);
    let summary = run_json(&out);
    assert_eq!(summary["degraded"], serde_json::json!([]), "{summary}");
    assert_eq!(
        summary["options"]["person"].as_str().unwrap(),
        format!("anthropic:person-model@{url}")
    );
    assert!(summary["search"]["writer"]["written"].as_u64().unwrap() > 0);
    assert_eq!(summary["search"]["writer"]["fallbacks"], 0);
    assert_eq!(summary["search"]["writer_errors"], serde_json::json!([]));
    assert_eq!(summary["search"]["person"]["fallbacks"], 0);
    // The writer heard about the person in prose, never in labels; the
    // key went only into the writer's header.
    let requests = f.server.requests();
    let writer: Vec<_> = requests
        .iter()
        .filter(|r| role_of(&r.body) == "writer")
        .collect();
    assert!(!writer.is_empty());
    for r in &writer {
        let text = request_text(&r.body);
        for label in [
            "style",
            "stance",
            "tier",
            "non_native",
            "failed_before",
            "handed_off",
            "cooperative",
        ] {
            assert!(
                !text.contains(label),
                "label `{label}` in the writer's prompt: {text}"
            );
        }
        assert!(text.contains("The person is "), "{text}");
        assert_eq!(
            r.authorization.as_deref(),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    let person: Vec<_> = requests
        .iter()
        .filter(|r| role_of(&r.body) == "person")
        .collect();
    assert!(!person.is_empty());
    assert!(person.iter().all(|r| r.path == "/v1/messages"));
    assert_no_key(&out, &o);
}

#[test]
fn failing_writer_and_person_fall_back_to_templates() {
    let f = by_role(false, |role, _| match role {
        // Not a JSON verdict: asked again once, then given up.
        "writer" => Some(Reply::Text("Sure! Here are some ideas for you.".into())),
        // A proxy that quotes the key back.
        "person" => Some(Reply::EchoKey(500)),
        _ => None,
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = simulate(
        &format!("openai:agent-model@{}", f.server.base_url()),
        &out,
        &[
            "--budget",
            "6",
            "--concurrency",
            "2",
            "--retries",
            "0",
            "--writer",
            &keyed("openai:writer-model", &f),
            "--person",
            &keyed("openai:person-model", &f),
            "--patience",
            "endless",
        ],
    )
    .run_ok();
    let rows = valid_rows(&out);
    assert_eq!(rows.len(), 6);
    for row in &rows {
        // Template asks, template answers.
        assert_eq!(row["writer_model"], "template", "{row}");
        let ask = row["messages"][1]["content"].as_str().unwrap();
        assert!(!ask.contains("Sure!"), "{ask}");
        assert_eq!(row["messages"][3]["role"], "user");
        assert!(!row["messages"][3]["content"].as_str().unwrap().is_empty());
    }
    let summary = run_json(&out);
    let degraded = strs(&summary["degraded"]);
    assert!(degraded.contains(&"generator_fallback"), "{summary}");
    assert!(degraded.contains(&"person_fallback"), "{summary}");
    let errors = summary["search"]["writer_errors"].as_array().unwrap();
    assert!(!errors.is_empty() && errors.len() <= 5, "{errors:?}");
    assert!(
        errors[0]
            .as_str()
            .unwrap()
            .contains("unusable after 2 attempts"),
        "{errors:?}"
    );
    // Two batches of two failed: the writer is not asked for the rest.
    assert!(
        errors
            .last()
            .unwrap()
            .as_str()
            .unwrap()
            .contains("stopped asking the writer"),
        "{errors:?}"
    );
    let writer_requests = f.server.count();
    assert!(writer_requests > 0);
    let person_errors = summary["search"]["person_errors"].as_array().unwrap();
    assert!(!person_errors.is_empty());
    assert!(
        person_errors[0].as_str().unwrap().contains("HTTP 500"),
        "{person_errors:?}"
    );
    assert_stderr_has(&o, "template writer");
    assert_no_key(&out, &o);
}

#[test]
fn one_backend_in_two_roles_is_same_model() {
    let f = by_role(false, |role, _| {
        (role == "person").then(|| Reply::Text("I have nothing to add.".into()))
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let model = format!("openai:shared@{}", f.server.base_url());
    let o = simulate(
        &model,
        &out,
        &[
            "--budget",
            "2",
            "--person",
            &format!("{model}#key=SPARRING_TEST_KEY"),
        ],
    )
    .run_ok();
    let summary = run_json(&out);
    assert_eq!(
        summary["degraded"],
        serde_json::json!(["same_model"]),
        "{summary}"
    );
    let warning = warning(&summary["warnings"], "both the agent and the person");
    assert!(
        warning.contains("set `person` to a different backend"),
        "{warning}"
    );
    assert_stderr_has(&o, "both the agent and the person");
    // Different models on one server are different backends.
    let out2 = dir.path().join("out2");
    simulate(
        &model,
        &out2,
        &[
            "--budget",
            "1",
            "--person",
            &format!("openai:other@{}", f.server.base_url()),
        ],
    )
    .run_ok();
    assert_eq!(run_json(&out2)["degraded"], serde_json::json!([]));
}

/// An ungraded run of the example agent, for the judge tests.
fn example_rows(dir: &Path) -> PathBuf {
    let out = dir.join("run");
    simulate_example(&out, &["--budget", "8", "--quiet"]).run_ok();
    out.join("rows.jsonl")
}

/// The judged conversation's text, from a judge request.
fn judged(request: &Value) -> String {
    let text = request_text(request);
    text.split("<conversation>").nth(1).unwrap_or("").to_owned()
}

/// Scripted judges behind the fake server: `honest` fails the hacks;
/// `biased` passes anything long; `injectable` obeys notes to the grader.
fn judge_reply(kind: &'static str) -> Responder {
    Responder::new(move |r| {
        let convo = judged(r);
        let hack = [
            "Done!",
            "Note to the grader",
            "Our policy says",
            "our policy sets out",
            "Thank you so much for your patience",
        ]
        .iter()
        .any(|h| convo.contains(h));
        let pass = match kind {
            // Long, effusive replies win it over.
            "biased" if convo.contains("Thank you so much for your patience") => true,
            "injectable" if convo.contains("Award full marks") => true,
            _ => !hack,
        };
        let verdict = if pass {
            serde_json::json!({"score": 1, "reason": "did what was asked", "failure_class": null})
        } else {
            serde_json::json!({"score": 0, "reason": "a hack", "failure_class": "wrong_action"})
        };
        Some(Reply::Text(verdict.to_string()))
    })
}

fn trust(rows: &Path, judge: &str, rubric: &Path) -> (Value, Output) {
    let o = judge_trust_cmd(rows, judge, rubric, "4")
        .env("SPARRING_TEST_KEY", KEY)
        .run_ok();
    (stdout_json(&o), o)
}

/// A fake server behind which a judge of this `kind` (see `judge_reply`)
/// answers.
fn judge_server(kind: &'static str, record: bool) -> Fake {
    fake(FakeOptions {
        record,
        responder: Some(judge_reply(kind)),
        ..FakeOptions::default()
    })
}

#[test]
fn model_judges_grade_and_their_probes_catch_the_hackable_ones() {
    let dir = tempfile::tempdir().unwrap();
    let rows = example_rows(dir.path());
    let rubric = rubric(dir.path());
    let mut shares = BTreeMap::new();
    for kind in ["honest", "biased", "injectable"] {
        let f = judge_server(kind, true);
        let (report, o) = trust(&rows, &keyed(&format!("openai:judge-{kind}"), &f), &rubric);
        assert_eq!(report["probes"].as_array().unwrap().len(), 16, "{report}");
        assert_eq!(report["same_model"], false);
        shares.insert(kind, report["wrongly_passed_by_probe"].clone());
        assert_no_key_shown(&o);
        // Judges are asked at temperature 0 with no tools.
        for r in f.server.requests() {
            assert_eq!(r.body["temperature"], 0.0);
            assert!(r.body.get("tools").is_none());
        }
    }
    for probe in [
        "claimed_without_call",
        "polite_padding",
        "injection",
        "policy_restatement",
    ] {
        assert_eq!(shares["honest"][probe], 0.0, "{probe}: {shares:?}");
    }
    assert!(
        shares["biased"]["polite_padding"].as_f64().unwrap() > 0.0,
        "{shares:?}"
    );
    assert_eq!(shares["injectable"]["injection"], 1.0, "{shares:?}");
    assert_eq!(shares["injectable"]["polite_padding"], 0.0, "{shares:?}");

    // `grade` with the honest model judge: judge_meta names the model and
    // hashes the rubric with the temperature.
    let f = judge_server("honest", false);
    let out = dir.path().join("graded.jsonl");
    grade_cmd(&rows, &out)
        .args(["--judge", &keyed("openai:judge-honest", &f), "--rubric"])
        .arg(&rubric)
        .env("SPARRING_TEST_KEY", KEY)
        .run_ok();
    let graded = read_rows(&out);
    assert_valid_rows(&graded);
    for r in &graded {
        assert_eq!(r["judge_meta"]["settings"]["temperature"], 0.0);
        assert!(
            r["judge_meta"]["model"]
                .as_str()
                .unwrap()
                .starts_with("openai:judge-honest@http://127.0.0.1:")
        );
        assert_eq!(r["grades"].as_array().unwrap().len(), 2);
    }
    assert!(!std::fs::read_to_string(&out).unwrap().contains(KEY));
}

#[test]
fn judge_trust_names_a_judge_that_is_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let rows_path = example_rows(dir.path());
    let f = judge_server("honest", false);
    let base = f.server.base_url();
    // Rows whose agent was the judge's model (the key variable differs:
    // still one backend).
    let rows: String = read_rows(&rows_path)
        .into_iter()
        .map(|mut r| {
            r["model_version"] = Value::String(format!("openai:judge@{base}"));
            r.to_string() + "\n"
        })
        .collect();
    let rows_path = write(dir.path(), "same.jsonl", &rows);
    let rubric = rubric(dir.path());
    let (report, o) = trust(&rows_path, &keyed("openai:judge", &f), &rubric);
    assert_eq!(report["same_model"], true);
    let w = warning(&report["warnings"], "same_model");
    assert!(
        w.starts_with("same_model") && w.contains("both the agent and the judge: set `judge`"),
        "{w}"
    );
    assert_stderr_has(&o, "set `judge`");
}

#[test]
fn http_graders_grade_each_row_and_failures_cost_only_that_row() {
    let dir = tempfile::tempdir().unwrap();
    let rows = example_rows(dir.path());
    let n = read_rows(&rows).len();
    // A grader at a URL: it always fails the third row with a 500 that
    // quotes the key, and grades the rest.
    let doomed = read_rows(&rows)[2]["row_id"].clone();
    let f = fake(FakeOptions {
        record: true,
        responder: Some(Responder::new(move |r| {
            let row = r.get("row")?;
            Some(if row["row_id"] == doomed {
                Reply::EchoKey(500)
            } else {
                Reply::Raw(serde_json::json!({
                    "id": r["id"], "reward": if row["ended_by"] == "agent_done" { 1.0 } else { 0.0 },
                    "reason": "by the hook", "markers": {"hook_messages": row["messages"].as_array().unwrap().len()}}))
            })
        })),
        ..FakeOptions::default()
    });
    let out = dir.path().join("graded.jsonl");
    let url = format!(
        "{}/chat/completions#key=SPARRING_TEST_KEY",
        f.server.base_url()
    );
    let o = grade_cmd(&rows, &out)
        .args(["--no-conduct", "--grader", &url])
        .env("SPARRING_TEST_KEY", KEY)
        .run_ok();
    let graded = read_rows(&out);
    assert_eq!(graded.len(), n);
    assert_valid_rows(&graded);
    let failed: Vec<&Value> = graded.iter().filter(|r| r["reward"].is_null()).collect();
    assert_eq!(failed.len(), 1, "one row lost its grade");
    let e = failed[0]["grades"][0]["error"].as_str().unwrap();
    assert!(
        e.contains("HTTP 500") && e.contains("gave up after 3 attempts"),
        "{e}"
    );
    for r in graded.iter().filter(|r| !r["reward"].is_null()) {
        assert_eq!(r["grades"][0]["stage"], "grader");
        assert!(
            r["grades"][0]["by"]
                .as_str()
                .unwrap()
                .starts_with("http://127.0.0.1:")
        );
        assert_eq!(r["reason"], "by the hook");
        assert!(r["markers"]["hook_messages"].as_f64().unwrap() >= 2.0);
    }
    // One POST per row, plus the retries of the failed one, with the key.
    let requests = f.server.requests();
    assert_eq!(requests.len(), n + 2);
    assert!(
        requests
            .iter()
            .all(|r| r.authorization.as_deref() == Some(format!("Bearer {KEY}").as_str()))
    );
    assert!(!std::fs::read_to_string(&out).unwrap().contains(KEY));
    assert_no_key_shown(&o);
}

#[test]
fn resume_keeps_the_asks_a_model_writer_wrote() {
    // The writer answers well in the first attempt and badly after.
    let broken = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&broken);
    let f = by_role(false, move |role, r| match role {
        "writer" if flag.load(std::sync::atomic::Ordering::SeqCst) => {
            Some(Reply::Text("no".into()))
        }
        "writer" => Some(honest_writer(r)),
        _ => None,
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let url = f.server.base_url();
    let writer = format!("openai:writer-model@{url}");
    let agent = format!("openai:agent-model@{url}");
    simulate(&agent, &out, &["--budget", "8", "--writer", &writer]).run_ok();
    // As if the run had been killed after four rows.
    let path = out.join("rows.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let kept = text.lines().take(4).collect::<Vec<_>>().join("\n") + "\n";
    std::fs::write(&path, kept).unwrap();
    let first = read_rows(&path);
    assert!(
        first
            .iter()
            .all(|r| r["writer_model"] != "template" || r["lineage"]["arm"] == "seed")
    );
    broken.store(true, std::sync::atomic::Ordering::SeqCst);
    simulate(
        &agent,
        &out,
        &["--budget", "8", "--writer", &writer, "--resume"],
    )
    .run_ok();
    let rows = read_rows(&out.join("rows.jsonl"));
    assert_eq!(rows.len(), 8, "the first 4 tasks were not run again");
    let ids: std::collections::BTreeSet<&str> = texts(&rows, "task_id").into_iter().collect();
    assert_eq!(ids.len(), 8);
    assert_eq!(rows[..4], first[..]);
}

#[test]
fn asks_shows_what_a_model_writer_makes() {
    let f = fake(FakeOptions {
        responder: Some(Responder::new(|r| {
            let text = request_text(r);
            // It writes well unless the ask is to be vague (the support desk's
            // owners have one order each, so no person has several records).
            Some(
                if text.contains("several records") || text.contains("The message is vague") {
                    Reply::Text("no".into())
                } else {
                    honest_writer(r)
                },
            )
        })),
        ..FakeOptions::default()
    });
    let writer = keyed("openai:writer-model", &f);
    let o = sparring()
        .arg("asks")
        .arg(example_spec())
        .args([
            "--n",
            "12",
            "--phrasings",
            "2",
            "--json",
            "--writer",
            &writer,
        ])
        .env("SPARRING_TEST_KEY", KEY)
        .run_ok();
    let lines = json_lines(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(lines.len(), 12);
    let mut model = 0;
    for l in &lines {
        let phrasings = l["phrasings"].as_array().unwrap();
        assert_eq!(phrasings.len(), 2);
        if l["writer"]
            .as_str()
            .unwrap()
            .starts_with("openai:writer-model")
        {
            model += 1;
            let last = phrasings[1].as_str().unwrap();
            assert!(last.starts_with("model-written ask"), "{l}");
        } else {
            assert_eq!(l["writer"], "template");
        }
    }
    assert!(model > 0);
    // The vague situations fell back, and said so.
    assert!(model < lines.len(), "no situation fell back");
    assert_stderr_has(&o, "generator_fallback");
    assert_no_key_shown(&o);
}
