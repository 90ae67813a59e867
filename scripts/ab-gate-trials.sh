#!/usr/bin/env bash
# Trials of the default A/B gate (`cargo convbench ci`) on a user kernel, for issue 27's "done when".
# Usage: scripts/ab-gate-trials.sh calibrate REPEAT...      (ab --pairs 240 per REPEAT, prints the change row)
#        scripts/ab-gate-trials.sh trials NAME REPEAT N [extra ci args...]
#           REPEAT=0 leaves the working tree unchanged (A/A; timed all the same, `--time-identical`). Appends "trial rc pairs wall_s load1" to $OUTDIR/NAME.tsv
#        scripts/ab-gate-trials.sh load
#           A parallel build loop (the load the trials run under): rebuilds convbench's library (CARGO_INCREMENTAL=0, so
#           every build compiles the crate in full) from a copy
#           of this repository's HEAD, touching a source file before each build, until killed. One line
#           per build (start time, seconds, exit code) in $OUTDIR/load.log.
#        scripts/ab-gate-trials.sh summary [NAME...]
#           Table per set: exit-1 rate with a 95% Clopper-Pearson interval, pairs, wall time, load; and a fit
#           wall = overhead + per_pair * pairs over all trials (to price a fixed number of pairs).
# Env: BIN (default /tmp/convbench-trials-bin, a copy of target/release/cargo-convbench),
#      SRC (default examples/my-kernels of this repository), OUTDIR (default /tmp/ab-gate-trials).
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-/tmp/convbench-trials-bin}
SRC=${SRC:-$HERE/examples/my-kernels}
OUTDIR=${OUTDIR:-/tmp/ab-gate-trials}
COMMON=(--kernel user:conv-tiled --model lenet --batch 1)
mkdir -p "$OUTDIR"

# A test repository: the example crate committed unchanged; REPEAT>0 plants a slowdown in the working tree only.
setup() { # setup REPEAT -> prints the repository path
  local repeat=$1 dir="$OUTDIR/repo-$1"
  rm -rf "$dir"; cp -r "$SRC" "$dir"; rm -rf "$dir/target"
  git -C "$dir" init -q
  git -C "$dir" add -A
  git -C "$dir" -c user.name=trials -c user.email=trials@localhost commit -qm base
  if [ "$repeat" -gt 0 ]; then
    # Wasted loads whose result is only written when p.total == 0 (never): results stay correct.
    python3 - "$dir/kernels/conv_tiled.wgsl" "$repeat" <<'PY'
import sys
path, repeat = sys.argv[1], sys.argv[2]
src = open(path).read()
anchor = "    if (first >= p.total) {\n        return;\n    }\n"
if anchor not in src:
    anchor = "if (first >= p.total) { return; }\n"
assert src.count(anchor) == 1, "anchor not found once"
waste = (
    "    var waste = 0.0;\n"
    f"    for (var r = 0u; r < {repeat}u; r += 1u) {{\n"
    "        waste += f32(x[(first + r * 7u) % arrayLength(&x)]);\n"
    "    }\n"
    "    if (p.total == 0u) {\n"
    "        y[0] = T(waste);\n"
    "    }\n"
)
open(path, "w").write(src.replace(anchor, anchor + waste))
PY
  fi
  echo "$dir"
}

case "${1:-}" in
  calibrate)
    shift
    for rep in "$@"; do
      dir=$(setup "$rep")
      echo "== REPEAT=$rep"
      "$BIN" convbench ab --base HEAD --time-identical --manifest-path "$dir/Cargo.toml" "${COMMON[@]}" --pairs 240 2>/dev/null \
        | tee "$OUTDIR/calibrate-$rep.out" | grep -E 'lenet|pairs' 
    done
    ;;
  trials)
    name=$2 rep=$3 n=$4; shift 4
    dir=$(setup "$rep")
    out="$OUTDIR/$name.tsv"; mkdir -p "$OUTDIR/$name"
    # Trials of one set numbered on from those already in its TSV, so that sets run in turns
    # (e.g. `trials slow20 ... 1` and `trials slow20-fixed60 ... 1` alternating) keep every output.
    first=$(( $( [ -f "$out" ] && wc -l <"$out" || echo 0) + 1 ))
    for i in $(seq "$first" $((first + n - 1))); do
      if [ -n "${DEADLINE:-}" ] && [ "$(date +%s)" -ge "$DEADLINE" ]; then echo "deadline reached after $((i-first)) trials"; break; fi
      s=$(date +%s.%N)
      "$BIN" convbench ci --time-identical --manifest-path "$dir/Cargo.toml" "${COMMON[@]}" --quiet "$@" \
        >"$OUTDIR/$name/$i.out" 2>"$OUTDIR/$name/$i.err"
      rc=$?
      e=$(date +%s.%N)
      pairs=$(grep -oE 'Decided by A/B mode: [0-9]+ pairs' "$OUTDIR/$name/$i.out" | grep -oE '[0-9]+' || echo NA)
      load=$(cut -d' ' -f1 /proc/loadavg)
      printf '%s\t%s\t%s\t%.2f\t%s\n' "$i" "$rc" "$pairs" "$(echo "$e - $s" | bc)" "$load" | tee -a "$out"
    done
    ;;
  load)
    src="$OUTDIR/load-src"
    rm -rf "$src"; mkdir -p "$src"
    git -C "$HERE" archive HEAD | tar -x -C "$src"
    while :; do
      touch "$src/src/lib.rs"
      s=$(date +%s.%N)
      CARGO_INCREMENTAL=0 cargo build -q -j 2 --manifest-path "$src/Cargo.toml" -p convbench --target-dir "$OUTDIR/load-target" \
        >/dev/null 2>&1
      rc=$?
      printf '%s\t%.1f\t%s\n' "$(date -u +%H:%M:%S)" "$(echo "$(date +%s.%N) - $s" | bc)" "$rc" >>"$OUTDIR/load.log"
    done
    ;;
  summary)
    shift
    python3 - "$OUTDIR" "$@" <<'PY'
