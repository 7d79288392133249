#!/bin/sh
# `minirt bench`: the statistics, the JSON other tools read, and the --profile Chrome trace (valid JSON, the
# event fields of ONNX Runtime's profile format, node times summing to within 10% of each run), checked with
# json_check; and its usage errors.
# usage: test_bench_cli.sh MINIRT JSON_CHECK SOURCE_DIR WORK_DIR
set -eu
minirt="$1"
check="$2"
src="$3"
work="$4"
mkdir -p "$work"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

out=$("$minirt" bench "$src/models/tiny_cnn.onnx" --input "$src/models/tiny_cnn_input.npy" --threads 1 \
    --warmup-ms 0 --iterations 20 --duration 0 --json "$work/bench.json" --profile "$work/trace.json" 2>&1) ||
    bad "bench exited $?: $out"
echo "$out" | grep -q "^20 runs: min .* median .* p99 .* max .* cv " && ok || bad "no statistics line: $out"
echo "$out" | grep -q "node times sum to" && ok || bad "no per-node table: $out"
echo "$out" | grep -q "^Conv .*[0-9]\.[0-9]$" && ok || bad "no Conv GFLOP/s in the op table: $out"
"$check" bench "$work/bench.json" && ok || bad "bench JSON"
"$check" trace "$work/trace.json" 0.10 && ok || bad "trace JSON"

# synthetic inputs when the shape is static; a clear usage error otherwise
out=$("$minirt" bench "$src/models/tiny_cnn.onnx" --threads 1 --warmup-ms 0 --iterations 3 --duration 0 2>&1) ||
    bad "bench with synthetic input exited $?: $out"
echo "$out" | grep -q "input 'image' float32\[2,3,32,32\]: synthetic" && ok || bad "synthetic input not reported: $out"

set +e
out=$("$minirt" bench "$src/models/tiny_cnn.onnx" --iterations 0 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && echo "$out" | grep -q "iterations expects a number from 1" && ok || bad "--iterations 0: exit $rc: $out"
set +e
out=$("$minirt" bench 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && echo "$out" | grep -q "needs a model path" && ok || bad "no model: exit $rc: $out"

# json_check itself must reject what is not JSON
printf '[{"a": 1,}]' > "$work/broken.json"
if "$check" valid "$work/broken.json" 2>/dev/null; then bad "json_check accepted a trailing comma"; else ok; fi
echo "bench CLI checks: $pass passed, $fails failed"
[ $fails -eq 0 ]
