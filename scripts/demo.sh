#!/usr/bin/env bash
# The main job: build fxtrace, record a real trace of the bundled multi-threaded
# demo (examples/demo.c) through the trace manager, and convert it.
# `trace record` uses the running trace_manager if there is one, else runs one
# of its own for the recording: no daemon is needed.
# Output: out/demo.fxt (FXT archive; Perfetto opens it directly), out/demo.json
# (Chrome Trace Event JSON for https://ui.perfetto.dev or chrome://tracing) and
# out/demo.txt (one line per record).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target trace demo

mkdir -p out
rm -f out/demo.fxt out/demo.txt out/demo.json
# FXTRACE_OUTPUT would put the demo in file mode, away from the manager.
env -u FXTRACE_OUTPUT build/trace record -o out/demo.fxt -- build/examples/demo
build/trace dump out/demo.fxt > out/demo.txt
build/trace convert out/demo.fxt -o out/demo.json
echo "wrote out/demo.fxt ($(stat -c %s out/demo.fxt) bytes), out/demo.txt ($(grep -c '^event' out/demo.txt) events) and out/demo.json"
