#!/usr/bin/env bash
# Throughput of `trace convert` (FXT -> Chrome JSON), `trace dump` and
# `trace summary` on an archive of at least 100 MiB made by `trace gen-sample
# --repeat N`, plain and compressed (`zstd -1`, `gzip -1`: the reader
# decompresses as it reads); records
# the best of 3 runs of each in the "convert throughput" section of
# bench/RESULTS.md (other sections are kept).
#   bench/convert_throughput.sh BUILD_DIR
# BUILD_DIR holds a built `trace` (RelWithDebInfo or Release, not a sanitizer
# build); the archive and outputs go to BUILD_DIR/bench-out/.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
trace="$build/trace"
results="$(cd "$(dirname "$0")" && pwd)/RESULTS.md"
out="$build/bench-out"
target_bytes=$((100 * 1024 * 1024))
[[ -x "$trace" ]] || { echo "no trace binary in $build: build it first" >&2; exit 1; }
mkdir -p "$out"

# Size of the fixed part and of one repetition, to pick N for the target size.
"$trace" gen-sample -o "$out/r1.fxt" --repeat 1
"$trace" gen-sample -o "$out/r2.fxt" --repeat 2
r1=$(stat -c %s "$out/r1.fxt")
per=$(($(stat -c %s "$out/r2.fxt") - r1))
repeat=$(((target_bytes - r1 + per - 1) / per + 1))
archive="$out/archive.fxt"
"$trace" gen-sample -o "$archive" --repeat "$repeat"
size=$(stat -c %s "$archive")
echo "archive: $size bytes (--repeat $repeat)"

# Best wall time of 3 runs, in seconds; the file is read once first so that
# every run finds it in the page cache.
cat "$archive" >/dev/null
best_of_3() {
  local best="" t0 t1 t
  for _ in 1 2 3; do
    t0=$(date +%s%N)
    "$@" >/dev/null 2>"$out/stderr.txt" || { cat "$out/stderr.txt" >&2; exit 1; }
    t1=$(date +%s%N)
    t=$((t1 - t0))
    if [[ -z "$best" || $t -lt $best ]]; then best=$t; fi
  done
  awk -v ns="$best" 'BEGIN { printf "%.3f", ns / 1e9 }'
}
mbps() { awk -v b="$size" -v s="$1" 'BEGIN { printf "%.0f", b / 1e6 / s }'; }

t_null=$(best_of_3 "$trace" convert "$archive" -o /dev/null)
t_file=$(best_of_3 "$trace" convert "$archive" -o "$out/archive.json")
t_dump=$(best_of_3 "$trace" dump "$archive")
t_summary=$(best_of_3 "$trace" summary "$archive")
# The same archive compressed: convert reads it through the reader's decompression.
zstd -q -1 -f "$archive" -o "$archive.zst"
gzip -1 -c "$archive" >"$archive.gz"
cat "$archive.zst" "$archive.gz" >/dev/null
t_zstd=$(best_of_3 "$trace" convert "$archive.zst" -o /dev/null)
t_gzip=$(best_of_3 "$trace" convert "$archive.gz" -o /dev/null)
zstd_size=$(stat -c %s "$archive.zst")
gzip_size=$(stat -c %s "$archive.gz")
ratio() { awk -v a="$1" -v b="$t_null" 'BEGIN { printf "%.2f", a / b }'; }
json_size=$(stat -c %s "$out/archive.json")
# Peak memory of one conversion: it streams, so this should not track the size.
rss_kb=$(/usr/bin/time -f %M "$trace" convert "$archive" -o /dev/null 2>&1 >/dev/null | tail -n 1 || echo "?")
rss_zstd_kb=$(/usr/bin/time -f %M "$trace" convert "$archive.zst" -o /dev/null 2>&1 >/dev/null | tail -n 1 || echo "?")
summary_rss_kb=$(/usr/bin/time -f %M "$trace" summary "$archive" 2>&1 >/dev/null | tail -n 1 || echo "?")

cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
cores=$(nproc)
flags=$(grep -m1 "^CMAKE_BUILD_TYPE" "$build/CMakeCache.txt" | cut -d= -f2 || true)
cc=$(grep -m1 "^CMAKE_C_COMPILER:" "$build/CMakeCache.txt" | cut -d= -f2 || true)
section=$(cat <<EOF
## convert throughput

Made by \`bench/convert_throughput.sh\`; best of 3 runs, the archive in the page
cache; MB = 10^6 bytes of FXT input per second of wall time.

- Machine: $cpu, $cores cores ($(uname -sr))
- Date: $(date -u +%Y-%m-%d)
- Build: ${flags:-RelWithDebInfo (the default)} with $("${cc:-cc}" --version 2>/dev/null | head -n 1)
- Archive: \`trace gen-sample --repeat $repeat\`, $size bytes ($(awk -v b="$size" 'BEGIN { printf "%.1f", b / 1048576 }') MiB)

| command | best time (s) | throughput (MB/s) |
| --- | ---: | ---: |
| \`trace convert\` to /dev/null | $t_null | $(mbps "$t_null") |
| \`trace convert\` to a file ($json_size bytes of JSON) | $t_file | $(mbps "$t_file") |
| \`trace dump\` to /dev/null | $t_dump | $(mbps "$t_dump") |
| \`trace summary\` (text) to /dev/null | $t_summary | $(mbps "$t_summary") |
| \`trace convert\` of the archive compressed with \`zstd -1\` ($zstd_size bytes) to /dev/null | $t_zstd | $(mbps "$t_zstd") |
| \`trace convert\` of the archive compressed with \`gzip -1\` ($gzip_size bytes) to /dev/null | $t_gzip | $(mbps "$t_gzip") |

MB/s of the compressed rows count the uncompressed FXT. Compressed over plain conversion time
(target: at most 1.3x): zstd $(ratio "$t_zstd")x, gzip $(ratio "$t_gzip")x.

Peak resident memory of \`trace convert\`: ${rss_kb} KiB (${rss_zstd_kb} KiB from the zstd file); of \`trace summary\`: ${summary_rss_kb} KiB.
EOF
)
echo "$section"

# Replace the section (from its heading to the next "## " heading) or append it.
[[ -f "$results" ]] || printf '# Benchmark results\n' >"$results"
SECTION="$section" python3 - "$results" <<'PY'
import os, re, sys
path = sys.argv[1]
text = open(path).read()
section = os.environ["SECTION"].rstrip("\n") + "\n"
pattern = re.compile(r"^## convert throughput\n.*?(?=^## |\Z)", re.S | re.M)
if pattern.search(text):
    text = pattern.sub(lambda m: section + ("\n" if m.end() < len(text) else ""), text, count=1)
else:
    text = text.rstrip("\n") + "\n\n" + section
open(path, "w").write(text)
PY
rm -f "$out/r1.fxt" "$out/r2.fxt" "$archive.zst" "$archive.gz"

echo "updated $results"
