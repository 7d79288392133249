#!/bin/sh
# `minirt run --expand-functions`: the bundled CNN's Relu nodes run through the ONNX function body (Relu-14's
# Max(X, 0)), --stats counts them, the outputs equal the kernels' exactly; an op without a body is an error
# (exit 1) naming the ops that have one. `--poison-outputs` (outputs a kernel writes in full start as 0xFF bytes)
# gives the same bits.
# usage: test_expand_functions_cli.sh MINIRT SOURCE_DIR
set -eu
minirt="$1"
src="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
m="$src/models/tiny_cnn.onnx"
x="$src/models/tiny_cnn_input.npy"
"$minirt" run "$m" --input "$x" --output-dir "$tmp/kernel" >/dev/null
"$minirt" run "$m" --input "$x" --expand-functions Relu --stats --output-dir "$tmp/body" >/dev/null 2>"$tmp/stats"
grep -q "functions: 4 nodes run through an ONNX function body" "$tmp/stats" ||
    { echo "FAIL: expected 4 expanded Relu nodes:"; cat "$tmp/stats"; exit 1; }
cmp "$tmp/kernel/probs.npy" "$tmp/body/probs.npy" || { echo "FAIL: Relu's body and kernel disagree"; exit 1; }
"$minirt" run "$m" --input "$x" --poison-outputs --output-dir "$tmp/poison" >/dev/null
cmp "$tmp/kernel/probs.npy" "$tmp/poison/probs.npy" || { echo "FAIL: --poison-outputs changed the output"; exit 1; }
rc=0
"$minirt" run "$m" --input "$x" --expand-functions Relu,Conv >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || { echo "FAIL: expanding Conv (no function body) exited $rc, expected 1"; exit 1; }
grep -q "op 'Conv' has no ONNX function body.*(ops with a fixed body: AffineGrid," "$tmp/err" ||
    { echo "FAIL: unexpected message:"; cat "$tmp/err"; exit 1; }
echo "expand-functions and poison-outputs checks: 4 passed, 0 failed"
