//! The cuts on hand-built groups: ties, bands, margins, length ratios.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring_select::{
    LossMask, PairOptions, PairSide, RewardOptions, RlOptions, SftOptions, agent_chars,
    build_preference_pairs, build_reward_pairs, common_prefix, loss_mask, pair_side, select_for_rl,
    select_for_sft, select_graded,
};
use sparring_testkit::{conversation, row, tool_call};
use sparring_types::{Message, Role, Row};

fn ids<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Vec<&'a str> {
    rows.into_iter().map(|r| r.row_id.as_str()).collect()
}

fn answered(task: &str, id: &str, reward: f64, sig: &str, answer: &str) -> Row {
    row(
        task,
        id,
        Some(reward),
        sig,
        conversation("Where is order W1001?", "W1001", answer),
    )
}

#[test]
fn sft_keeps_one_reward_one_row_per_task_and_reports_the_rest() {
    let mut ungraded = answered("t1", "r0", 0.0, "sigA", "x");
    ungraded.reward = None;
    let rows = vec![
        answered("t1", "r1", 1.0, "sigA", "Your order W1001 has shipped."),
        answered(
            "t1",
            "r2",
            1.0,
            "sigA",
            "Order W1001 has shipped and is on its way to you.",
        ),
        answered("t1", "r3", 0.0, "sigB", "Done."),
        answered("t2", "r4", 0.5, "sigA", "Shipped."),
        ungraded,
    ];
    let (examples, report) = select_for_sft(&rows, &SftOptions::default());
    // The tie on reward between r1 and r2 (same behaviour) goes to the
    // shorter agent text.
    assert_eq!(ids(examples.iter().map(|e| e.row)), vec!["r1"]);
    assert_eq!(report.rows_in, 5);
    assert_eq!(report.tasks_in, 2);
    assert_eq!(report.items_out, 1);
    assert_eq!(report.excluded["reward_below_threshold"].count, 2);
    assert_eq!(report.excluded["ungraded"].count, 1);
    assert_eq!(report.excluded["not_picked"].count, 1);
    let total: usize = report.excluded.values().map(|e| e.count).sum();
    assert_eq!(
        total + report.items_out,
        report.rows_in,
        "every row is accounted for"
    );
}

#[test]
fn sft_spreads_picks_across_behaviour_signatures() {
    // Eight tasks, each with a passing row of behaviour A and one of B. A
    // greedy "first signature" rule would give eight A; round-robin gives
    // four and four.
    let mut rows = Vec::new();
    for t in 0..8 {
        rows.push(answered(
            &format!("t{t}"),
            &format!("a{t}"),
            1.0,
            "sigA",
            "Shipped, W1001.",
        ));
        rows.push(answered(
            &format!("t{t}"),
            &format!("b{t}"),
            1.0,
            "sigB",
            "It shipped: W1001.",
        ));
    }
    for seed in 0..5 {
        let opts = SftOptions {
            seed,
            ..SftOptions::default()
        };
        let (examples, _) = select_for_sft(&rows, &opts);
        assert_eq!(examples.len(), 8);
        let a = examples
            .iter()
            .filter(|e| e.row.behavior_signature == "sigA")
            .count();
        assert_eq!(a, 4, "seed {seed}: picks are balanced across signatures");
    }
    // Two per task: both behaviours of every task.
    let opts = SftOptions {
        per_task: 2,
        ..SftOptions::default()
    };
    let (examples, report) = select_for_sft(&rows, &opts);
    assert_eq!(examples.len(), 16);
    assert!(!report.excluded.contains_key("not_picked"));
}

#[test]
fn sft_is_deterministic_per_seed_whatever_the_input_order() {
    let mut rows = Vec::new();
    for t in 0..6 {
        for (i, sig) in ["sigA", "sigB", "sigC"].iter().enumerate() {
            rows.push(answered(
                &format!("t{t}"),
                &format!("r{t}{i}"),
                1.0,
                sig,
                "Shipped.",
            ));
        }
    }
    let pick = |rows: &[Row], seed| {
        let (ex, _) = select_for_sft(
            rows,
            &SftOptions {
                seed,
                ..SftOptions::default()
            },
        );
        let mut v: Vec<String> = ex.iter().map(|e| e.row.row_id.clone()).collect();
        v.sort();
        v
    };
    let first = pick(&rows, 3);
    assert_eq!(first, pick(&rows, 3));
    let mut reversed = rows.clone();
    reversed.reverse();
    assert_eq!(first, pick(&reversed, 3));
    let others: Vec<Vec<String>> = (0..8).map(|s| pick(&rows, s)).collect();
    assert!(
        others.iter().any(|o| *o != first),
        "the seed matters for ties"
    );
}

