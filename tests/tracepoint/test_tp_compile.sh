#!/bin/sh
# Compile-time behaviour of <trace/tracepoint.h> (C11 and C++17):
#   - a correct header (15 fields, the limit) compiles with -Wall -Wextra -Werror;
#   - each mistake fails with a readable first error line: TP_ARGS not
#     matching TP_PROTO (count; name), an unknown element macro, a missing
#     TRACE_SYSTEM, more than 15 fields, a call with a wrong argument type
#     (also under NTRACE);
#   - two CREATE_TRACE_POINTS files are a link error (multiple definition);
#   - NTRACE: the calls compile to nothing, no engine symbol is referenced.
# Usage: test_tp_compile.sh CC CXX INCLUDE_DIR SOURCE_DIR WORK_DIR
set -eu
CC=$1 CXX=$2 INCLUDE=$3 SRC=$4 WORK=$5
mkdir -p "$WORK"
fail() { echo "FAIL: $*" >&2; exit 1; }

compile() { # lang case extra-flags → status; output in $WORK/out.txt
  if [ "$1" = c ]; then compiler=$CC; flags="-std=c11 -x c"
  else compiler=$CXX; flags="-std=c++17 -x c++"; fi
  # shellcheck disable=SC2086
  $compiler $flags -Wall -Wextra -Werror -I"$INCLUDE" -I"$SRC" -D"$2" $3 -c "$SRC/tp_bad.c" \
    -o "$WORK/tp_bad_$1_$2.o" > "$WORK/out.txt" 2>&1
}

expect_fail() { # lang case message [extra-flags]
  if compile "$1" "$2" "${4:-}"; then fail "$1 $2: compiled, but must not"; fi
  first=$(grep -m1 'error' "$WORK/out.txt" || true)
  echo "$first" | grep -q -- "$3" || {
    cat "$WORK/out.txt" >&2
    fail "$1 $2: the first error line does not say '$3': $first"
  }
  echo "ok: $1 $2: $first"
}

for lang in c cxx; do
  compile $lang CASE_OK "" || { cat "$WORK/out.txt" >&2; fail "$lang CASE_OK does not compile"; }
  echo "ok: $lang CASE_OK compiles"
  expect_fail $lang CASE_ARGS_COUNT "TP_ARGS must name every parameter of TP_PROTO"
  expect_fail $lang CASE_ARGS_NAME "lenn"
  expect_fail $lang CASE_ARGS_NAME "lenn" "-DPLAIN"
  expect_fail $lang CASE_UNKNOWN_ELEMENT "is not an element macro"
  expect_fail $lang CASE_UNKNOWN_ELEMENT "is not an element macro" "-DPLAIN"
  expect_fail $lang CASE_NO_SYSTEM "define TRACE_SYSTEM"
  expect_fail $lang CASE_TOO_MANY "at most 15 fields"
  expect_fail $lang CASE_TYPE "trace_tp_bad_event\\|not_an_int" "-DPLAIN"
  expect_fail $lang CASE_TYPE "trace_tp_bad_event\\|not_an_int" "-DPLAIN -DNTRACE"
done

# Defining the functions twice is a link error, never silent.
$CC -std=c11 -I"$INCLUDE" -I"$SRC" -DCASE_OK -c "$SRC/tp_bad.c" -o "$WORK/a.o"
$CC -std=c11 -I"$INCLUDE" -I"$SRC" -DCASE_OK -c "$SRC/tp_bad.c" -o "$WORK/b.o"
if $CC "$WORK/a.o" "$WORK/b.o" -o "$WORK/twice" > "$WORK/out.txt" 2>&1; then
  fail "two CREATE_TRACE_POINTS objects linked"
fi
grep -q "multiple definition" "$WORK/out.txt" || { cat "$WORK/out.txt" >&2; fail "no 'multiple definition'"; }
echo "ok: two CREATE_TRACE_POINTS files: multiple definition"

