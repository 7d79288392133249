#!/bin/sh
# The model tests on CUDA: each model run with --device cuda (the emulated module in CI, MRT_CUDA_MODULE) against
# the same model on the CPU, within 1e-5 of the output's scale (npy_close's rule). The exported models come from
# run_model_tests.sh (the model_tests ctest runs first); the bundled tiny CNN is always there.
#
#   run_cuda_model_tests.sh MINIRT MODELDIR NPY_CLOSE SOURCE_DIR
#
# Environment: MRT_CUDA_MODEL_TESTS (default: the models small enough for the emulation, a few seconds each; the
# ResNet/MobileNet/EfficientNet/Swin-T exports take minutes there and are left to scripts/gpu-check.sh),
# MRT_CUDA_MODEL_RTOL (default 1e-5). Exit: 0 all passed, 1 a model failed, 77 none could run (no exports, no torch).
set -u
[ $# -eq 4 ] || { echo "usage: $0 MINIRT MODELDIR NPY_CLOSE SOURCE_DIR" >&2; exit 2; }
MINIRT=$1 DIR=$2 NPY_CLOSE=$3 SRC=$4
RTOL=${MRT_CUDA_MODEL_RTOL:-1e-5}
MODELS=${MRT_CUDA_MODEL_TESTS:-"tiny_cnn dcnv2 swin_block_slice swin_block_roll transformer_encoder"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n_pass=0 n_fail=0 n_run=0 failed=""
for m in $MODELS; do
    if [ "$m" = tiny_cnn ]; then
        model=$SRC/models/tiny_cnn.onnx input=$SRC/models/tiny_cnn_input.npy
    else
        model=$DIR/$m.onnx input=$DIR/${m}_input.npy
    fi
    if [ ! -f "$model" ] || [ ! -f "$input" ]; then
        if [ "${MRT_REQUIRE_MODEL_TESTS:-0}" = 1 ]; then
            echo "$m: FAIL (not exported: run the model_tests first)"
            n_fail=$((n_fail + 1)) failed="$failed $m"
        else
            echo "$m: skipped (not exported)"
        fi
        continue
    fi
    n_run=$((n_run + 1))
    mkdir -p "$work/$m/cpu" "$work/$m/cuda"
    if ! "$MINIRT" run "$model" --input "$input" --output-dir "$work/$m/cpu" >"$work/$m/cpu.log" 2>&1; then
        line="$m: FAIL: the CPU run failed: $(tail -n 1 "$work/$m/cpu.log")"
    elif ! "$MINIRT" run "$model" --input "$input" --output-dir "$work/$m/cuda" --device cuda --no-cpu-fallback \
            --poison-outputs --stats >"$work/$m/cuda.log" 2>&1; then
        line="$m: FAIL: the CUDA run failed: $(tail -n 1 "$work/$m/cuda.log")"
    else
        line=""
        for f in "$work/$m/cpu"/*.npy; do
            out=$("$NPY_CLOSE" --rtol "$RTOL" --name "$m $(basename "$f" .npy) cuda vs cpu" "$work/$m/cuda/$(basename "$f")" "$f" 2>&1)
            line="$line${line:+
}$out"
        done
        line="$line
   $(grep '^cuda:' "$work/$m/cuda.log")"
    fi
    echo "$line"
    if echo "$line" | grep -q "FAIL"; then n_fail=$((n_fail + 1)) failed="$failed $m"; else n_pass=$((n_pass + 1)); fi
done
echo "cuda model tests: $n_pass passed, $n_fail failed${failed:+ (failed:$failed)}"
[ "$n_run" -gt 0 ] || [ "$n_fail" -gt 0 ] || exit 77
[ "$n_fail" -eq 0 ]
