#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` builds it from the build directory with the binaries,
# libraries, headers, pkg-config and CMake files, man pages and systemd units; `dpkg -i`
# installs it into this machine; a program built against the installed headers (pkg-config and
# find_package) is recorded with the installed trace and trace_manager; `dpkg -P` removes it
# again (also when the test fails). Needs root and dpkg; skips otherwise, and when a package
# named fxtrace is already installed (it is not ours to replace). With KERNEL=1 (the kernel
# provider is built) the package also holds trace_kernel_provider, its man page and its unit.
# Usage: test_deb.sh BUILD_DIR SOURCE_DIR EXTRA_CFLAGS KERNEL  (EXTRA_CFLAGS: the sanitizer
# flags of the build, may be empty; KERNEL: 1 or 0)
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) extra=${3:-} kernel=${4:?KERNEL (1 or 0) missing}
[ "$(id -u)" -eq 0 ] || { echo "SKIP: installing a .deb needs root"; exit 77; }
for tool in dpkg dpkg-deb cpack pkg-config; do
  command -v $tool >/dev/null || { echo "SKIP: $tool is missing"; exit 77; }
done
if dpkg-query -W -f='${Status}' fxtrace 2>/dev/null | grep -q "ok installed"; then
  echo "SKIP: a package named fxtrace is already installed; not replacing it"
  exit 77
fi
tmp=$(mktemp -d)
installed=0
cleanup() {
  if [ $installed -eq 1 ]; then dpkg -P fxtrace >/dev/null || echo "WARNING: dpkg -P fxtrace failed"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# dpkg's lock may be held for a moment by another dpkg or apt: retry a little.
with_dpkg_lock() {
  local i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    if "$@" >"$tmp/dpkg.log" 2>&1; then return 0; fi
    grep -q "lock" "$tmp/dpkg.log" || { cat "$tmp/dpkg.log"; return 1; }
    sleep 3
  done
  cat "$tmp/dpkg.log"
  return 1
}

# cpack's own output names a failing step but not why: the why is in its logs under
# _CPack_Packages (PreinstallOutput.log for the install step it runs first, and others), which
# the cleanup removes with $tmp, so a failure prints them first.
cpack_logs() {
  cat "$tmp/cpack.log"
  local log found=0
  while IFS= read -r -d '' log; do
    found=1
    echo "---- ${log#"$tmp/pkg/"}"
    cat "$log"
  done < <(find "$tmp/pkg/_CPack_Packages" -name '*.log' -type f -print0 2>/dev/null | sort -z)
  [ $found -eq 1 ] || echo "---- (no log under $tmp/pkg/_CPack_Packages)"
}
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1 ||
  { cpack_logs; fail "cpack -G DEB"; }
deb=$(find "$tmp/pkg" -maxdepth 1 -name 'fxtrace_*.deb')
[ -n "$deb" ] || fail "no .deb in $(ls "$tmp/pkg")"
contents=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
for f in /usr/bin/trace /usr/bin/trace_manager /usr/include/trace/event.h \
         /usr/include/trace-reader/reader.h /usr/include/trace-provider/provider.h \
         /usr/lib/pkgconfig/fxtrace.pc /usr/lib/pkgconfig/trace-reader.pc \
         /usr/lib/cmake/fxtrace/fxtraceConfig.cmake /usr/lib/cmake/fxtrace/fxtraceTargets.cmake \
         /usr/lib/systemd/system/trace_manager.socket /usr/lib/systemd/system/trace_manager.service \
         /usr/share/man/man1/trace.1 /usr/share/man/man8/trace_manager.8 /usr/share/man/man3/fxtrace.3; do
  grep -qx -e "$f" -e "$f.gz" <<<"$contents" || fail "$f is not in the package"
done
kernel_files="/usr/bin/trace_kernel_provider /usr/lib/systemd/system/trace_kernel_provider.service
              /usr/share/man/man8/trace_kernel_provider.8"
for f in $kernel_files; do
  if [ "$kernel" = 1 ]; then
    grep -qx -e "$f" -e "$f.gz" <<<"$contents" || fail "$f is not in the package"
  else
    ! grep -qx -e "$f" -e "$f.gz" <<<"$contents" || fail "$f is in the package but not built"
  fi
done
grep -qE '^/usr/lib/(.*/)?libfxtrace\.so' <<<"$contents" || fail "no libfxtrace.so in the package"
grep -qE '^/usr/lib/(.*/)?libtrace-reader\.so' <<<"$contents" || fail "no libtrace-reader.so"
mkdir "$tmp/control"
dpkg-deb -e "$deb" "$tmp/control"
grep -qx "activate-noawait ldconfig" "$tmp/control/triggers" || fail "no ldconfig trigger"
[ -x "$tmp/control/postinst" ] && [ -x "$tmp/control/postrm" ] || fail "no postinst/postrm"
depends=$(dpkg-deb -f "$deb" Depends)
grep -q libc6 <<<"$depends" || fail "Depends does not name libc6: $depends"

with_dpkg_lock dpkg -i "$deb" || fail "dpkg -i $deb"
installed=1
dpkg-query -W -f='${Status}' fxtrace | grep -q "ok installed" || fail "dpkg does not list fxtrace"
grep -qx "ExecStart=/usr/bin/trace_manager \$TRACE_MANAGER_OPTIONS" \
  /usr/lib/systemd/system/trace_manager.service || fail "the installed unit does not start /usr/bin/trace_manager"
if [ "$kernel" = 1 ]; then
  grep -qx "ExecStart=/usr/bin/trace_kernel_provider" /usr/lib/systemd/system/trace_kernel_provider.service ||
    fail "the installed kernel provider unit does not start /usr/bin/trace_kernel_provider"
  /usr/bin/trace_kernel_provider --help | grep -q "kernel:sched" || fail "/usr/bin/trace_kernel_provider --help"
fi
# (minimal images may tell dpkg not to install man pages at all)
if grep -rqs 'path-exclude.*/usr/share/man' /etc/dpkg/dpkg.cfg.d/; then
  echo "note: dpkg is configured to skip /usr/share/man; the installed man page is not checked"
else
  where=$(man -w trace 2>&1) || fail "man -w trace: $where"
  grep -q '^/usr/share/man/man1/trace\.1' <<<"$where" || fail "man -w trace: $where"
fi
/usr/bin/trace --version | grep -q "trace (fxtrace)" || fail "/usr/bin/trace --version"

# A program built against the installed headers and libraries, both ways.
env -u PKG_CONFIG_PATH pkg-config --exists fxtrace || fail "pkg-config does not find the installed fxtrace"
# shellcheck disable=SC2046,SC2086
cc -std=c11 -Wall -Werror $extra "$src/examples/demo.c" \
  $(env -u PKG_CONFIG_PATH pkg-config --cflags --libs fxtrace) -o "$tmp/demo_pc"
cmake -S "$src/tests/install/cmake_consumer" -B "$tmp/consumer" -DFXTRACE_EXAMPLES="$src/examples" \
  -DCMAKE_C_FLAGS="$extra" -DCMAKE_CXX_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" \
  >"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; fail "find_package(fxtrace) from /usr"; }
