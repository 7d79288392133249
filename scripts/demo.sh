#!/bin/sh
# Quick start 1: install what's missing, build, and run minirt on the bundled model.
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target minirt >/dev/null
exec build/minirt run models/tiny_cnn.onnx --input models/tiny_cnn_input.npy
