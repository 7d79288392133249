#!/bin/sh
# `minirt check` over part of the malformed corpus (tests/malformed/expected_check.tsv): the exit status, every
# expected line (a model's problems are all listed), a `minirt: error:` line on stderr when invalid, no crash.
# usage: run_check.sh MINIRT CORPUS_DIR
set -u
minirt="$1"
dir="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -v '^#' "$dir/expected_check.tsv" | while IFS="$(printf '\t')" read -r name model status line; do
    MRT_NO_BLAS_REEXEC=1 "$minirt" check "$dir/$model" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    problem=""
    [ "$rc" = "$status" ] || problem="exit status $rc, expected $status"
    grep -qF "$dir/$model: $line" "$tmp/out" ||
        problem="${problem:+$problem; }no line '$line' in: $(cat "$tmp/out")"
    if [ "$status" != 0 ] && ! grep -q "^minirt: error: " "$tmp/err"; then
        problem="${problem:+$problem; }no 'minirt: error:' line on stderr"
    fi
    if [ -n "$problem" ]; then
        echo "FAIL $name: $problem"
        echo fail >> "$tmp/results"
    else
        echo pass >> "$tmp/results"
    fi
done
pass=$(grep -c pass "$tmp/results" 2>/dev/null || true)
fail=$(grep -c fail "$tmp/results" 2>/dev/null || true)
echo "minirt check: ${pass:-0} passed, ${fail:-0} failed"
[ "${fail:-0}" = 0 ]
