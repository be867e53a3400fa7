#!/usr/bin/env bash
# The man pages as installed by `cmake --install`: each renders with `man -l` without a warning,
# has the sections a man page needs, and `man -M` finds it by name. trace(1) has a section for
# every command `trace --help` lists, and every long option of `trace COMMAND --help` and of
# `trace_manager --help` appears in its page; likewise trace_kernel_provider(8) when the program
# is built (KERNEL=1).
# Usage: test_man_pages.sh BUILD_DIR KERNEL
set -euo pipefail
build=$1 kernel=${2:?KERNEL (1 or 0) missing}
src=$(cd "$(dirname "$0")/../.." && pwd)
command -v man >/dev/null || { echo "SKIP: man is not installed (apt-get install man-db)"; exit 77; }
[ -f "$build/man/trace.1" ] || { echo "SKIP: the man pages were not built (scdoc missing)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
mandir="$tmp/prefix/share/man"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

render() { # page file -> text on stdout; groff warnings fail
  local out err
  out=$(MANWIDTH=100 MAN_KEEP_FORMATTING=0 man --warnings -l "$1" 2>"$tmp/err" | col -b)
  err=$(cat "$tmp/err")
  [ -z "$err" ] || bad "$1: man -l warns: $err"
  printf '%s\n' "$out"
}

check_page() { # name section required-headings...
  local name=$1 section=$2
  shift 2
  local file="$mandir/man$section/$name.$section"
  [ -f "$file" ] || { bad "not installed: $file"; return; }
  local text
  text=$(render "$file")
  printf '%s\n' "$text" >"$tmp/$name.$section.txt"
  for heading in "$@"; do
    grep -qx "$heading" <<<"$text" || bad "$name($section): no $heading section"
  done
  grep -q "^ *$name - " <<<"$text" || bad "$name($section): NAME line is not '$name - ...'"
  if MANWIDTH=100 man -M "$mandir" "$section" "$name" >"$tmp/found" 2>&1; then
    col -b <"$tmp/found" >"$tmp/found.txt"
    grep -q "^ *$name - " "$tmp/found.txt" || bad "man -M: $name($section) reads: $(head -c 200 "$tmp/found")"
  else
    bad "man -M $mandir $section $name does not find the page: $(head -c 200 "$tmp/found")"
  fi
}

check_page trace 1 NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS "TIME RANGES" ENVIRONMENT \
  SECURITY "EXIT STATUS" FILES EXAMPLES "SEE ALSO"
check_page trace_manager 8 NAME SYNOPSIS DESCRIPTION OPTIONS SYSTEMD SECURITY "EXIT STATUS" FILES \
  "SEE ALSO"
check_page fxtrace 3 NAME SYNOPSIS DESCRIPTION MACROS "TYPED TRACEPOINTS" ENVIRONMENT \
  "READING ARCHIVES" EXAMPLE "SEE ALSO"
if [ "$kernel" = 1 ]; then
  check_page trace_kernel_provider 8 NAME SYNOPSIS DESCRIPTION CATEGORIES OPTIONS ENVIRONMENT \
    PRIVILEGES SYSTEMD LIMITS "EXIT STATUS" FILES "SEE ALSO"
elif [ -e "$mandir/man8/trace_kernel_provider.8" ]; then
  bad "trace_kernel_provider(8) is installed but the program is not built"
fi

trace="$tmp/prefix/bin/trace"
commands=$("$trace" --help | awk '/^Commands:/ {on=1; next} on && /^  [a-z]/ {print $1}')
[ -n "$commands" ] || bad "trace --help lists no command"
for cmd in $commands; do
  # the command's own section in trace(1), "   trace CMD" (a subsection heading)
  section=$(awk -v h="   trace $cmd" '$0 == h {on=1; next} on && /^   [a-z]/ {exit} on && /^[A-Z]/ {exit} on' \
    "$tmp/trace.1.txt")
  [ -n "$section" ] || { bad "trace(1) has no section for 'trace $cmd'"; continue; }
  for opt in $("$trace" "$cmd" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
    [ "$opt" = --help ] && continue
    grep -qe "$opt" <<<"$section" || bad "trace(1), 'trace $cmd': option $opt is not documented"
  done
done
for opt in $("$tmp/prefix/bin/trace_manager" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
  grep -qe "$opt" "$tmp/trace_manager.8.txt" || bad "trace_manager(8): option $opt is not documented"
done
if [ "$kernel" = 1 ]; then
  kprovider="$tmp/prefix/bin/trace_kernel_provider"
  if [ -x "$kprovider" ]; then
    for opt in $("$kprovider" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
      grep -qe "$opt" "$tmp/trace_kernel_provider.8.txt" ||
        bad "trace_kernel_provider(8): option $opt is not documented"
    done
  else
    bad "trace_kernel_provider is not installed"
  fi
  # every environment variable the kernel provider reads (src/kernel) is documented
  vars=$(grep -ohE 'getenv\("FXTRACE_[A-Z_]+"' "$src"/src/kernel/*.c | grep -oE 'FXTRACE_[A-Z_]+' | sort -u)
  [ -n "$vars" ] || bad "found no getenv(\"FXTRACE_...\") in src/kernel"
  for var in $vars; do
    grep -q "$var" "$tmp/trace_kernel_provider.8.txt" ||
      bad "trace_kernel_provider(8): $var is not documented"
  done
fi
[ $fail -eq 0 ] || exit 1
echo "man pages: ok ($(echo $commands | wc -w) trace commands)"
