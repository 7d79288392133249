#!/bin/sh
# Build the libFuzzer targets with clang and run each for SECONDS (default 30) on seed corpora taken from the
# ONNX conformance data and the test fixtures. New crashes are written to build-fuzz/crashes/<target>/.
# usage: sh scripts/fuzz.sh [SECONDS] [TARGET...]   (see tests/fuzz/README.md for long runs)
#        sh scripts/fuzz.sh ci [TARGET...]          a fixed seed and a fixed number of runs per target, from a
#                                                   fresh corpus: the same inputs on every CI run, so a red CI is
#                                                   reproducible and never depends on the machine's speed
set -eu
cd "$(dirname "$0")/.."
secs="${1:-30}"
[ $# -gt 0 ] && shift
ci_runs() { # about 30 s each on a 2-core CI machine under ASan+UBSan
    case "$1" in
    fuzz_model) echo 250000 ;; fuzz_npy) echo 5000000 ;; fuzz_npz) echo 3000000 ;; fuzz_tensor_proto) echo 2000000 ;;
    esac
}
targets="${*:-fuzz_model fuzz_npy fuzz_npz fuzz_tensor_proto}"
command -v clang >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null; }
sh scripts/install-deps.sh
CC=clang cmake -S . -B build-fuzz -DMRT_FUZZ=ON -DMRT_CUDA=OFF -DMRT_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc)" >/dev/null
onnx="${MRT_ONNX_TESTS_DIR:-../shared/onnx-tests}"
work=build-fuzz/corpus
[ "$secs" = ci ] && work=build-fuzz/corpus-ci && rm -rf "$work"
mkdir -p "$work" build-fuzz/crashes
seed() { # target, then files to copy as seeds (once)
    t="$1"; shift
    mkdir -p "$work/$t"
    [ -n "$(ls -A "$work/$t" 2>/dev/null)" ] && return 0
    for f in "$@"; do [ -f "$f" ] && cp "$f" "$work/$t/$(echo "$f" | tr '/' '_')"; done
    return 0
}
status=0
for t in $targets; do
    case "$t" in
    fuzz_model) seed "$t" "$onnx"/node/test_*/model.onnx "$onnx"/simple/*/model.onnx models/*.onnx tests/fuzz/seeds/model/* \
        tests/fuzz/regressions/model/* ;;
    fuzz_tensor_proto) seed "$t" "$onnx"/node/test_[a-m]*/test_data_set_0/*.pb tests/fuzz/regressions/tensor_proto/* ;;
    fuzz_npy) seed "$t" models/*.npy models/fixtures/*/*.npy tests/fuzz/regressions/npy/* ;;
    fuzz_npz) seed "$t" tests/fuzz/seeds/npz/*.npz tests/fuzz/regressions/npz/* ;;
    esac
    mkdir -p "build-fuzz/crashes/$t"
    if [ "$secs" = ci ]; then
        budget="-seed=1 -runs=$(ci_runs "$t")"
        echo "== $t: $(ci_runs "$t") runs, seed 1"
    else
        budget="-max_total_time=$secs"
        echo "== $t: ${secs}s"
    fi
    # shellcheck disable=SC2086
    if ! build-fuzz/tests/fuzz/"$t" $budget -timeout=25 -rss_limit_mb=2048 -max_len=1000000 \
        -dict=tests/fuzz/onnx.dict -artifact_prefix="build-fuzz/crashes/$t/" -print_final_stats=1 \
        "$work/$t" 2>&1 | grep -E "stat::number_of_executed_units|ERROR|SUMMARY|Done" ; then
        :
    fi
    if [ -n "$(ls -A "build-fuzz/crashes/$t" 2>/dev/null)" ]; then
        echo "$t: crash/leak/timeout inputs in build-fuzz/crashes/$t"
        status=1
    fi
done
exit $status
