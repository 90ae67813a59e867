#!/usr/bin/env bash
# The checklist of ../shared/GPU.md in one go, on a machine with an NVIDIA GPU, from the
# repository root. It expects `.gl/` (the Vulkan loader packages) and `.gpu/` (a stripped
# `cargo-convbench` built with `--features cuda`, the integration test binary built the same
# way as `.gpu/integration`, and `.gpu/built-at` naming the folder they were built in), and
# writes under $OUT (default: gpu-out/) `log.txt` (what every step printed, with its exit
# status and wall time) and `records.tar` (every JSON record the steps wrote):
#
#   table-MODEL-PRECISION.json  peers --peer torch --backend wgpu,cuda: the seeds' table of
#                               frameworks (convbench WGSL, convbench cuda, PyTorch CUDA with TF32
#                               off) by network, stage and precision, rounds interleaved
#   layers.json, layers-tuned.json   the layers suite at batch 128 before and after `tune`
#   aa.json                     ab of the working tree against itself (A/A) on AlexNet, batch 64
#   hvd-MODEL-BATCH/*.json      scripts/heuristic-vs-direct.sh: the untuned heuristic's kernels
#                               against `direct`, op by op, on the GPU's Vulkan adapter
#
# CONVBENCH_CHECKLIST_STEPS names the steps to run, in order (default: all of them, as
# below), and CONVBENCH_CHECKLIST_TABLES the tables among them (default: all). Every step has
# its own time limit, and the script stops starting steps after CONVBENCH_CHECKLIST_SECONDS
# (default 480), so that what finished always comes back.
set -u
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
start=$(date +%s)
deadline=$((start + ${CONVBENCH_CHECKLIST_SECONDS:-480}))

for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
# cuDNN, cuBLAS and NVRTC ship inside Python packages (nvidia-*), each with its own lib folder.
libs=$(python3 - <<'EOF'
import glob, os, nvidia
dirs = set()
for root in nvidia.__path__:
    for lib in glob.glob(os.path.join(root, "**", "lib*.so*"), recursive=True):
        dirs.add(os.path.dirname(lib))
print(":".join(sorted(dirs)))
EOF
)
export LD_LIBRARY_PATH="$libs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export CONVBENCH_ADAPTER=vulkan
export PYTHONPATH="$PWD/peers/torch${PYTHONPATH:+:$PYTHONPATH}"
B=.gpu/cargo-convbench
# The integration tests read `shaders/` where they were built (their CARGO_MANIFEST_DIR): the
# build step writes that folder into .gpu/built-at (`pwd > .gpu/built-at`), and it is linked here.
built=$(cat .gpu/built-at 2>/dev/null || true)
if [ -n "$built" ] && [ ! -e "$built" ]; then mkdir -p "$(dirname "$built")" && ln -s "$PWD" "$built"; fi

step() {
    local name=$1 limit=$2
    shift 2
    local left=$((deadline - $(date +%s)))
    if [ "$left" -lt 20 ]; then
        echo "=== $name: skipped, the checklist's time is spent"
        return
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    echo "=== $name (limit ${limit}s): $*"
    local t0
    t0=$(date +%s)
    timeout --kill-after=15 "$limit" "$@"
    local rc=$?
    echo "=== $name: exit $rc in $(($(date +%s) - t0)) s"
    return $rc
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
nproc
want() { [ -z "${CONVBENCH_CHECKLIST_STEPS:-}" ] || [[ " $CONVBENCH_CHECKLIST_STEPS " == *" $1 "* ]]; }
R="$OUT/records"
mkdir -p "$R"
TORCH="python3 -m convbench_torch --device cuda"

# One network at one batch and precision, both stages, convbench's two GPU backends and PyTorch
# interleaved. A cuda failure (a shape cuDNN has no algorithm for under the accuracy contract, a
# cuDNN result beyond its bound) costs the whole table, so the table is then made again without
# the cuda column; a time limit is no such failure (the record keeps its finished rounds).
table() {
    local model=$1 batch=$2 precision=$3 limit=$4
    local args=(--peer torch --peer-command "$TORCH" --model "$model" --batch "$batch"
        --precision "$precision" --stage eval,train --samples 3 --rounds 2 --warmup 1)
    step "table-$model-$precision" "$limit" $B convbench peers "${args[@]}" --backend wgpu,cuda \
        --out "$R/table-$model-$precision.json"
    case $? in
    0 | 124 | 137) ;;
    *) step "table-$model-$precision-no-cuda" "$limit" $B convbench peers "${args[@]}" \
        --backend wgpu --out "$R/table-$model-$precision-wgpu.json" ;;
    esac
}