import math, statistics, sys, os

def binom_cdf(k, n, p):
    return sum(math.comb(n, i) * p**i * (1 - p)**(n - i) for i in range(k + 1))

def clopper_pearson(k, n, alpha=0.05):
    def solve(f):  # f increasing in p on [0,1]; find f(p)=0
        lo, hi = 0.0, 1.0
        for _ in range(100):
            mid = (lo + hi) / 2
            if f(mid) < 0: lo = mid
            else: hi = mid
        return (lo + hi) / 2
    lower = 0.0 if k == 0 else solve(lambda p: (1 - binom_cdf(k - 1, n, p)) - alpha / 2)
    upper = 1.0 if k == n else solve(lambda p: alpha / 2 - binom_cdf(k, n, p))
    return lower, upper

outdir = sys.argv[1]
names = sys.argv[2:] or ["aa", "slow5", "slow5-t002", "slow20", "aa-pairs60"]
allpts = []
import re
def changes(name, n):
    """The total row's change of each trial's comment (e.g. +5.9%), as fractions."""
    found = []
    for i in range(1, n + 1):
        try:
            text = open(os.path.join(outdir, name, f"{i}.out")).read()
        except OSError:
            continue
        m = re.search(r"^\| lenet/train/b1/f32/wgpu \| total \|[^|]*\|[^|]*\| ([+-]?[0-9.]+)% \|", text, re.M)
        if m:
            found.append(float(m.group(1)) / 100)
    return found
print("| set | trials | exit 1 | rate (95% CI) | exit other | median change (range) | median pairs | pairs range | median wall s | total wall s | load1 range |")
print("| --- | ---: | ---: | --- | ---: | --- | ---: | --- | ---: | ---: | --- |")
for name in names:
    path = os.path.join(outdir, name + ".tsv")
    if not os.path.exists(path): continue
    rows = [l.split("\t") for l in open(path).read().split("\n") if l.strip()]
    n = len(rows)
    rc = [int(r[1]) for r in rows]
    pairs = [int(r[2]) for r in rows if r[2] != "NA"]
    wall = [float(r[3]) for r in rows]
    load = [float(r[4]) for r in rows]
    allpts += [(int(r[2]), float(r[3])) for r in rows if r[2] != "NA"]
    k = rc.count(1)
    lo, hi = clopper_pearson(k, n)
    ch = changes(name, n)
    moved = f"{statistics.median(ch):+.1%} ({min(ch):+.1%} to {max(ch):+.1%})" if ch else "NA"
    print(f"| {name} | {n} | {k} | {k/n:.1%} ({lo:.1%} to {hi:.1%}) | {n - k - rc.count(0)} | {moved} | "
          f"{statistics.median(pairs) if pairs else 'NA'} | {min(pairs) if pairs else 'NA'}-{max(pairs) if pairs else 'NA'} | "
          f"{statistics.median(wall):.2f} | {sum(wall):.1f} | {min(load):.2f}-{max(load):.2f} |")
if len(allpts) > 2:
    xs, ys = zip(*allpts)
    mx, my = statistics.mean(xs), statistics.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in allpts) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    print(f"\nfit over {len(allpts)} trials: wall_s = {a:.3f} + {b:.4f} * pairs; at 60 pairs: {a + 60 * b:.2f} s")
PY
    ;;
  *) sed -n 2,11p "$0"; exit 2 ;;
esac
