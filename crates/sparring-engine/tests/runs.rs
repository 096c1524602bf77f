//! Runs: the three counts, modes and repeat policies, stop reasons, pinned
//! re-runs and replays, reproducible batches.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::Value;
use sparring_engine::run::{Clock, NoClock, Pinned, Progress, RunConfig, run};
use sparring_testkit::{ScriptedAgent, shop_spec};
use sparring_types::{
    Agent, AgentError, AgentReply, AgentRequest, BoxFuture, OptionsPatch, Row, RunSummary,
    SimulateOptions,
};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A typed summary part as JSON, for the tests' field-by-name checks.
fn json<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap()
}

struct Call {
    agent: Arc<dyn Agent>,
    options: SimulateOptions,
    pinned: Option<Pinned>,
    clock: Arc<dyn Clock>,
    cancel: bool,
    done: BTreeMap<(u32, String), Vec<String>>,
}

impl Call {
    fn new(agent: impl Agent + 'static, options: SimulateOptions) -> Self {
        Self {
            agent: Arc::new(agent),
            options,
            pinned: None,
            clock: Arc::new(NoClock),
            cancel: false,
            done: BTreeMap::new(),
        }
    }

    async fn go(self) -> (Vec<Row>, RunSummary) {
        let mut rows: Vec<Row> = Vec::new();
        let config = RunConfig {
            clock: self.clock,
            cancel: Arc::new(AtomicBool::new(self.cancel)),
            done: self.done,
            pinned: self.pinned,
            ..RunConfig::new(Arc::new(shop_spec()), self.options, self.agent)
        };
        let summary = run(config, &mut rows, &mut |_: &Progress| {})
            .await
            .unwrap();
        (rows, summary)
    }
}

fn options(patch: &serde_json::Value) -> SimulateOptions {
    OptionsPatch::from_value(patch).unwrap().resolve()
}

/// Graded `rl` mode (its successive repeats) at `concurrency`.
fn graded_rl(concurrency: usize) -> SimulateOptions {
    SimulateOptions {
        grade: true,
        concurrency,
        ..options(&serde_json::json!({"mode": "rl"}))
    }
}

fn per_task(rows: &[Row]) -> BTreeMap<String, Vec<&Row>> {
    let mut map: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        map.entry(r.task_id.clone()).or_default().push(r);
    }
    map
}

/// A row without the fields that name this invocation or time it.
fn stable(row: &Row) -> Value {
    let mut v = serde_json::to_value(row).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("timings");
    o.remove("row_id");
    o.remove("lineage");
    v
}

/// An agent that is careless on the second repeat of every other task
/// (by the task's index and the repeat in the request id) and competent
/// otherwise, so some asks' repeats disagree. Its answers depend only on the
/// rollout, never on timing.
struct Alternating {
    good: ScriptedAgent,
    bad: ScriptedAgent,
}

fn alternating() -> Alternating {
    Alternating {
        good: ScriptedAgent::competent(),
        bad: ScriptedAgent::careless(),
    }
}

impl Agent for Alternating {
    fn respond(&self, request: AgentRequest) -> BoxFuture<'_, Result<AgentReply, AgentError>> {
        let parts: Vec<&str> = request.id.rsplit('-').collect();
        let repeat: u64 = parts[1].parse().unwrap();
        let index: u64 = parts[2].parse().unwrap();
        if index.is_multiple_of(2) && repeat == 1 {
            self.bad.respond(request)
        } else {
            self.good.respond(request)
        }
    }

    fn describe(&self) -> String {
        "alternating".into()
    }
}

