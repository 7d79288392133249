#!/bin/sh
# Nothing is skipped silently: every ONNX backend test is either in expected_pass.txt or in
# known_failures.txt (with a reason), and no test is in both.
# usage: lists_complete.sh ONNX_TESTS_DIR CONFORMANCE_DIR
set -eu
root="$1"
dir="$2"
tmp="${TMPDIR:-/tmp}/mrt_lists.$$"
trap 'rm -f "$tmp".*' EXIT
for suite in node simple pytorch-operator pytorch-converted; do
    for t in "$root/$suite"/*/; do
        [ -f "$t/model.onnx" ] && echo "$suite/$(basename "$t")"
    done
done | sort > "$tmp.all"
grep -v '^#' "$dir/expected_pass.txt" | sort > "$tmp.pass"
grep -v '^#' "$dir/known_failures.txt" | cut -f1 | sort > "$tmp.fail"
status=0
both=$(comm -12 "$tmp.pass" "$tmp.fail")
if [ -n "$both" ]; then echo "in both lists:"; echo "$both"; status=1; fi
missing=$(sort -u "$tmp.pass" "$tmp.fail" | comm -23 "$tmp.all" -)
if [ -n "$missing" ]; then echo "in neither list (run scripts/update_conformance.py):"; echo "$missing"; status=1; fi
if grep -v '^#' "$dir/known_failures.txt" | awk -F'\t' 'NF < 2 || $2 == ""' | grep -q .; then
    echo "known_failures.txt entries without a reason"; status=1
fi
echo "$(wc -l < "$tmp.all") tests: $(wc -l < "$tmp.pass") expected to pass, $(wc -l < "$tmp.fail") known failures"
exit $status
