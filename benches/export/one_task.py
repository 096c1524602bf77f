#!/usr/bin/env python3
"""Grows a real rows file to N rows of ONE task, rewards alternating 0 and 1,
for timing the pairing cuts within a task (docs/benchmarks.md).

Usage: one_task.py ROWS N OUT
"""
import json, sys
src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [json.loads(l) for l in open(src) if l.strip()]
with open(out, "w") as f:
    for i in range(n):
        r = json.loads(json.dumps(rows[i % len(rows)]))
        r["task_id"] = "task_one"
        r["row_id"] = f"row_{i:06d}"
        r["reward"] = float(i % 2)
        f.write(json.dumps(r) + "\n")