#[test]
fn loss_mask_covers_agent_turns_only() {
    let mut messages = conversation("Where is W1001?", "W1001", "Shipped. Anything else?");
    messages.push(Message::text(Role::User, "no thanks"));
    messages.push(Message::text(Role::Assistant, "Bye."));
    let all = loss_mask(&messages, LossMask::AgentTurns);
    assert_eq!(all, vec![false, false, true, false, true, false, true]);
    let last = loss_mask(&messages, LossMask::LastExchange);
    assert_eq!(last, vec![false, false, false, false, false, false, true]);
}

fn diverging(task: &str, id: &str, reward: f64, answer: &str) -> Row {
    answered(task, id, reward, "sig", answer)
}

#[test]
fn dpo_pairs_need_the_margin() {
    let rows = vec![
        diverging("t1", "hi", 1.0, "Order W1001 shipped."),
        diverging("t1", "mid", 0.6, "Order W1001 is lost."),
        diverging("t1", "lo", 0.5, "Order W1001 is gone."),
    ];
    let (pairs, report) = build_preference_pairs(&rows, &PairOptions::default());
    // 1.0 − 0.5 = 0.5 meets the margin exactly; 1.0 − 0.6 and 0.6 − 0.5 do not.
    assert_eq!(pairs.len(), 1);
    assert_eq!(pairs[0].chosen.row_id, "hi");
    assert_eq!(pairs[0].rejected.row_id, "lo");
    assert!((pairs[0].margin - 0.5).abs() < 1e-12);
    assert_eq!(report.excluded["margin_below"].count, 2);
    // The pair first differs at the agent's final reply.
    assert_eq!(pairs[0].split, 4);
}

#[test]
fn dpo_pairs_need_matched_lengths() {
    // The pairs split at the final reply, so each side is that reply alone.
    let answer = |n: usize| "a".repeat(n);
    let rows = vec![
        diverging("t1", "c", 1.0, &answer(100)),
        diverging("t1", "r_ok", 0.0, &answer(150)),
        diverging("t2", "c", 1.0, &answer(100)),
        diverging("t2", "r_long", 0.0, &answer(151)),
    ];
    let (pairs, report) = build_preference_pairs(&rows, &PairOptions::default());
    assert_eq!(pairs.len(), 1, "{report:?}");
    assert_eq!(pairs[0].rejected.row_id, "r_ok");
    assert!((pairs[0].length_ratio - 1.5).abs() < 1e-12);
    assert_eq!(report.excluded["length_ratio_above"].count, 1);
}

#[test]
fn dpo_length_ratio_ignores_the_shared_history() {
    // A long shared tool call before the split: counted over whole rows the
    // sides look alike (ratio ~1.04), but the exported replies are 100 and
    // 200 characters, so "longer wins" would sneak through.
    let long_call = |id: &str, reward: f64, answer: &str| {
        let mut r = diverging("t1", id, reward, answer);
        r.messages[2].tool_calls[0].function.arguments =
            serde_json::json!({"order_id": "W1001", "note": "n".repeat(2000)}).to_string();
        r
    };
    let rows = vec![
        long_call("short", 1.0, &"s".repeat(100)),
        long_call("long", 0.0, &"l".repeat(200)),
    ];
    let whole = agent_chars(&rows[1]) as f64 / agent_chars(&rows[0]) as f64;
    assert!(whole < 1.5, "whole rows are within the ratio: {whole}");
    for side in [PairSide::AgentTurn, PairSide::Message] {
        let opts = PairOptions {
            side,
            ..PairOptions::default()
        };
        let (pairs, report) = build_preference_pairs(&rows, &opts);
        assert!(pairs.is_empty(), "{side:?}: {report:?}");
        assert_eq!(report.excluded["length_ratio_above"].count, 1);
    }
}

