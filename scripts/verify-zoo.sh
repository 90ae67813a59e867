#!/usr/bin/env bash
# Verifies one training iteration of every model of the zoo at batch 1, in f32 and f16, against
# the f64 reference, RUNS times (default 3), each with fresh random data and seeds, and prints
# each run's table of the worst ratio of error to rounding bound per op (at most 1 passes).
# This is exactly the check `cargo convbench run` makes before it times a benchmark.
#
#   scripts/verify-zoo.sh [RUNS] [extra `verify` flags, e.g. --adapter vulkan]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
shift || true
cargo build --release --quiet -p cargo-convbench
for run in $(seq 1 "$runs"); do
  echo "== run $run of $runs"
  start=$(date +%s)
  target/release/cargo-convbench verify --batch 1 --precision f32,f16 --quiet "$@"
  echo "(run $run took $(( $(date +%s) - start )) s)"
done
