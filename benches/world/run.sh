#!/usr/bin/env bash
# The tau2-bench replay: tau2's gold actions against the sandbox world, per
# domain, with fixtures built from the tasks in ../shared/data/tau2 (see
# crates/sparring-world/examples/tau2_replay.rs for what is counted and how).
# Prints two tables: the world reading the spec's words only, then with the
# one-line `world:` section in benches/world/declared.json.
#   benches/world/run.sh [--data DIR] [--verbose]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -q -p sparring-world --example tau2_replay
bin=target/release/examples/tau2_replay
echo "## words only"
"$bin" "$@"
echo
echo "## words and benches/world/declared.json"
"$bin" --declared benches/world/declared.json "$@"
