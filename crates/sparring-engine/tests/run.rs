//! Runs end to end with in-process agents.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::float_cmp
)]

use sparring_engine::run::{Progress, RunConfig, run, run_id};
use sparring_testkit::{ScriptedAgent, shop_spec};
use sparring_types::{Agent, EndedBy, Row, SimulateOptions};
use std::sync::Arc;

/// A typed summary part as JSON, for the tests' field-by-name checks.
fn json<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap()
}

async fn simulate(
    agent: ScriptedAgent,
    options: SimulateOptions,
) -> (Vec<Row>, sparring_types::RunSummary) {
    let mut rows: Vec<Row> = Vec::new();
    let agent: Arc<dyn Agent> = Arc::new(agent);
    let config = RunConfig::new(Arc::new(shop_spec()), options, agent);
    let mut seen = Vec::new();
    let summary = run(config, &mut rows, &mut |p: &Progress| seen.push(p.done))
        .await
        .unwrap();
    assert_eq!(seen.len(), rows.len(), "one progress event per row");
    (rows, summary)
}

fn graded(concurrency: usize) -> SimulateOptions {
    SimulateOptions {
        grade: true,
        concurrency,
        seed: 3,
        ..SimulateOptions::default()
    }
}

fn sorted(mut rows: Vec<Row>) -> Vec<String> {
    rows.sort_by(|a, b| a.row_id.cmp(&b.row_id));
    rows.iter()
        .map(|r| serde_json::to_string(r).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_seed_same_rows_at_any_concurrency() {
    let (serial, _) = simulate(ScriptedAgent::competent(), graded(1)).await;
    let (parallel, _) = simulate(ScriptedAgent::competent(), graded(16)).await;
    assert!(!serial.is_empty());
    assert!(
        sorted(serial.clone()) == sorted(parallel),
        "rows differ between concurrency 1 and 16"
    );
    let (other_seed, _) = simulate(
        ScriptedAgent::competent(),
        SimulateOptions {
            seed: 4,
            ..graded(1)
        },
    )
    .await;
    assert!(
        sorted(serial) != sorted(other_seed),
        "the seed changes the asks"
    );
}

#[tokio::test]
async fn seeds_first_and_every_tool_covered() {
    let (rows, summary) = simulate(ScriptedAgent::competent(), graded(1)).await;
    assert_eq!(rows[0].situation.tier, sparring_types::Tier::Seed);
    assert_eq!(
        rows[0].messages[1].content_str(),
        "Please refund order #W1002, it arrived broken."
    );
    for tool in ["get_order", "refund_order", "cancel_order"] {
        assert!(
            rows.iter().any(|r| r.situation.axes["tool"] == tool),
            "{tool} never ran"
        );
    }
    assert_eq!(summary.counts.rows, rows.len() as u64);
    assert_eq!(summary.stopped_because.as_str(), "situations_exhausted");
    // task ids are distinct per ask and stable across runs
    let (again, _) = simulate(ScriptedAgent::competent(), graded(1)).await;
    let ids: Vec<_> = rows.iter().map(|r| r.task_id.clone()).collect();
    let ids2: Vec<_> = again.iter().map(|r| r.task_id.clone()).collect();
    assert_eq!(ids, ids2);
}

#[tokio::test]
async fn budget_caps_rows_and_spreads_over_tools() {
    let options = SimulateOptions {
        budget: Some(4),
        ..graded(2)
    };
    let (rows, summary) = simulate(ScriptedAgent::competent(), options).await;
    assert_eq!(rows.len(), 4);
    assert_eq!(summary.stopped_because.as_str(), "budget_spent");
    let tools: std::collections::BTreeSet<_> = rows
        .iter()
        .map(|r| r.situation.axes["tool"].clone())
        .collect();
    assert_eq!(tools.len(), 4, "seed + three tools: {tools:?}");
}

#[tokio::test]
async fn careless_agent_fails_the_conduct_check() {
    let (rows, summary) = simulate(ScriptedAgent::careless(), graded(4)).await;
    assert!(rows.iter().all(|r| r.reward == Some(0.0)));
    assert!(
        rows.iter()
            .all(|r| r.failure_class.as_deref() == Some("claimed_without_call"))
    );
    assert_eq!(summary.counts.passed, 0);
    // The "competent" agent only looks orders up: its conduct is clean, but
    // where something had to be done its goal is not met, and the reward
    // says so.
    let (good, _) = simulate(ScriptedAgent::competent(), graded(4)).await;
    assert!(
        good.iter().all(|r| {
            r.conduct_checks
                .as_ref()
                .is_some_and(|c| c.iter().all(|(k, v)| k == "goal" || *v))
        }),
        "{:?}",
        good.iter().map(|r| &r.reason).collect::<Vec<_>>()
    );
    assert!(good.iter().all(|r| {
        let met = r
            .conduct_checks
            .as_ref()
            .and_then(|c| c.get("goal"))
            .copied();
        r.reward == Some(if met == Some(true) { 1.0 } else { 0.0 })
    }));
    assert!(
        good.iter()
            .any(|r| r.failure_class.as_deref() == Some("goal_not_met"))
    );
}

#[tokio::test]
async fn ungraded_unless_asked_and_repeats_multiply() {
    let options = SimulateOptions {
        repeats: 3,
        ..SimulateOptions::default()
    };
    let (rows, summary) = simulate(ScriptedAgent::competent(), options).await;
    assert!(rows.iter().all(|r| r.reward.is_none()));
    assert_eq!(summary.counts.rows, summary.counts.tasks * 3);
}

#[tokio::test]
async fn an_agent_that_never_stops_calling_tools_hits_the_cap() {
    let agent = ScriptedAgent::new("loop", |_| {
        sparring_testkit::tool_call("get_order", &serde_json::json!({"order_id": "#W1001"}))
    });
    let options = SimulateOptions {
        budget: Some(2),
        max_tool_steps: 3,
        ..SimulateOptions::default()
    };
    let (rows, _) = simulate(agent, options).await;
    assert!(rows.iter().all(|r| r.ended_by == EndedBy::ToolLimit));
    assert!(rows.iter().all(|r| r.timings.agent_requests == 3));
}

#[tokio::test]
async fn questions_forever_end_at_max_turns_or_when_the_person_leaves() {
    let agent = ScriptedAgent::new("nosy", |_| {
        sparring_types::Message::text(sparring_types::Role::Assistant, "And what is your email?")
    });
    let options = SimulateOptions {
        max_turns: 4,
        patience: sparring_types::Patience::Endless,
        ..SimulateOptions::default()
    };
    let (rows, _) = simulate(agent.clone(), options).await;
    assert!(rows.iter().all(|r| r.ended_by == EndedBy::MaxTurns));
    let options = SimulateOptions {
        max_turns: 50,
        patience: sparring_types::Patience::Short,
        ..SimulateOptions::default()
    };
    let (rows, summary) = simulate(agent, options).await;
    assert!(rows.iter().all(|r| r.ended_by == EndedBy::UserLeft));
    let eoq = &json(&summary.search)["ended_on_question"];
    assert_eq!(eoq["n"], rows.len());
    assert_eq!(eoq["user_left"], rows.len());
    assert!((eoq["share"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    // The row ends on the agent's question.
    assert!(
        rows.iter()
            .all(|r| r.messages.last().unwrap().role == sparring_types::Role::Assistant)
    );
}

fn nosy() -> ScriptedAgent {
    ScriptedAgent::new("nosy", |_| {
        sparring_types::Message::text(sparring_types::Role::Assistant, "And what is your email?")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn avg_turns_draws_a_cap_per_rollout_that_averages_it() {
    // An agent that always asks and a person who never leaves: only the cap
    // ends a conversation, so every row's turns are its drawn cap.
    let options = SimulateOptions {
        max_turns: 10,
        avg_turns: Some(3.5),
        repeats: 12,
        patience: sparring_types::Patience::Endless,
        concurrency: 8,
        ..SimulateOptions::default()
    };
    let (rows, summary) = simulate(nosy(), options.clone()).await;
    assert!(rows.len() >= 300, "{} rows", rows.len());
    let mut caps = Vec::new();
    for r in &rows {
        assert_eq!(r.ended_by, EndedBy::MaxTurns, "{}", r.row_id);
        let cap = r.turn_cap.expect("every row records its cap");
        assert!((1..=10).contains(&cap), "cap {cap}");
        assert_eq!(r.markers["turns"], f64::from(cap), "{}", r.row_id);
        assert_eq!(r.timings.agent_requests, cap, "{}", r.row_id);
        caps.push(cap);
    }
    let distinct: std::collections::BTreeSet<u32> = caps.iter().copied().collect();
    assert!(distinct.len() >= 4, "caps hardly vary: {distinct:?}");
    let mean = f64::from(caps.iter().sum::<u32>()) / caps.len() as f64;
    // A cap's sd is 1.34, so over ~400 rows the mean's is 0.07: within 0.2
    // of 3.5 (and the seed fixes it).
    assert!(
        (mean - 3.5).abs() < 0.2,
        "mean cap {mean} over {} rows",
        caps.len()
    );
    assert_eq!(
        summary.options.as_ref().and_then(|o| o.avg_turns),
        Some(3.5),
        "run.json records the option"
    );
    // The same seed draws the same caps at another concurrency; each cap
    // comes from its rollout's seed.
    let (again, _) = simulate(
        nosy(),
        SimulateOptions {
            concurrency: 1,
            ..options.clone()
        },
    )
    .await;
    assert!(
        sorted(rows.clone()) == sorted(again),
        "same seed, same rows"
    );
    for r in &rows {
        assert_eq!(
            r.turn_cap,
            Some(sparring_engine::rollout::turn_cap(r.seed, 10, 3.5))
        );
    }
    // The option changes the run, so a resume cannot mix the two.
    let plain = SimulateOptions {
        avg_turns: None,
        ..options.clone()
    };
    let spec = shop_spec();
    assert_ne!(run_id(&spec, &options), run_id(&spec, &plain));
    assert_ne!(
        run_id(&spec, &options),
        run_id(
            &spec,
            &SimulateOptions {
                avg_turns: Some(3.0),
                ..options.clone()
            }
        )
    );
}

#[tokio::test]
async fn without_avg_turns_rows_carry_no_turn_cap_and_end_at_max_turns() {
    let options = SimulateOptions {
        max_turns: 3,
        patience: sparring_types::Patience::Endless,
        ..SimulateOptions::default()
    };
    let (rows, summary) = simulate(nosy(), options).await;
    assert!(!rows.is_empty());
    for r in &rows {
        assert_eq!(r.turn_cap, None);
        assert_eq!(r.ended_by, EndedBy::MaxTurns);
        assert_eq!(r.markers["turns"], 3.0);
        let json = serde_json::to_value(r).unwrap();
        assert!(json.get("turn_cap").is_none(), "{json}");
    }
    let recorded = serde_json::to_value(summary.options.unwrap()).unwrap();
    assert!(recorded.get("avg_turns").is_none(), "{recorded}");
}

#[tokio::test]
async fn a_library_caller_with_avg_turns_above_max_turns_is_refused() {
    let options = SimulateOptions {
        max_turns: 4,
        avg_turns: Some(4.5),
        ..SimulateOptions::default()
    };
    let mut rows: Vec<Row> = Vec::new();
    let config = RunConfig::new(Arc::new(shop_spec()), options, Arc::new(nosy()));
    let err = run(config, &mut rows, &mut |_: &Progress| {})
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`avg_turns` 4.5") && err.contains("`max_turns` 4"),
        "{err}"
    );
    assert!(rows.is_empty());
}

#[tokio::test]
async fn tool_conditions_schedule_faults_that_rows_record() {
    let mut options = graded(4);
    options.world.fault_rate = 0.5;
    let (rows, _) = simulate(ScriptedAgent::competent(), options).await;
    let faulted: Vec<&Row> = rows
        .iter()
        .filter(|r| {
            r.situation
                .axes
                .get("tool_condition")
                .is_some_and(|c| c != "ok")
        })
        .collect();
    assert!(!faulted.is_empty(), "some situations carry a fault");
    for row in &faulted {
        let condition = &row.situation.axes["tool_condition"];
        let tool = &row.situation.axes["tool"];
        let scheduled: Vec<&sparring_types::FaultRecord> = row
            .situation
            .faults
            .iter()
            .filter(|f| f.is_scheduled())
            .collect();
        assert_eq!(scheduled.len(), 1, "{:?}", row.situation.faults);
        assert_eq!(scheduled[0].kind.as_str(), condition);
        assert_eq!(&scheduled[0].tool, tool);
        // When the agent called the tool, its first call met the fault.
        let first = row
            .messages
            .iter()
            .find(|m| m.name.as_deref() == Some(tool.as_str()));
        if let Some(m) = first {
            assert_eq!(scheduled[0].fired, Some(true));
            let content = m.content_str();
            if ["timeout", "server_error", "rate_limited"].contains(&condition.as_str()) {
                assert!(content.contains(r#""kind":"fault""#), "{content}");
            }
        }
        // A situation without a tool meets its fault on the first call of
        // any tool; a row says whether its fault fired.
        let first_tool = row
            .messages
            .iter()
            .find(|m| m.role == sparring_types::Role::Tool);
        if tool == "none" {
            assert_eq!(
                scheduled[0].fired,
                Some(first_tool.is_some()),
                "{:?}",
                row.situation.faults
            );
            if let Some(m) = first_tool {
                assert_eq!(scheduled[0].fired_on.as_deref(), m.name.as_deref());
            }
        } else if first.is_none() {
            assert_eq!(
                scheduled[0].fired,
                Some(false),
                "{:?}",
                row.situation.faults
            );
        }
    }
    assert!(
        faulted.iter().any(|r| r.situation.axes["tool"] == "none"),
        "situations without a tool draw faults too"
    );
    let (calm, _) = simulate(ScriptedAgent::competent(), graded(4)).await;
    assert!(calm.iter().all(|r| r.situation.faults.is_empty()));
    assert!(calm.iter().all(|r| {
        r.situation
            .axes
            .get("tool_condition")
            .is_none_or(|c| c == "ok")
    }));
}
