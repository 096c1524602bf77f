#!/usr/bin/env python3
"""Issue 39's trial of sparring as a demanding user, re-runnable.

Usage: benches/trial/trial.py SPARRING_BINARY [--seed S] [--specs N] [--rows M]
                              [--kills K] [--jobs J]

Standard library only. It prints the tables of docs/reliability.md
("Issue 39's trial"):

1. Mutated inputs: N specs (default 1,668), each mutated from a seed (the
   fuzz corpus's specs and the examples) and run through `policy`, `world
   --explain` and `simulate` (agent `true`, one row); M rows files (default
   1,100), mutated from a graded example run, through `report`, `grade` and
   `export`. Each run has 60 s; longer is a hang. Counted: runs, hangs, panics
   (exit 101 or "panicked"), exit codes, the longest stderr line, the
   errors that name no line or place.
2. Kills: K runs (default 12) of `simulate` with a slow agent killed with
   SIGKILL after a random delay, then `--resume` to the end: rows lost
   (`agent_error`, `backend_error`), duplicated ids, lines that are not JSON.
   And a second `simulate` on the same `--out`, which must be refused.
3. The four faults of issue 39, each by the command that showed it.

Mutations are edits of bytes (flips, insertions, deletions, copied slices,
slices repeated up to 10,000 times, truncation), 1 to 11 per input, drawn from
random.Random(seed).
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SPEC = os.path.join(ROOT, "examples", "support-desk", "spec.yaml")
AGENT = "python3 " + os.path.join(ROOT, "examples", "support-desk", "agent.py")
AGENTS = os.path.join(ROOT, "crates", "sparring-cli", "tests", "agents")
TIMEOUT = 60
PUNCTUATION = b'{}[]:,"\'\n -#&*!|>\\0123456789eE.\xef\xff\xc3'


def mutate(rng, data):
    b = bytearray(data)
    for _ in range(rng.randint(1, 11)):
        kind = rng.choice("ffiiddsssgt")
        n = len(b)
        byte = rng.choice(PUNCTUATION) if rng.random() < 0.5 else rng.randrange(256)
        if kind == "f" and n:
            b[rng.randrange(n)] = byte
        elif kind == "i":
            b.insert(rng.randrange(n + 1), byte)
        elif kind == "d" and n:
            at = rng.randrange(n)
            del b[at:at + rng.randint(1, 16)]
        elif kind == "s" and n:
            at = rng.randrange(n)
            piece = b[at:at + rng.randint(1, 64)]
            to = rng.randrange(n + 1)
            b[to:to] = piece
        elif kind == "g" and n:
            at = rng.randrange(n)
            end = min(n, at + rng.randint(1, 8))
            b[end:end] = b[at:end] * rng.randint(1, 10_000)
        elif kind == "t":
            del b[rng.randrange(n + 1):]
    return bytes(b)


def run(argv, cwd=None):
    started = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, timeout=TIMEOUT, cwd=cwd,
                           env=dict(os.environ, NO_PROGRESS="1"))
    except subprocess.TimeoutExpired:
        return {"exit": "hang", "stderr": b"", "seconds": TIMEOUT}
    return {"exit": p.returncode, "stderr": p.stderr, "seconds": time.monotonic() - started}


class Tally:
    def __init__(self):
        self.runs = 0
        self.hangs = 0
        self.panics = 0
        self.exits = collections.Counter()
        self.longest = 0
        self.unplaced = 0
        self.examples = {}

    def add(self, verb, result):
        self.runs += 1
        err = result["stderr"]
        self.exits[result["exit"]] += 1
        if result["exit"] == "hang":
            self.hangs += 1
            self.examples.setdefault("hang", verb)
        if result["exit"] == 101 or b"panicked" in err:
            self.panics += 1
            self.examples.setdefault("panic", (verb, err[:300]))
        for line in err.split(b"\n"):
            self.longest = max(self.longest, len(line))
        first = err.split(b"\n", 1)[0]
        if result["exit"] == 2 and first.startswith(b"error: `") and b": at " not in first:
            self.unplaced += 1
            self.examples.setdefault("unplaced", first[:300])

    def row(self, name):
        exits = ", ".join(f"{k}: {v}" for k, v in sorted(self.exits.items(), key=str))
        return (f"| {name} | {self.runs:,} | {self.hangs} | {self.panics} | {exits} | "
                f"{self.longest:,} | {self.unplaced} |")


def spec_seeds():
    seeds = []
    for folder in [os.path.join(ROOT, "fuzz", "corpus", "spec")]:
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                seeds.append((os.path.splitext(name)[1], f.read()))
    for example in ["support-desk", "bank", "clinic", "claims"]:
        path = os.path.join(ROOT, "examples", example, "spec.yaml")
        if os.path.exists(path):
            with open(path, "rb") as f:
                text = f.read()
            # Prompt files by absolute path, so a copy elsewhere reads them.
            text = text.replace(b"{file: ", ("{file: " + os.path.dirname(path) + "/").encode())
            seeds.append((".yaml", text))
    return seeds


def spec_case(binary, work, i, ext, data):
    path = os.path.join(work, f"spec{i}{ext}")
    with open(path, "wb") as f:
        f.write(data)
    out = os.path.join(work, f"out{i}")
    results = [
        ("policy", run([binary, "policy", path])),
        ("world --explain", run([binary, "world", path, "--explain"])),
        ("simulate", run([binary, "simulate", path, "--agent", "true", "--budget", "1",
                          "--out", out, "--quiet"])),
    ]
    os.remove(path)
    subprocess.run(["rm", "-rf", out])
    return results


def rows_case(binary, work, i, data):
    path = os.path.join(work, f"rows{i}.jsonl")
    with open(path, "wb") as f:
        f.write(data)
    results = [
        ("report", run([binary, "report", path])),
        ("grade", run([binary, "grade", path, "-o", os.path.join(work, f"g{i}", "graded.jsonl")])),
        ("export", run([binary, "export", path, "--format", "trl-sft", "--out",
                        os.path.join(work, f"e{i}", "sft.jsonl")])),
    ]
    os.remove(path)
    subprocess.run(["rm", "-rf", os.path.join(work, f"g{i}"), os.path.join(work, f"e{i}")])
    return results


def rows_of(path):
    rows, invalid = [], 0
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError:
                invalid += 1
    return rows, invalid


def kills(binary, work, k, rng):
    out_rows = []
    for i in range(k):
        out = os.path.join(work, f"kill{i}")
        argv = [binary, "simulate", SPEC, "--agent",
                "python3 " + os.path.join(AGENTS, "slow.py") + " 0.1",
                "--budget", "24", "--concurrency", "8", "--seed", str(i), "--out", out, "--quiet"]
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        time.sleep(rng.uniform(0.5, 3.0))
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        written, _ = rows_of(os.path.join(out, "rows.jsonl")) if os.path.exists(
            os.path.join(out, "rows.jsonl")) else ([], 0)
        resumed = run(argv[:-1] + ["--resume", "--quiet"])
        rows, invalid = rows_of(os.path.join(out, "rows.jsonl"))
        ids = [r.get("row_id") for r in rows]
        lost = sum(r.get("ended_by") in ("agent_error", "backend_error") for r in rows)
        again = run(argv)
        out_rows.append((i, len(written), resumed["exit"], len(rows), lost,
                         len(ids) - len(set(ids)), invalid, again["exit"]))
    return out_rows


def faults(binary, work):
    """Issue 39's four faults, each by the command that showed it."""
    table = []
    run1 = os.path.join(work, "graded")
    run([binary, "simulate", SPEC, "--agent", AGENT, "--budget", "12", "--grade", "--out",
         run1, "--quiet"])
    rows, _ = rows_of(os.path.join(run1, "rows.jsonl"))
    # 1. a 65,535-character category value through report.
    long_rows = [dict(r) for r in rows]
    long_rows[0] = json.loads(json.dumps(rows[0]))
    long_rows[0]["situation"]["axes"]["stance"] = "x" * 65_535
    path = os.path.join(work, "long.jsonl")
    with open(path, "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in long_rows))
    r = run([binary, "report", path])
    table.append(("1. a 65,535-character axis value, `report`", r["exit"],
                  r["stderr"].split(b"\n")[0][:120].decode(errors="replace")))
    # 2. a byte that is not UTF-8, through report, grade and export.
    with open(os.path.join(run1, "rows.jsonl"), "rb") as f:
        lines = f.read().split(b"\n")
    lines[2] = lines[2].replace(b"task_id", b"task\xffid", 1)
    bad = os.path.join(work, "bad.jsonl")
    with open(bad, "wb") as f:
        f.write(b"\n".join(lines))
    for verb, extra in [("report", []), ("grade", ["-o", os.path.join(work, "g.jsonl")]),
                        ("export", ["--format", "trl-sft", "--out", os.path.join(work, "e.jsonl")])]:
        r = run([binary, verb, bad] + extra)
        table.append((f"2. a byte that is not UTF-8 on line 3, `{verb}`", r["exit"],
                      r["stderr"].split(b"\n")[0][:160].decode(errors="replace")))
    # 3. 1 MB values quoted in errors.
    big = "x" * (1 << 20)
    base = {"name": "t", "system_prompt": "p", "tools": [{"name": "get_order", "inputSchema": {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}]}
    cases = []
    s = json.loads(json.dumps(base)); s["tools"][0]["name"] = big; cases.append(("tool name", s))
    s = json.loads(json.dumps(base)); s["tools"][0]["inputSchema"]["type"] = big; cases.append(("schema `type`", s))
    s = json.loads(json.dumps(base)); s["tools"][0]["inputSchema"]["required"] = [big]; cases.append(("`required` entry", s))
    for what, s in cases:
        path = os.path.join(work, "big.json")
        with open(path, "w") as f:
            json.dump(s, f)
        longest = 0
        for verb in (["policy"], ["world", "--explain"], ["simulate", "--agent", "true"]):
            r = run([binary, verb[0], path] + verb[1:])
            longest = max([longest] + [len(l) for l in r["stderr"].split(b"\n")])
        table.append((f"3. a 1 MB {what}: longest error line, bytes", r["exit"], f"{longest:,}"))
    r0 = json.loads(json.dumps(rows[0])); r0["reward"] = big
    path = os.path.join(work, "bignum.jsonl")
    with open(path, "w") as f:
        f.write(json.dumps(r0) + "\n")
    longest = 0
    for verb, extra in [("report", []), ("grade", ["-o", os.path.join(work, "g2.jsonl")]),
                        ("export", ["--format", "trl-sft", "--out", os.path.join(work, "e2.jsonl")])]:
        r = run([binary, verb, path] + extra)
        longest = max([longest] + [len(l) for l in r["stderr"].split(b"\n")])
    table.append(("3. a 1 MB string for `reward`: longest error line, bytes", r["exit"], f"{longest:,}"))
    # 4. the support-desk agent writing one (then four) conversations' replies twice.
    for culprits in (1, 4):
        out = os.path.join(work, f"twice{culprits}")
        state = os.path.join(work, f"culprits{culprits}")
        r = run([binary, "simulate", SPEC, "--agent",
                 f"python3 {os.path.join(AGENTS, 'tools_twice.py')} {state} {culprits}",
                 "--budget", "48", "--concurrency", "8", "--seed", "5", "--out", out, "--quiet"])
        got, _ = rows_of(os.path.join(out, "rows.jsonl"))
        lost = sum(x.get("ended_by") == "agent_error" for x in got)
        with open(os.path.join(out, "run.json")) as f:
            warned = any("replied twice" in w for w in json.load(f)["warnings"])
        table.append((f"4. {culprits} conversation(s) with every reply twice, 48 rows",
                      r["exit"], f"{len(got)} rows, {lost} lost, warning: {'yes' if warned else 'no'}"))
    return table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--specs", type=int, default=1668)
    ap.add_argument("--rows", type=int, default=1100)
    ap.add_argument("--kills", type=int, default=12)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="sparring-trial-")
    started = time.monotonic()

    seeds = spec_seeds()
    specs = []
    for i in range(args.specs):
        ext, data = seeds[rng.randrange(len(seeds))]
        specs.append((i, ext, mutate(rng, data)))
    base = os.path.join(work, "base")
    run([binary, "simulate", SPEC, "--agent", AGENT, "--budget", "6", "--grade", "--out", base, "--quiet"])
    with open(os.path.join(base, "rows.jsonl"), "rb") as f:
        rows_seed = f.read()
    rows_inputs = [(i, mutate(rng, rows_seed)) for i in range(args.rows)]

    spec_tally, rows_tally = Tally(), Tally()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for results in pool.map(lambda c: spec_case(binary, work, *c), specs):
            for verb, r in results:
                spec_tally.add(verb, r)
        for results in pool.map(lambda c: rows_case(binary, work, *c), rows_inputs):
            for verb, r in results:
                rows_tally.add(verb, r)
    print("| inputs | runs | hangs | panics | exit codes | longest stderr line, bytes | errors naming no place |")
    print("|---|---|---|---|---|---|---|")
    print(spec_tally.row(f"{args.specs:,} mutated specs × `policy`, `world --explain`, `simulate`"))
    print(rows_tally.row(f"{args.rows:,} mutated rows files × `report`, `grade`, `export`"))
    for t in (spec_tally, rows_tally):
        for k, v in t.examples.items():
            print(f"  example {k}: {v}", file=sys.stderr)
    print()
    print("| kill | rows at the kill | `--resume` exit | rows after | lost | duplicates | invalid lines | a second run on the `--out` |")
    print("|---|---|---|---|---|---|---|---|")
    for row in kills(binary, work, args.kills, rng):
        print("| " + " | ".join(str(x) for x in row[:-1]) + f" | exit {row[-1]} |")
    print()
    print("| fault | exit | what it says |")
    print("|---|---|---|")
    for what, code, said in faults(binary, work):
        print(f"| {what} | {code} | {said.replace('|', '/')} |")
    print(f"\n{time.monotonic() - started:.0f} s; work in {work}", file=sys.stderr)
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