#[test]
fn modes_set_their_counts_and_explicit_options_win() {
    let eval = options(&serde_json::json!({"mode": "eval"}));
    assert_eq!((eval.repeats, eval.repeat_policy.as_str()), (1, "fixed"));
    let rl = options(&serde_json::json!({"mode": "rl"}));
    assert_eq!((rl.repeats, rl.repeat_policy.as_str()), (8, "successive"));
    assert_eq!(rl.mode, Some(sparring_types::Mode::Rl));
    let sft = options(&serde_json::json!({"mode": "sft"}));
    assert_eq!((sft.phrasings, sft.repeats), (3, 2));
    let mine = options(&serde_json::json!({"mode": "rl", "repeats": 4, "repeat_policy": "fixed"}));
    assert_eq!((mine.repeats, mine.repeat_policy.as_str()), (4, "fixed"));
    // The command line over the spec: an explicit repeat in the spec beats
    // the command line's mode, because the preset sits under both.
    let spec = OptionsPatch::from_value(&serde_json::json!({"repeats": 2})).unwrap();
    let cli = OptionsPatch::from_value(&serde_json::json!({"mode": "rl"})).unwrap();
    assert_eq!(cli.over(spec).resolve().repeats, 2);
    // Aliases and misspellings.
    let aliased = options(
        &serde_json::json!({"rollouts_per_request": 5, "unique": true,
        "budget": 3, "requests_per_situation": 2}),
    );
    assert_eq!(aliased.repeats, 5);
    assert!(aliased.unique_situations);
    assert_eq!(aliased.phrasings, 2);
    let err = OptionsPatch::from_value(&serde_json::json!({"mode": "evl"})).unwrap_err();
    assert!(err.1.contains("did you mean `eval`"), "{}", err.1);
    let err = OptionsPatch::from_value(&serde_json::json!({"repeat_polcy": "fixed"})).unwrap_err();
    assert!(err.1.contains("did you mean `repeat_policy`"), "{}", err.1);
    let lonely = OptionsPatch::from_value(&serde_json::json!({"unique_situations": true})).unwrap();
    let err = lonely.check().unwrap_err();
    assert_eq!(err, sparring_types::OptionError::EndlessUniqueSituations);
    assert!(err.to_string().contains("needs `budget`"), "{err}");
}

#[tokio::test]
async fn successive_stops_unanimous_asks_after_their_first_rollouts() {
    let rl = graded_rl(4);
    let (rows, summary) = Call::new(ScriptedAgent::competent(), rl.clone()).go().await;
    let tasks = per_task(&rows);
    assert!(!tasks.is_empty());
    for (task, rs) in &tasks {
        assert_eq!(rs.len(), 3, "{task}: a unanimous ask stops after 3 of 8");
        let repeats: BTreeSet<u64> = rs.iter().map(|r| r.seed).collect();
        assert_eq!(repeats.len(), 3, "three distinct repeats");
    }
    assert_eq!(
        json(&summary.search)["repeats"]["skipped_unanimous"],
        serde_json::json!(tasks.len() * 5)
    );
    assert_eq!(summary.stopped_because.as_str(), "situations_exhausted");

    // Disagreeing asks get all eight.
    let (rows, _) = Call::new(alternating(), rl.clone()).go().await;
    let counts: BTreeSet<usize> = per_task(&rows).values().map(Vec::len).collect();
    assert_eq!(counts, BTreeSet::from([3, 8]), "{counts:?}");
    for rs in per_task(&rows).values() {
        let rewards: BTreeSet<String> = rs.iter().map(|r| format!("{:?}", r.reward)).collect();
        if rs.len() == 3 {
            assert_eq!(rewards.len(), 1, "only unanimous asks stop early");
        } else {
            assert_eq!(rs.len(), 8);
        }
    }
    // `fixed` gives every ask all k whatever the outcomes.
    let fixed = SimulateOptions {
        repeat_policy: sparring_types::RepeatPolicy::Fixed,
        repeats: 4,
        ..rl
    };
    let (rows, _) = Call::new(ScriptedAgent::competent(), fixed).go().await;
    assert!(per_task(&rows).values().all(|rs| rs.len() == 4));
}

