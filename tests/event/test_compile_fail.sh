#!/bin/sh
# Compile-time checks of <trace/event.h>: compile_fail.c, as C and as C++,
# fails for each bad case with the expected static_assert message in the
# compiler's output, and the control case (the limits: 15 pairs) compiles
# cleanly with -Wall -Wextra -Werror. A TRACE_ALERT literal name of 15
# characters fails; run-time names of any length compile. C++ also rejects a temporary
# std::string in TRACE_DURATION (compile_fail_cxx.cc).
# Usage: test_compile_fail.sh CC CXX INCLUDE_DIR SOURCE_DIR WORK_DIR
set -eu
CC=$1 CXX=$2 INCLUDE=$3 SRC=$4 WORK=$5
mkdir -p "$WORK"
fail() { echo "FAIL: $*" >&2; exit 1; }

compile() { # lang case source → status; output in $WORK/out.txt
  if [ "$1" = c ]; then compiler=$CC; flags="-std=c11 -x c"
  else compiler=$CXX; flags="-std=c++17 -x c++"; fi
  # shellcheck disable=SC2086
  $compiler $flags -Wall -Wextra -Werror -I"$INCLUDE" -D"$2" -fsyntax-only "$3" \
    > "$WORK/out.txt" 2>&1
}

expect_fail() { # lang case message [source]
  src=${4:-$SRC/compile_fail.c}
  if compile "$1" "$2" "$src"; then fail "$1 $2: compiled, but must not"; fi
  grep -q "$3" "$WORK/out.txt" || {
    cat "$WORK/out.txt" >&2
    fail "$1 $2: failed without the message '$3'"
  }
  echo "ok: $1 $2 fails: $3"
}

for lang in c cxx; do
  compile $lang CASE_OK "$SRC/compile_fail.c" || {
    cat "$WORK/out.txt" >&2
    fail "$lang CASE_OK (15 pairs, the limits) does not compile"
  }
  echo "ok: $lang CASE_OK compiles"
  expect_fail $lang CASE_TOO_MANY "at most TRACE_MAX_ARGS (15) name/value pairs"
  expect_fail $lang CASE_TOO_MANY_DURATION "at most TRACE_MAX_ARGS (15) name/value pairs"
  expect_fail $lang CASE_ODD "an odd number of items was given"
  expect_fail $lang CASE_ODD_COUNTER "an odd number of items was given"
  expect_fail $lang CASE_ODD_DURATION "an odd number of items was given"
  expect_fail $lang CASE_STRUCT_VALUE "cannot infer the argument type of this value"
  expect_fail $lang CASE_ALERT_NAME_TOO_LONG "an alert name is at most 14 characters"
done
compile cxx CASE_OK "$SRC/compile_fail_cxx.cc" || {
  cat "$WORK/out.txt" >&2
  fail "compile_fail_cxx.cc CASE_OK does not compile"
}
echo "ok: cxx compile_fail_cxx.cc CASE_OK compiles"
expect_fail cxx CASE_TEMPORARY_STRING "a temporary std::string would dangle" \
  "$SRC/compile_fail_cxx.cc"
