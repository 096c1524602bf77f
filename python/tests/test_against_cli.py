"""The Python package against the CLI: the same rows for the same seed,
evaluate beside `sparring evaluate`, and Ctrl-C leaving a resumable run."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import shop

import sparring

HERE = os.path.dirname(os.path.abspath(__file__))
COMMAND_AGENT = f"{sys.executable} {os.path.join(HERE, 'agents', 'lookup_agent.py')}"


def comparable(row):
    """A row without what names the agent or times the run."""
    row = dict(row)
    row.pop("timings")
    row.pop("model_version")
    return json.dumps(row, sort_keys=True)


def read_rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def test_python_and_the_cli_give_the_same_rows_for_the_same_seed(tmp_path, spec_file, sparring_bin):
    out = tmp_path / "cli"
    subprocess.run(
        [sparring_bin, "simulate", spec_file, "--agent", COMMAND_AGENT, "--seed", "5", "--max-turns", "1",
         "--grade", "--repeats", "2", "--out", str(out), "--quiet"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    cli_rows = read_rows(out / "rows.jsonl")
    data = sparring.simulate(shop.lookup, spec=spec_file, seed=5, grade=True, repeats=2)
    assert len(data.rows) == len(cli_rows) > 4
    assert sorted(map(comparable, data.rows)) == sorted(map(comparable, cli_rows))
    assert {r["model_version"] for r in data.rows} == {"fn:lookup"}
    assert json.loads((out / "run.json").read_text())["run_id"] == data.summary["run_id"]


def test_evaluate_runs_every_ask_once_per_repeat(tmp_path, spec_file, sparring_bin):
    asks = ["Where is #W1001?", "Is order #W1003 delivered?", "hello, can you help me", "Status of #W9999 please"]
    data = sparring.evaluate(shop.lookup, spec=spec_file, eval_set=asks, repeats=3, seed=2)
    assert len(data.rows) == 12
    assert [a["ask"] for a in data.per_ask] == asks
    assert all(a["rows"] == 3 and a["graded"] == 3 for a in data.per_ask)
    # Nothing else was generated, and every row is graded.
    assert {r["messages"][1]["content"] for r in data.rows} == set(asks)
    assert all(r["reward"] is not None for r in data.rows)
    unknown = data.per_ask[3]
    assert unknown["ended_by"] == {"agent_done": 3}
    # The same through the CLI, from a file of asks.
    eval_file = tmp_path / "asks.txt"
    eval_file.write_text("\n".join(asks) + "\n")
    out = tmp_path / "eval"
    done = subprocess.run(
        [sparring_bin, "evaluate", spec_file, "--eval-set", str(eval_file), "--agent", COMMAND_AGENT,
         "--repeats", "3", "--seed", "2", "--max-turns", "1", "--out", str(out), "--quiet", "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    printed = json.loads(done.stdout)
    cli = printed["asks"]["asks"]
    for py, c in zip(data.per_ask, cli):
        for key in ("ask", "rows", "graded", "passed", "ended_by", "task_id"):
            assert py[key] == c[key], key
    assert printed["report"]["n_rows"] == 12
    # A budget too small for the set: the asks it could not pay for are named.
    short = sparring.evaluate(shop.lookup, spec=spec_file, eval_set=asks, budget=2)
    assert sum(a["rows"] == 0 for a in short.per_ask) == 2
    assert any("did not run" in w for w in short.warnings)


CTRL_C_SCRIPT = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {here!r})
    import shop, sparring

    def slow(message, tools):
        time.sleep(0.3)
        return shop.lookup(message, tools)

    print("started", flush=True)
    try:
        sparring.simulate(slow, spec=shop.SPEC, budget=12, concurrency=2, output={out!r})
    except KeyboardInterrupt as e:
        print("interrupted:", e, flush=True)
        sys.exit(3)
    """
)


def test_ctrl_c_stops_the_run_cleanly_and_leaves_a_resumable_directory(tmp_path):
    out = tmp_path / "run"
    script = CTRL_C_SCRIPT.format(here=HERE, out=str(out))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "started"
    rows = out / "rows.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not rows.exists() or len(read_rows(rows)) < 2):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=30)
    assert proc.returncode == 3, stdout
    assert "interrupted" in stdout and "resume=True" in stdout
    summary = json.loads((out / "run.json").read_text())
    assert summary["stopped_because"] == "interrupted"
    kept = read_rows(rows)
    assert 2 <= len(kept) < 12
    again = sparring.simulate(shop.lookup, spec=shop.SPEC, budget=12, concurrency=2, output=out, resume=True)
    ids = [r["row_id"] for r in again.rows]
    assert len(ids) == 12 and len(set(ids)) == 12
    assert {r["row_id"] for r in kept} <= set(ids)
