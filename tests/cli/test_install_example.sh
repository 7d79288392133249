#!/bin/sh
# The installable library: `cmake --install` into a fresh prefix, then examples/embed/classify.c builds against it
# through pkg-config and through find_package(minirt), and both binaries run the bundled model.
# usage: test_install_example.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build="$1"
src="$2"
work="$3"
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in bin/minirt lib/libminirt.so include/minirt/minirt.h include/minirt/minirt_plugin.h \
         lib/pkgconfig/minirt.pc lib/cmake/minirt/minirtConfig.cmake; do
    [ -e "$prefix/$f" ] || { echo "FAIL: $f not installed"; ls -R "$prefix"; exit 1; }
done
# only the public API is exported
bad=$(nm -D --defined-only "$prefix/lib/libminirt.so" | awk '$2 ~ /[TDBR]/ && $3 !~ /^mrt_/ {print $3}' | head -5)
[ -z "$bad" ] || { echo "FAIL: libminirt.so exports non-mrt_ symbols: $bad"; exit 1; }
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror "$src/examples/embed/classify.c" $(pkg-config --cflags --libs minirt) \
    -Wl,-rpath,"$prefix/lib" -o "$work/classify"
out=$("$work/classify" "$src/models/tiny_cnn.onnx")
echo "$out" | grep -q "^probs: float32\[2,10\]  sum 2.0000" || { echo "FAIL: pkg-config build printed: $out"; exit 1; }
cmake -S "$src/examples/embed" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/cmake.log"
cmake --build "$work/cmake-build" > "$work/cmake-build.log"
out=$("$work/cmake-build/classify" "$src/models/tiny_cnn.onnx")
echo "$out" | grep -q "^probs: float32\[2,10\]  sum 2.0000" || { echo "FAIL: find_package build printed: $out"; exit 1; }
echo "install example: pkg-config and find_package builds ran ($out)"
