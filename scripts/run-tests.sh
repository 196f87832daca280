#!/usr/bin/env bash
# Installs what is needed, builds everything that can be built here and runs the whole test
# suite. Tests that need root or network namespaces skip with a message when they can't run.
# Among them packaging.debs builds the Debian packages (cpack: DIR/packages/*.deb) and
# checks them: lintian, the desktop-file and AppStream validators, the unpacked programs.
# Then the sanitizer build (-DLINKEM_SANITIZE=ON: ASan + UBSan) of the unit and control-server
# tests, in its own build directory (DIR-asan), without DPDK: the DPDK-linked tests
# (dataplane.*, linkemd on virtual ports) are not run under the sanitizers. LINKEM_NO_ASAN=1
# skips that step.
#   scripts/run-tests.sh [--build-dir DIR]      (default: build-tests)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-tests
while (($#)); do
  case $1 in
    --build-dir) build=${2:?--build-dir needs a directory}; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run-tests.sh: unknown argument '$1'; allowed: --build-dir DIR" >&2; exit 2 ;;
  esac
  shift
done
# Line tables only (-g1): backtraces and sanitizer reports keep file:line, and both builds
# take markedly less time than with full debug information (docs/testing.md).
debug_flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")

scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${debug_flags[@]}" \
    -DLINKEM_WITH_GUI=ON
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" -j"$(nproc)" --output-on-failure --timeout 900

if [[ ${LINKEM_NO_ASAN:-0} != 1 ]]; then
    asan="$build-asan"
    cmake -S . -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${debug_flags[@]}" \
        -DLINKEM_SANITIZE=ON \
        -DLINKEM_WITH_DPDK=OFF -DLINKEM_WITH_GUI=OFF -DLINKEM_BUILD_BENCH=OFF
    cmake --build "$asan" -j"$(nproc)" --target linkem_unit_tests linkem_control_tests
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    "$asan/tests/unit/linkem_unit_tests"
    "$asan/tests/control/linkem_control_tests"
fi
