"""Peer comparison for sparring's pairwise generator: PICT (pypict) and allpairspy.

Usage (normally through run.sh):
    python peers.py --one pict|allpairspy CONFIG      # one run, prints one JSON line
    python peers.py --table SPARRING.jsonl CONFIG...  # runs the peers, checks every
                                                      # array, prints a markdown table

A CONFIG is a levels list (`3^13`, `5,3^8,2^2`); a trailing `+c` adds one
forbidden pair per value t of the first axis: (axis 0 = t, axis 3 = t mod levels[3]).
Seconds are CPU time (time.process_time) of generation inside the child process
(no interpreter start-up), so that other load on a shared machine does not count.
Every array, sparring's included, is checked here independently: all pairs that
some valid row can hold are covered and no row holds a forbidden pair.
"""

import itertools
import json
import subprocess
import sys
import time

TIMEOUT_S = 600

# Best known sizes (Colbourn's tables as preserved in the CAs R package; classic
# mixed benchmarks; see /work/shared/notes/covering-arrays.md). None = no
# literature value (project shapes: the lower bound is the product of the two
# largest axes minus nothing, reached by every tool).
BEST_KNOWN = {
    "2^10": "6", "2^100": "10", "3^4": "9", "3^13": "15", "3^100": "22",
    "4^15": "26", "4^100": "39", "5^10": "36", "6^6": "41", "10^10": "115",
    "10^20": "155", "5,3^8,2^2": "15", "6,5,4^6,3^8,2^3": "30",
    "7,6,5,4^6,3^8,2^3": "42", "4^15,3^17,2^29": "29 (28 claimed)",
    "4,3^39,2^35": "21 (20 claimed)", "10,6^2,4^3,3": "60",
}


def parse(config):
    text, constrained = (config[:-2], True) if config.endswith("+c") else (config, False)
    levels = []
    for item in text.split(","):
        v, _, k = item.strip().partition("^")
        levels += [int(v)] * (int(k) if k else 1)
    forbidden = []
    if constrained:
        forbidden = [((0, t), (3, t % levels[3])) for t in range(levels[0])]
    return levels, forbidden


def run_pict(levels, forbidden):
    from pypict import Task

    start = time.process_time()
    task = Task()
    handles = [task.model.add_parameter(v) for v in levels]
    for (a, x), (b, y) in forbidden:
        task.add_exclusion([(handles[a], x), (handles[b], y)])
    rows = [list(r) for r in task.generate()]
    return rows, time.process_time() - start


def run_allpairspy(levels, forbidden):
    from allpairspy import AllPairs

    bad = {}
    for (a, x), (b, y) in forbidden:
        bad.setdefault((a, x), []).append((b, y))
        bad.setdefault((b, y), []).append((a, x))

    def ok(row):
        for a, x in enumerate(row):
            for b, y in bad.get((a, x), ()):
                if b < len(row) and row[b] == y:
                    return False
        return True

    start = time.process_time()
    params = [list(range(v)) for v in levels]
    rows = [list(r) for r in AllPairs(params, filter_func=ok if forbidden else (lambda r: True))]
    return rows, time.process_time() - start


def allowed_pairs(levels, forbidden):
    """Pairs that some valid row can hold.

    With only the `+c` style constraints (or none), a pair is allowed exactly
    when it is not forbidden: every axis keeps a value without forbidden partners.
    """
    banned = {(a, x, b, y) for (a, x), (b, y) in forbidden}
    banned |= {(b, y, a, x) for (a, x, b, y) in banned}
    k = len(levels)
    return {
        (a, x, b, y)
        for a, b in itertools.combinations(range(k), 2)
        for x in range(levels[a])
        for y in range(levels[b])
        if (a, x, b, y) not in banned
    }


def check(rows, levels, forbidden):
    banned = {((a, x), (b, y)) for (a, x), (b, y) in forbidden}
    k = len(levels)
    seen = set()
    for row in rows:
        if len(row) != k or any(not 0 <= x < v for x, v in zip(row, levels)):
            return False
        if any(row[a] == x and row[b] == y for (a, x), (b, y) in banned):
            return False
        for a, b in itertools.combinations(range(k), 2):
            seen.add((a, row[a], b, row[b]))
    return allowed_pairs(levels, forbidden) <= seen


def one(tool, config):
    levels, forbidden = parse(config)
    rows, seconds = {"pict": run_pict, "allpairspy": run_allpairspy}[tool](levels, forbidden)
    print(json.dumps({"tool": tool, "config": config, "rows": len(rows),
                      "seconds": seconds, "valid": check(rows, levels, forbidden)}))


def peer(tool, config):
    try:
        out = subprocess.run([sys.executable, __file__, "--one", tool, config],
                             capture_output=True, text=True, timeout=TIMEOUT_S, check=True)
        return json.loads(out.stdout)
    except subprocess.TimeoutExpired:
        return {"rows": None, "seconds": None, "valid": None, "note": f"timeout {TIMEOUT_S} s"}


def cell(result):
    if result.get("rows") is None:
        return result.get("note", "n/a")
    mark = "" if result["valid"] else " INVALID"
    return f"{result['rows']} / {result['seconds']:.3f}{mark}"


def table(sparring_file, configs):
    ours = {}
    with open(sparring_file) as f:
        for line in f:
            r = json.loads(line)
            ours.setdefault(r["config"], []).append(r)
    seeds = len(next(iter(ours.values())))
    print(f"| config | k | best known | lower bound | sparring rows / s (seed 0) | sparring rows, seeds 0-{seeds - 1} | "
          "construction rows / s | PICT rows / s | allpairspy rows / s |")
    print("|---|---|---|---|---|---|---|---|---|")
    failures = 0
    for config in configs:
        levels, forbidden = parse(config)
        runs = ours[config]
        for r in runs:
            if not check(r["array"], levels, forbidden):
                failures += 1
                r["rows"] = f"{r['rows']} INVALID"
        first = runs[0]
        sizes = [r["rows"] for r in runs]
        spread = f"{min(sizes)}-{max(sizes)}" if len(set(sizes)) > 1 else f"{sizes[0]}"
        pict = peer("pict", config)
        pairs = peer("allpairspy", config)
        for res in (pict, pairs):
            if res.get("valid") is False:
                failures += 1
        best = BEST_KNOWN.get(config.removesuffix("+c"), "") if not config.endswith("+c") else ""
        name = config.replace(",", " ").replace("+c", " + 1 forbidden pair per value of axis 0")
        print(f"| {name} | {len(levels)} | {best} | {first['lower_bound']} | "
              f"{first['rows']} / {first['seconds']:.3f} | {spread} | "
              f"{first['construction_rows']} / {first['construction_seconds']:.4f} | "
              f"{cell(pict)} | {cell(pairs)} |", flush=True)
    if failures:
        print(f"\n{failures} invalid arrays", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        one(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "--table":
        table(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
