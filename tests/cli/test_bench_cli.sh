#!/bin/sh
# `minirt bench`: the statistics, the JSON other tools read, and the --profile Chrome trace (valid JSON, the
# event fields of ONNX Runtime's profile format, node times summing to within 10% of the run), checked with
# json_check (which must itself catch overlapping nodes and a node missing from every run); and its usage errors.
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

# --no-fuse: said in the header and the JSON, and BatchNormalization timed as nodes of its own (tiny_cnn keeps it
# as four nodes, which a fused run folds into their Conv and times at 0)
out=$("$minirt" bench "$src/models/tiny_cnn.onnx" --input "$src/models/tiny_cnn_input.npy" --threads 1 --no-fuse \
    --warmup-ms 0 --iterations 3 --duration 0 --json "$work/bench_nofuse.json" --profile "$work/trace_nofuse.json" 2>&1) ||
    bad "bench --no-fuse exited $?: $out"
echo "$out" | grep -q "^device: .*, fusion off (--no-fuse)$" && ok || bad "--no-fuse not in the header: $out"
grep -q '"fusion": false' "$work/bench_nofuse.json" && ok || bad "--no-fuse not in the JSON"
grep -q '"fusion": true' "$work/bench.json" && ok || bad "fusion not recorded in the JSON of a fused run"
echo "$out" | grep -Eq "^BatchNormalization +4 +([1-9][0-9]*\.[0-9]+|0\.[0-9]*[1-9][0-9]*) " && ok || bad "--no-fuse: no BatchNormalization time: $out"

# --no-winograd: said in the header and the JSON
out=$("$minirt" bench "$src/models/tiny_cnn.onnx" --input "$src/models/tiny_cnn_input.npy" --threads 1 --no-winograd \
    --warmup-ms 0 --iterations 3 --duration 0 --json "$work/bench_nowino.json" 2>&1) || bad "bench --no-winograd exited $?: $out"
echo "$out" | grep -q "^device: .*, Winograd off (--no-winograd)$" && ok || bad "--no-winograd not in the header: $out"
grep -q '"winograd": false' "$work/bench_nowino.json" && ok || bad "--no-winograd not in the JSON"
grep -q '"winograd": true' "$work/bench.json" && ok || bad "Winograd not recorded in the JSON of a default run"

# --no-mem-plan: said in the header and the JSON, and the same output summary as the planned run
out=$("$minirt" bench "$src/models/tiny_cnn.onnx" --input "$src/models/tiny_cnn_input.npy" --threads 1 --no-mem-plan \
    --warmup-ms 0 --iterations 3 --duration 0 --json "$work/bench_nomem.json" 2>&1) || bad "bench --no-mem-plan exited $?: $out"
echo "$out" | grep -q "^device: .*, memory plan off (--no-mem-plan)$" && ok || bad "--no-mem-plan not in the header: $out"
grep -q '"memory_plan": false' "$work/bench_nomem.json" && ok || bad "--no-mem-plan not in the JSON"
grep -q '"memory_plan": true' "$work/bench.json" && ok || bad "the memory plan not recorded in the JSON of a default run"

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

# json_check's trace check on made-up traces of three runs of 100 us: one run preempted between its nodes passes;
# a node missing from every run, and nodes overlapping, fail
trace() { # DUR_OF_SECOND_NODE_IN_RUN_1 DUR_IN_RUN_2 DUR_IN_RUN_3: each run is a 50 us node and that one
    printf '['
    for r in 1 2 3; do
        eval "d=\$$r"
        ts=$((r * 1000))
        printf '{"cat":"Session","name":"model_run","ph":"X","pid":1,"tid":0,"ts":%d,"dur":100},' $ts
        printf '{"cat":"Node","name":"a","ph":"X","pid":1,"tid":0,"ts":%d,"dur":50,' $ts
        printf '"args":{"op_name":"Relu","provider":"minirt_cpu"}},'
        printf '{"cat":"Node","name":"b","ph":"X","pid":1,"tid":0,"ts":%d,"dur":%d,' $((ts + 50)) "$d"
        printf '"args":{"op_name":"Relu","provider":"minirt_cpu"}}%s' "$([ $r -lt 3 ] && echo ,)"
    done
    printf ']'
}
trace 50 5 48 > "$work/trace_preempted.json"
"$check" trace "$work/trace_preempted.json" 0.10 >/dev/null 2>&1 && ok || bad "json_check failed one preempted run"
trace 5 5 48 > "$work/trace_missing.json"
if "$check" trace "$work/trace_missing.json" 0.10 >/dev/null 2>&1; then bad "json_check accepted gaps in most runs"; else ok; fi
trace 50 50 50 | sed 's/"ts":2050/"ts":2030/; s/"ts":2000,"dur":50/"ts":2000,"dur":70/' > "$work/trace_overlap.json"
if "$check" trace "$work/trace_overlap.json" 0.10 >/dev/null 2>&1; then bad "json_check accepted overlapping nodes"; else ok; fi

# json_check itself must reject what is not JSON
printf '[{"a": 1,}]' > "$work/broken.json"
if "$check" valid "$work/broken.json" 2>/dev/null; then bad "json_check accepted a trailing comma"; else ok; fi
echo "bench CLI checks: $pass passed, $fails failed"
[ $fails -eq 0 ]
