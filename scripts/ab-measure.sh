#!/usr/bin/env bash
# Measures `cargo convbench ab` (interleaved A/B of two shader sets on one device) on this
# machine: false alarms and detection, the pairs it takes, wall time.
#
#   scripts/ab-measure.sh [--load] [TRIALS] [PAIRS] [FRACTION]   (defaults: 20 trials, 60 pairs, 16)
#
# Each trial is one `ab --base HEAD` process on `--model lenet --batch 8 --stage eval --kernel
# direct` (forward only, the direct convolution kernel dominates):
# - A/A: the working tree's shaders/ against HEAD's, unchanged: exit 1 is a false alarm;
# - A/B: a copy of shaders/ whose conv2d_forward does 1/FRACTION more multiply-adds that keep
#   its result exactly (scripts/slow-conv.py; verification still passes), about 10% slower in
#   this benchmark at FRACTION 16: exit 1 is a detection.
# With --load a parallel `cargo build` loads every core for the whole measurement, as on a
# shared CI runner. BIN=path picks the binary (default: the release build). Raw JSON of every
# trial (verdicts and every pair) stays in the printed folder.
set -euo pipefail
cd "$(dirname "$0")/.."
load=0
if [ "${1:-}" = "--load" ]; then
  load=1
  shift
fi
trials="${1:-20}"
pairs="${2:-60}"
fraction="${3:-16}"
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet -p cargo-convbench
  BIN="$PWD/target/release/cargo-convbench"
fi
work=$(mktemp -d)
echo "trials in $work (binary $BIN)"
python3 scripts/slow-conv.py "$work/slow" "$fraction"

loader=""
if [ "$load" = 1 ]; then
  (while true; do
    CARGO_TARGET_DIR="$work/load-target" cargo build --release --quiet -p convbench >/dev/null 2>&1 || true
    rm -rf "$work/load-target"
  done) &
  loader=$!
  trap 'kill "$loader" 2>/dev/null || true; pkill -P "$loader" 2>/dev/null || true' EXIT
  sleep 20
fi

selection=(--model lenet --batch 8 --stage eval --kernel direct --pairs "$pairs" --quiet)
for kind in aa ab; do
  for t in $(seq 1 "$trials"); do
    shaders=(); [ "$kind" = ab ] && shaders=(--shaders "$work/slow")
    start=$(date +%s%N)
    set +e
    "$BIN" ab --base HEAD --time-identical "${shaders[@]}" "${selection[@]}" --out "$work/${kind}_$t.json" >/dev/null 2>"$work/${kind}_$t.err"
    code=$?
    set -e
    echo "$kind $t $code $(( ($(date +%s%N) - start) / 1000000 ))" >>"$work/exits.txt"
  done
done
[ -n "$loader" ] && { kill "$loader" 2>/dev/null || true; pkill -P "$loader" 2>/dev/null || true; }

python3 - "$work" "$pairs" "$load" <<'PY'
import json, statistics, sys, pathlib
work, pairs, load = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
rows = [line.split() for line in (work / "exits.txt").read_text().splitlines()]
def rate(kind):
    codes = [int(r[2]) for r in rows if r[0] == kind]
    bad = [c for c in codes if c not in (0, 1)]
    if bad:
        sys.exit(f"{kind}: exit codes {bad}; see {work}/*.err")
    return sum(c == 1 for c in codes), len(codes)
def stats(kind):
    changes, spreads = [], []
    for f in sorted(work.glob(f"{kind}_*.json")):
        row = json.loads(f.read_text())["rows"][0]
        changes.append(row["change"]); spreads.append(row["pair_spread"])
    walls = [float(r[3]) / 1000 for r in rows if r[0] == kind]
    return statistics.median(changes), statistics.median(spreads), statistics.median(walls)
print(f"\n{'with --load (a parallel cargo build)' if load else 'without --load'}, {pairs} pairs per trial")
print("| case | trials | exit 1 | median change | median pair spread | wall per trial |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for kind, label in (("aa", "A/A, identical shaders (false alarm)"), ("ab", "A/B, conv2d_forward slower (detection)")):
    hit, n = rate(kind)
    change, spread, wall = stats(kind)
    print(f"| {label} | {n} | {hit} ({100*hit/n:.0f}%) | {100*change:+.1f}% | {100*spread:.1f}% | {wall:.0f} s |")
PY
