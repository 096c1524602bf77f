#!/usr/bin/env bash
# Bootstrap benchmark: sparring-stats (criterion) against scipy.stats.bootstrap
# on the same work, 10,000 percentile resamples of the mean over 100,000 tasks.
# Prints each side's median and the ratio. Takes a few minutes.
#
#   benches/stats/run.sh                # from the repository root
#   REPEATS=5 benches/stats/run.sh      # more SciPy repeats
#
# Needs the Python packages of tests/oracle/requirements.txt.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
repeats="${REPEATS:-3}"
batch="${SCIPY_BATCH:-10}"

echo "== sparring-stats (criterion) ==" >&2
cargo bench --manifest-path "$root/crates/sparring-stats/Cargo.toml" --bench bootstrap >&2

echo "== scipy.stats.bootstrap ==" >&2
scipy_json="$(python3 "$root/benches/stats/scipy_bootstrap.py" --repeats "$repeats" --batch "$batch")"

python3 - "$target/criterion/bootstrap_10k_resamples_100k_tasks" "$scipy_json" <<'PY'
import json, sys
from pathlib import Path

crit_dir = Path(sys.argv[1])
scipy = {row["dataset"]: row for row in map(json.loads, sys.argv[2].splitlines())}
print(f"{'dataset':<14} {'sparring (median)':>18} {'scipy (median)':>15} {'ratio':>9}")
for name, row in scipy.items():
    est = json.loads((crit_dir / name / "new" / "estimates.json").read_text())
    ours = est["median"]["point_estimate"] / 1e9
    theirs = row["median_s"]
    print(f"{name:<14} {ours:>16.4f} s {theirs:>13.3f} s {theirs / ours:>8.1f}x")
print(f"(scipy {row['scipy']}, numpy {row['numpy']}, batch {row['batch']}, "
      f"{row['resamples']} resamples over {row['tasks']} tasks)")
PY
