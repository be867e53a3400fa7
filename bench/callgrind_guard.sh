#!/usr/bin/env bash
# bench/callgrind_guard.sh: instructions per event of every macro form, under
# valgrind --tool=callgrind (deterministic, unlike a timing on a shared
# machine), checked against a budget per scenario. Not a ctest: performance
# is never asserted in the test suite; run it by hand after touching the
# record path (bench/README.md, "callgrind guards").
#
#   bench/callgrind_guard.sh [--build-dir DIR] [--events N] [--report] [SCENARIO...]
#
# For each scenario of bench_fxtrace (default: every one with a budget
# below), two runs collect only inside the scenario's loop function
# (--toggle-collect=loop_S), with N and 2N timed events after the same
# warm-up: (Ir(2N) - Ir(N)) / N is the enabled path's instructions per
# event, the one-time costs (thread registration, interning) cancelled out.
# A duration or a begin/end pair counts as one iteration.
#
# Exit status: 0 when every scenario is within its budget, 1 when one is
# over (each line says which), 2 on a usage or build problem. --report
# prints the figures and never fails on a budget. FXTRACE_CLOCK is passed
# through (e.g. FXTRACE_CLOCK=monotonic for the clock_gettime source; the
# budgets are for the TSC source).
#
# --build-dir defaults to build-bench, which bench/run configures (-O2
# -DNDEBUG); the script configures it the same way if it does not exist and
# builds bench_fxtrace there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build-bench"
EVENTS=20000
REPORT=0
SCENARIOS=()

# Budgets: instructions per event on x86_64, GCC 12 -O2, engine clock on the
# TSC source (valgrind's rdtsc), about 10% above what the code measured when
# the budgets were set (bench/RESULTS.md, "Instructions per event of every
# macro form"); another compiler may need its own. Raise one only with a
# reason in the commit message.
declare -A BUDGET=(
  [off]=8
  [instant0]=95
  [instant2]=111
  [instant_str]=174
  [instant_lit]=115
  [instant_str8]=166
  [instant_str_long]=222
  [instant_str2]=224
  [instant_mixed]=206
  [duration]=120
  [duration_args]=228
  [begin_end]=185
  [counter]=101
  [async]=101
  [async_str]=174
  [flow]=95
  [tp_int2]=105
  [tp_str]=145
  [alert_off]=8
  [alert]=391
)
ORDER=(off instant0 instant2 instant_str instant_lit instant_str8 instant_str_long instant_str2
  instant_mixed duration duration_args begin_end counter async async_str flow tp_int2 tp_str
  alert_off alert)

usage() { sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD="$(realpath -m "$2")"; shift 2 ;;
    --events) EVENTS="$2"; shift 2 ;;
    --report) REPORT=1; shift ;;
    -h|--help) usage 0 ;;
    -*) echo "callgrind_guard: unknown option $1" >&2; usage ;;
    *) SCENARIOS+=("$1"); shift ;;
  esac
done
[ ${#SCENARIOS[@]} -gt 0 ] || SCENARIOS=("${ORDER[@]}")
command -v valgrind >/dev/null || { echo "callgrind_guard: valgrind is missing" >&2; exit 2; }

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DFXTRACE_TESTS=OFF >/dev/null || exit 2
fi
cmake --build "$BUILD" --target bench_fxtrace >/dev/null || { echo "callgrind_guard: build failed" >&2; exit 2; }
FX="$BUILD/bench/bench_fxtrace"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

ir() { # ir SCENARIO EVENTS -> Ir collected in loop_SCENARIO
  valgrind --tool=callgrind --callgrind-out-file="$TMP/out" --toggle-collect="loop_$1" \
    "$FX" --scenario "$1" --events "$2" --warmup 1000 >"$TMP/stdout" 2>"$TMP/log" || return 1
  awk '/^(summary|totals):/ { print $2; exit }' "$TMP/out"
}

status=0
printf '%-18s %10s %8s  %s\n' scenario "Ir/event" budget verdict
for s in "${SCENARIOS[@]}"; do
  if ! a="$(ir "$s" "$EVENTS")" || ! b="$(ir "$s" $((2 * EVENTS)))"; then
    printf '%-18s %10s %8s  %s\n' "$s" "-" "${BUDGET[$s]:--}" "FAILED under valgrind: $(tail -1 "$TMP/log")"
    status=1
    continue
  fi
  ipe="$(awk -v a="$a" -v b="$b" -v n="$EVENTS" 'BEGIN { printf "%.1f", (b - a) / n }')"
  budget="${BUDGET[$s]:-}"
  verdict="ok"
  if [ -z "$budget" ]; then
    verdict="(no budget)"
  elif awk -v x="$ipe" -v b="$budget" 'BEGIN { exit !(x > b) }'; then
    verdict="OVER BUDGET"
    [ "$REPORT" = 1 ] || status=1
  fi
  src="$(sed -n 's/.* clock_source=\([^ ]*\).*/\1/p' "$TMP/stdout")"
  printf '%-18s %10s %8s  %s (clock %s)\n' "$s" "$ipe" "${budget:--}" "$verdict" "${src:-na}"
done
exit $status
