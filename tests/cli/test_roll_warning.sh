#!/bin/sh
# `minirt info` points out a Slice+Slice+Concat torch.roll whose shift exceeds the axis (the exported graph is
# wrong), and stays quiet on a correct one (the bundled model has none).
# usage: test_roll_warning.sh MINIRT SOURCE_DIR
set -eu
minirt="$1"
src="$2"
out=$("$minirt" info "$src/models/fixtures/roll/roll_shift_exceeds_dim.onnx")
echo "$out" | grep -q "warning: node '/Concat'.*torch.roll by 10 along axis 1, but that axis has 7 elements" ||
    { echo "FAIL: no roll warning:"; echo "$out"; exit 1; }
out=$("$minirt" info "$src/models/tiny_cnn.onnx")
echo "$out" | grep -q "roll check: 0 " || { echo "FAIL: unexpected roll report:"; echo "$out" | tail -3; exit 1; }
echo "roll warning checks: 2 passed, 0 failed"
