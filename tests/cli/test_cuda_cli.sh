#!/bin/sh
# The CLI on CUDA, with the emulated module: what a machine without a GPU says, the placement report, a plugin's CUDA
# kernel, cross-checks, diff against the CPU, bench's device time and the stats' device arena.
# usage: test_cuda_cli.sh BUILD_DIR SOURCE_DIR
set -u
build="$1"
src="$2"
minirt="$build/minirt"
emu="$build/libminirt_cuda_emu.so"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
model="$src/models/tiny_cnn.onnx"
input="$src/models/tiny_cnn_input.npy"
pass=0 fail=0
check() { # NAME EXPECTED_STATUS NEEDLE -- COMMAND...
    name=$1 want=$2 needle=$3
    shift 4
    "$@" >"$tmp/out" 2>&1
    got=$?
    if [ "$got" -eq "$want" ] && grep -q -- "$needle" "$tmp/out"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: exit $got (want $want), output without '$needle':"
        tail -5 "$tmp/out"
    fi
}
# no module (a machine without the CUDA build, or without a driver): exit 1 and the reason, never a crash
check "no module" 1 "minirt: error: .*CUDA" -- env MRT_CUDA_MODULE=/nonexistent/libminirt_cuda.so "$minirt" run "$model" \
    --input "$input" --device cuda
check "unknown device" 1 "unknown device 'tpu'" -- "$minirt" run "$model" --input "$input" --device tpu
export MRT_CUDA_MODULE="$emu"
check "cross-check" 0 "cross-check probs: PASS" -- "$minirt" run "$model" --input "$input" --device cuda --cross-check
check "no fallback" 0 "probs: float32\[2,10\]" -- "$minirt" run "$model" --input "$input" --device cuda --no-cpu-fallback
check "sync each node" 0 "probs:" -- env MRT_SYNC_EACH_NODE=1 "$minirt" run "$model" --input "$input" --device cuda
check "placement" 0 "placement on cuda: 33 node(s) on the device, 0 on the CPU" -- "$minirt" info "$model" --device cuda
check "copies listed" 0 "to the device: 'image' before '/stem/Conv'" -- "$minirt" info "$model" --device cuda
check "diff against the CPU" 0 "reference: cpu" -- "$minirt" diff "$model" --input "$input" --device cuda --against cpu
"$minirt" run "$model" --input "$input" --device cuda --stats-json "$tmp/stats.json" >/dev/null 2>&1
check "stats json" 0 '"cuda": [1-9]' -- cat "$tmp/stats.json"
"$minirt" bench "$model" --input "$input" --device cuda --duration 0.2 --warmup-ms 1 --json "$tmp/bench.json" >/dev/null 2>&1
check "bench device time" 0 '"gpu_median_ms": [0-9]' -- cat "$tmp/bench.json"
# a plugin's CUDA kernel (customOp2, built against the emulation) takes the node: no fallback needed
plugin="$build/plugins/libminirt_customop2_emu.so"
fx="$src/models/fixtures/customop2"
check "plugin CUDA kernel" 0 "cross-check y: PASS" -- "$minirt" run "$fx/model_with_customOp2.onnx" --input "$fx/x.npy" \
    --plugin "$plugin" --device cuda --no-cpu-fallback --cross-check
# the CPU-only build of the same plugin has no CUDA row: with no fallback that names the node
check "plugin without CUDA" 1 "no-cpu-fallback" -- "$minirt" run "$fx/model_with_customOp2.onnx" --input "$fx/x.npy" \
    --plugin "$build/plugins/libminirt_customop2.so" --device cuda --no-cpu-fallback
echo "cuda cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
