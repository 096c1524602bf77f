#!/usr/bin/env python3
"""Grows a real rows file to N rows for the export benchmark.

Usage: synth_rows.py ROWS N OUT

Copies the rows in order, round after round, giving copy k of a row the task
id `<task_id>_k` and row id `<row_id>_k`: every copy is a distinct task with the
same repeats, pass rates and conversations as the original, so every cut keeps
the share of rows it keeps on the real run.
"""

import json
import sys


def main():
    src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(src, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    with open(out, "w", encoding="utf-8") as f:
        for i in range(n):
            row = dict(rows[i % len(rows)])
            k = i // len(rows)
            row["task_id"] = f"{row['task_id']}_{k}"
            row["row_id"] = f"{row['row_id']}_{k}"
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
