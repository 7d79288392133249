#!/bin/sh
# Quick start 2: install what's missing, build everything, run every test (unit tests, conformance ratchet,
# model tests). Exits non-zero when anything fails.
#   sh scripts/test.sh              the normal build (build/)
#   sh scripts/test.sh --sanitize   the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer and
#                                   leak detection (build-asan/; CI runs both)
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh --models
if [ "${1:-}" = "--sanitize" ]; then
    # CUDA is left out: the sanitizers don't cover device code, and the CPU suite is what they check
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMRT_SANITIZE=ON -DMRT_CUDA=OFF -DMRT_BUILD_BENCH=OFF
    cmake --build build-asan -j"$(nproc)"
    cd build-asan
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --output-on-failure -j"$(nproc)"
else
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
    cmake --build build -j"$(nproc)"
    cd build
    ctest --output-on-failure -j"$(nproc)"
fi
