#!/usr/bin/env bash
# Installs what is needed, builds everything that can be built here and runs the whole test
# suite. Tests that need root or network namespaces skip with a message when they can't run.
# Among them packaging.debs builds the Debian packages (cpack: DIR/packages/*.deb) and
# checks them: lintian, the desktop-file and AppStream validators, the unpacked programs.
# Then the sanitizer build (-DLINKEM_SANITIZE=ON: ASan + UBSan) of the unit and control-server
# tests, in its own build directory (DIR-asan), without DPDK: the DPDK-linked tests
# (dataplane.*, linkemd on virtual ports) are not run under the sanitizers. The unit and
# control-server tests run there only: DIR is configured with -DLINKEM_BUILD_UNIT_TESTS=OFF
# (that saves their ~2.5 min of compiling at -O2 on 2 vCPUs; LINKEM_NO_ASAN=1 builds and runs
# them in DIR instead). The sanitizer build is -O0:
# with ASan + UBSan g++ compiles those tests in 4.4 min at -O0 against 6.8 at -O1, and the
# unit tests, run as two shards side by side, take about 50 s more than at -O1 (docs/testing.md).
# LINKEM_NO_ASAN=1 skips that step. Each step prints the seconds since the start
# (`== step: ...`), so that a CI log shows where the time went.
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

start=$SECONDS
step() {
    echo "== step: $1 (at $((SECONDS - start)) s)"
}

step "install the Debian packages"
scripts/install-deps.sh
step "build $build"
unit=ON
[[ ${LINKEM_NO_ASAN:-0} == 1 ]] || unit=OFF
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${debug_flags[@]}" \
    -DLINKEM_WITH_GUI=ON -DLINKEM_BUILD_UNIT_TESTS=$unit
cmake --build "$build" -j"$(nproc)"
step "ctest in $build"
ctest --test-dir "$build" -j"$(nproc)" --output-on-failure --timeout 900

if [[ ${LINKEM_NO_ASAN:-0} != 1 ]]; then
    asan="$build-asan"
    step "build $asan (ASan + UBSan, -O0)"
    cmake -S . -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" \
        -DLINKEM_SANITIZE=ON \
        -DLINKEM_WITH_DPDK=OFF -DLINKEM_WITH_GUI=OFF -DLINKEM_BUILD_BENCH=OFF
    cmake --build "$asan" -j"$(nproc)" --target linkem_unit_tests linkem_control_tests
    step "unit and control tests under ASan + UBSan"
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    # Two shards of the unit tests side by side (gtest's own sharding), each into its log,
    # printed when it is done.
    shards=2 pids=()
    for ((i = 0; i < shards; ++i)); do
        GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
            "$asan/tests/unit/linkem_unit_tests" >"$asan/unit-shard-$i.log" 2>&1 &
        pids+=($!)
    done
    failed=0
    for ((i = 0; i < shards; ++i)); do
        wait "${pids[i]}" || failed=1
        cat "$asan/unit-shard-$i.log"
    done
    ((failed == 0)) || { echo "run-tests.sh: unit tests failed under ASan + UBSan" >&2; exit 1; }
    "$asan/tests/control/linkem_control_tests"
fi
step "all passed"
