#!/usr/bin/env bash
# The soak run (docs/reliability.md, "Soak run"): linkemd between two network namespaces on
# veth (tests/integration/lib.sh's topology) with real traffic both ways (iperf3 TCP and
# UDP, ping), and a second linkemd on virtual ports with the built-in traffic playing a
# looping scenario, while scripts/soak/soak.py keeps changing things (a set_link storm of
# 20 a second, traffic classes on and off, captures, linkemctl watchers and linkem-gui
# under Xvfb connecting and disconnecting, clients killed with -9, linkemd stopped for 2 s,
# a port's link down and up, garbage and oversized control messages, a telemetry
# subscriber that never reads) and every 10 s checks conservation, counters, RSS, open fds,
# the control round trip and the drawn delay. It ends with one summary line and exits 1
# when a check failed. Needs root (namespaces); without it exits 77 (skip).
#   scripts/soak.sh [--hours H | --minutes M] [--seed N] [--no-build] [--build-dir DIR]
#     --hours H     run for H hours (default 1; a decimal number)
#     --minutes M   run for M minutes instead (short runs; a decimal number)
#     --seed N      the storm's and linkemd's random seed (default 1)
#     --no-build    use the build directory as it is
#     --build-dir D build linkemd, linkemctl and linkem-gui in D (default build-soak)
# LINKEM_SOAK_GUI_PREFIX="heaptrack -o FILE" runs the persistent GUI under that command (a
# heap profile of it; its RSS check then measures the wrapper).
# The work dir (per-sample figures samples.csv, delay.json, soak.log, the programs' logs)
# is /tmp/linkem-soak-<UTC time>-<pid>; the summary line names it.
set -euo pipefail
cd "$(dirname "$0")/.."
build="build-soak"
do_build=1
hours=
minutes=
seed=1
allowed="allowed: --hours H, --minutes M, --seed N, --no-build, --build-dir DIR"
while (($#)); do
  case $1 in
    --hours) hours=${2:?--hours needs a number of hours}; shift ;;
    --minutes) minutes=${2:?--minutes needs a number of minutes}; shift ;;
    --seed) seed=${2:?--seed needs a whole number}; shift ;;
    --no-build) do_build=0 ;;
    --build-dir) build=${2:?--build-dir needs a directory}; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown argument '$1'; $allowed" >&2; exit 2 ;;
  esac
  shift
done
number='^[0-9]+([.][0-9]+)?$'
[[ -z $hours || -z $minutes ]] || { echo "soak.sh: give --hours or --minutes, not both" >&2; exit 2; }
[[ -z $hours || $hours =~ $number ]] || { echo "soak.sh: --hours: '$hours' is not a number of hours (e.g. 1 or 0.5)" >&2; exit 2; }
[[ -z $minutes || $minutes =~ $number ]] || { echo "soak.sh: --minutes: '$minutes' is not a number of minutes (e.g. 2 or 10)" >&2; exit 2; }
[[ $seed =~ ^[0-9]+$ ]] || { echo "soak.sh: --seed: '$seed' is not a whole number" >&2; exit 2; }
if [[ -n $minutes ]]; then
  seconds=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')
else
  seconds=$(awk -v h="${hours:-1}" 'BEGIN { printf "%d", h * 3600 }')
fi
((seconds >= 30)) || { echo "soak.sh: the run must last at least 30 s (--minutes 0.5); got ${seconds} s" >&2; exit 2; }
if [[ $(id -u) -ne 0 ]]; then
  echo "soak.sh: SKIP: needs root (network namespaces, veth, af_packet, chrt)"
  exit 77
fi

if ((do_build)); then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLINKEM_WITH_GUI=ON \
        -DLINKEM_BUILD_TESTS=OFF -DLINKEM_BUILD_BENCH=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target linkemd linkemctl linkem-gui
fi
program() {  # the built program $1, or nothing
  find "$build" -maxdepth 4 -type f -name "$1" -perm -u+x 2>/dev/null | head -1
}
linkemd=$(program linkemd)
linkemctl=$(program linkemctl)
gui=$(program linkem-gui)
for p in linkemd linkemctl gui; do
  [[ -n ${!p} ]] || { echo "soak.sh: SKIP: no ${p/gui/linkem-gui} in $build (build it, or drop --no-build)"; exit 77; }
done
for t in iperf3 Xvfb chrt; do
  command -v "$t" >/dev/null || { echo "soak.sh: SKIP: '$t' not installed"; exit 77; }
done

# lib.sh's functions are written for scripts without -e.
set +e
TEST_NAME=soak
# lib.sh's deadline: the run, its start and its end (below ctest's 210 s for soak.short).
TEST_LIMIT_S=$((seconds + 70))
source tests/integration/lib.sh
require_env "$(realpath "$linkemd")"
setup_topology
work=/tmp/linkem-soak-$(date -u +%Y%m%dT%H%M%SZ)-$$
mkdir -p "$work"
# Xvfb on a free display for the GUIs.
display=
for n in $(seq 90 120); do
  [[ -e /tmp/.X11-unix/X$n || -e /tmp/.X$n-lock ]] && continue
  Xvfb ":$n" -screen 0 1280x900x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
  BG_PIDS+=($!)
  display=:$n
  break
done
[[ -n $display ]] || fail "no free X display :90 .. :120 for Xvfb"
for _ in $(seq 50); do [[ -e /tmp/.X11-unix/X${display#:} ]] && break; sleep 0.1; done
log "work dir $work; Xvfb on $display; $seconds s; commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
# In the background, so that lib.sh's deadline and Ctrl+C reach it at once (soak.py stops
# what it started on SIGTERM).
"$PY" scripts/soak/soak.py --linkemd "$(realpath "$linkemd")" --linkemctl "$(realpath "$linkemctl")" \
  --gui "$(realpath "$gui")" --work "$work" --ns1 "$NS1" --ns2 "$NS2" --va "$VA" --vb "$VB" \
  --ip1 "$IP1" --ip2 "$IP2" --display "$display" --tag "$TAG" --seconds "$seconds" \
  --seed "$seed" &
soak_pid=$!
BG_PIDS+=("$soak_pid")
rc=0
wait "$soak_pid" || rc=$?
exit $rc
