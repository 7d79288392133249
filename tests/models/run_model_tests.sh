#!/bin/sh
# Model tests: export real models with PyTorch (random weights, fixed seeds), run them with minirt, compare with
# PyTorch's outputs.
#
#   run_model_tests.sh MINIRT OUTDIR [NPY_CLOSE]
#
# MINIRT     the minirt executable
# OUTDIR     where the exported models, inputs, references and minirt's outputs go (reused between runs: a model
#            is exported again only when its files are missing or older than export_models.py)
# NPY_CLOSE  the npy_close comparison tool (default: npy_close next to MINIRT or in its tests/ folder)
#
# Environment:
#   MRT_REQUIRE_MODEL_TESTS=1  a Python without torch/torchvision is a failure instead of a skip (CI)
#   MRT_TORCH_PYTHON           the Python that has torch (default /usr/bin/python3, Debian's python3-torch)
#   MRT_MODEL_TESTS            the models to run, space-separated (default: all)
#   MRT_MODEL_RTOL             the bound, relative to max |PyTorch output| (default 1e-4)
#   MRT_MODEL_RTOL_FP64        the bound for minirt's float64 mode against PyTorch's float64 output (default 1e-7:
#                              the exporter stores some constants, e.g. attention scales, as float32)
#   MRT_MINIRT_ARGS            extra arguments for every `minirt run` (e.g. --threads 1)
#
# Exit: 0 all passed, 1 a model failed, 77 skipped (no torch and MRT_REQUIRE_MODEL_TESTS unset).
set -u

if [ $# -lt 2 ]; then
    echo "usage: $0 MINIRT OUTDIR [NPY_CLOSE]" >&2
    exit 2
fi
MINIRT=$1
OUTDIR=$2
NPY_CLOSE=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
EXPORT="$HERE/../../models/scripts/export_models.py"
PY=${MRT_TORCH_PYTHON:-/usr/bin/python3}
RTOL=${MRT_MODEL_RTOL:-1e-4}
RTOL64=${MRT_MODEL_RTOL_FP64:-1e-7}
# Models whose exported weights and constants are exactly PyTorch's: the float64 oracle must agree with
# PyTorch's float64 run to 1e-9 (the accuracy issue's bar). Swin's exporter stores some constants (GELU's
# sqrt(2), LayerNorm epsilon) as float32, so those models keep the looser default.
rtol64_for() {
    case "$1" in
    resnet18|mobilenet_v2|efficientnet_b0|transformer_encoder|dcnv2) echo "${MRT_MODEL_RTOL_FP64:-1e-9}" ;;
    *) echo "$RTOL64" ;;
    esac
}
ALL="resnet18 mobilenet_v2 efficientnet_b0 swin_t transformer_encoder dcnv2 swin_block_slice swin_block_roll"
MODELS=${MRT_MODEL_TESTS:-$ALL}

if [ -z "$NPY_CLOSE" ]; then
    for c in "$(dirname "$MINIRT")/npy_close" "$(dirname "$MINIRT")/tests/npy_close"; do
        [ -x "$c" ] && NPY_CLOSE=$c && break
    done
fi
if [ ! -x "$MINIRT" ]; then
    echo "model tests: minirt executable '$MINIRT' not found" >&2
    exit 2
fi
if [ -z "$NPY_CLOSE" ] || [ ! -x "$NPY_CLOSE" ]; then
    echo "model tests: npy_close not found (pass it as the third argument)" >&2
    exit 2
fi

why=$("$PY" -c "import torch, torchvision, numpy" 2>&1)
if [ $? -ne 0 ]; then
    echo "model tests: $PY cannot import torch, torchvision and numpy:"
    echo "$why" | tail -n 1
    echo "(install Debian's python3-torch python3-torchvision python3-numpy, or: sh scripts/install-deps.sh --models)"
    if [ "${MRT_REQUIRE_MODEL_TESTS:-0}" = "1" ]; then
        echo "model tests: FAILED (MRT_REQUIRE_MODEL_TESTS=1)"
        exit 1
    fi
    echo "model tests: SKIPPED"
    exit 77
fi

mkdir -p "$OUTDIR" || exit 2

# Export what is missing or stale.
stale=""
for m in $MODELS; do
    for f in "$m.onnx" "${m}_input.npy" "${m}_torch.npy" "${m}_torch_fp64.npy"; do
        if [ ! -f "$OUTDIR/$f" ] || [ "$EXPORT" -nt "$OUTDIR/$f" ]; then
            stale="$stale $m"
            break
        fi
    done
done
if [ -n "$stale" ]; then
    echo "exporting:$stale"
    # shellcheck disable=SC2086
    "$PY" "$EXPORT" "$OUTDIR" $stale || echo "model tests: the export failed for some models (see above)"
fi

# Does this minirt have the float64 oracle mode? (then also compare with PyTorch's float64 output)
fp64_flag=""
if "$MINIRT" run --help 2>&1 | grep -q -- "--precision"; then
    fp64_flag="--precision fp64"
fi

n_pass=0
n_fail=0
failed=""
for m in $MODELS; do
    out="$OUTDIR/${m}_out"
    rm -rf "$out"
    mkdir -p "$out"
    if [ ! -f "$OUTDIR/$m.onnx" ]; then
        line="$m: FAIL (not exported)"
    else
        # shellcheck disable=SC2086
        if "$MINIRT" run "$OUTDIR/$m.onnx" --input "$OUTDIR/${m}_input.npy" --output-dir "$out" \
            ${MRT_MINIRT_ARGS:-} >"$out/log.txt" 2>&1; then
            line=$("$NPY_CLOSE" --rtol "$RTOL" --name "$m" "$out/output.npy" "$OUTDIR/${m}_torch.npy" 2>&1)
            if [ -n "$fp64_flag" ] && echo "$line" | grep -q ": PASS:"; then
                mkdir -p "$out/fp64"
                # shellcheck disable=SC2086
                if "$MINIRT" run "$OUTDIR/$m.onnx" --input "$OUTDIR/${m}_input.npy" --output-dir "$out/fp64" \
                    $fp64_flag ${MRT_MINIRT_ARGS:-} >"$out/fp64/log.txt" 2>&1; then
                    line="$line
$("$NPY_CLOSE" --rtol "$(rtol64_for "$m")" --name "$m (fp64)" "$out/fp64/output.npy" "$OUTDIR/${m}_torch_fp64.npy" 2>&1)"
                else
                    line="$line
$m (fp64): FAIL: minirt run --precision fp64 failed: $(tail -n 1 "$out/fp64/log.txt")"
                fi
            fi
        else
            line="$m: FAIL: minirt run failed: $(tail -n 1 "$out/log.txt")"
        fi
    fi
    echo "$line"
    if echo "$line" | grep -q "FAIL"; then
        n_fail=$((n_fail + 1))
        failed="$failed $m"
    else
        n_pass=$((n_pass + 1))
    fi
done

echo "model tests: $n_pass passed, $n_fail failed${failed:+ (failed:$failed)}"
[ "$n_fail" -eq 0 ]
