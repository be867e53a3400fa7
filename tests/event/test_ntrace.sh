#!/bin/sh
# NTRACE (API.md §1): with NTRACE defined, every macro of <trace/event.h>
# compiles to nothing that runs. For C and C++, at -O0 and -O2:
#   1. ntrace_all.{c,cc} (every macro, side-effecting arguments) compiles
#      with -Wall -Wextra -Werror into an object that references no symbol
#      starting with trace_ (nm -u; internal names are trace_engine__* and the like);
#   2. the program built from that object runs and reports no side effect
#      (an evaluated argument would abort or count);
#   3. control: the same source without NTRACE does reference the engine,
#      so the nm check can fail;
# and ntrace_nonce.c references trace_generate_nonce and nothing else of
# the engine (TRACE_NONCE is not disabled by NTRACE).
# Usage: test_ntrace.sh CC CXX INCLUDE_DIR SOURCE_DIR WORK_DIR
set -eu
CC=$1 CXX=$2 INCLUDE=$3 SRC=$4 WORK=$5
mkdir -p "$WORK"
fail() { echo "FAIL: $*" >&2; exit 1; }

undefined() { # object → $WORK/nm.txt, its undefined symbols (fails the test if nm fails)
  nm -u "$1" > "$WORK/nm.txt" || fail "nm failed on $1"
}
engine_symbols() { # the engine symbols in $WORK/nm.txt, one a line
  awk '{print $NF}' "$WORK/nm.txt" | { grep -E '^trace_' || [ $? -eq 1 ]; }  # no match is an empty list
}

for lang in c cxx; do
  if [ $lang = c ]; then
    compiler=$CC; src=$SRC/ntrace_all.c; std=-std=c11
  else
    compiler=$CXX; src=$SRC/ntrace_all.cc; std=-std=c++17
  fi
  for opt in -O0 -O2; do
    obj=$WORK/ntrace_$lang$opt.o
    "$compiler" $std $opt -Wall -Wextra -Werror -I"$INCLUDE" -I"$SRC" -c "$src" -o "$obj" \
      || fail "$lang $opt: does not compile with NTRACE"
    undefined "$obj"
    [ -s "$WORK/nm.txt" ] || fail "$lang $opt: nm -u lists nothing (not even libc); check broken?"
    syms=$(engine_symbols)
    [ -z "$syms" ] || fail "$lang $opt: NTRACE object references engine symbols: $syms"
    "$compiler" "$obj" -o "$WORK/ntrace_$lang$opt" || fail "$lang $opt: does not link"
    out=$("$WORK/ntrace_$lang$opt") || fail "$lang $opt: the program failed (side effects?)"
    [ "$out" = "ok: no side effects" ] || fail "$lang $opt: unexpected output: $out"
    echo "ok: $lang $opt: no engine symbol, no side effect"

    ctl=$WORK/control_$lang$opt.o
    "$compiler" $std $opt -Wall -Wextra -Werror -DNTRACE_CONTROL -I"$INCLUDE" -I"$SRC" \
      -c "$src" -o "$ctl" || fail "$lang $opt: control does not compile without NTRACE"
    undefined "$ctl"
    syms=$(engine_symbols)
    echo "$syms" | grep -q '^trace_internal_write_event_at_site$' \
      || fail "$lang $opt: control references no write helper: $syms"
    echo "$syms" | grep -q '^trace_engine__acquire_context_for_site$' \
      || fail "$lang $opt: control does not call the site check's out-of-line part"
  done
done

obj=$WORK/ntrace_nonce.o
"$CC" -std=c11 -O0 -Wall -Wextra -Werror -I"$INCLUDE" -c "$SRC/ntrace_nonce.c" -o "$obj" \
  || fail "ntrace_nonce.c does not compile"
undefined "$obj"
syms=$(engine_symbols)
[ "$syms" = "trace_generate_nonce" ] || fail "TRACE_NONCE with NTRACE: engine symbols: $syms"
echo "ok: TRACE_NONCE is the only engine reference under NTRACE"
