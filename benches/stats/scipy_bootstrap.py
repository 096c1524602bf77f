#!/usr/bin/env python3
"""Time scipy.stats.bootstrap on the workload of crates/sparring-stats/benches/bootstrap.rs.

10,000 percentile-bootstrap resamples of the mean over 100,000 per-task
values, vectorized. The inputs are the same arrays as the Rust bench, built
from SplitMix64:
  pass_at_1_n8     c/8 with c = splitmix64(i) % 9 (state seeded with 1)
  pass_at_1_mixed  c/n with n = 1 + z % 32, c = (z >> 32) % (n + 1),
                   z = splitmix64(i) (state seeded with 3)
  continuous       (splitmix64(i) >> 11) / 2**53 (state seeded with 2)

`batch` bounds memory: SciPy materialises batch x n resampled values, and
batch=None would need 2 x 8 GB here. On the 2-core benchmark machine
batch 5 to 10 was fastest (20 and above were slower), so 10 is the default.

Prints one JSON object per dataset on stdout:
  {"dataset", "median_s", "times_s", "ci", "batch", "resamples", "tasks"}
"""

import argparse
import json
import statistics
import sys
import time

MASK = (1 << 64) - 1


def splitmix64_stream(seed, count):
    state = seed
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def dataset(name, tasks):
    import numpy as np

    if name == "pass_at_1_n8":
        return np.array([(z % 9) / 8.0 for z in splitmix64_stream(1, tasks)])
    if name == "pass_at_1_mixed":
        out = []
        for z in splitmix64_stream(3, tasks):
            n = 1 + z % 32
            out.append(((z >> 32) % (n + 1)) / n)
        return np.array(out)
    if name == "continuous":
        return np.array([(z >> 11) / float(1 << 53) for z in splitmix64_stream(2, tasks)])
    raise SystemExit(f"error: unknown dataset `{name}`")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="pass_at_1_n8,pass_at_1_mixed,continuous")
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    try:
        import numpy as np
        import scipy
        from scipy import stats
    except ImportError as err:
        sys.exit(f"error: {err}\nhint: python3 -m pip install -r tests/oracle/requirements.txt")

    for name in args.datasets.split(","):
        x = dataset(name, args.tasks)
        times = []
        ci = None
        for repeat in range(args.repeats):
            rng = np.random.default_rng(repeat)
            start = time.perf_counter()
            res = stats.bootstrap(
                (x,),
                np.mean,
                n_resamples=args.resamples,
                method="percentile",
                confidence_level=0.95,
                vectorized=True,
                batch=args.batch,
                random_state=rng,
            )
            times.append(time.perf_counter() - start)
            ci = [float(res.confidence_interval.low), float(res.confidence_interval.high)]
            print(f"{name}: repeat {repeat + 1}/{args.repeats}: {times[-1]:.3f} s", file=sys.stderr, flush=True)
        print(
            json.dumps(
                {
                    "dataset": name,
                    "median_s": statistics.median(times),
                    "times_s": times,
                    "ci": ci,
                    "batch": args.batch,
                    "resamples": args.resamples,
                    "tasks": args.tasks,
                    "scipy": scipy.__version__,
                    "numpy": np.__version__,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
