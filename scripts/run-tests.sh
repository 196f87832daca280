#!/usr/bin/env bash
# Installs what is needed, builds everything that can be built here and runs the whole test
# suite. Tests that need root or network namespaces skip with a message when they can't run.
#   scripts/run-tests.sh [build-dir]      (default: build-tests)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-tests}

scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLINKEM_WITH_GUI=ON
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure --timeout 900
