#!/usr/bin/env bash
# bench/alert_latency.sh: the latency from TRACE_ALERT to the trace stopped in
# the program that raised it, through `trace record --buffering-mode=circular
# --trigger=bench_stop:stop` (bench/alert_latency.c), over repeats: median and
# max. A timing: run it on a quiet machine (bench/README.md).
#
#   bench/alert_latency.sh [--build-dir DIR] [--repeats N] [--buffer-size MB]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build-bench"
REPEATS=20
SIZE=4
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD="$(realpath -m "$2")"; shift 2 ;;
    --repeats) REPEATS="$2"; shift 2 ;;
    --buffer-size) SIZE="$2"; shift 2 ;;
    *) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DFXTRACE_TESTS=OFF >/dev/null
fi
cmake --build "$BUILD" --target trace bench_alert_latency >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
results=()
for i in $(seq 1 "$REPEATS"); do
  out=$(FXTRACE_SOCKET="$tmp/none.sock" "$BUILD/trace" record --buffering-mode=circular \
    --buffer-size="$SIZE" --duration=0 --trigger=bench_stop:stop -o "$tmp/t.fxt" -- \
    "$BUILD/bench/bench_alert_latency" 2>/dev/null)
  ns=$(printf '%s\n' "$out" | sed -n 's/^latency_ns=//p')
  [ -n "$ns" ] || { echo "alert_latency: run $i printed no latency" >&2; exit 1; }
  results+=("$ns")
done
printf '%s\n' "${results[@]}" | sort -n | awk -v size="$SIZE" '
  { v[NR] = $1 }
  END {
    med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "alert to stopped, circular %d MB, %d runs: median %.3f ms, min %.3f ms, max %.3f ms\n",
           size, NR, med / 1e6, v[1] / 1e6, v[NR] / 1e6
  }'
