#!/usr/bin/env bash
# The checklist of ../shared/GPU.md in one go, on a machine with an NVIDIA GPU, from the
# repository root. It expects `.gl/` (the Vulkan loader packages) and `.gpu/` (a stripped
# `cargo-convbench` built with `--features cuda`, the integration test binary built the same
# way as `.gpu/integration`, and `.gpu/built-at` naming the folder they were built in), and
# writes everything under $OUT (default: gpu-out/):
#
#   log.txt              what every step printed, with its exit status and wall time
#   layers.json          run --backend wgpu,cuda --suite layers --batch 128 --layers
#   nets.json            run --backend wgpu,cuda --model alexnet,vgg16 --batch 64
#   layers-tuned.json    the layers again after `tune`
#   peers.json           PyTorch (cuDNN, TF32 off) and convbench, rounds interleaved
#   aa.json              ab of the working tree against itself (A/A) on AlexNet at batch 64
#
# Every step has its own time limit, and the whole script stops starting steps after
# CONVBENCH_CHECKLIST_SECONDS (default 480), so that what finished always comes back.
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
    timeout --kill-after=5 "$limit" "$@"
    echo "=== $name: exit $? in $(($(date +%s) - t0)) s"
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
nproc
step adapters 30 $B convbench adapters
# CONVBENCH_CHECKLIST_FILTER runs part of the suite (e.g. `cuda::`), as the test binary filters.
step integration 180 env CONVBENCH_REQUIRE_GPU=1 CONVBENCH_REQUIRE_CUDA=1 .gpu/integration ${CONVBENCH_CHECKLIST_FILTER:-}
step verify-vulkan 90 $B convbench verify --backend wgpu --model alexnet,vgg16,resnet50
step verify-cuda 90 $B convbench verify --backend cuda --model alexnet,vgg16,resnet50
step layers 90 $B convbench run --backend wgpu,cuda --suite layers --batch 128 --layers --samples 5 --out "$OUT/layers.json"
step nets 150 $B convbench run --backend wgpu,cuda --model alexnet,vgg16 --batch 64 --samples 5 --out "$OUT/nets.json"
step peers 120 $B convbench peers --peer torch --peer-command "python3 -m convbench_torch --device cuda" \
    --backend wgpu,cuda --model alexnet --batch 64 --stages eval,train --samples 5 --out "$OUT/peers.json"
step tune 120 $B convbench tune --suite layers --batch 128
step layers-tuned 90 $B convbench run --backend wgpu,cuda --suite layers --batch 128 --layers --samples 5 --out "$OUT/layers-tuned.json"
# A/A reads the base from git: the copy may come without its history, so commit it here.
if ! git rev-parse HEAD >/dev/null 2>&1 && command -v git >/dev/null; then
    git init -q && printf '/.gl/\n/.gpu/\n/target/\n' >> .git/info/exclude && git add -A \
        && git -c user.name=checklist -c user.email=checklist@localhost commit -qm checklist
fi
step aa 90 $B convbench ab --base HEAD --model alexnet --batch 64 --budget 60s --out "$OUT/aa.json"
echo "=== done in $(($(date +%s) - start)) s"