#[tokio::test]
async fn situations_cap_distinct_worlds_and_leave_budget_unspent() {
    let o = SimulateOptions {
        situations: Some(3),
        phrasings: 2,
        repeats: 2,
        budget: Some(1000),
        ..SimulateOptions::default()
    };
    let (rows, summary) = Call::new(ScriptedAgent::competent(), o).go().await;
    let scenarios: BTreeSet<&str> = rows.iter().map(|r| r.scenario_id.as_str()).collect();
    assert_eq!(scenarios.len(), 3, "N distinct situations");
    assert_eq!(per_task(&rows).len(), 6, "N × n tasks");
    assert_eq!(rows.len(), 12, "N × n × k rows, budget left unspent");
    assert_eq!(summary.stopped_because.as_str(), "situations_exhausted");
    assert_eq!(
        rows[0].situation.tier,
        sparring_types::Tier::Seed,
        "seeds first"
    );

    // Without `unique_situations`, N is capped by the grid.
    let (_, all) = Call::new(ScriptedAgent::competent(), SimulateOptions::default())
        .go()
        .await;
    let grid = json(&all.coverage)["situations_planned"].as_u64().unwrap();
    let (_, capped) = Call::new(
        ScriptedAgent::competent(),
        SimulateOptions {
            situations: Some(grid + 50),
            ..SimulateOptions::default()
        },
    )
    .go()
    .await;
    assert_eq!(
        json(&capped.coverage)["situations_run"].as_u64().unwrap(),
        grid
    );

    // With it, new worlds keep coming past the grid.
    let unique = SimulateOptions {
        situations: Some(grid + 20),
        unique_situations: true,
        ..SimulateOptions::default()
    };
    let (rows, summary) = Call::new(ScriptedAgent::competent(), unique).go().await;
    let scenarios: BTreeSet<&str> = rows.iter().map(|r| r.scenario_id.as_str()).collect();
    assert_eq!(scenarios.len() as u64, grid + 20);
    let worlds: BTreeSet<u64> = rows.iter().map(|r| r.situation.world_seed).collect();
    assert_eq!(
        worlds.len() as u64,
        grid + 20,
        "every situation its own world"
    );
    assert_eq!(summary.stopped_because.as_str(), "situations_exhausted");

    // With a budget and no count, the budget ends the run, whatever number
    // of phrasings each situation gives.
    let budget = grid * 3 + 1;
    let spent = SimulateOptions {
        budget: Some(budget),
        unique_situations: true,
        ..SimulateOptions::default()
    };
    let (rows, summary) = Call::new(ScriptedAgent::competent(), spent).go().await;
    assert_eq!(rows.len() as u64, budget);
    assert_eq!(summary.stopped_because.as_str(), "budget_spent");

    // Unique situations are drawn a piece at a time (at least `concurrency`
    // per piece); the pieces do not change what is drawn.
    let wide = SimulateOptions {
        situations: Some(grid + 150),
        unique_situations: true,
        concurrency: 100,
        ..SimulateOptions::default()
    };
    let narrow = SimulateOptions {
        concurrency: 1,
        ..wide.clone()
    };
    let (a, _) = Call::new(ScriptedAgent::competent(), wide.clone())
        .go()
        .await;
    let (b, _) = Call::new(ScriptedAgent::competent(), narrow).go().await;
    let render = |rows: &[Row]| {
        let mut v: Vec<String> = rows.iter().map(|r| stable(r).to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(a.len() as u64, grid + 150);
    assert_eq!(render(&a), render(&b));
    // Replays of a unique run replay the situations run 0 drew.
    let (rows, _) = Call::new(
        ScriptedAgent::competent(),
        SimulateOptions { runs: 2, ..wide },
    )
    .go()
    .await;
    let mut by_run: BTreeMap<u32, BTreeSet<&str>> = BTreeMap::new();
    for r in &rows {
        by_run
            .entry(r.lineage.eval_run)
            .or_default()
            .insert(r.task_id.as_str());
    }
    assert_eq!(by_run[&0].len() as u64, grid + 150);
    assert_eq!(by_run[&0], by_run[&1]);
}

#[tokio::test]
async fn budget_spent_and_interrupted() {
    let o = SimulateOptions {
        budget: Some(5),
        ..SimulateOptions::default()
    };
    let (rows, summary) = Call::new(ScriptedAgent::competent(), o).go().await;
    assert_eq!(rows.len(), 5);
    assert_eq!(summary.stopped_because.as_str(), "budget_spent");

    let mut call = Call::new(ScriptedAgent::competent(), SimulateOptions::default());
    call.cancel = true;
    let (rows, summary) = call.go().await;
    assert!(rows.is_empty());
    assert_eq!(summary.stopped_because.as_str(), "interrupted");
}

/// A clock that moves one second every time it is read.
struct Ticking(AtomicU64);

impl Clock for Ticking {
    fn millis(&self) -> f64 {
        self.0.fetch_add(1000, Ordering::SeqCst) as f64
    }
}

#[tokio::test]
async fn time_budget_stops_scheduling() {
    let o = SimulateOptions {
        time_budget: Some(6.5),
        concurrency: 1,
        ..SimulateOptions::default()
    };
    let mut call = Call::new(ScriptedAgent::competent(), o);
    call.clock = Arc::new(Ticking(AtomicU64::new(0)));
    let (rows, summary) = call.go().await;
    assert_eq!(summary.stopped_because.as_str(), "time_budget");
    assert!(!rows.is_empty());
    let (all, _) = Call::new(ScriptedAgent::competent(), SimulateOptions::default())
        .go()
        .await;
    assert!(rows.len() < all.len(), "{} of {}", rows.len(), all.len());
}

#[tokio::test]
async fn unique_situations_stop_when_behaviour_saturates() {
    let o = SimulateOptions {
        unique_situations: true,
        budget: Some(5000),
        ..SimulateOptions::default()
    };
    let (rows, summary) = Call::new(ScriptedAgent::competent(), o).go().await;
    assert_eq!(summary.stopped_because.as_str(), "saturated");
    assert!(rows.len() < 5000, "{}", rows.len());
    assert!(rows.len() as u64 > sparring_types::defaults::SATURATION_ROWS);
}

#[tokio::test]
async fn pinned_rerun_replays_every_task_on_its_own_situation() {
    let base_options = SimulateOptions {
        grade: true,
        repeats: 2,
        seed: 7,
        ..SimulateOptions::default()
    };
    let (base, base_summary) = Call::new(ScriptedAgent::competent(), base_options)
        .go()
        .await;
    let (pinned, k) = Pinned::from_rows(&base).unwrap();
    assert_eq!(k, 2, "the pinned k is the most rollouts any task had");
    assert_eq!(pinned.from_run, base_summary.run_id);
    // The re-run's options differ in what draws tasks (another grid seed
    // effort, another hard share); nothing new is drawn all the same.
    let mut call = Call::new(
        ScriptedAgent::competent(),
        SimulateOptions {
            grade: true,
            repeats: k,
            seed: 7,
            hard_share: 0.9,
            phrasings: 3,
            ..SimulateOptions::default()
        },
    );
    call.pinned = Some(pinned);
    let (again, summary) = call.go().await;
    assert_eq!(summary.stopped_because.as_str(), "tasks_done");
    let a = per_task(&base);
    let b = per_task(&again);
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "every task paired, none new"
    );
    for (task, rows) in &a {
        let mut left: Vec<Value> = rows.iter().map(|r| stable(r)).collect();
        let mut right: Vec<Value> = b[task].iter().map(|r| stable(r)).collect();
        left.sort_by_key(ToString::to_string);
        right.sort_by_key(ToString::to_string);
        assert_eq!(left, right, "same agent, same task: same rows");
    }
    assert!(
        again.iter().all(|r| {
            r.lineage.replayed_from_run.as_deref() == Some(base_summary.run_id.as_str())
        })
    );
    assert_eq!(
        json(&summary.search)["pinned"]["tasks"],
        serde_json::json!(a.len())
    );

    // Only the agent changes: a careless agent on the same tasks fails them.
    let (pinned, _) = Pinned::from_rows(&base).unwrap();
    let mut call = Call::new(
        ScriptedAgent::careless(),
        SimulateOptions {
            grade: true,
            seed: 7,
            ..SimulateOptions::default()
        },
    );
    call.pinned = Some(pinned);
    let (careless, _) = call.go().await;
    assert_eq!(per_task(&careless).len(), a.len());
    for (task, rows) in per_task(&careless) {
        assert_eq!(rows.len(), 1, "k from this call");
        assert_eq!(
            rows[0].messages[1], a[&task][0].messages[1],
            "same opening ask"
        );
        assert_eq!(
            rows[0].situation.world_seed,
            a[&task][0].situation.world_seed
        );
    }
}

#[tokio::test]
async fn runs_replay_the_task_set_with_lineage() {
    let o = SimulateOptions {
        runs: 3,
        budget: Some(6),
        ..SimulateOptions::default()
    };
    let (rows, summary) = Call::new(ScriptedAgent::competent(), o).go().await;
    assert_eq!(rows.len(), 18, "budget is per run");
    let search = json(&summary.search);
    let runs = search["eval_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r["eval_run"], serde_json::json!(i));
        assert_eq!(r["rows"], serde_json::json!(6));
        assert_eq!(r["stopped_because"], "budget_spent");
    }
    let mut by_run: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    for r in &rows {
        by_run
            .entry(r.lineage.eval_run)
            .or_default()
            .insert(r.task_id.clone());
        let expected = (r.lineage.eval_run > 0).then(|| summary.run_id.clone());
        assert_eq!(r.lineage.replayed_from_run, expected);
    }
    assert_eq!(by_run.len(), 3);
    assert_eq!(by_run[&0], by_run[&1], "later runs replay run 0's tasks");
    assert_eq!(by_run[&0], by_run[&2]);
    let ids: BTreeSet<&str> = rows.iter().map(|r| r.row_id.as_str()).collect();
    assert_eq!(ids.len(), rows.len(), "row ids are unique across runs");
    // A deterministic agent replayed gives the same rows in every run.
    let mut per_run: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for r in &rows {
        per_run
            .entry(r.lineage.eval_run)
            .or_default()
            .push(stable(r).to_string());
    }
    for v in per_run.values_mut() {
        v.sort();
    }
    assert_eq!(per_run[&0], per_run[&1]);
    assert_eq!(per_run[&0], per_run[&2]);
}

/// The competent agent, answering after a delay that varies from request to
/// request, so rollouts finish out of order.
struct Jittery {
    inner: Alternating,
    calls: AtomicU64,
}

impl Agent for Jittery {
    fn respond(&self, request: AgentRequest) -> BoxFuture<'_, Result<AgentReply, AgentError>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let delay = u64::from((nanos ^ (n as u32).wrapping_mul(2_654_435_761)) % 4);
        Box::pin(async move {
            tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
            self.inner.respond(request).await
        })
    }

    fn describe(&self) -> String {
        "jittery".into()
    }
}

