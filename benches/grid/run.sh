#!/usr/bin/env bash
# Peer benchmark for sparring's pairwise generator: one command, prints a
# markdown table (see docs/benchmarks-grid.md).
#
#   benches/grid/run.sh [CONFIG...]
#
# Builds the `grid_bench` example in release, runs it on every configuration
# (seeds 0-4 at default effort, plus effort 0 for construction alone), then
# runs PICT (PyPI `pypict`, which needs Python <= 3.10) and allpairspy on the
# same configurations and checks every array independently. The Python venv
# is created at .venv-pict on first use, with pyenv's 3.10 if present.
# Honors CARGO_TARGET_DIR. SEEDS=n changes the number of sparring seeds.
set -euo pipefail
cd "$(dirname "$0")/../.."

CONFIGS=("$@")
if [ ${#CONFIGS[@]} -eq 0 ]; then
  CONFIGS=(2^10 2^100 3^4 3^13 3^100 4^15 4^100 5^10 6^6 10^10 10^20
    5,3^8,2^2 6,5,4^6,3^8,2^3 7,6,5,4^6,3^8,2^3 4^15,3^17,2^29 4,3^39,2^35
    10,6^2,4^3,3
    12,10,6,5,5,4 40,25,6,8,6,4 100,60,8,12,6,5
    12,10,6,5,5,4+c 40,25,6,8,6,4+c 100,60,8,12,6,5+c)
fi
SEEDS=${SEEDS:-5}

VENV=.venv-pict
if [ ! -x "$VENV/bin/python" ]; then
  PY310=""
  if command -v pyenv >/dev/null 2>&1; then
    PY310="$(pyenv root)/versions/$(pyenv versions --bare | grep -E '^3\.10(\.|$)' | tail -1)/bin/python"
  fi
  [ -x "$PY310" ] || PY310="$(command -v python3.10 || true)"
  [ -n "$PY310" ] || { echo "error: Python 3.10 not found (pypict has wheels for 3.7-3.10 only)" >&2; exit 1; }
  echo "creating $VENV with $PY310" >&2
  "$PY310" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet pypict allpairspy
fi

echo "building the grid_bench example (release)" >&2
cargo build --quiet --release -p sparring-grid --example grid_bench
BIN="${CARGO_TARGET_DIR:-target}/release/examples/grid_bench"

OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
echo "running sparring: ${#CONFIGS[@]} configurations x $SEEDS seeds" >&2
for seed in $(seq 0 $((SEEDS - 1))); do
  "$BIN" --seed "$seed" --rows "${CONFIGS[@]}" >>"$OUT"
done
echo "running PICT and allpairspy (allpairspy takes minutes on the large ones)" >&2
"$VENV/bin/python" benches/grid/peers.py --table "$OUT" "${CONFIGS[@]}"
