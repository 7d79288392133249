#!/bin/sh
# The conformance ratchet: every test named in expected_pass.txt must still pass.
# usage: ratchet.sh MINIRT EXPECTED_PASS_TXT   (MRT_ONNX_TESTS_DIR points at shared/onnx-tests)
set -eu
minirt="$1"
list="$2"
root="${MRT_ONNX_TESTS_DIR:?set MRT_ONNX_TESTS_DIR to the onnx-tests folder}"
exec "$minirt" conformance --quiet --require "$list" \
    "$root/node" "$root/simple" "$root/pytorch-operator" "$root/pytorch-converted"
