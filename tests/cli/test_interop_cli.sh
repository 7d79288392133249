#!/bin/sh
# Inputs and dumps as other tools write them: `diff --against DIR` and `compare` on a folder of .npy files with no
# manifest, named by the sanitised value names (/block/conv1/Conv_output_0 -> _block_conv1_Conv_output_0.npy);
# `--input NAME=file.bin` raw bytes, size checked against the model.
# usage: test_interop_cli.sh MINIRT SOURCE_DIR WORK_DIR
set -eu
minirt="$1"
src="$2"
work="$3"
rm -rf "$work"
mkdir -p "$work/dump" "$work/stems"
model="$src/models/tiny_cnn.onnx"
input="$src/models/tiny_cnn_input.npy"
fail=0
"$minirt" run "$model" --input "$input" --dump-all "$work/dump" > /dev/null
# the same tensors with no manifest: only the file names say which value each one is
cp "$work/dump"/*.npy "$work/stems/"
n_slash=$(ls "$work/stems" | grep -c '^_') || true
[ "$n_slash" -gt 20 ] || { echo "FAIL: expected the dump to hold sanitised names, got $n_slash"; fail=1; }
out=$("$minirt" diff "$model" --input "$input" --against "$work/stems") || {
    echo "FAIL: diff against the stems folder exited $?"; echo "$out" | tail -5; fail=1; }
echo "$out" | grep -q "33 of 33 node outputs matched by name" ||
    { echo "FAIL: every node output should match its sanitised file:"; echo "$out" | head -3; fail=1; }
echo "$out" | grep -q "no node exceeds tolerance" || { echo "FAIL: diff found a divergence"; fail=1; }
out=$("$minirt" compare "$work/stems" "$work/dump") || { echo "FAIL: compare stems vs dump:"; echo "$out" | tail -3; fail=1; }
echo "$out" | tail -1 | grep -q "0 failed, 0 missing" || { echo "FAIL: compare: $(echo "$out" | tail -1)"; fail=1; }

# raw bytes: the .npy's payload (its last 2*3*32*32*4 bytes) as a .bin gives the same outputs
tail -c 24576 "$input" > "$work/image.bin"
"$minirt" run "$model" --input "$input" --output-dir "$work/o_npy" > /dev/null
"$minirt" run "$model" --input "image=$work/image.bin" --output-dir "$work/o_bin" > /dev/null
cmp -s "$work/o_npy/probs.npy" "$work/o_bin/probs.npy" || { echo "FAIL: .bin input gives other outputs"; fail=1; }
"$minirt" run "$model" --input "$work/image.bin" > /dev/null || { echo "FAIL: a bare .bin binds the next input"; fail=1; }
head -c 1000 "$input" > "$work/short.bin"
rc=0
err=$("$minirt" run "$model" --input "image=$work/short.bin" 2>&1 >/dev/null) || rc=$?
[ "$rc" = 1 ] || { echo "FAIL: a wrong-sized .bin exits $rc, expected 1"; fail=1; }
echo "$err" | grep -q "input 'image': raw file '.*short.bin' has 1000 bytes, but float32\[2,3,32,32\] needs 24576" ||
    { echo "FAIL: message: $err"; fail=1; }
[ $fail = 0 ] && echo "interop CLI checks passed"
exit $fail
