#!/usr/bin/env bash
# Times every op of a network (or suite) with the untuned heuristic's kernels (`run --no-tune`)
# and with the `direct` kernels (`run --kernel direct`), interleaved A B A B over ROUNDS rounds
# (default 2) so that drift of a shared machine hits both alike, and prints per layer and phase
# the medians of the per-round medians and their ratio (heuristic / direct: above 1, the
# heuristic's kernel is slower than the plainest one). Ops above LIMIT (default 1.5) are marked
# `SLOWER`, and the script exits 1 when there is one. Ops whose `direct` kernel does not fit the
# device (past a CPU adapter's loop limit, where `--kernel direct` keeps the heuristic's choice)
# are listed without a ratio.
#
# DIRECT_BATCH (default BATCH) runs the `direct` side at a smaller batch, for networks whose
# `direct` step at BATCH takes hours on a software adapter. Each `direct` kernel at a larger
# batch does a superset of its work at a smaller one (one invocation per output element with
# the same loop for the forward pass and the input gradient, and for the weight gradient the
# same invocations with a loop over the batch that is longer), so its time at BATCH is at
# least its time at DIRECT_BATCH, and heuristic(BATCH) / direct(DIRECT_BATCH) is an upper bound
# on the ratio: an op whose bound is within LIMIT is within it. An op whose bound is above LIMIT
# is marked `UNDECIDED` (the bound says nothing about it), and the script exits 5 when there is
# one: run it again with DIRECT_BATCH closer to BATCH.
#
#   scripts/heuristic-vs-direct.sh SELECTION BATCH [ROUNDS] [SAMPLES]
#   scripts/heuristic-vs-direct.sh lenet 1
#   scripts/heuristic-vs-direct.sh alexnet 8 2 3
#   scripts/heuristic-vs-direct.sh suite:layers 1
#   DIRECT_BATCH=1 scripts/heuristic-vs-direct.sh resnet50 8 2 1
#
# NETWORKS=FILE times networks of your own: FILE is a configuration with `[[model]]` networks
# (docs/user-kernels.md, "Networks as data"), and SELECTION one of them. The script copies it
# as convbench.toml into a temporary folder outside any cargo workspace and runs convbench
# there. scripts/op-networks.toml (its header says what it holds) has ops of the zoo alone, to
# time `direct` at batch 8 where a bound left them UNDECIDED. Paths in CONVBENCH, NETWORKS and
# OUT are relative to the repository root.
#
#   NETWORKS=scripts/op-networks.toml scripts/heuristic-vs-direct.sh vgg-fc 8 2 3
#
# SELECTION: a model of `cargo convbench list`, or `suite:NAME` for a layer suite. Environment:
# CONVBENCH, the binary (default: built here first, into CARGO_TARGET_DIR when set, else
# target/); ADAPTER, passed to --adapter; STAGE, train (default) or eval; LIMIT; DIRECT_BATCH;
# NETWORKS; OUT, a folder for the records (default: a temporary one). The first round of each
# side verifies every op against the f64 reference; the others pass --no-verify. Exit status:
# 0, no op above LIMIT; 1, an op above it, or a bad BATCH, DIRECT_BATCH, NETWORKS or CONVBENCH;
# 5, ops left undecided (above); a run that fails stops the script with convbench's own exit
# code (README, "Exit codes": 2-4, 130, 143).
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/heuristic-vs-direct.sh SELECTION BATCH [ROUNDS] [SAMPLES]"
what="${1:?$usage}"
batch="${2:?$usage}"
rounds="${3:-2}"
samples="${4:-3}"
limit="${LIMIT:-1.5}"
direct_batch="${DIRECT_BATCH:-$batch}"
if ! [[ "$batch" =~ ^[1-9][0-9]*$ && "$direct_batch" =~ ^[1-9][0-9]*$ ]] \
  || (( direct_batch > batch )); then
  echo "BATCH ($batch) and DIRECT_BATCH ($direct_batch) must be positive whole numbers," \
    "DIRECT_BATCH at most BATCH" >&2
  exit 1
fi
case "$what" in
  suite:*) select=(--suite "${what#suite:}") ;;
  *) select=(--model "$what") ;;
esac
if [[ -z "${CONVBENCH:-}" ]]; then
  cargo build --release --quiet -p cargo-convbench
  CONVBENCH="${CARGO_TARGET_DIR:-target}/release/cargo-convbench"
fi
adapter=()
if [[ -n "${ADAPTER:-}" ]]; then adapter=(--adapter "$ADAPTER"); fi
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
CONVBENCH_GIVEN="$CONVBENCH"
CONVBENCH="$(command -v "$CONVBENCH" || true)"
if [[ -z "$CONVBENCH" ]]; then
  echo "CONVBENCH ($CONVBENCH_GIVEN) is not an executable file: unset it to build one here," \
    "or give the path of cargo-convbench" >&2
  exit 1
