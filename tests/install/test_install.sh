#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds an outside program
# against it with pkg-config, as a user would; then runs it on a sample archive.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR [EXTRA_CFLAGS]
set -euo pipefail
build=$1 src=$2 extra=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in bin/trace include/trace-engine/types.h include/trace-reader/reader.h include/trace/event.h \
         include/trace-provider/provider.h include/trace-engine/context.h \
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
    "$tmp/prefix/lib/lib$pc.a" $(pkg-config --static --libs-only-l $pc | sed "s/-l$pc//") \
    -o "$tmp/count_static_$pc"
done

"$tmp/prefix/bin/trace" gen-sample -o "$tmp/sample.fxt"
for exe in count_fxtrace count_trace-reader count_static_fxtrace count_static_trace-reader; do
  out=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/$exe" "$tmp/sample.fxt")
  echo "$out" | grep -qx "event 30" || { echo "FAIL: $exe printed: $out"; exit 1; }
  echo "$out" | grep -qx "large 2" || { echo "FAIL: $exe printed: $out"; exit 1; }
done
# The instrumentation library depends on no compression library; its reader
# names a compressed archive as such, libtrace-reader reads it.
needed=$(readelf -d "$tmp/prefix/lib/libfxtrace.so" | grep NEEDED)
if echo "$needed" | grep -qE 'libzstd|libz\.so'; then echo "FAIL: libfxtrace needs: $needed"; exit 1; fi
zstd -q -c "$tmp/sample.fxt" > "$tmp/sample.fxt.zst"
out=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/count_trace-reader" "$tmp/sample.fxt.zst")
echo "$out" | grep -qx "event 30" || { echo "FAIL: count_trace-reader on zstd printed: $out"; exit 1; }
if out=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/count_fxtrace" "$tmp/sample.fxt.zst" 2>&1); then
  echo "FAIL: libfxtrace's reader read a zstd archive: $out"; exit 1
fi
echo "$out" | grep -q 'zstd-compressed archive' || { echo "FAIL: libfxtrace's reader said: $out"; exit 1; }
# A traced program, built the way the README says, records in file mode
# against the shared and the static library.
for kind in shared static; do
  # static: the archive, then what it needs (Libs.private)
  if [ $kind = shared ]; then libs=$(pkg-config --libs fxtrace); else
    libs="$tmp/prefix/lib/libfxtrace.a $(pkg-config --static --libs-only-l fxtrace | sed 's/-lfxtrace//') -pthread"; fi
  # shellcheck disable=SC2046,SC2086
  cc -std=c11 -Wall -Wextra -Werror $extra "$src/examples/demo.c" $(pkg-config --cflags fxtrace) \
    $libs -o "$tmp/demo_$kind"
  FXTRACE_OUTPUT="$tmp/demo_$kind.fxt" LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/demo_$kind" 20 >/dev/null
  out=$("$tmp/prefix/bin/trace" dump "$tmp/demo_$kind.fxt" | tail -n 12)
  echo "$out" | grep -q 'kernel object *4$' || { echo "FAIL: demo_$kind trace: $out"; exit 1; }
done
# The C++ compiler accepts the public headers too.
echo '#include <trace-engine/types.h>
#include <trace-engine/handler.h>
#include <trace-provider/provider.h>
#include <trace-reader/reader.h>
#include <trace/event.h>
int main() { return trace_make_empty_string_ref().encoded_value; }' > "$tmp/cxx.cc"
# shellcheck disable=SC2046,SC2086
c++ -std=c++17 -Wall -Wextra -Werror $extra "$tmp/cxx.cc" $(pkg-config --cflags --libs fxtrace) -o "$tmp/cxx"
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/cxx"
echo "install test passed"
