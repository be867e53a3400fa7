#!/usr/bin/env bash
# Builds the seed corpus and runs each fuzz target for SECONDS.
#   fuzz/run.sh BUILD_DIR SECONDS
# BUILD_DIR is configured here if needed (clang, -DFXTRACE_FUZZ=ON). The
# working corpus and any crash reproducers stay in BUILD_DIR/fuzz-out/.
# Exits non-zero when a target finds a crash, a leak, a timeout or an OOM.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build=$1
seconds=$2
src=$(cd "$(dirname "$0")/.." && pwd)

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  CC=clang CXX=clang++ cmake -S "$src" -B "$build" -DFXTRACE_FUZZ=ON \
    -DFXTRACE_TESTS=OFF -DFXTRACE_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
targets=(fuzz_reader fuzz_format fuzz_names fuzz_tools)
# the kernel page converter, when the build has libtracefs
if grep -q '^TRACEFS_FOUND:INTERNAL=1' "$build/CMakeCache.txt"; then targets+=(fuzz_kernel_page); fi
cmake --build "$build" --target make_corpus "${targets[@]}" >/dev/null

out="$build/fuzz-out"
mkdir -p "$out/seeds"
"$build/fuzz/make_corpus" "$out/seeds"
mkdir -p "$out/format-seeds"
"$build/fuzz/make_corpus" --formats "$out/format-seeds" "$src/fuzz/kernel-formats"

status=0
for target in "${targets[@]}"; do
  corpus="$out/$target-corpus"
  artifacts="$out/$target-artifacts"
  mkdir -p "$corpus" "$artifacts"
  echo "== $target for ${seconds}s"
  # New inputs go to the first directory; the seeds are read only. -jobs
  # would split the time budget, so one process runs the whole time.
  seeds="$out/seeds"
  [[ $target == fuzz_kernel_page ]] && seeds="$src/fuzz/kernel-seeds" # real captured pages
  [[ $target == fuzz_format ]] && seeds="$out/format-seeds" # real and crafted formats
  if ! "$build/fuzz/$target" "$corpus" "$seeds" \
      -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
      -max_len=65536 -artifact_prefix="$artifacts/" -print_final_stats=1 \
      >"$out/$target.log" 2>&1; then
    echo "$target FAILED: see $out/$target.log and $artifacts/" >&2
    tail -n 40 "$out/$target.log" >&2
    status=1
  else
    grep -E "^stat::(number_of_executed_units|new_units_added)|cov:" "$out/$target.log" | tail -n 3
  fi
done
exit $status
