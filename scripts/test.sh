#!/bin/sh
# Quick start 2: install what's missing, build everything, run every test (unit tests, conformance ratchet,
# model tests). Exits non-zero when anything fails.
#   sh scripts/test.sh              the normal build (build/)
#   sh scripts/test.sh --sanitize   the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer and
#                                   leak detection (build-asan/; CI runs both)
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh --models
# The conformance ratchet's data: ../shared/onnx-tests where it exists, else the same tests from the onnx 1.22.0
# wheel on PyPI, fetched once into .cache/ (a fresh clone runs the same ratchet as CI)
onnx_tests=../shared/onnx-tests
[ -d "$onnx_tests/node" ] || onnx_tests=$(sh scripts/fetch_onnx_tests.sh .cache)
onnx_tests=$(cd "$onnx_tests" && pwd)
if [ "${1:-}" = "--sanitize" ]; then
    # the real CUDA module is left out (the sanitizers do not cover device code); the emulated one is built, so the
    # CUDA kernels run under ASan and UBSan too
    cmake -S . -B build-asan -DMRT_ONNX_TESTS_DIR="$onnx_tests" -DCMAKE_BUILD_TYPE=Debug -DMRT_SANITIZE=ON -DMRT_CUDA=OFF -DMRT_BUILD_BENCH=OFF
    cmake --build build-asan -j"$(nproc)"
    cd build-asan
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --output-on-failure -j"$(nproc)"
else
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMRT_ONNX_TESTS_DIR="$onnx_tests"
    cmake --build build -j"$(nproc)"
    (cd build && ctest --output-on-failure -j"$(nproc)")
    # The Python package, built from source as a user installs it, and its pytest suite (ONNX's own backend
    # test runner against minirt.backend included; python/README.md)
    python3 -m pip install --quiet -r python/tests/requirements.txt
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" python3 -m pip install --quiet ./python
    MRT_ONNX_TESTS_DIR="$onnx_tests" python3 -m pytest -q python/tests
fi
