#!/usr/bin/env bash
# Times convbench's cpu backend and JAX on the CPU (scripts/cpu-peer.py) on the same network,
# interleaved A B A B over ROUNDS rounds (default 5) so that drift of a shared machine hits
# both alike, and prints per-phase medians and the ratio convbench / JAX per round.
#
#   scripts/cpu-vs-jax.sh MODEL BATCH [ROUNDS] [SAMPLES]
#   scripts/cpu-vs-jax.sh alexnet 8 5 5
#
# Environment: CONVBENCH, the convbench binary (default: target/release/cargo-convbench, built
# first); PYTHON, a Python with jax[cpu] (default: .venv/bin/python, see scripts/cpu-peer.py);
# JAX_LAYOUT, nchw (default, convbench's layout) or nhwc; OUT, a folder for the records
# (default: a temporary one). The first convbench round verifies every op against the f64
# reference; the others pass --no-verify.
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:?usage: scripts/cpu-vs-jax.sh MODEL BATCH [ROUNDS] [SAMPLES]}"
batch="${2:?usage: scripts/cpu-vs-jax.sh MODEL BATCH [ROUNDS] [SAMPLES]}"
rounds="${3:-5}"
samples="${4:-5}"
python="${PYTHON:-.venv/bin/python}"
layout="${JAX_LAYOUT:-nchw}"
if [[ -z "${CONVBENCH:-}" ]]; then
  cargo build --release --quiet -p cargo-convbench
  CONVBENCH="target/release/cargo-convbench"
fi
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
verify=()
for round in $(seq 1 "$rounds"); do
  "$CONVBENCH" convbench run --backend cpu --model "$model" --batch "$batch" --samples "$samples" \
    --rounds 1 --quiet "${verify[@]}" --out "$out/convbench-$round.json" > /dev/null
  verify=(--no-verify)
  "$python" scripts/cpu-peer.py --model "$model" --batch "$batch" --samples "$samples" \
    --layout "$layout" --out "$out/jax-$round.json"
  echo "round $round of $rounds done" >&2
done
"$python" - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
# convbench phases -> JAX phases; JAX's backward is convbench's grad_input + grad_params.
PHASES = [("forward", ["forward"]), ("loss_forward", ["loss_forward"]),
          ("loss_backward", ["loss_backward"]), ("backward", ["grad_input", "grad_params"]),
          ("update", ["update"]), ("total", ["total"])]
def medians(path):
    with open(path) as f:
        bench = json.load(f)["benchmarks"][0]
    return bench["id"], {p["phase"]: p["summary"]["median_ns"] / 1e6 for p in bench["phases"]}
rows = {name: ([], [], []) for name, _ in PHASES}
for r in range(1, rounds + 1):
    cid, conv = medians(f"{out}/convbench-{r}.json")
    jid, jax = medians(f"{out}/jax-{r}.json")
    for name, parts in PHASES:
        c = sum(conv.get(p, 0.0) for p in parts)
        rows[name][0].append(c)
        rows[name][1].append(jax[name])
        rows[name][2].append(c / jax[name])
print(f"{cid} vs {jid}: {rounds} interleaved rounds, medians of per-round medians (ms)")
print(f"{'phase':<14}{'convbench ms':>14}{'jax ms':>10}{'ratio':>8}   ratio per round")
for name, (c, j, ratio) in rows.items():
    per_round = " ".join(f"{x:.2f}" for x in ratio)
    print(f"{name:<14}{statistics.median(c):>14.3f}{statistics.median(j):>10.3f}"
          f"{statistics.median(ratio):>8.2f}   {per_round}")
print(f"records in {out}")
PY
