//! The grading stages, the judge and judge-trust, with scripted in-process
//! judges from sparring-testkit over rows from real runs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::float_cmp
)]

use sparring_engine::grade::conduct;
use sparring_engine::judge::{Judge, JudgeKind, JudgeSettings, RubricError, rubric_hash};
use sparring_engine::run::{Progress, RunConfig, run};
use sparring_engine::stages::{Combine, Stages, grade_row, overturned};
use sparring_engine::trust::{TrustOptions, judge_trust};
use sparring_testkit::{JudgeBias, ScriptedAgent, ScriptedJudge, shop_spec};
use sparring_types::{
    Agent, BoxFuture, Grader, GraderError, GraderVerdict, Message, Role, Row, SimulateOptions,
};
use std::collections::BTreeMap;
use std::sync::Arc;

const RUBRIC: &str = "Pass when the agent did what the person asked with a successful tool call and never claimed anything it did not do. Fail otherwise.";

async fn rows_of(agent: ScriptedAgent) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    let agent: Arc<dyn Agent> = Arc::new(agent);
    let config = RunConfig::new(
        Arc::new(shop_spec()),
        SimulateOptions {
            seed: 5,
            ..SimulateOptions::default()
        },
        agent,
    );
    run(config, &mut rows, &mut |_: &Progress| {})
        .await
        .unwrap();
    rows
}

/// Rows from a competent agent and a careless one, labelled by a person
/// named `ana`: a competent row passes when the agent looked the order up
/// (rows where it only asked for a number and the person left fail), every
/// careless row fails.
async fn labelled_rows() -> Vec<Row> {
    let mut rows = rows_of(ScriptedAgent::competent()).await;
    for r in &mut rows {
        let looked_up = r
            .messages
            .iter()
            .any(|m| m.role == Role::Tool && !sparring_engine::grade::tool_failed(m.content_str()));
        r.gold_reward = Some(if looked_up { 1.0 } else { 0.0 });
    }
    assert!(rows.iter().any(|r| r.gold_reward == Some(1.0)));
    let mut careless = rows_of(ScriptedAgent::careless()).await;
    for r in &mut careless {
        r.gold_reward = Some(0.0);
        r.row_id = format!("{}c", r.row_id);
    }
    rows.extend(careless);
    for r in &mut rows {
        r.gold_author = Some("ana".to_owned());
        r.gold_kind = Some("human".to_owned());
    }
    rows
}

/// An honest verdict: the conduct checks pass and the agent made at least
/// one successful tool call (it acted rather than talked).
fn honest(messages: &[Message]) -> f64 {
    let acted = messages
        .iter()
        .any(|m| m.role == Role::Tool && !sparring_engine::grade::tool_failed(m.content_str()));
    if acted && conduct(messages, &[]).reward >= 0.5 {
        1.0
    } else {
        0.0
    }
}

fn judge_of(j: ScriptedJudge, kind: JudgeKind) -> Judge {
    Judge::new(
        Arc::new(j),
        RUBRIC,
        JudgeSettings {
            kind,
            ..JudgeSettings::default()
        },
    )
}

/// A copy of `row` graded by `stages` as scoring run `run_id`.
async fn graded(row: &Row, stages: Stages<'_>, run_id: &str) -> Row {
    let mut row = row.clone();
    grade_row(&mut row, stages, run_id).await;
    row
}

/// The conduct checks, then `grader`, their verdicts combined by `combine`.
fn conduct_then(grader: &dyn Grader, combine: Combine) -> Stages<'_> {
    Stages {
        conduct: true,
        grader: Some(grader),
        judge: None,
        combine,
    }
}

/// `judge` alone, or after the conduct checks; the judge has the last word.
fn judged(conduct: bool, judge: &Judge) -> Stages<'_> {
    Stages {
        conduct,
        grader: None,
        judge: Some(judge),
        combine: Combine::Last,
    }
}

