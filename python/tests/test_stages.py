"""The stages after simulate: grade, the reports, labels, the cuts,
decontamination, export and coverage gaps, over rows in memory."""

import json

import pytest
import shop

import sparring


@pytest.fixture(scope="module")
def graded():
    # Four repeats of every task, with an agent that fails some rows on
    # purpose, so the cuts have passes, failures and mixed groups.
    def flaky(message, tools):
        r = sparring.current_rollout
        if r.seed % 3 == 0:
            return "I have refunded your order."  # claims an action it never took
        return shop.lookup(message, tools)

    return sparring.simulate(flaky, spec=shop.SPEC, repeats=4, grade=True, seed=1)


def test_grade_with_a_callable_a_judge_less_conduct_pass(graded):
    ungraded = [dict(r, reward=None, grades=None) for r in graded.rows]
    scored = sparring.grade(ungraded)
    assert isinstance(scored, sparring.ScoredData)
    assert [r["reward"] for r in scored.rows] == [r["reward"] for r in graded.rows]
    assert scored.grading["rows"] == len(graded.rows)

    def length_grader(row):
        return (1.0 if len(row["messages"]) > 3 else 0.0, "called a tool")

    again = sparring.grade(graded, grader=length_grader, conduct=False)
    for r in again.rows:
        assert r["reward"] == (1.0 if len(r["messages"]) > 3 else 0.0)
        assert r["reason"] == "called a tool"
        assert [g["stage"] for g in r["grades"]] == ["grader"]
    assert again.passes() == [r for r in again.rows if r["reward"] == 1.0]
    with pytest.raises(ValueError, match="nothing to grade with"):
        sparring.grade(graded, conduct=False)


def test_report_delta_and_compare(graded):
    report = sparring.report(graded, k=[1, 2])
    assert report["n_rows"] == len(graded.rows)
    assert 0.0 < report["pass_at_1"]["value"] < 1.0
    assert graded.report()["pass_at_1"] == report["pass_at_1"]
    same = sparring.delta_report(graded, graded.rows)
    assert same["delta"] == 0.0 and same["failed_markers"] == []
    headline = sparring.compare_runs(graded, graded)
    assert headline["n_paired"] == same["n_paired"] > 0 and "by_category" not in headline


def test_eval_variance_splits_by_eval_run():
    data = sparring.simulate(shop.lookup, spec=shop.SPEC, runs=2, budget=5, grade=True)
    assert {r["lineage"]["eval_run"] for r in data.rows} == {0, 1}
    v = sparring.eval_variance(data)
    assert len(v["runs"]) == 2 and v["std"] == 0.0


def test_labels_agreement_and_hack_scan(graded):
    labels = {r["row_id"]: r["reward"] >= 0.5 for r in graded.rows[:10]}
    labelled = sparring.attach_labels(graded, labels, author="tester")
    gold = [r for r in labelled if r.get("gold_author") == "tester"]
    assert len(gold) == 10 and all(r["gold_kind"] == "human" for r in gold)
    items = [{"row_id": k, "label": v, "author": "tester"} for k, v in labels.items()]
    agreement = sparring.judge_agreement(graded, items)
    assert agreement["n"] == 10 and agreement["agreement"] == 1.0
    # The labels put on the rows are read when none are given, as the docstring says.
    on_rows = sparring.judge_agreement(labelled)
    assert on_rows["n"] == 10 and on_rows["agreement"] == 1.0
    with pytest.raises(ValueError, match="author"):
        sparring.attach_labels(graded, labels, author=" ")
    scan = sparring.hack_scan(graded)
    assert "within_task_share" in json.dumps(scan) or "features" in scan


def test_the_cuts_and_export(graded, tmp_path):
    sft = sparring.select_for_sft(graded)
    assert len(sft) > 0 and all(r["reward"] == 1.0 for r in sft.rows)
    assert sft.report["rows_in"] == len(graded.rows)
    pairs = sparring.build_preference_pairs(graded, margin=0.5)
    for p in pairs.pairs:
        assert p["margin"] >= 0.5
    rl = sparring.select_for_rl(graded, min_pass_rate=0.0, max_pass_rate=1.0)
    assert len(rl) > 0
    path = tmp_path / "sft.jsonl"
    written = sft.export(path)
    assert written[0]["format"] == "trl-sft" and path.exists()
    lines = path.read_text().splitlines()
    assert len(lines) == len(sft.rows)
    assert json.loads(lines[0])["messages"][0]["role"] == "system"
    folder = tmp_path / "dataset"
    reports = sparring.export(graded, folder)
    assert len(reports) > 1
    with pytest.raises(TypeError, match="did you mean 'margin'"):
        sparring.build_preference_pairs(graded, margn=0.5)


def test_decontaminate_drops_near_copies_of_held_out_rows(graded):
    held = graded.rows[:3]
    kept = sparring.decontaminate(graded, holdout=held)
    assert kept.decontam["rows_in"] == len(graded.rows)
    held_ids = {r["row_id"] for r in held}
    assert not held_ids & {r["row_id"] for r in kept.rows}
    assert len(kept.rows) < len(graded.rows)


def test_decontaminate_takes_rows_as_traces(graded):
    # A list of rows is one source of traces, as holdout= takes it; a list of
    # sources (a path and a list of rows) is read source by source.
    traced = sparring.decontaminate(graded, traces=graded.rows[:3])
    assert traced.decontam["rows_in"] == len(graded.rows)
    assert len(traced.rows) < len(graded.rows)
    both = sparring.decontaminate(graded, traces=[graded.rows[:3], graded.rows[3:4]])
    assert len(both.rows) <= len(traced.rows)


def test_coverage_gap_names_what_no_ask_touches():
    gap = sparring.coverage_gap(["Where is my order #W1002?"], tools=shop.TOOLS, system_prompt=shop.POLICY)
    assert "cancel_order" in gap["tools"] and "get_order" not in gap["tools"]
    assert gap["asks"] == 1 and len(gap["rules"]) >= 1