fn jittery_alternating() -> Jittery {
    Jittery {
        inner: alternating(),
        calls: AtomicU64::new(0),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reproducible_batches_give_the_same_rows_at_concurrency_16() {
    // Successive repeats and a budget make which rows land depend on the
    // order results are consumed in; batches make that order fixed. The
    // agent's answers depend on the rollout only; the jitter shuffles the
    // order rollouts finish in.
    let o = SimulateOptions {
        reproducible: true,
        budget: Some(60),
        ..graded_rl(16)
    };
    let (first, s1) = Call::new(jittery_alternating(), o.clone()).go().await;
    let (second, s2) = Call::new(jittery_alternating(), o).go().await;
    let render = |rows: &[Row]| -> Vec<String> {
        rows.iter()
            .map(|r| {
                let mut v = serde_json::to_value(r).unwrap();
                v.as_object_mut().unwrap().remove("timings");
                v.to_string()
            })
            .collect()
    };
    assert_eq!(first.len(), 60);
    assert_eq!(
        render(&first),
        render(&second),
        "same rows, in the same order"
    );
    assert_eq!(s1.search.repeats, s2.search.repeats);
}

/// The negative control of the test above: without `reproducible` the same
/// two calls land their rows in the order the jitter finishes them, so
/// some pair of calls differs. It is the flag that makes the rows equal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_reproducible_the_order_follows_the_jitter() {
    let o = SimulateOptions {
        reproducible: false,
        budget: Some(60),
        ..graded_rl(16)
    };
    let ids = |rows: &[Row]| -> Vec<String> { rows.iter().map(|r| r.row_id.clone()).collect() };
    let mut differed = false;
    for _ in 0..5 {
        let (first, _) = Call::new(jittery_alternating(), o.clone()).go().await;
        let (second, _) = Call::new(jittery_alternating(), o.clone()).go().await;
        if ids(&first) != ids(&second) {
            differed = true;
            break;
        }
    }
    assert!(
        differed,
        "five pairs of unbatched calls at concurrency 16 landed their rows in the same order"
    );
}

#[tokio::test]
async fn resume_counts_outcomes_towards_successive_repeats() {
    let rl = graded_rl(1);
    let (full, _) = Call::new(ScriptedAgent::competent(), rl.clone()).go().await;
    // Pretend the first two rows of every task are on disk already.
    let mut done: BTreeMap<(u32, String), Vec<String>> = BTreeMap::new();
    for (task, rows) in per_task(&full) {
        for r in rows.iter().take(2) {
            done.entry((0, task.clone()))
                .or_default()
                .push(sparring_engine::run::outcome(r));
        }
    }
    let mut call = Call::new(ScriptedAgent::competent(), rl);
    call.done = done;
    let (rest, _) = call.go().await;
    let tasks = per_task(&rest);
    assert_eq!(tasks.len(), per_task(&full).len());
    assert!(
        tasks.values().all(|rs| rs.len() == 1),
        "only the third repeat runs"
    );
}
