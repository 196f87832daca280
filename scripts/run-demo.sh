#!/usr/bin/env bash
# The demo: installs what is needed, builds, then
#  1. linkem-sim shows, in seconds, what each delay strategy does to a 10 Gbit/s stream with
#     10 ms +- 3 ms of delay (the DPDS paper's point: naive jitter inflates the delay,
#     reordering reorders, adaptive correlation gets both right);
#  2. linkemd runs the same link on two DPDK virtual ports (net_null: a built-in endless
#     packet source and sink) with correlated delay, a 5 Gbit/s spacer and bursty loss,
#     printing its counters every second.
# The GUI and the built-in traffic generator arrive with later issues.
#   scripts/run-demo.sh [seconds]     (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
build=build

scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLINKEM_WITH_GUI=OFF \
      -DLINKEM_BUILD_TESTS=OFF -DLINKEM_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)"

echo
echo "=== 1. linkem-sim: 10 Gbit/s CBR, 1518-byte frames, mean delay 10 ms, jitter 3 ms ==="
for s in uncorrelated reordered correlated; do
  echo "--- strategy $s"
  "$build"/backend/sim/linkem-sim --strategy "$s" --mean-delay 10ms --jitter 3ms \
      --traffic-rate 10Gbit --frame-size 1518 --duration 20s --runs 3 --seed 1
done

echo
echo "=== 2. linkemd on net_null ports: correlated 10 ms +- 3 ms, 5 Gbit/s spacer, Gilbert-Elliott loss ==="
if [[ $(id -u) -ne 0 ]]; then
  echo "(linkemd needs root for DPDK; run as root to see this part)"
  exit 0
fi
"$build"/backend/linkemd/linkemd --port-a net_null0,size=1518 --port-b net_null1,size=1518 \
    --strategy correlated --mean-delay 10ms --jitter 3ms \
    --limiter spacer --rate 5Gbit \
    --loss-model gilbert_elliott --ge-p 0.001 --ge-r 0.1 --ge-loss-bad 0.5 \
    --duration "${secs}s" --stats-interval 1s
