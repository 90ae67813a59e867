#!/usr/bin/env bash
# Measures the regression gate's error rates on this machine, as a user's CI would meet them:
#
#   scripts/gate-measure.sh [--load] [RUNS] [BLESSED]      (defaults: 16 runs, 10 blessed)
#
# 1. RUNS back-to-back `cargo convbench run --model lenet --batch 8 --rounds 3 --samples 10`
#    of the same code, each a separate process (with --load, a parallel `cargo build` loads
#    every core for the whole measurement, as on a shared CI runner).
# 2. Pairs: every ordered pair of runs through `compare --baseline-file` (a baseline of one
#    run): the share that exits 1, under convbench's rule and under criterion's rule (Welch's
#    t on pooled samples at 5%, a change beyond its 1% noise threshold), side by side.
# 3. Baseline mode: the first BLESSED runs blessed one by one into a git repository (a
#    baseline history of BLESSED runs); every later run compared with it as it is (false
#    alarms) and with its samples scaled by 1.05, 1.10 and 1.20 (detection).
#
# Prints one table; the raw records stay in the printed folder.
set -euo pipefail
cd "$(dirname "$0")/.."
load=0
if [ "${1:-}" = "--load" ]; then
  load=1
  shift
fi
runs="${1:-16}"
blessed="${2:-10}"
if [ "$blessed" -ge "$runs" ]; then
  echo "BLESSED ($blessed) must be below RUNS ($runs)" >&2
  exit 2
fi
cargo build --release --quiet -p cargo-convbench
bin="$PWD/target/release/cargo-convbench"
work=$(mktemp -d)
echo "records in $work"

loader=""
if [ "$load" = 1 ]; then
  # A clean release build of this crate, over and over, in its own target folder.
  (while true; do
    CARGO_TARGET_DIR="$work/load-target" cargo build --release --quiet -p convbench >/dev/null 2>&1 || true
    rm -rf "$work/load-target"
  done) &
  loader=$!
  trap 'kill "$loader" 2>/dev/null || true; pkill -P "$loader" 2>/dev/null || true' EXIT
  sleep 20
fi

mkdir -p "$work/ws/src" "$work/runs"
printf '[package]\nname = "gate"\nversion = "0.1.0"\nedition = "2021"\n\n[workspace]\n' >"$work/ws/Cargo.toml"
touch "$work/ws/src/lib.rs"
(cd "$work/ws" && git init -q -b main && git -c user.name=gate -c user.email=gate@localhost commit -q --allow-empty -m init)
cb() { (cd "$work/ws" && "$bin" "$@"); }

for i in $(seq 1 "$runs"); do
  cb run --quiet --model lenet --batch 8 --rounds 3 --samples 10 --format json --out "$work/runs/run_$i.json" >/dev/null
done
[ -n "$loader" ] && { kill "$loader" 2>/dev/null || true; pkill -P "$loader" 2>/dev/null || true; }

scale() { # scale FILE FACTOR OUT: every sample of every phase times FACTOR
  python3 - "$1" "$2" "$3" <<'EOF'
import json, statistics, sys
record = json.load(open(sys.argv[1]))
factor = float(sys.argv[2])
for b in record["benchmarks"]:
    for p in b["phases"]:
        p["samples_ns"] = [max(1, int(s * factor)) for s in p["samples_ns"]]
        s = sorted(p["samples_ns"])
        p["summary"] = {"median_ns": float(statistics.median(s)), "mean_ns": statistics.fmean(s),
                        "min_ns": float(s[0]), "max_ns": float(s[-1]),
                        "stddev_ns": statistics.stdev(s) if len(s) > 1 else 0.0}
json.dump(record, open(sys.argv[3], "w"), indent=2)
EOF
}

criterion_regressed() { # criterion's rule on the total phase of two records: prints 1 or 0
  python3 - "$1" "$2" <<'EOF'
import json, math, statistics, sys
def total(path):
    return [p for p in json.load(open(path))["benchmarks"][0]["phases"] if p["phase"] == "total"][0]["samples_ns"]
a, b = total(sys.argv[1]), total(sys.argv[2])
ma, mb = statistics.fmean(a), statistics.fmean(b)
se = math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
p = 1 - 0.5 * (1 + math.erf(((mb - ma) / se) / math.sqrt(2))) if se > 0 else 0.5
print(1 if p < 0.05 and mb / ma - 1 > 0.01 else 0)
EOF
}

pairs=0 ours=0 theirs=0
for i in $(seq 1 "$runs"); do
  for j in $(seq 1 "$runs"); do
    [ "$i" = "$j" ] && continue
    pairs=$((pairs + 1))
    code=0
    cb compare --quiet --results "$work/runs/run_$j.json" --baseline-file "$work/runs/run_$i.json" >/dev/null 2>&1 || code=$?
    [ "$code" = 1 ] && ours=$((ours + 1))
    theirs=$((theirs + $(criterion_regressed "$work/runs/run_$i.json" "$work/runs/run_$j.json")))
  done
done

for i in $(seq 1 "$blessed"); do
  cb baseline update --quiet --from "$work/runs/run_$i.json" --commit >/dev/null
done
declare -A fired
for factor in 1.00 1.05 1.10 1.20; do
  fired[$factor]=0
  for j in $(seq $((blessed + 1)) "$runs"); do
    scale "$work/runs/run_$j.json" "$factor" "$work/runs/scaled.json"
    code=0
    cb compare --quiet --results "$work/runs/scaled.json" --baseline-rev HEAD >/dev/null 2>&1 || code=$?
    [ "$code" = 1 ] && fired[$factor]=$((fired[$factor] + 1))
  done
done
judged=$((runs - blessed))
pct() { python3 -c "print(f'{100 * $1 / $2:.1f}%')"; }
echo
echo "machine: $(nproc) cores, load: $([ "$load" = 1 ] && echo 'parallel cargo build' || echo idle)"
echo "| measurement | cases | exit 1 |"
echo "| --- | ---: | ---: |"
echo "| A/A pairs, convbench (baseline of one run) | $pairs | $(pct $ours $pairs) |"
echo "| A/A pairs, criterion's rule | $pairs | $(pct $theirs $pairs) |"
for factor in 1.00 1.05 1.10 1.20; do
  echo "| baseline of $blessed runs, x$factor | $judged | $(pct "${fired[$factor]}" $judged) |"
done
