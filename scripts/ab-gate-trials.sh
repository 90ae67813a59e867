#!/usr/bin/env bash
# Trials of the default A/B gate (`cargo convbench ci`) on a user kernel, for issue 27's "done when".
# Usage: scripts/ab-gate-trials.sh calibrate REPEAT...      (ab --pairs 240 per REPEAT, prints the change row)
#        scripts/ab-gate-trials.sh trials NAME REPEAT N [extra ci args...]
#           REPEAT=0 leaves the working tree unchanged (A/A). Appends "trial rc pairs wall_s load1" to $OUTDIR/NAME.tsv
# Env: BIN (default /tmp/convbench-trials-bin, a copy of target/debug/cargo-convbench),
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
      "$BIN" convbench ab --base HEAD --manifest-path "$dir/Cargo.toml" "${COMMON[@]}" --pairs 240 2>/dev/null \
        | tee "$OUTDIR/calibrate-$rep.out" | grep -E 'lenet|pairs' 
    done
    ;;
  trials)
    name=$2 rep=$3 n=$4; shift 4
    dir=$(setup "$rep")
    out="$OUTDIR/$name.tsv"; mkdir -p "$OUTDIR/$name"
    for i in $(seq 1 "$n"); do
      if [ -n "${DEADLINE:-}" ] && [ "$(date +%s)" -ge "$DEADLINE" ]; then echo "deadline reached after $((i-1)) trials"; break; fi
      s=$(date +%s.%N)
      "$BIN" convbench ci --manifest-path "$dir/Cargo.toml" "${COMMON[@]}" --quiet "$@" \
        >"$OUTDIR/$name/$i.out" 2>"$OUTDIR/$name/$i.err"
      rc=$?
      e=$(date +%s.%N)
      pairs=$(grep -oE 'Decided by A/B mode: [0-9]+ pairs' "$OUTDIR/$name/$i.out" | grep -oE '[0-9]+' || echo NA)
      load=$(cut -d' ' -f1 /proc/loadavg)
      printf '%s\t%s\t%s\t%.2f\t%s\n' "$i" "$rc" "$pairs" "$(echo "$e - $s" | bc)" "$load" | tee -a "$out"
    done
    ;;
  *) sed -n 2,8p "$0"; exit 2 ;;
esac
