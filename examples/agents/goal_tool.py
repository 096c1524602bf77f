#!/usr/bin/env python3
"""The share of `act` and `inform` rows whose agent called the goal's tool
(issue 18's figure; run.json `soundness.goal_tool_called` counts every goal
kind). Seeds are left out, as in run.json.

    python3 examples/agents/goal_tool.py RUN_DIR/rows.jsonl
"""

import json
import sys


def main(path):
    by = {}
    users_left = rows = 0
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            rows += 1
            users_left += row["ended_by"] == "user_left"
            goal = row["situation"].get("goal") or {}
            kind, tool = goal.get("kind"), goal.get("tool")
            if kind not in ("act", "inform") or row["lineage"].get("arm") == "seed":
                continue
            called = any(c["function"]["name"] == tool
                         for m in row["messages"] for c in (m.get("tool_calls") or []))
            n, c = by.get(kind, (0, 0))
            by[kind] = (n + 1, c + called)
    n = sum(v[0] for v in by.values())
    c = sum(v[1] for v in by.values())
    share = c / n if n else 0.0
    parts = ", ".join(f"{k} {v[1]}/{v[0]}" for k, v in sorted(by.items()))
    print(f"goal tool called in {c}/{n} act and inform rows ({share:.2f}): {parts}; "
          f"{users_left} of {rows} rows ended with the person gone")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: goal_tool.py ROWS_JSONL")
    main(sys.argv[1])
