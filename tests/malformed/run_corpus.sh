#!/bin/sh
# Run `minirt run` over the malformed corpus: every case must end with its expected exit status and message
# start (tests/malformed/expected.tsv), never a crash; under strace, every file minirt opens must be inside the
# model's folder, the input file, the output folder, or the system's libraries.
# usage: run_corpus.sh MINIRT CORPUS_DIR [--update]   (--update rewrites the expected messages; review the diff)
set -u
minirt="$1"
dir="$2"
update="${3:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
use_strace=0
command -v strace >/dev/null 2>&1 && use_strace=1
[ $use_strace = 1 ] || echo "note: strace not found: file-access checks skipped"
# LeakSanitizer cannot run under ptrace: a sanitized build checks leaks here, the normal build file accesses
if ldd "$minirt" 2>/dev/null | grep -q libasan; then
    use_strace=0
    echo "note: sanitized build: leak checks instead of strace file-access checks"
fi
pass=0
fail=0
: > "$tmp/new.tsv"
grep -v '^#' "$dir/expected.tsv" | while IFS="$(printf '\t')" read -r name model input status message; do
    out="$tmp/out_$name"
    set -- run "$dir/$model" --output-dir "$out"
    [ "$input" != "-" ] && set -- "$@" --input "$dir/$input"
    if [ $use_strace = 1 ]; then
        strace -f -qq -e trace=open,openat,creat,mkdir,rename,unlink -o "$tmp/trace" \
            env MRT_NO_BLAS_REEXEC=1 "$minirt" "$@" > /dev/null 2> "$tmp/err"
    else
        MRT_NO_BLAS_REEXEC=1 "$minirt" "$@" > /dev/null 2> "$tmp/err"
    fi
    rc=$?
    msg=$(head -c 300 "$tmp/err" | head -n 1)
    # paths depend on where the test runs from: compare with MODEL/INPUT in their place
    got=$(printf '%s' "$msg" | sed 's/^minirt: error: //' | awk -v m="$dir/$model" -v i="$dir/$input" \
          '{ while ((k = index($0, m)) > 0) $0 = substr($0, 1, k - 1) "MODEL" substr($0, k + length(m));
             if (i != "") while ((k = index($0, i)) > 0) $0 = substr($0, 1, k - 1) "INPUT" substr($0, k + length(i));
             print }')
    problem=""
    [ "$rc" = "$status" ] || problem="exit status $rc, expected $status"
    # exit 0 cases are models minirt runs (what the ONNX checker refuses but exporters write): no error line
    [ "$status" = 0 ] || case "$msg" in "minirt: error: "*) ;; *) problem="${problem:+$problem; }no 'minirt: error:' line: $msg" ;; esac
    if [ "$update" != "--update" ] && [ -n "$message" ]; then
        case "$got" in "$message"*) ;; *) problem="${problem:+$problem; }message '$got' does not start with '$message'" ;; esac
    fi
    if [ $use_strace = 1 ]; then
        model_dir=$(cd "$(dirname "$dir/$model")" && pwd)
        # paths minirt touched, minus the system's (libraries, locale, proc) and the allowed places
        bad=$(grep -o '"[^"]*"' "$tmp/trace" | tr -d '"' | grep -v -E '^(/usr/|/lib|/etc/ld\.so|/proc/|/sys/|/dev/)' |
              while read -r p; do
                  case "$p" in
                  /*) abs="$p" ;;
                  *) abs="$(pwd)/$p" ;;
                  esac
                  case "$abs" in
                  "$model_dir"/*|"$out"*|"$(pwd)/$dir/$input"|"$dir/$input") ;;
                  "$(dirname "$out")"|/tmp) ;; # mkdir -p of the output folder's parents
                  *) echo "$p" ;;
                  esac
              done | sort -u | head -3)
        [ -z "$bad" ] || problem="${problem:+$problem; }touched outside the allowed folders: $(echo $bad)"
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$model" "$input" "$rc" "$(printf '%s' "$got" | cut -c1-90)" >> "$tmp/new.tsv"
    if [ -n "$problem" ]; then
        echo "FAIL $name: $problem"
        echo fail >> "$tmp/results"
    else
        echo pass >> "$tmp/results"
    fi
done
if [ "$update" = "--update" ]; then
    { head -n 1 "$dir/expected.tsv"; cat "$tmp/new.tsv"; } > "$dir/expected.tsv.new" && mv "$dir/expected.tsv.new" "$dir/expected.tsv"
fi
pass=$(grep -c pass "$tmp/results" 2>/dev/null || true)
fail=$(grep -c fail "$tmp/results" 2>/dev/null || true)
echo "malformed corpus: ${pass:-0} passed, ${fail:-0} failed"
[ "${fail:-0}" = 0 ]
