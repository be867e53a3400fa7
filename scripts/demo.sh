#!/usr/bin/env bash
# The main job: build fxtrace, write a sample trace, and convert it to JSON.
# Output: out/sample.fxt (FXT archive), out/sample.json (Chrome Trace Event JSON,
# open it in https://ui.perfetto.dev or chrome://tracing), out/sample.txt (dump).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target trace

mkdir -p out
build/trace gen-sample -o out/sample.fxt
build/trace dump out/sample.fxt > out/sample.txt
build/trace convert out/sample.fxt -o out/sample.json
echo "wrote out/sample.fxt ($(stat -c %s out/sample.fxt) bytes), out/sample.txt and out/sample.json"
