"""Rows/s of a trivial Python callable agent against the same agent as a
command agent (agent protocol v1), both in one run of this script, on the
same spec, seed, budget and concurrency (docs/benchmarks.md, "Python callable vs command agent").

    python benches/python/bench.py [ROWS] [ROUNDS]

Needs the package built (maturin develop) in the running interpreter.
"""

import json
import os
import statistics
import sys
import tempfile
import time

import sparring

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "..", "python", "tests")
sys.path.insert(0, TESTS)
import shop  # noqa: E402

COMMAND = f"{sys.executable} {os.path.join(TESTS, 'agents', 'lookup_agent.py')}"


def run(agent, rows, spec_path):
    started = time.perf_counter()
    # The shop plans about 26 tasks; repeats fill the budget. Both agents
    # play one turn (a callable is played single turn).
    data = sparring.simulate(
        agent, spec=spec_path, budget=rows, repeats=rows // 10 + 1, max_turns=1, seed=1, concurrency=32
    )
    seconds = time.perf_counter() - started
    assert len(data.rows) == rows, (len(data.rows), data.warnings)
    return len(data.rows) / seconds


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with tempfile.TemporaryDirectory() as d:
        spec_path = os.path.join(d, "shop.json")
        with open(spec_path, "w") as f:
            json.dump(shop.SPEC, f)
        callable_rates, command_rates = [], []
        for _ in range(rounds):
            callable_rates.append(run(shop.lookup, rows, spec_path))
            command_rates.append(run(COMMAND, rows, spec_path))
    c, m = statistics.median(callable_rates), statistics.median(command_rates)
    print(json.dumps({
        "rows": rows,
        "rounds": rounds,
        "callable_rows_per_s": [round(r, 1) for r in callable_rates],
        "command_rows_per_s": [round(r, 1) for r in command_rates],
        "median_callable": round(c, 1),
        "median_command": round(m, 1),
        "ratio": round(c / m, 2),
    }, indent=2))


if __name__ == "__main__":
    main()
