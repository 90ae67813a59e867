#!/usr/bin/env bash
# Times convbench's wgpu backend and Burn's wgpu backend (peers/burn, `burn-peer`) on the same
# convolutions, interleaved A B A B over ROUNDS rounds (default 3) so that drift of a shared
# machine hits both alike, and prints per layer and phase the medians of the per-round medians:
# convbench ms, Burn ms, their ratio (convbench / Burn: below 1, convbench is faster) and the
# GFLOP/s of each.
#
#   scripts/burn-vs-convbench.sh SUITE_OR_MODEL BATCH [ROUNDS] [SAMPLES]
#   scripts/burn-vs-convbench.sh layers 1 3 10
#   scripts/burn-vs-convbench.sh alexnet 8
#
# SUITE_OR_MODEL: `layers` (convnet-benchmarks L1-L5) or `alexnet` (its five convolutions); the
# two that burn-peer knows. Environment: CONVBENCH and BURN_PEER, the binaries (default: both
# built here in release first, into CARGO_TARGET_DIR when set, else target/ and
# peers/burn/target/); ADAPTER, passed to convbench's --adapter; OUT, a folder for the records
# (default: a temporary one). The first convbench round verifies every op against the f64
# reference; the others pass --no-verify.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/burn-vs-convbench.sh SUITE_OR_MODEL BATCH [ROUNDS] [SAMPLES]"
what="${1:?$usage}"
batch="${2:?$usage}"
rounds="${3:-3}"
samples="${4:-10}"
case "$what" in
  layers) select=(--suite "$what") ;;
  alexnet) select=(--model "$what") ;;
  *) echo "burn-peer knows --suite layers and --model alexnet, not $what" >&2; exit 2 ;;
esac
if [[ -z "${CONVBENCH:-}" ]]; then
  cargo build --release --quiet -p cargo-convbench
  CONVBENCH="${CARGO_TARGET_DIR:-target}/release/cargo-convbench"
fi
if [[ -z "${BURN_PEER:-}" ]]; then
  cargo build --release --quiet --manifest-path peers/burn/Cargo.toml
  BURN_PEER="${CARGO_TARGET_DIR:-peers/burn/target}/release/burn-peer"
fi
adapter=()
if [[ -n "${ADAPTER:-}" ]]; then adapter=(--adapter "$ADAPTER"); fi
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
verify=()
for round in $(seq 1 "$rounds"); do
  "$CONVBENCH" convbench run --backend wgpu "${adapter[@]}" "${select[@]}" --batch "$batch" \
    --samples "$samples" --rounds 1 --layers --quiet "${verify[@]}" \
    --out "$out/convbench-$round.json" > /dev/null
  verify=(--no-verify)
  "$BURN_PEER" "${select[@]}" --batch "$batch" --samples "$samples" \
    --out "$out/burn-$round.json" 2> "$out/burn-$round.log"
  echo "round $round of $rounds done" >&2
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
PHASES = ["forward", "grad_input", "grad_params"]
def layers(path):
    """(layer, phase) -> (median ms, flops), and the adapter, of every benchmark in a record."""
    with open(path) as f:
        record = json.load(f)
    rows, adapter = {}, ""
    for bench in record["benchmarks"]:
        adapter = f'{bench["adapter"]["name"]} ({bench["adapter"]["backend"]})'
        for layer in bench.get("layers", []):
            rows[(layer["layer"], layer["phase"])] = (layer["summary"]["median_ns"] / 1e6, layer["flops"])
    return rows, adapter
conv, burn = {}, {}
for r in range(1, rounds + 1):
    c, c_adapter = layers(f"{out}/convbench-{r}.json")
    b, b_adapter = layers(f"{out}/burn-{r}.json")
    for key, value in c.items():
        conv.setdefault(key, []).append(value)
    for key, value in b.items():
        burn.setdefault(key, []).append(value)
print(f"convbench on {c_adapter} vs burn-wgpu on {b_adapter}: {rounds} interleaved rounds, "
      f"medians of per-round medians")
print(f"{'layer':<8}{'phase':<13}{'convbench ms':>13}{'burn ms':>11}{'ratio':>8}"
      f"{'cb GFLOP/s':>12}{'burn GFLOP/s':>14}   ratio per round")
for key in sorted(burn, key=lambda k: (k[0], PHASES.index(k[1]) if k[1] in PHASES else 9)):
    if key not in conv:
        continue
    c_ms = [ms for ms, _ in conv[key]]
    b_ms = [ms for ms, _ in burn[key]]
    flops = burn[key][0][1]
    ratios = [c / b for c, b in zip(c_ms, b_ms)]
    cm, bm = statistics.median(c_ms), statistics.median(b_ms)
    print(f"{key[0]:<8}{key[1]:<13}{cm:>13.3f}{bm:>11.3f}{statistics.median(ratios):>8.2f}"
          f"{flops / cm / 1e6:>12.1f}{flops / bm / 1e6:>14.1f}   "
          + " ".join(f"{x:.2f}" for x in ratios))
print(f"records in {out}")
PY
