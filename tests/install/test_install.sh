#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds outside programs
# against it both ways a user would: with pkg-config, and with CMake's
# find_package(fxtrace) and its imported targets (tests/install/cmake_consumer);
# then runs them on a sample archive and records the demo in file mode.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR [EXTRA_CFLAGS]
set -euo pipefail
build=$1 src=$(cd "$2" && pwd) extra=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in bin/trace include/trace-engine/types.h include/trace-reader/reader.h include/trace/event.h \
         include/trace-provider/provider.h include/trace-engine/context.h \
         lib/libfxtrace.a lib/libfxtrace.so lib/libtrace-reader.a lib/libtrace-reader.so \
         lib/pkgconfig/fxtrace.pc lib/pkgconfig/trace-reader.pc \
         lib/cmake/fxtrace/fxtraceConfig.cmake lib/cmake/fxtrace/fxtraceConfigVersion.cmake \
         lib/cmake/fxtrace/fxtraceTargets.cmake; do
  [ -e "$tmp/prefix/$f" ] || { echo "FAIL: not installed: $f"; exit 1; }
done

# What the demo's main thread always records. A worker may find the queue closed
# before it ever runs on a loaded machine (CI under ASan), so the number of named
# threads is not checked.
check_demo_trace() {
  "$tmp/prefix/bin/trace" dump "$1" >"$1.txt"
  for want in 'name="produce all"' 'name="start"' 'name="done"'; do
    grep -q "$want" "$1.txt" || { echo "FAIL: $2 trace has no $want"; tail -n 12 "$1.txt"; exit 1; }
  done
}

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
  check_demo_trace "$tmp/demo_$kind.fxt" "demo_$kind"
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

# The same programs through find_package(fxtrace): fxtrace::trace-reader, fxtrace::fxtrace and
# their -static forms. The build tree is then moved away from the prefix's path: the package
# locates itself relative to its config file.
cp -a "$tmp/prefix" "$tmp/moved"
cmake -S "$src/tests/install/cmake_consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/moved" \
  -DFXTRACE_EXAMPLES="$src/examples" -DCMAKE_C_FLAGS="-Wall -Werror $extra" \
  -DCMAKE_CXX_FLAGS="-Wall -Werror $extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" >"$tmp/consumer.log" 2>&1 ||
  { cat "$tmp/consumer.log"; echo "FAIL: find_package(fxtrace) did not configure"; exit 1; }
grep -q "$tmp/moved/lib/cmake/fxtrace" "$tmp/consumer/CMakeCache.txt" ||
  { echo "FAIL: fxtrace_DIR is not the moved tree's"; exit 1; }
cmake --build "$tmp/consumer" -j2 >>"$tmp/consumer.log" 2>&1 ||
  { cat "$tmp/consumer.log"; echo "FAIL: building against find_package(fxtrace)"; exit 1; }
for target in trace-reader trace-reader-static fxtrace fxtrace-static; do
  out=$(LD_LIBRARY_PATH="$tmp/moved/lib" "$tmp/consumer/count_$target" "$tmp/sample.fxt")
  echo "$out" | grep -qx "event 30" || { echo "FAIL: cmake count_$target printed: $out"; exit 1; }
done
for target in fxtrace fxtrace-static; do
  FXTRACE_OUTPUT="$tmp/cmake_$target.fxt" LD_LIBRARY_PATH="$tmp/moved/lib" \
    "$tmp/consumer/demo_$target" 20 >/dev/null
  check_demo_trace "$tmp/cmake_$target.fxt" "cmake demo_$target"
done
# the shared targets really link the shared libraries
libs=$(LD_LIBRARY_PATH="$tmp/moved/lib" ldd "$tmp/consumer/count_trace-reader")
grep -q "libtrace-reader.so.0 => $tmp/moved/lib" <<<"$libs" ||
  { echo "FAIL: count_trace-reader does not use the shared library: $libs"; exit 1; }
LD_LIBRARY_PATH="$tmp/moved/lib" "$tmp/consumer/cxx"
echo "install test passed"
