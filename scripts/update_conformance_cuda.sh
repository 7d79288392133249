#!/bin/sh
# Grow tests/conformance/expected_pass_cuda.txt: the node tests that pass on the CUDA kernels with no CPU fallback,
# on the emulated module (what CI checks), added to the list. The list only grows: a test that stops passing is a
# regression to fix, never a line to drop.
# usage: sh scripts/update_conformance_cuda.sh [BUILD_DIR]     (node tests from MRT_ONNX_TESTS_DIR or ../shared)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
tests=${MRT_ONNX_TESTS_DIR:-../shared/onnx-tests}
list=tests/conformance/expected_pass_cuda.txt
json=$(mktemp)
trap 'rm -f "$json"' EXIT
MRT_CUDA_MODULE=$build/libminirt_cuda_emu.so "$build/minirt" conformance --device cuda --no-cpu-fallback --quiet \
    --json "$json" "$tests/node" | tail -1
python3 - "$json" "$list" <<'PY'
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
passed = {t["name"] for t in tests if t["status"] == "PASS"}
try:
    old = {l.strip() for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")}
except OSError:
    old = set()
lost = sorted(old - passed)
if lost:
    print("no longer passing (fix them; the list only grows):\n  " + "\n  ".join(lost))
with open(sys.argv[2], "w") as f:
    f.write("".join(n + "\n" for n in sorted(old | passed)))
print(f"{sys.argv[2]}: {len(old | passed)} tests ({len(passed - old)} new)")
sys.exit(1 if lost else 0)
PY
