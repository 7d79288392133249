#!/bin/sh
# What only a real GPU can confirm, in one run (at most ~8 minutes on an H100 with 16 cores, no network):
#   1. the CUDA test binaries (every CUDA kernel against its CPU twin) on the real module;
#   2. `minirt conformance --device cuda --no-cpu-fallback` over the ONNX node tests, against the ratchet list
#      tests/conformance/expected_pass_cuda.txt (which the emulated module passes in CI);
#   3. the fixture models on CUDA against the CPU (`minirt run --device cuda --cross-check`);
#   4. a short CPU-vs-CUDA latency comparison (`minirt bench`);
# and ends with one summary block. It assumes only CUDA 13, cuBLAS and cuDNN 9 (possibly as Python wheels on the
# library path), and the binaries in BUILD_DIR (see ../shared/gpu/README.md: built and packed on a machine without a
# GPU, run here through .gpu/run.sh, which sets MRT_CUDA_MODULE and MRT_ONNX_NODE_TESTS).
# usage: sh scripts/gpu-check.sh [BUILD_DIR]        (default: build)
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
minirt=$build/minirt
[ -x "$minirt" ] || { echo "gpu-check: no $minirt (build first)" >&2; exit 2; }
module=${MRT_CUDA_MODULE:-$build/libminirt_cuda.so}
export MRT_CUDA_MODULE=$module
nodes=${MRT_ONNX_NODE_TESTS:-../shared/onnx-tests/node}
log=${MRT_GPU_CHECK_LOG:-/tmp/gpu-check}
mkdir -p "$log"
summary=""
add() { summary="$summary$1
"; }
echo "== module: $module"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

# 1. CUDA kernel tests (Criterion binaries whose names contain "cuda")
tests_ok=0 tests_bad=0
for t in $(find "$build" -type f -perm -u+x -name 'test_cuda*' ! -path '*CMakeFiles*' | sort); do
    name=$(basename "$t")
    if timeout 300 "$t" --jobs 4 >"$log/$name.log" 2>&1; then
        tests_ok=$((tests_ok + 1))
    else
        tests_bad=$((tests_bad + 1))
        echo "== FAILED: $name (last lines of $log/$name.log)"
        tail -15 "$log/$name.log"
    fi
    grep -h "Synthesis" "$log/$name.log" | sed "s/^/   $name: /"
done
add "kernel tests: $tests_ok binaries passed, $tests_bad failed"

# 2. conformance on the device, no CPU fallback
if [ -d "$nodes" ]; then
    timeout 300 "$minirt" conformance --device cuda --no-cpu-fallback --quiet --json "$log/conformance.json" "$nodes" \
        >"$log/conformance.txt" 2>&1
    tail -3 "$log/conformance.txt"
    counts=$(python3 - "$log/conformance.json" tests/conformance/expected_pass_cuda.txt <<'PY'
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
passed = {t["name"].split("/")[-1] for t in tests if t["status"] == "PASS"}
try:
    want = [l.strip().split("/")[-1] for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
except OSError:
    want = []
print(len(passed), len(tests), sum(1 for w in want if w not in passed))
PY
)
    set -- $counts
    passed=${1:-0} total=${2:-0} missing=${3:-0}
    add "conformance --device cuda --no-cpu-fallback: $passed of $total node tests pass; $missing of the emulated ratchet's list do not"
else
    add "conformance: skipped (no node tests at $nodes)"
fi

# 3. fixture models against the CPU
models_ok=0 models_bad=0
for spec in "models/tiny_cnn.onnx models/tiny_cnn_input.npy" "models/fixtures/functions/model.onnx models/fixtures/functions/x.npy" \
            "models/fixtures/roll/roll_shift_exceeds_dim.onnx models/fixtures/roll/x.npy" \
            "models/fixtures/customop2/model_with_customOp2.onnx models/fixtures/customop2/x.npy --plugin $build/plugins/libminirt_customop2.so"; do
    set -- $spec
    m=$1 in=$2
    shift 2
    [ -f "$m" ] || continue
    if timeout 120 "$minirt" run "$m" --input "$in" "$@" --device cuda --cross-check --atol 1e-4 --rtol 1e-4 >"$log/model.log" 2>&1; then
        models_ok=$((models_ok + 1))
    else
        models_bad=$((models_bad + 1))
        echo "== model $m:"
        tail -4 "$log/model.log"
    fi
done
add "fixture models on CUDA vs the CPU: $models_ok agree, $models_bad differ or fail"

# 4. a short latency comparison on the bundled model
for dev in cpu cuda; do
    line=$(timeout 60 "$minirt" bench models/tiny_cnn.onnx --input models/tiny_cnn_input.npy --device $dev --duration 2 2>&1 |
           grep -E "runs:|device time" | tr '\n' ' ')
    add "bench tiny_cnn on $dev: $line"
done

echo
echo "================ gpu-check summary ================"
printf "%s" "$summary"
echo "==================================================="
[ "$tests_bad" -eq 0 ] && [ "$models_bad" -eq 0 ]