fi
if [[ "$CONVBENCH" != /* ]]; then CONVBENCH="$PWD/$CONVBENCH"; fi
if [[ -n "${NETWORKS:-}" ]]; then
  if [[ ! -f "$NETWORKS" ]]; then
    echo "NETWORKS ($NETWORKS) is not a file: a configuration with [[model]] networks" >&2
    exit 1
  fi
  workdir="$(mktemp -d)"
  trap 'rm -rf "$workdir"' EXIT
  cp "$NETWORKS" "$workdir/convbench.toml"
  cd "$workdir"
fi
verify=()
for round in $(seq 1 "$rounds"); do
  for side in heuristic direct; do
    if [[ "$side" == heuristic ]]; then
      kernel=(--no-tune) side_batch="$batch"
    else
      kernel=(--kernel direct) side_batch="$direct_batch"
    fi
    "$CONVBENCH" convbench run --backend wgpu "${adapter[@]}" "${select[@]}" --batch "$side_batch" \
      --stage "${STAGE:-train}" --samples "$samples" --rounds 1 --warmup 1 --warmup-ms 0 \
      --layers --quiet "${verify[@]}" "${kernel[@]}" --out "$out/$side-$round.json" > /dev/null
  done
  verify=(--no-verify)
  echo "round $round of $rounds done" >&2
done
python3 - "$out" "$rounds" "$limit" "$batch" "$direct_batch" <<'PY'
import json, statistics, sys
out, rounds, limit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
batch, direct_batch = int(sys.argv[4]), int(sys.argv[5])
bound = direct_batch < batch  # the ratio is an upper bound (see the script's header)
def layers(path):
    """(benchmark, layer, phase) -> (median ms, heuristic's variant), and the adapter."""
    with open(path) as f:
        record = json.load(f)
    rows, adapter = {}, ""
    for bench in record["benchmarks"]:
        adapter = f'{bench["adapter"]["name"]} ({bench["adapter"]["backend"]})'
        for layer in bench.get("layers", []):
            key = (bench["model"], layer["layer"], layer["phase"])
            rows[key] = (layer["summary"]["median_ns"] / 1e6, layer.get("variant", ""), layer["op"])
    return rows, adapter
heuristic, direct = {}, {}
for r in range(1, rounds + 1):
    h, adapter = layers(f"{out}/heuristic-{r}.json")
    d, _ = layers(f"{out}/direct-{r}.json")
    for key, value in h.items():
        heuristic.setdefault(key, []).append(value)
    for key, value in d.items():
        direct.setdefault(key, []).append(value)
print(f"heuristic (run --no-tune) vs direct (run --kernel direct) on {adapter}: {rounds} "
      f"interleaved rounds, medians of per-round medians; limit {limit}")
if bound:
    print(f"heuristic at batch {batch}, direct at batch {direct_batch}: each ratio is an upper "
          f"bound (direct's time can only grow with the batch); above {limit}, UNDECIDED")
width = max([len(key[1]) for key in heuristic] + [5]) + 2
mw = max([len(key[0]) for key in heuristic] + [10]) + 2  # overfeat-accurate is 17 long
print(f"{'model':<{mw}}{'layer':<{width}}{'op':<10}{'phase':<13}{'heuristic ms':>13}{'direct ms':>11}"
      f"{'ratio':>8}   variant")
worst, slower, undecided = 0.0, 0, 0
for key in heuristic:
    if key not in direct:
        continue
    h_ms = statistics.median(ms for ms, _, _ in heuristic[key])
    d_ms = statistics.median(ms for ms, _, _ in direct[key])
    variant, op = heuristic[key][0][1], heuristic[key][0][2]
    if variant in ("", "direct"):
        continue  # the same kernel on both sides
    if direct[key][0][1] not in ("", "direct"):
        # `--kernel direct` left the op to the heuristic: its direct kernel would loop past a
        # CPU adapter's limit (`Variant::fits`), so there is nothing to compare.
        print(f"{key[0]:<{mw}}{key[1]:<{width}}{op:<10}{key[2]:<13}{h_ms:>13.3f}{'-':>11}{'-':>8}"
              f"   {variant} (direct does not fit this device)")
        continue
    ratio = statistics.median(h / d for (h, _, _), (d, _, _) in zip(heuristic[key], direct[key]))
    worst = max(worst, ratio)
    mark = ("   UNDECIDED" if bound else "   SLOWER") if ratio > limit else ""
    if bound:
        undecided += ratio > limit
    else:
        slower += ratio > limit
    print(f"{key[0]:<{mw}}{key[1]:<{width}}{op:<10}{key[2]:<13}{h_ms:>13.3f}{d_ms:>11.3f}{ratio:>8.2f}"
          f"   {variant}{mark}")
def totals(side):
    """benchmark id -> median over rounds of the total's median (ms)."""
    per_round = {}
    for r in range(1, rounds + 1):
        with open(f"{out}/{side}-{r}.json") as f:
            for bench in json.load(f)["benchmarks"]:
                total = next(p for p in bench["phases"] if p["phase"] == "total")
                per_round.setdefault(bench["model"], []).append(total["summary"]["median_ns"] / 1e6)
    return {model: statistics.median(ms) for model, ms in per_round.items()}
h_total, d_total = totals("heuristic"), totals("direct")
for model, ms in h_total.items():
    if bound:
        print(f"{model} total: heuristic {ms:.3f} ms at batch {batch}, direct "
              f"{d_total[model]:.3f} ms at batch {direct_batch}")
    else:
        print(f"{model} total: heuristic {ms:.3f} ms, direct {d_total[model]:.3f} ms "
              f"({ms / d_total[model]:.2f})")
if bound:
    print(f"worst bound {worst:.2f}; {undecided} op(s) undecided (bound above {limit}); "
          f"records in {out}")
    sys.exit(5 if undecided else 0)
print(f"worst ratio {worst:.2f}; {slower} op(s) above {limit}; records in {out}")
sys.exit(1 if slower else 0)
PY