#[test]
fn dpo_sides_are_what_each_format_exports() {
    // Diverging at a tool call: the agent turn is the call, its result and
    // the reply; the OpenAI side is the call alone.
    let call = |id: &str, reward: f64, order: &str, answer: &str| {
        row(
            "t1",
            id,
            Some(reward),
            "sig",
            conversation("Where is my order?", order, answer),
        )
    };
    let a = call("a", 1.0, "W1001", &"x".repeat(300));
    let b = call("b", 0.0, "W1002", &"y".repeat(10));
    assert_eq!(pair_side(&a.messages, 2, PairSide::Message).len(), 1);
    assert_eq!(pair_side(&a.messages, 2, PairSide::AgentTurn).len(), 3);
    let rows = vec![a, b];
    // The calls are alike in length: the OpenAI sides match.
    let message = PairOptions {
        side: PairSide::Message,
        ..PairOptions::default()
    };
    let (pairs, _) = build_preference_pairs(&rows, &message);
    assert_eq!(pairs.len(), 1);
    assert_eq!(pairs[0].split, 2);
    assert!(pairs[0].length_ratio < 1.01);
    // The agent turns differ by their replies: 300 against 10 characters.
    let (pairs, report) = build_preference_pairs(&rows, &PairOptions::default());
    assert!(pairs.is_empty(), "{report:?}");
    assert_eq!(report.excluded["length_ratio_above"].count, 1);
}

#[test]
fn dpo_pairs_split_after_equal_tool_calls_with_different_ids() {
    // Real agents draw call ids at random; the arguments may be spelled
    // differently but be the same JSON.
    let mut other = diverging("t1", "lo", 0.0, "Order W1001 is lost.");
    other.messages[2].tool_calls[0].id = "call_8f3a".to_owned();
    other.messages[2].tool_calls[0].function.arguments = "{ \"order_id\" : \"W1001\" }".to_owned();
    other.messages[3].tool_call_id = Some("call_8f3a".to_owned());
    let rows = vec![diverging("t1", "hi", 1.0, "Order W1001 shipped."), other];
    let (pairs, report) = build_preference_pairs(&rows, &PairOptions::default());
    assert_eq!(pairs.len(), 1, "{report:?}");
    // Split at the final reply, not at the tool call.
    assert_eq!(pairs[0].split, 4);
    assert_eq!(common_prefix(&rows[0].messages, &rows[1].messages), 4);
}

#[test]
fn tool_results_match_only_when_they_answer_the_same_call() {
    // Two parallel calls answered in a different order: the results' text
    // is equal but they answer different calls.
    let msgs = |first: &str, second: &str| {
        let mut call = tool_call("get_order", &serde_json::json!({"order_id": "W1"}));
        let mut other = call.tool_calls[0].clone();
        other.id = second.to_owned();
        other.function.arguments = r#"{"order_id": "W2"}"#.to_owned();
        call.tool_calls[0].id = first.to_owned();
        call.tool_calls.push(other);
        let answer = |id: &str| {
            let mut m = Message::text(Role::Tool, "{\"ok\": true}");
            m.tool_call_id = Some(id.to_owned());
            m
        };
        vec![
            Message::text(Role::User, "Check W1 and W2"),
            call,
            answer(first),
            answer(second),
        ]
    };
    let a = msgs("a1", "a2");
    let same = msgs("b1", "b2");
    assert_eq!(common_prefix(&a, &same), 4);
    let mut swapped = msgs("b1", "b2");
    swapped.swap(2, 3);
    assert_eq!(common_prefix(&a, &swapped), 2);
    // Arguments that differ as JSON differ.
    let mut changed = msgs("b1", "b2");
    changed[1].tool_calls[1].function.arguments = r#"{"order_id": "W3"}"#.to_owned();
    assert_eq!(common_prefix(&a, &changed), 1);
}

#[test]
fn dpo_never_pairs_across_tasks_and_needs_an_agent_divergence() {
    let mut person_differs = diverging("t1", "p", 0.0, "Order W1001 is lost.");
    person_differs.messages[1] = Message::text(Role::User, "Where is order W1001 please?");
    let rows = vec![
        diverging("t1", "good", 1.0, "Order W1001 shipped."),
        person_differs,
        diverging("t2", "bad_other_task", 0.0, "Order W1001 is lost."),
    ];
    let (pairs, report) = build_preference_pairs(&rows, &PairOptions::default());
    assert!(pairs.is_empty());
    assert_eq!(report.excluded["no_agent_divergence"].count, 1);
}