want adapters && step adapters 30 $B convbench adapters
# The cuda tests first, one at a time, then together: on the H200 and the H100 (docs/gpu-h100.md)
# cuDNN's search failed every algorithm with CUDNN_STATUS_INTERNAL_ERROR on the small shapes of
# the four convolution tests, run in parallel, while whole networks verified in the CLI.
want cuda-tests && step cuda-tests-serial 60 env CONVBENCH_REQUIRE_GPU=1 CONVBENCH_REQUIRE_CUDA=1 .gpu/integration cuda:: --test-threads 1
want cuda-tests && step cuda-tests 60 env CONVBENCH_REQUIRE_GPU=1 CONVBENCH_REQUIRE_CUDA=1 .gpu/integration cuda::
# The seeds' batch sizes: AlexNet and GoogLeNet at 128 (convnet-benchmarks), VGG16 and
# ResNet-50 at 64. Limits from the H100 (docs/gpu-h100.md): with cuda, AlexNet took over 60 s
# (cuDNN's searches at batch 128) and ResNet-50 over 75; VGG16 did not finish its first round
# with cuda in 100. A step cut short keeps its finished rounds.
# CONVBENCH_CHECKLIST_TABLES names the tables to make, as MODEL-PRECISION (default: all eight),
# so that a short call can make the ones a table still lacks.
want_table() { [ -z "${CONVBENCH_CHECKLIST_TABLES:-}" ] || [[ " $CONVBENCH_CHECKLIST_TABLES " == *" $1 "* ]]; }
for precision in f32 f16; do
    want "table-$precision" || continue
    want_table "alexnet-$precision" && table alexnet 128 "$precision" 90
    want_table "googlenet-$precision" && table googlenet 128 "$precision" 90
    want_table "resnet50-$precision" && table resnet50 64 "$precision" 100
    want_table "vgg16-$precision" && table vgg16 64 "$precision" 180
done
# CONVBENCH_CHECKLIST_FILTER runs part of the suite (e.g. `cuda::`), as the test binary filters.
want integration && step integration 180 env CONVBENCH_REQUIRE_GPU=1 CONVBENCH_REQUIRE_CUDA=1 .gpu/integration ${CONVBENCH_CHECKLIST_FILTER:-}
want verify && step verify-vulkan 90 $B convbench verify --backend wgpu --model alexnet,vgg16,resnet50
want verify && step verify-cuda 90 $B convbench verify --backend cuda --model alexnet,vgg16,resnet50
want layers && step layers 90 $B convbench run --backend wgpu,cuda --suite layers --batch 128 --layers --samples 5 --out "$R/layers.json"
want tune && step tune 120 $B convbench tune --suite layers --batch 128
want tune && step layers-tuned 90 $B convbench run --backend wgpu,cuda --suite layers --batch 128 --layers --samples 5 --out "$R/layers-tuned.json"
# A/A reads the base from git: the copy may come without its history, so commit it here.
if want aa && ! git rev-parse HEAD >/dev/null 2>&1 && command -v git >/dev/null; then
    git init -q && printf '/.gl/\n/.gpu/\n/target/\n' >> .git/info/exclude && git add -A \
        && git -c user.name=checklist -c user.email=checklist@localhost commit -qm checklist
fi
want aa && step aa 90 $B convbench ab --base HEAD --time-identical --model alexnet --batch 64 --budget 60s --out "$R/aa.json"
# The untuned heuristic against `direct` on every op of the zoo at batch 1 and 8, which on
# lavapipe takes hours for the larger networks at batch 8 (docs/tuned-vs-direct.md); on a GPU
# the heuristic picks GPU tiles, so this is also the only check of those against `direct`.
# CONVBENCH_CHECKLIST_HVD names the runs as MODEL-BATCH (default: the zoo at 8, then at 1).
zoo="resnet50 overfeat-accurate vgg-a densenet161 vgg16 resnet152 lenet alexnet googlenet overfeat"
if want hvd; then
    # shellcheck disable=SC2086 # the lists split on spaces
    for run in ${CONVBENCH_CHECKLIST_HVD:-$(printf '%s-8 ' $zoo; printf '%s-1 ' $zoo)}; do
        step "hvd-$run" 90 env CONVBENCH=$B OUT="$R/hvd-$run" scripts/heuristic-vs-direct.sh \
            "${run%-*}" "${run##*-}" 2 3
    done
fi
tar -cf "$OUT/records.tar" -C "$OUT" records && rm -rf "$R"
echo "=== done in $(($(date +%s) - start)) s"