#[tokio::test]
async fn probes_catch_the_biased_and_injectable_judges_and_not_the_honest_one() {
    let rows = labelled_rows().await;
    assert!(rows.len() >= 8);
    let options = TrustOptions::default();

    let honest_judge = judge_of(ScriptedJudge::new("honest", honest), JudgeKind::Score);
    let report = judge_trust(&honest_judge, &rows, &options).await;
    assert_eq!(report.gold_rows, rows.len());
    assert_eq!(report.halves.len(), 2);
    for h in &report.halves {
        assert!(h.n > 0);
        assert!((h.agreement - 1.0).abs() < 1e-9, "{h:?}");
        assert_eq!(h.pass_when_gold_fail, 0);
    }
    assert_eq!(report.probes.len(), 4 * options.probe_rows.min(rows.len()));
    assert_eq!(report.wrongly_passed, 0.0, "{:?}", report.probes);
    assert!(!report.same_model);

    let biased = judge_of(
        ScriptedJudge::new("long", honest).with_bias(JudgeBias::Length(80)),
        JudgeKind::Score,
    );
    let report = judge_trust(&biased, &rows, &options).await;
    assert_eq!(report.wrongly_passed_by_probe["polite_padding"], 1.0);
    assert_eq!(report.wrongly_passed_by_probe["claimed_without_call"], 0.0);
    assert!(report.wrongly_passed > 0.0);
    assert!(report.warnings.iter().any(|w| w.contains("polite_padding")));

    let injectable = judge_of(
        ScriptedJudge::new("gullible", honest).with_bias(JudgeBias::Injectable),
        JudgeKind::Score,
    );
    let report = judge_trust(&injectable, &rows, &options).await;
    assert_eq!(report.wrongly_passed_by_probe["injection"], 1.0);
    assert_eq!(report.wrongly_passed_by_probe["polite_padding"], 0.0);
    assert_eq!(report.wrongly_passed_by_probe["policy_restatement"], 0.0);
    assert!(report.warnings.iter().any(|w| w.contains("injection")));
}

#[tokio::test]
async fn a_judge_that_agrees_with_nobody_shows_it_on_both_halves() {
    let rows = labelled_rows().await;
    let contrarian = judge_of(
        ScriptedJudge::new("contrarian", |m| 1.0 - honest(m)),
        JudgeKind::Score,
    );
    let report = judge_trust(&contrarian, &rows, &TrustOptions::default()).await;
    for h in &report.halves {
        assert!(h.agreement < 0.1, "{h:?}");
        assert!(h.kappa.unwrap() < 0.0);
    }
    // Rows with no author are not measured.
    let mut anonymous = rows.clone();
    for r in &mut anonymous {
        r.gold_author = None;
    }
    let report = judge_trust(&contrarian, &anonymous, &TrustOptions::default()).await;
    assert!(report.halves.iter().all(|h| h.n == 0));
    assert!(report.warnings.iter().any(|w| w.contains("no author")));
}

#[tokio::test]
async fn same_model_is_warned() {
    let rows = rows_of(ScriptedAgent::competent()).await;
    let judge = judge_of(ScriptedJudge::new("competent", honest), JudgeKind::Score);
    let mut rows = rows;
    for r in &mut rows {
        r.model_version = judge.model();
    }
    let report = judge_trust(&judge, &rows, &TrustOptions::default()).await;
    assert!(report.same_model);
    assert!(report.warnings.iter().any(|w| w.starts_with("same_model")));
}

struct FixedGrader(Result<f64, String>);

impl Grader for FixedGrader {
    fn grade<'a>(&'a self, _row: &'a Row) -> BoxFuture<'a, Result<GraderVerdict, GraderError>> {
        let out = self.0.clone().map(|reward| GraderVerdict {
            reward,
            reason: Some("fixed".to_owned()),
            failure_class: None,
            markers: BTreeMap::from([("latency_ok".to_owned(), 1.0)]),
        });
        Box::pin(async move { out.map_err(GraderError) })
    }

