"""simulate with Python callables: the seed's "bring your own agent" recipe,
the tools handle, current_rollout, exceptions, concurrency, coroutines."""

import asyncio
import json
import os
import threading
import time

import pytest
import shop

import sparring


def test_bring_your_own_agent_runs_offline_in_seconds():
    started = time.monotonic()
    data = sparring.simulate(
        shop.lookup, tools=shop.TOOLS, system_prompt=shop.POLICY, seeds=shop.SEEDS, grade=True
    )
    seconds = time.monotonic() - started
    assert seconds < 30, seconds
    rows = data.rows
    assert len(rows) > 0 and rows is data.rows()
    # Every seed ran, word for word, and every row is graded.
    asks = {r["messages"][1]["content"] for r in rows}
    assert set(shop.SEEDS) <= asks
    assert all(r["reward"] in (0.0, 1.0) for r in rows)
    assert all(r["model_version"] == "fn:lookup" for r in rows)
    # The tools handle's calls are the row's tool calls and results.
    seed_row = next(r for r in rows if r["messages"][1]["content"] == shop.SEEDS[0])
    roles = [m["role"] for m in seed_row["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"], roles
    call = seed_row["messages"][2]["tool_calls"][0]
    assert call["id"] == "call_1" and call["function"]["name"] == "get_order"
    assert json.loads(call["function"]["arguments"]) == {"order_id": "#W1002"}
    assert seed_row["ended_by"] == "agent_done"
    # A callable samples however it samples: no sampling on the rows.
    assert all(r["sampling"] is None for r in rows)
    assert data.stopped_because == "situations_exhausted"
    assert isinstance(data.warnings, list) and isinstance(data.degraded, list)
    assert data.coverage["pairwise"]["pairs_planned"] > 0
    report = data.report()
    assert report["n_rows"] == len(rows)
    assert "pass@1" in report["text"]


def test_sampling_is_recorded_as_given_and_turn_options_warn():
    data = sparring.simulate(
        shop.lookup,
        tools=shop.TOOLS,
        system_prompt=shop.POLICY,
        budget=3,
        sampling={"temperature": 0.7, "model": "mine"},
        max_turns=4,
    )
    assert all(r["sampling"] == {"temperature": 0.7, "model": "mine"} for r in data.rows)
    assert any("played single turn" in w for w in data.warnings), data.warnings
    assert data.summary["options"]["max_turns"] == 1


def test_current_rollout_is_visible_to_agent_and_world():
    seen = {}
    lock = threading.Lock()

    def world(tool, arguments):
        r = sparring.current_rollout()
        with lock:
            seen.setdefault("world", []).append((r.prompt, r.rollout_index, r.seed))
        return {"status": "shipped", "order_id": arguments["order_id"]}

    def agent(message, tools):
        with lock:
            seen.setdefault("agent", []).append(
                (sparring.current_rollout.prompt, sparring.current_rollout.rollout_index, sparring.current_rollout.seed)
            )
        return shop.reply_to(tools.get_order(order_id="#W1002"))

    assert sparring.current_rollout() is None and not sparring.current_rollout
    data = sparring.simulate(agent, tools=shop.TOOLS, system_prompt=shop.POLICY, budget=4, execute=world)
    by_prompt = {r["messages"][1]["content"]: r["seed"] for r in data.rows}
    assert len(seen["agent"]) == 4 and len(seen["world"]) == 4
    for prompt, index, seed in seen["agent"] + seen["world"]:
        assert by_prompt[prompt] == seed
        assert isinstance(index, int)
    assert sorted(i for _, i, _ in seen["agent"]) == sorted(i for _, i, _ in seen["world"])
    # The caller's world answered: every lookup says shipped (unless a
    # scheduled fault came first).
    answers = [json.loads(m["content"]) for r in data.rows for m in r["messages"] if m["role"] == "tool"]
    assert any(a.get("ok") and a["result"]["status"] == "shipped" for a in answers)
    assert sparring.current_rollout() is None


def test_an_exception_in_the_agent_is_the_rows_error_with_its_traceback_in_run_log(tmp_path):
    def agent(message, tools):
        raise ValueError(f"boom on {message[:10]}")

    out = tmp_path / "run"
    data = sparring.simulate(agent, tools=shop.TOOLS, system_prompt=shop.POLICY, budget=2, output=out)
    assert len(data.rows) == 2
    for r in data.rows:
        assert r["ended_by"] == "agent_error"
        assert r["error"].startswith("ValueError: boom on"), r["error"]
        assert "\n" not in r["error"]
    log = (out / "run.log").read_text()
    assert "agent fn:agent" in log and "raised ValueError" in log
    assert "Traceback (most recent call last):" in log
    assert "test_simulate.py" in log
    assert json.loads((out / "run.json").read_text())["counts"]["rows"] == 2


def test_an_exception_in_the_grader_is_recorded_on_the_row(tmp_path):
    def grader(row):
        if "#W1002" in row["messages"][1]["content"]:
            raise RuntimeError("grader broke")
        return {"reward": 1.0, "reason": "fine", "markers": {"politeness": 0.5}}

    out = tmp_path / "run"
    data = sparring.simulate(
        shop.lookup, spec=shop.SPEC, budget=6, grader=grader, output=out, grade=True
    )
    broke = [r for r in data.rows if "#W1002" in r["messages"][1]["content"]]
    fine = [r for r in data.rows if "#W1002" not in r["messages"][1]["content"]]
    assert broke and fine
    for r in broke:
        stages = {g["stage"]: g for g in r["grades"]}
        assert "RuntimeError: grader broke" in stages["grader"]["error"]
        assert r["reward"] is None and r["reason"].startswith("ungraded: the grader stage failed")
        assert "conduct" in stages
    for r in fine:
        assert r["reward"] == 1.0 and r["reason"] == "fine"
        assert r["markers"]["politeness"] == 0.5
        assert r["lineage"]["scoring_run_id"].startswith("grade_")
    log = (out / "run.log").read_text()
    assert "grader fn:grader" in log and "Traceback" in log


def test_the_graders_verdict_is_on_every_row_and_steers_progress():
    verdicts = []

    def grader(row):
        verdicts.append(sparring.current_rollout.seed)
        return row["ended_by"] == "agent_done"

    data = sparring.simulate(shop.lookup, spec=shop.SPEC, budget=8, grader=grader)
    assert len(verdicts) == len(data.rows) == 8
    assert sorted(verdicts) == sorted(r["seed"] for r in data.rows)
    assert all(r["reward"] in (0.0, 1.0) for r in data.rows)
    assert all(r["grades"][-1]["by"] == "fn:grader" for r in data.rows)
    assert data.summary["counts"]["graded"] == 8


def test_an_exception_in_execute_is_a_fault_for_the_agent_and_a_refusal_is_a_refusal(tmp_path):
    def world(tool, arguments):
        if arguments["order_id"] == "#W1001":
            raise sparring.ToolError("no such order here", kind="not_found", hint="check the id")
        raise KeyError("database down")

    def agent(message, tools):
        return json.dumps(tools.get_order(order_id="#W1001")) + "|" + json.dumps(tools.get_order(order_id="#W1002"))

    out = tmp_path / "run"
    data = sparring.simulate(
        agent, tools=shop.TOOLS, system_prompt=shop.POLICY, budget=3, execute=world, output=out, fault_rate=0
    )
    for r in data.rows:
        assert r["ended_by"] == "agent_done", r.get("error")
        refused, failed = [json.loads(x) for x in r["messages"][-1]["content"].split("|")]
        assert refused == {"ok": False, "error": {"kind": "not_found", "message": "no such order here", "hint": "check the id"}}
        assert failed["ok"] is False and failed["error"]["kind"] == "fault"
        assert "KeyError" in failed["error"]["message"]
    log = (out / "run.log").read_text()
    assert "world fn:world" in log and "raised KeyError" in log and "Traceback" in log


def test_sixteen_sleeping_agents_take_about_one_sleep_at_concurrency_16():
    def sleepy(message, tools):
        time.sleep(0.5)
        return "done"

    def quick(message, tools):
        return "done"

    def timed(agent):
        started = time.monotonic()
        data = sparring.simulate(
            agent, tools=shop.TOOLS, system_prompt=shop.POLICY, budget=16, concurrency=16, fault_rate=0
        )
        assert len(data.rows) == 16
        return time.monotonic() - started

    # The same run without the sleep is the run's own cost (planning, the
    # world, Python start-up of the helpers), which a loaded machine inflates.
    base = timed(quick)
    wall = timed(sleepy)
    # One after another the sleeps alone would take 8 s; the margin is for
    # the shared 2-core machine.
    assert wall - base < 2.0, f"16 x 0.5 s at concurrency 16 took {wall:.2f} s ({base:.2f} s without the sleep)"


def test_coroutine_agents_share_one_loop_and_await_their_tools():
    loops = set()

    async def agent(message, tools):
        loops.add(id(asyncio.get_running_loop()))
        await asyncio.sleep(0.5)
        args = shop.first_call(message)
        if args is None:
            return shop.NO_ORDER
        return shop.reply_to(await tools.get_order(**args))

    started = time.monotonic()
    sparring.simulate(lambda m: shop.NO_ORDER, spec=shop.SPEC, budget=16, concurrency=16)
    base = time.monotonic() - started
    started = time.monotonic()
    data = sparring.simulate(agent, spec=shop.SPEC, budget=16, concurrency=16)
    wall = time.monotonic() - started
    # The sleeps overlap on the one loop: about one sleep over the run's own cost.
    assert len(data.rows) == 16 and wall - base < 2.0, (wall, base)
    assert len(loops) == 1
    looked_up = [r for r in data.rows if len(r["messages"]) == 5]
    assert looked_up, "no coroutine called a tool"
    # A reply that asks for the order number would have the person answer:
    # single turn, that is the turn cap.
    assert all(r["error"] is None for r in data.rows)
    assert {r["ended_by"] for r in data.rows} <= {"agent_done", "max_turns"}


def test_a_deterministic_agent_gives_the_same_rows_at_any_concurrency():
    def strip(rows):
        return sorted(json.dumps({k: v for k, v in r.items() if k != "timings"}, sort_keys=True) for r in rows)

    a = sparring.simulate(shop.lookup, spec=shop.SPEC, seed=3, concurrency=1, grade=True)
    b = sparring.simulate(shop.lookup, spec=shop.SPEC, seed=3, concurrency=16, grade=True)
    assert strip(a.rows) == strip(b.rows)


def test_a_tool_limit_reaches_the_agent_as_rollout_ended():
    seen = []

    def greedy(message, tools):
        try:
            while True:
                tools.get_order(order_id="#W1001")
        except sparring.RolloutEnded as e:
            seen.append(str(e))
            raise

    data = sparring.simulate(greedy, spec=shop.SPEC, budget=2, fault_rate=0)
    assert all(r["ended_by"] == "tool_limit" for r in data.rows)
    # max_tool_steps (8) requests: the eighth call is made but never answered.
    assert all(sum(m["role"] == "tool" for m in r["messages"]) == 8 for r in data.rows)
    deadline = time.monotonic() + 5
    while len(seen) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(seen) == 2 and all("max_tool_steps" in s for s in seen)


def test_rows_are_written_to_a_directory_that_resumes(tmp_path):
    out = tmp_path / "run"
    first = sparring.simulate(shop.lookup, spec=shop.SPEC, budget=4, output=out)
    assert len(first.rows) == 4 and first.out == str(out)
    assert os.path.exists(out / "rows.jsonl") and os.path.exists(out / "run.json")
    again = sparring.simulate(shop.lookup, spec=shop.SPEC, budget=4, output=out, resume=True)
    assert len(again.rows) == 4
    assert sorted(r["row_id"] for r in again.rows) == sorted(r["row_id"] for r in first.rows)


def test_a_seed_dict_with_expectations_is_its_rows_goal(spec_file):
    # The lookup agent reads #W1002 and reports its status: the expected call
    # and the fact are met; the same ask expecting a cancel is not.
    ask = "Where is my order #W1002?"
    seeds = [
        {"ask": ask, "expect": {"calls": [{"tool": "get_order", "arguments": {"order_id": "#W1002"}}], "says": ["shipped"]}},
        {"ask": ask + " Cancel it.", "expect": {"calls": [{"tool": "cancel_order", "arguments": {"order_id": "#W1002"}}]}},
    ]
    data = sparring.simulate(shop.lookup, spec=spec_file, seeds=seeds, grade=True, budget=2)
    by_ask = {r["messages"][1]["content"]: r for r in data.rows}
    met, missed = by_ask[ask], by_ask[ask + " Cancel it."]
    assert met["situation"]["goal"]["kind"] == "expected", met["situation"]["goal"]
    assert met["conduct_checks"]["goal"] is True, met["grades"]
    assert missed["conduct_checks"]["goal"] is False and missed["reward"] == 0.0, missed["grades"]


def test_a_seed_dict_with_a_misspelled_key_is_a_clear_error(spec_file):
    with pytest.raises(Exception, match=r"/seeds/0/expect/call`: unknown key `call`; did you mean `calls`\?"):
        sparring.simulate(shop.lookup, spec=spec_file, seeds=[{"ask": "hi", "expect": {"call": []}}])


def test_a_malformed_answer_reaches_a_function_as_a_failed_call():
    # Every call faults, and every fault is `malformed` (text that is not
    # JSON): the function gets the documented failed-call shape with the text
    # as `raw`, never a bare string; the row keeps the text it would read.
    answers = []

    def agent(message, tools):
        answers.append(tools.get_order(order_id="#W1001"))
        return "Done."

    world = {"fault_rate": 1, "malformed_weight": 1, "timeout_weight": 0, "server_error_weight": 0}
    world.update({"rate_limited_weight": 0, "empty_weight": 0})
    spec = dict(shop.SPEC, options={"world": world})
    data = sparring.simulate(agent, spec=spec, budget=3)
    assert answers and all(isinstance(a, dict) for a in answers)
    malformed = [a for a in answers if a.get("error", {}).get("kind") == "malformed"]
    assert malformed and all(isinstance(a["raw"], str) and a["ok"] is False for a in malformed)
    tool_texts = [m["content"] for r in data.rows for m in r["messages"] if m["role"] == "tool"]
    assert any(t == a["raw"] for a in malformed for t in tool_texts)
