#!/usr/bin/env bash
# The main job: build fxtrace, record a real trace of the bundled multi-threaded
# demo (examples/demo.c) in file mode, and convert it.
# Output: out/demo.fxt (FXT archive; Perfetto opens it directly), out/demo.json
# (Chrome Trace Event JSON for https://ui.perfetto.dev or chrome://tracing) and
# out/demo.txt (one line per record).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target trace demo

mkdir -p out
rm -f out/demo.fxt
FXTRACE_OUTPUT=out/demo.fxt FXTRACE_BUFFERING_MODE=streaming build/examples/demo
build/trace dump out/demo.fxt > out/demo.txt
build/trace convert out/demo.fxt -o out/demo.json
echo "wrote out/demo.fxt ($(stat -c %s out/demo.fxt) bytes), out/demo.txt ($(tail -n +1 out/demo.txt | grep -c '^event') events) and out/demo.json"