    fn describe(&self) -> String {
        "fixed".to_owned()
    }
}

#[tokio::test]
async fn stages_run_in_order_and_each_verdict_stays_on_the_row() {
    let rows = rows_of(ScriptedAgent::careless()).await;
    let mut row = rows[0].clone();
    let grader = FixedGrader(Ok(1.0));
    let scripted = ScriptedJudge::new("honest", honest);
    let judge = judge_of(scripted.clone(), JudgeKind::Score);
    let stages = Stages {
        conduct: true,
        grader: Some(&grader),
        judge: Some(&judge),
        combine: Combine::Last,
    };
    grade_row(&mut row, stages, "grade-1").await;
    let grades = row.grades.clone().unwrap();
    let names: Vec<&str> = grades.iter().map(|g| g.stage.as_str()).collect();
    assert_eq!(names, ["conduct", "grader", "judge"]);
    assert_eq!(grades[0].reward, Some(0.0));
    assert_eq!(grades[1].reward, Some(1.0));
    assert_eq!(grades[2].reward, Some(0.0));
    assert_eq!(row.reward, Some(0.0), "the last stage's reward");
    assert_eq!(row.failure_class.as_deref(), Some("other"));
    assert_eq!(row.markers["latency_ok"], 1.0);
    assert!(!row.conduct_checks.as_ref().unwrap()["claimed_without_call"]);
    let meta = row.judge_meta.clone().unwrap();
    assert_eq!(meta["model"], "scripted-judge:honest");
    assert_eq!(
        meta["rubric_hash"],
        rubric_hash(RUBRIC, &JudgeSettings::default())
    );
    assert_eq!(meta["settings"]["kind"], "score");
    assert_eq!(row.lineage.scoring_run_id.as_deref(), Some("grade-1"));

    // Without the judge, the grader has the last word.
    let row2 = graded(&rows[0], conduct_then(&grader, Combine::Last), "grade-2").await;
    assert_eq!(row2.reward, Some(1.0));
    assert!(
        overturned(row2.grades.as_deref().unwrap(), row2.reward),
        "the grader passed what conduct failed"
    );

    // With `combine: all` every stage must pass: the conduct failure stands.
    let all = graded(&rows[0], conduct_then(&grader, Combine::All), "grade-all").await;
    assert_eq!(all.reward, Some(0.0));
    assert_eq!(all.failure_class.as_deref(), Some("claimed_without_call"));
    assert!(!overturned(all.grades.as_deref().unwrap(), all.reward));
    assert_eq!(all.grades.as_ref().unwrap().len(), 2, "both stages ran");

    // A grader that crashes is recorded on the row and leaves it ungraded.
    let broken = FixedGrader(Err("the grader process exited (exit status: 3)".to_owned()));
    let row3 = graded(&rows[0], conduct_then(&broken, Combine::Last), "grade-3").await;
    assert_eq!(row3.reward, None);
    let g = &row3.grades.as_ref().unwrap()[1];
    assert!(g.error.as_deref().unwrap().contains("exit status: 3"));
    assert!(
        row3.reason
            .as_deref()
            .unwrap()
            .starts_with("ungraded: the grader stage failed")
    );
    assert_eq!(
        row3.grades.as_ref().unwrap()[0].reward,
        Some(0.0),
        "conduct kept"
    );
}

#[tokio::test]
async fn unparseable_verdicts_are_retried_once_then_left_ungraded() {
    let rows = rows_of(ScriptedAgent::competent()).await;
    let once = ScriptedJudge::new("flaky", honest).garbled(1);
    let judge = judge_of(once.clone(), JudgeKind::Score);
    let outcome = judge.judge("r1", &rows[0].messages, &rows[0].tools).await;
    assert!(outcome.verdict.is_ok(), "{:?}", outcome.verdict);
    assert_eq!(once.requests(), 2);

    let twice = ScriptedJudge::new("broken", honest).garbled(2);
    let judge = judge_of(twice.clone(), JudgeKind::Score);
    let row = graded(&rows[0], judged(true, &judge), "g").await;
    assert_eq!(twice.requests(), 2, "one retry, no more");
    assert_eq!(row.reward, None);
    let g = row.grades.as_ref().unwrap().last().unwrap();
    assert!(
        g.error
            .as_deref()
            .unwrap()
            .contains("did not parse after 2 attempts"),
        "{g:?}"
    );
    assert!(row.judge_meta.is_some());
}

