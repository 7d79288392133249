#!/bin/sh
# CLI test of op plugins: `minirt run` / `minirt info` with and without --plugin.
#   sh tests/cli/test_plugin_cli.sh BUILD_DIR [SOURCE_DIR]
# BUILD_DIR holds minirt, plugins/libminirt_customop2.so and test_plugins/; SOURCE_DIR defaults to the
# repository this script is in. Prints one line per check; exits 1 when any check fails.
set -u
build=${1:?usage: test_plugin_cli.sh BUILD_DIR [SOURCE_DIR]}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
minirt="$build/minirt"
plugin="$build/plugins/libminirt_customop2.so"
fixture="$src/models/fixtures/customop2"
model="$fixture/model_with_customOp2.onnx"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# check NAME EXPECTED_EXIT NEEDLE... -- CMD...: run CMD, compare its exit code, grep its stdout+stderr.
check() {
    name=$1 want=$2
    shift 2
    needles=""
    while [ "$1" != "--" ]; do
        needles="$needles
$1"
        shift
    done
    shift
    "$@" >"$tmp/out" 2>&1
    got=$?
    ok=1
    [ "$got" -eq "$want" ] || ok=0
    echo "$needles" | while IFS= read -r n; do
        [ -z "$n" ] && continue
        grep -qF -- "$n" "$tmp/out" || { echo "  missing: $n"; exit 1; }
    done || ok=0
    if [ $ok -eq 1 ]; then
        echo "PASS $name"
    else
        echo "FAIL $name (exit $got, expected $want); output:"
        sed 's/^/  | /' "$tmp/out"
        fails=$((fails + 1))
    fi
}

for f in "$minirt" "$plugin" "$model"; do
    [ -e "$f" ] || { echo "FAIL setup: $f not found (build first)"; exit 1; }
done

check "run without plugin: unknown op" 1 \
    "node '/customOp2'" "custom_domain" "customOp2" "opset 1" "plugins loaded: none" "docs/custom_ops.md" -- \
    "$minirt" run "$model" --input "$fixture/x.npy"

check "run with plugin" 0 "y: float32[2,3,8]" -- \
    "$minirt" run "$model" --plugin "$plugin" --input "$fixture/x.npy"

check "run with plugin, outputs written" 0 -- \
    "$minirt" run "$model" --plugin "$plugin" --input "x=$fixture/x.npy" --output-dir "$tmp/out_dir"
if [ -f "$tmp/out_dir/y.npy" ] && /usr/bin/env python3 -c "import numpy" 2>/dev/null; then
    check "output matches PyTorch" 0 "max_abs_diff" -- /usr/bin/env python3 -c "
import numpy as np, sys
y = np.load('$tmp/out_dir/y.npy'); t = np.load('$fixture/y_torch.npy')
d = float(np.max(np.abs(y.astype(np.float64) - t)))
print('max_abs_diff', d)
sys.exit(0 if y.shape == t.shape and y.dtype == t.dtype and d <= 1e-5 else 1)"
fi

check "plugin given twice is harmless" 0 "y: float32[2,3,8]" -- \
    "$minirt" run "$model" --plugin "$plugin" --plugin "$plugin" --input "$fixture/x.npy"

check "missing plugin file" 1 "libnope.so" "No such file" -- \
    "$minirt" run "$model" --plugin "$build/plugins/libnope.so" --input "$fixture/x.npy"

check "--plugin without a value" 2 "unknown or incomplete option '--plugin'" -- \
    "$minirt" run "$model" --plugin

if [ -d "$build/test_plugins" ]; then
    check "ABI mismatch" 1 "was built for minirt plugin ABI 3, this minirt provides 2" -- \
        "$minirt" run "$model" --plugin "$build/test_plugins/libmrt_test_abi_future.so" --input "$fixture/x.npy"
    check "replacing a built-in needs --plugin-replace" 1 "Relu is built into minirt" "--plugin-replace" -- \
        "$minirt" run "$model" --plugin "$plugin" --plugin "$build/test_plugins/libmrt_test_perturb_relu.so" \
        --input "$fixture/x.npy"
    check "replacing a built-in with --plugin-replace" 0 "y: float32[2,3,8]" -- \
        "$minirt" run "$model" --plugin "$plugin" --plugin "$build/test_plugins/libmrt_test_perturb_relu.so" \
        --plugin-replace --input "$fixture/x.npy"
fi

check "info without plugin" 0 "customOp2  cpu:NO KERNEL" -- "$minirt" info "$model"
check "info with plugin" 0 "customOp2  cpu:yes" -- "$minirt" info "$model" --plugin "$plugin"

if [ $fails -ne 0 ]; then
    echo "$fails check(s) failed"
    exit 1
fi
echo "all plugin CLI checks passed"
