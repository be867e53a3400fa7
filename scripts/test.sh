#!/usr/bin/env bash
# Builds fxtrace and runs every test. Extra arguments go to cmake's configure
# step; BUILD_DIR picks the build folder (default build-test).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
build_dir=${BUILD_DIR:-build-test}
cmake -S . -B "$build_dir" -DFXTRACE_WERROR=ON "$@" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)"
