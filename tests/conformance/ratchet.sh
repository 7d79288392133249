#!/bin/sh
# The conformance ratchet: every test named in expected_pass.txt must still pass.
# usage: ratchet.sh MINIRT EXPECTED_PASS_TXT [OPTION...]   (MRT_ONNX_TESTS_DIR points at shared/onnx-tests)
# Options go to `minirt conformance`: `--expand-functions all` runs the same list with every op that has an
# ONNX function body computed through that body instead of its kernel.
set -eu
minirt="$1"
list="$2"
shift 2
root="${MRT_ONNX_TESTS_DIR:?set MRT_ONNX_TESTS_DIR to the onnx-tests folder}"
# MRT_RATCHET_NO_FORK=1 runs every test in one process (the sanitizer build: leaks are reported at exit)
nofork=""
[ "${MRT_RATCHET_NO_FORK:-0}" = 1 ] && nofork="--no-fork"
exec "$minirt" conformance --quiet $nofork "$@" --require "$list" \
    "$root/node" "$root/simple" "$root/pytorch-operator" "$root/pytorch-converted"
