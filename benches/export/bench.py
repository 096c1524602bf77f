#!/usr/bin/env python3
"""Times `sparring export` per format on a rows file.

Usage: bench.py SPARRING ROWS [REPEATS]

Runs each format REPEATS times (default 7) after one warm-up, in a temporary
folder, and prints the median and min wall time per format as a Markdown
table, plus the time to read the rows alone (`sparring report`) for scale.
"""

import resource
import statistics
import subprocess
import sys
import tempfile
import time

FORMATS = ["openai-sft", "openai-dpo", "trl-sft", "trl-dpo", "trl-reward", "trl-kto", "trl-grpo", "parquet", "all"]


CPU = {}


def timed(cmd):
    """Wall seconds of one run; its CPU seconds (user + sys) go to CPU."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU.setdefault(" ".join(cmd), []).append(cpu)
    return wall


def main():
    binary, rows = sys.argv[1], sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    with tempfile.TemporaryDirectory() as tmp:
        results = []
        base = [timed([binary, "report", rows]) for _ in range(repeats + 1)][1:]
        results.append(("read rows only (`report`)", base))
        for fmt in FORMATS:
            out = f"{tmp}/{fmt}" + ("" if fmt in ("parquet", "all") else ".jsonl")
            cmd = [binary, "export", rows, "--format", fmt, "-o", out]
            times = [timed(cmd) for _ in range(repeats + 1)][1:]
            results.append((f"`{fmt}`", times))
    print("| format | median wall s | min wall s | median CPU s (user+sys) | median wall / read |")
    print("|---|---|---|---|---|")
    read = statistics.median(base)
    cpus = list(CPU.values())
    for (name, times), cpu in zip(results, cpus):
        med = statistics.median(times)
        print(f"| {name} | {med:.3f} | {min(times):.3f} | {statistics.median(cpu[1:]):.3f} | {med / read:.2f} |")


if __name__ == "__main__":
    main()
