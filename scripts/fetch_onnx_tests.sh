#!/bin/sh
# The ONNX backend test data for the conformance ratchet where ../shared/onnx-tests is absent (a fresh clone):
# the onnx 1.22.0 wheel on PyPI carries onnx/backend/test/data/ with all 1,765 node tests and the simple and
# pytorch-* suites (the same release as ../shared/onnx-tests; the 1.23 wheels no longer carry node/). The wheel
# is downloaded (not installed) into the cache folder and those four folders unpacked next to it.
# usage: fetch_onnx_tests.sh CACHE_DIR      (prints CACHE_DIR/onnx-tests; does nothing when already there)
set -eu
cache="$1"
dest="$cache/onnx-tests"
if [ -f "$dest/.complete" ]; then echo "$dest"; exit 0; fi
mkdir -p "$cache"
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$cache/wheel" onnx==1.22.0 >&2
wheel=$(ls "$cache"/wheel/onnx-1.22.0-*.whl | head -1)
rm -rf "$dest.tmp"
python3 - "$wheel" "$dest.tmp" <<'PY'
import sys, zipfile, os
wheel, out = sys.argv[1], sys.argv[2]
prefix = "onnx/backend/test/data/"
suites = ("node/", "simple/", "pytorch-operator/", "pytorch-converted/")
n = 0
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        rel = name[len(prefix):] if name.startswith(prefix) else None
        if rel and rel.startswith(suites) and not name.endswith("/"):
            path = os.path.join(out, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with z.open(name) as src, open(path, "wb") as dst:
                dst.write(src.read())
            n += 1
tests = len(os.listdir(os.path.join(out, "node")))
if tests < 1765:
    sys.exit(f"{wheel}: only {tests} node tests (expected 1765): not the 1.22.0 wheel's data")
print(f"unpacked {n} files, {tests} node tests", file=sys.stderr)
PY
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "onnx 1.22.0 wheel: $(basename "$wheel")" > "$dest/VERSION"
touch "$dest/.complete"
echo "$dest"
