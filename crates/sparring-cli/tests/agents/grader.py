#!/usr/bin/env python3
"""A test grader for `sparring grade --grader`: one JSON line in, one out.

Modes: `ok` (reward 1 when the agent called a tool), `crash` (exits while
grading the second row), `slow` (never answers the third row), `garbage`
(prints a non-JSON line for the second row). The fault happens once: a
marker file (the second argument) remembers it across restarts."""
import json
import sys
import time

from once import claim

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
marker = sys.argv[2] if len(sys.argv) > 2 else None
n = 0


def fault_now(at):
    # Of graders running at once, only one faults (`once.claim`).
    return marker is not None and n == at and claim(marker)


for line in sys.stdin:
    n += 1
    req = json.loads(line)
    row = req["row"]
    if mode == "crash" and fault_now(2):
        sys.exit(3)
    if mode == "slow" and fault_now(3):
        time.sleep(30)
    if mode == "garbage" and fault_now(2):
        print("not json", flush=True)
        continue
    calls = sum(len(m.get("tool_calls") or []) for m in row["messages"])
    print(json.dumps({"id": req["id"], "reward": 1.0 if calls else 0.0,
                      "reason": f"{calls} calls", "markers": {"messages": len(row["messages"])}}), flush=True)