# NTRACE: the instantiating file and a user reference nothing of the engine
# (it links without the library), at -O0 and -O2, C and C++.
for lang in c cxx; do
  for opt in -O0 -O2; do
    if [ $lang = c ]; then compiler=$CC; flags="-std=c11 -x c"
    else compiler=$CXX; flags="-std=c++17 -x c++"; fi
    # shellcheck disable=SC2086
    $compiler $flags $opt -Wall -Wextra -Werror -DNTRACE -I"$INCLUDE" -I"$SRC" -DCASE_OK \
      -c "$SRC/tp_bad.c" -o "$WORK/ntrace.o"
    $compiler $flags $opt -Wall -Wextra -Werror -c "$SRC/tp_main.c" -o "$WORK/main.o"
    undefined=$(nm -u "$WORK/ntrace.o" | grep -E 'trace_(engine|internal)' || true)
    [ -z "$undefined" ] || fail "NTRACE $lang $opt references: $undefined"
    $compiler "$WORK/ntrace.o" "$WORK/main.o" -o "$WORK/ntrace" || fail "NTRACE $lang $opt does not link alone"
    "$WORK/ntrace" || fail "NTRACE $lang $opt: enabled() was not false"
    echo "ok: NTRACE $lang $opt: no engine symbol"
  done
done

# An event header read twice in a file (its body skipped the second time),
# and CREATE_TRACE_POINTS after such reads: each compiles cleanly, and only
# the CREATE_TRACE_POINTS file defines the descriptors.
for lang in c cxx; do
  if [ $lang = c ]; then compiler=$CC; flags="-std=c11 -x c"
  else compiler=$CXX; flags="-std=c++17 -x c++"; fi
  # shellcheck disable=SC2086
  $compiler $flags -O2 -Wall -Wextra -Werror -I"$INCLUDE" -I"$SRC" -DCASE_OK -DTWICE -DPLAIN \
    -c "$SRC/tp_bad.c" -o "$WORK/twice_plain.o" || fail "$lang: header read twice does not compile"
  # shellcheck disable=SC2086
  $compiler $flags -O2 -Wall -Wextra -Werror -I"$INCLUDE" -I"$SRC" -DCASE_OK -DTWICE -DLATE_CREATE \
    -c "$SRC/tp_bad.c" -o "$WORK/twice_create.o" || fail "$lang: late CREATE_TRACE_POINTS does not compile"
  if nm "$WORK/twice_plain.o" | grep -q ' [DBd] trace_internal_tp_tp_bad_event$'; then
    fail "$lang: a file without CREATE_TRACE_POINTS defines the descriptor"
  fi
  nm "$WORK/twice_create.o" | grep -q ' [DB] trace_internal_tp_tp_bad_event$' ||
    fail "$lang: late CREATE_TRACE_POINTS defines no descriptor"
  echo "ok: $lang: header read twice; CREATE_TRACE_POINTS after earlier reads"
done

# An event header inside another one's guarded part (it would change
# TRACE_SYSTEM under the outer header's events): a compile error that says so.
for lang in c cxx; do
  if [ $lang = c ]; then compiler=$CC; flags="-std=c11 -x c"
  else compiler=$CXX; flags="-std=c++17 -x c++"; fi
  # shellcheck disable=SC2086
  if $compiler $flags -Wall -Wextra -I"$INCLUDE" -I"$SRC" -DCASE_OK -c "$SRC/tp_nest.c" \
    -o "$WORK/nest.o" > "$WORK/out.txt" 2>&1; then
    fail "$lang: a nested event header compiled"
  fi
  first=$(grep -m1 'error' "$WORK/out.txt" || true)
  echo "$first" | grep -q "an event header includes another event header" || {
    cat "$WORK/out.txt" >&2
    fail "$lang nested event header: the first error line does not say so: $first"
  }
  echo "ok: $lang nested event header: $first"
done

# A first read with the user's TRACE_HEADER_MULTI_READ defined still expands
# the record functions (the fresh-read flag is private to define_trace.h).
$CC -std=c11 -O0 -Wall -Wextra -Werror -I"$INCLUDE" -I"$SRC" -DCASE_OK -DPLAIN \
  -DTRACE_HEADER_MULTI_READ= -c "$SRC/tp_bad.c" -o "$WORK/multi.o" ||
  fail "a first read under TRACE_HEADER_MULTI_READ does not compile"
if nm -u "$WORK/multi.o" | grep -q 'trace_internal_tp_do_'; then
  fail "a first read under TRACE_HEADER_MULTI_READ left the record functions undefined"
fi
echo "ok: first read under TRACE_HEADER_MULTI_READ"
