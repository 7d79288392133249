#!/bin/sh
# Quick start 2: install what's missing, build everything, run every test (unit tests, conformance ratchet,
# model tests). Exits non-zero when anything fails.
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh --models
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
cd build
ctest --output-on-failure -j"$(nproc)"