grep -q "^fxtrace_DIR:PATH=/usr/lib/cmake/fxtrace" "$tmp/consumer/CMakeCache.txt" ||
  fail "find_package found $(grep fxtrace_DIR "$tmp/consumer/CMakeCache.txt")"
cmake --build "$tmp/consumer" --target demo_fxtrace -j2 >>"$tmp/consumer.log" 2>&1 ||
  { cat "$tmp/consumer.log"; fail "building against the installed package with CMake"; }
ldd "$tmp/demo_pc" >"$tmp/ldd.txt"
grep -qE 'libfxtrace\.so\.[0-9]+ => (/usr)?/lib/libfxtrace' "$tmp/ldd.txt" || fail "demo_pc does not use /usr/lib's libfxtrace: $(cat "$tmp/ldd.txt")"

# Record them with the installed tools: the installed trace_manager, then the installed trace.
sock="$tmp/manager.sock"
/usr/bin/trace_manager --socket "$sock" 2>"$tmp/manager.log" &
manager=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "the installed trace_manager did not listen: $(cat "$tmp/manager.log")"
for prog in "$tmp/demo_pc" "$tmp/consumer/demo_fxtrace"; do
  FXTRACE_SOCKET="$sock" /usr/bin/trace record -o "$tmp/rec.fxt" -- "$prog" 30 >/dev/null 2>"$tmp/rec.log" ||
    fail "trace record -- $prog: $(cat "$tmp/rec.log")"
  grep -q "terminated" "$tmp/rec.log" || fail "the provider did not stop cleanly: $(cat "$tmp/rec.log")"
  /usr/bin/trace summary --format=json "$tmp/rec.fxt" >"$tmp/summary.json"
  grep -q '"name":"demo"' "$tmp/summary.json" || fail "no demo provider in the recording"
  grep -q '"name":"produce"' "$tmp/summary.json" || fail "no durations in the recording: $(head -c 400 "$tmp/summary.json")"
done
kill -TERM $manager
wait $manager || fail "the installed trace_manager exited with $?"
grep -q "listening on $sock" "$tmp/manager.log" || fail "the recording did not go through the installed manager"

with_dpkg_lock dpkg -P fxtrace || fail "dpkg -P fxtrace (remove and purge)"
installed=0
[ ! -e /usr/bin/trace ] && [ ! -e /usr/include/trace/event.h ] &&
  [ ! -e /usr/lib/systemd/system/trace_kernel_provider.service ] || fail "dpkg -r left files behind"
echo "deb package: ok ($(basename "$deb"), $(wc -l <<<"$contents") paths)"