#[test]
fn dpo_keeps_at_most_max_pairs_per_task_largest_margin_first() {
    let mut rows = vec![diverging("t1", "best", 1.0, "Order W1001 shipped today.")];
    for (i, r) in [0.0, 0.1, 0.2, 0.3].iter().enumerate() {
        rows.push(diverging(
            "t1",
            &format!("bad{i}"),
            *r,
            &format!("Order W1001 is lost {i}."),
        ));
    }
    let opts = PairOptions {
        max_pairs_per_task: 2,
        ..PairOptions::default()
    };
    let (pairs, report) = build_preference_pairs(&rows, &opts);
    assert_eq!(pairs.len(), 2);
    assert_eq!(pairs[0].rejected.row_id, "bad0");
    assert_eq!(pairs[1].rejected.row_id, "bad1");
    assert_eq!(report.excluded["over_max_pairs_per_task"].count, 2);
    assert_eq!(report.rows_out, 3);
}

/// A task of 20,000 rows is paired over `PAIR_MAX_ROWS_PER_TASK` of them,
/// spread over its rewards: the best pair (largest margin) is still found,
/// the other rows are counted out, and the work is bounded (before, every
/// ordered pair of the 20,000 rows was compared: 400 million).
#[test]
fn a_huge_task_is_paired_over_a_bounded_spread_of_its_rows() {
    let cap = sparring_select::defaults::PAIR_MAX_ROWS_PER_TASK;
    let n = 20_000;
    let rows: Vec<Row> = (0..n)
        .map(|i| {
            let reward = (i % 101) as f64 / 100.0;
            diverging(
                "t1",
                &format!("r{i:05}"),
                reward,
                &format!("Order W1001 answer {i}."),
            )
        })
        .collect();
    let started = std::time::Instant::now();
    let (pairs, report) = build_preference_pairs(&rows, &PairOptions::default());
    let (rm, rm_report) = build_reward_pairs(&rows, &RewardOptions::default());
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    for r in [&report, &rm_report] {
        assert_eq!(r.excluded["over_max_rows_per_task"].count, n - cap);
    }
    // The margin-1 pair (reward 1 over reward 0) leads both cuts.
    assert!((pairs[0].margin - 1.0).abs() < 1e-9, "{}", pairs[0].margin);
    assert!((rm[0].margin - 1.0).abs() < 1e-9, "{}", rm[0].margin);
    // Pairs compared: those counted out plus those kept, at most cap².
    let compared: usize = report
        .excluded
        .iter()
        .filter(|(_, e)| e.unit == "pairs")
        .map(|(_, e)| e.count)
        .sum::<usize>()
        + pairs.len();
    assert!(compared <= cap * cap, "{compared}");
}

fn group(task: &str, passes: usize, total: usize) -> Vec<Row> {
    (0..total)
        .map(|i| {
            let r = if i < passes { 1.0 } else { 0.0 };
            diverging(task, &format!("{task}_{i}"), r, "ok")
        })
        .collect()
}

#[test]
fn rl_keeps_whole_groups_inside_the_band() {
    let mut rows = Vec::new();
    rows.extend(group("none", 0, 5)); // 0.0: below
    rows.extend(group("low", 1, 5)); // 0.2: on the edge, kept
    rows.extend(group("mid", 2, 4)); // 0.5: kept
    rows.extend(group("high", 4, 5)); // 0.8: on the edge, kept
    rows.extend(group("all", 5, 5)); // 1.0: above
    rows.extend(group("single", 1, 1)); // too small
    let mut partial = group("partial", 1, 3);
    partial[2].reward = None; // ungraded: never split the group
    rows.extend(partial);
    let (groups, report) = select_for_rl(&rows, &RlOptions::default());
    let kept: Vec<&str> = groups.iter().map(|g| g.task_id).collect();
    assert_eq!(kept, vec!["high", "low", "mid"]);
    for g in &groups {
        let all = rows.iter().filter(|r| r.task_id == g.task_id).count();
        assert_eq!(g.rows.len(), all, "group {} is whole", g.task_id);
    }
    assert!((groups[0].pass_rate - 0.8).abs() < 1e-12);
    assert_eq!(report.excluded["pass_rate_below_band"].count, 1);
    assert_eq!(report.excluded["pass_rate_above_band"].count, 1);
    assert_eq!(report.excluded["group_too_small"].count, 1);
    assert_eq!(report.excluded["group_has_ungraded"].count, 1);
    assert_eq!(report.rows_out, 14);
    // A narrower band drops the edges.
    let narrow = RlOptions {
        min_pass_rate: 0.3,
        max_pass_rate: 0.7,
        ..RlOptions::default()
    };
    let (groups, _) = select_for_rl(&rows, &narrow);
    assert_eq!(groups.len(), 1);
}

