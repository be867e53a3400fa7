#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds an outside program
# against it with pkg-config, as a user would; then runs it on a sample archive.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR [EXTRA_CFLAGS]
set -euo pipefail
build=$1 src=$2 extra=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in bin/trace include/trace-engine/types.h include/trace-reader/reader.h \
         lib/libfxtrace.a lib/libfxtrace.so lib/libtrace-reader.a lib/libtrace-reader.so \
         lib/pkgconfig/fxtrace.pc lib/pkgconfig/trace-reader.pc; do
  [ -e "$tmp/prefix/$f" ] || { echo "FAIL: not installed: $f"; exit 1; }
done

export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
for pc in fxtrace trace-reader; do
  # shellcheck disable=SC2046,SC2086
  cc -std=c11 -Wall -Wextra -Werror $extra "$src/examples/count_records.c" \
    $(pkg-config --cflags --libs $pc) -o "$tmp/count_$pc"
  # the same against the static library
  # shellcheck disable=SC2046,SC2086
  cc -std=c11 $extra "$src/examples/count_records.c" $(pkg-config --cflags $pc) \
    "$tmp/prefix/lib/lib$pc.a" -o "$tmp/count_static_$pc"
done

"$tmp/prefix/bin/trace" gen-sample -o "$tmp/sample.fxt"
for exe in count_fxtrace count_trace-reader count_static_fxtrace count_static_trace-reader; do
  out=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/$exe" "$tmp/sample.fxt")
  echo "$out" | grep -qx "event 30" || { echo "FAIL: $exe printed: $out"; exit 1; }
  echo "$out" | grep -qx "large 2" || { echo "FAIL: $exe printed: $out"; exit 1; }
done
# The C++ compiler accepts the public headers too.
echo '#include <trace-engine/types.h>
#include <trace-reader/reader.h>
int main() { return trace_make_empty_string_ref().encoded_value; }' > "$tmp/cxx.cc"
# shellcheck disable=SC2046,SC2086
c++ -std=c++17 -Wall -Wextra -Werror $extra "$tmp/cxx.cc" $(pkg-config --cflags --libs fxtrace) -o "$tmp/cxx"
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/cxx"
echo "install test passed"