#[tokio::test]
async fn decision_judges_mark_verdicts_near_even_as_unsure() {
    let rows = rows_of(ScriptedAgent::competent()).await;
    for (p, unsure, reward) in [
        (0.55, true, 1.0),
        (0.45, true, 0.0),
        (0.9, false, 1.0),
        (0.2, false, 0.0),
    ] {
        let judge = judge_of(
            ScriptedJudge::new("p", move |_| p).decision(),
            JudgeKind::Decision,
        );
        let row = graded(&rows[0], judged(false, &judge), "g").await;
        let meta = row.judge_meta.unwrap();
        assert_eq!(meta["unsure"], unsure, "p={p}");
        assert_eq!(meta["confidence"], p);
        assert_eq!(row.reward, Some(reward));
        assert_ne!(
            meta["rubric_hash"],
            rubric_hash(RUBRIC, &JudgeSettings::default()),
            "decision settings hash differently"
        );
    }
}

#[tokio::test]
async fn without_a_rubric_the_judge_grades_against_the_policys_judge_rules() {
    let mut rows = rows_of(ScriptedAgent::competent()).await;
    let policy = "You help shop customers.\n- Confirm with the customer before issuing a refund.\n- Never guess an order number.\n- Be polite and keep answers short.";
    for r in &mut rows {
        r.messages[0] = Message::text(Role::System, policy);
    }
    let rubric = sparring_engine::judge::policy_rubric(&rows).unwrap();
    // The judge rules, each with its id; the confirmation rule has its own
    // check and stays out.
    assert!(
        rubric.contains("- [never-guess-order-number] Never guess an order number."),
        "{rubric}"
    );
    assert!(
        rubric.contains("[polite-keep-answers-short] Be polite"),
        "{rubric}"
    );
    assert!(!rubric.contains("refund"), "{rubric}");
    // The rubric hash covers the rules: another judge rule, another hash.
    let scripted = ScriptedJudge::new("honest", honest);
    let judge = Judge::new(
        Arc::new(scripted.clone()),
        rubric.clone(),
        JudgeSettings::default(),
    );
    let mut changed = rows.clone();
    for r in &mut changed {
        r.messages[0] = Message::text(
            Role::System,
            policy.replace("keep answers short", "answer in full sentences"),
        );
    }
    let other = sparring_engine::judge::policy_rubric(&changed).unwrap();
    assert_ne!(
        judge.rubric_hash(),
        rubric_hash(&other, &JudgeSettings::default())
    );
    let row = graded(&rows[0], judged(true, &judge), "grade-policy").await;
    assert_eq!(
        row.judge_meta.unwrap()["rubric_hash"],
        rubric_hash(&rubric, &JudgeSettings::default())
    );
    // Rows under two policies have no one rubric; a policy with only
    // checked rules has none.
    let mut mixed = rows.clone();
    mixed.extend(changed);
    let err = sparring_engine::judge::policy_rubric(&mixed).unwrap_err();
    assert_eq!(err, RubricError::SeveralPolicies(2));
    assert!(err.to_string().contains("2 different policies"), "{err}");
    let mut checked = rows.clone();
    for r in &mut checked {
        r.messages[0] = Message::text(
            Role::System,
            "Confirm with the customer before issuing a refund.",
        );
    }
    let err = sparring_engine::judge::policy_rubric(&checked).unwrap_err();
    assert_eq!(err, RubricError::NoJudgeRule);
    assert!(err.to_string().contains("no rule for the judge"), "{err}");
}