#[test]
fn rl_leaves_out_whole_groups_that_decontamination_cut_into() {
    // "cut" had 4 rows (pass rate 0.5); decontamination dropped one passing
    // row, so the 3 left (pass rate 1/3) are not the group.
    let mut rows = group("cut", 2, 4);
    rows.remove(0);
    rows.extend(group("whole", 2, 4));
    let opts = RlOptions {
        decontaminated_tasks: ["cut".to_owned()].into_iter().collect(),
        ..RlOptions::default()
    };
    let (groups, report) = select_for_rl(&rows, &opts);
    let kept: Vec<&str> = groups.iter().map(|g| g.task_id).collect();
    assert_eq!(kept, vec!["whole"]);
    assert_eq!(report.excluded["group_decontaminated"].count, 1);
    assert_eq!(report.excluded["group_decontaminated"].unit, "groups");
    assert_eq!(report.rows_out, 4);
    let (groups, _) = select_for_rl(&rows, &RlOptions::default());
    assert_eq!(groups.len(), 2, "without the set, the partial group passes");
}

#[test]
fn reward_pairs_carry_the_reward_difference_and_skip_ties() {
    let rows = vec![
        diverging("t1", "a", 1.0, "Shipped."),
        diverging("t1", "b", 0.25, "Lost, sorry, no idea where it is now."),
        diverging("t2", "c", 1.0, "Shipped."),
        diverging("t2", "d", 1.0, "Shipped!"),
    ];
    let (pairs, report) = build_reward_pairs(&rows, &RewardOptions::default());
    assert_eq!(pairs.len(), 1);
    assert!((pairs[0].margin - 0.75).abs() < 1e-12);
    assert_eq!(report.excluded["no_reward_spread"].count, 2);
    let (graded, report) = select_graded(&rows);
    assert_eq!(graded.len(), 4);
    assert!(report.excluded.is_empty());
}

#[test]
fn holdout_split_is_by_task_and_not_empty_on_a_small_run() {
    use sparring_select::split_by_task;
    let rows = sparring_testkit::export_fixture();
    for seed in 0..4 {
        let (train, held) = split_by_task(&rows, seed, 0.1);
        assert!(!held.is_empty() && !train.is_empty(), "seed {seed}");
        assert_eq!(train.len() + held.len(), rows.len());
        for h in &held {
            assert!(
                train.iter().all(|t| t.task_id != h.task_id),
                "task {} straddles",
                h.task_id
            );
        }
    }
    let (_, held) = split_by_task(&rows, 0, 0.0);
    assert!(held.is_empty());
}

#[test]
fn sft_drops_rows_that_missed_their_goal_and_user_left_rows_unless_asked() {
    let mut missed = answered("t1", "r1", 1.0, "sigA", "Your order W1001 has shipped.");
    // A later stage (a judge) gave 1, but the goal check failed.
    missed.conduct_checks = Some([("goal".to_owned(), false)].into_iter().collect());
    let mut met = answered("t2", "r2", 1.0, "sigA", "Your order W1001 has shipped.");
    met.conduct_checks = Some([("goal".to_owned(), true)].into_iter().collect());
    let mut left = answered("t3", "r3", 1.0, "sigA", "Which order do you mean?");
    left.ended_by = sparring_types::EndedBy::UserLeft;
    let rows = vec![missed, met, left];
    let (examples, report) = select_for_sft(&rows, &SftOptions::default());
    assert_eq!(ids(examples.iter().map(|e| e.row)), vec!["r2"]);
    assert_eq!(report.excluded["goal_not_met"].count, 1);
    assert_eq!(report.excluded["user_left"].count, 1);
    let keep = SftOptions {
        keep_user_left: true,
        ..SftOptions::default()
    };
    let (examples, _) = select_for_sft(&rows, &keep);
    assert_eq!(ids(examples.iter().map(|e| e.row)), vec!["r2", "r3"]);
    // DPO: a chosen side that missed its goal makes no pair.
    let mut low = answered("t1", "r4", 0.0, "sigB", "Done.");
    low.conduct_checks = Some([("goal".to_owned(), false)].into_iter().collect());
    let pair_rows = vec![rows[0].clone(), low];
    let (pairs, _) = build_preference_pairs(&pair_rows, &PairOptions::default());
    assert!(pairs.is_empty());
}
