#!/usr/bin/env bash
# linkem-gui at full telemetry (docs/performance.md, "linkem-gui at full telemetry"): starts
# `linkemd --demo` (two DPDK virtual ports, built-in traffic of 256-byte frames at 100 Mbit/s,
# ~49 000 frames/s per direction) with `--delay-samples-per-s 20000` (the protocol's
# maximum) on ipc:// endpoints of its own, then runs linkem-gui-bench: the real main window
# connected to it with a 5-minute time window, which prints the UI thread's CPU share, the
# longest redraw gap, the memory and the delay samples/s it received, against the targets.
#   scripts/bench-gui.sh [--build-dir DIR] [--bench FILE] [--duration S] [--prefill S]
#                        [--telemetry-hz N] [--xvfb]
# --build-dir DIR: the build to use (default build; linkemd and linkem-gui-bench are built
# there first); --duration S: seconds measured (default 60; linkem-gui-bench's --duration).
# Default QT_QPA_PLATFORM=offscreen (a 1600x1000 screen); --xvfb renders on a real X server
# (xvfb-run, a 1600x1000 screen) instead.
# --prefill S: first fill the charts with S s (<= 300) of synthetic telemetry at 20 000
# samples/s per direction, so that the 5-minute window is full from the start.
# --bench FILE: another linkem-gui-bench binary that takes --duration (e.g. a copy built from
# another commit, to alternate two builds in one stretch of time); default
# DIR/gui/linkem-gui-bench.
# --telemetry-hz N: linkemd's stats messages a second (default 10, at most 100); delay
# messages come 20 a second whatever it is.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build bench= duration=60 prefill=0 xvfb=0 hz=10
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build=${2:?--build-dir needs a directory}; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --duration) duration=${2:?--duration needs a number of seconds}; shift 2 ;;
    --prefill) prefill=$2; shift 2 ;;
    --telemetry-hz) hz=$2; shift 2 ;;
    --xvfb) xvfb=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench-gui.sh: unknown option '$1'; allowed: --build-dir DIR, --bench FILE, --duration S, --prefill S, --telemetry-hz N, --xvfb" >&2; exit 2 ;;
  esac
done
[[ $hz =~ ^[0-9]+$ ]] && ((hz >= 1 && hz <= 100)) ||
  { echo "bench-gui.sh: --telemetry-hz '$hz' is not an integer from 1 to 100" >&2; exit 2; }
cmake --build "$build" --target linkemd linkem-gui-bench >/dev/null
bench=${bench:-$build/gui/linkem-gui-bench}
[[ -x $bench ]] || { echo "bench-gui.sh: --bench '$bench' is not an executable file" >&2; exit 2; }
dir=$(mktemp -d)
linkemd_pid=
prefix="linkem_bench_gui_$$"
# DPDK leaves its runtime directory (/var/run/dpdk/PREFIX as root, else under
# $XDG_RUNTIME_DIR or /tmp) behind when linkemd stops.
cleanup() {
  [[ -n $linkemd_pid ]] && kill "$linkemd_pid" 2>/dev/null && wait "$linkemd_pid" 2>/dev/null
  rm -rf "$dir" "/var/run/dpdk/$prefix" "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$prefix" 2>/dev/null
}
trap cleanup EXIT
"$build/backend/linkemd/linkemd" --demo --traffic-rate 100Mbit --frame-size 256 \
  --delay-samples-per-s 20000 --telemetry-hz "$hz" --control "ipc://$dir/control" --telemetry "ipc://$dir/telemetry" \
  -- --file-prefix "$prefix" >"$dir/linkemd.log" 2>&1 &
linkemd_pid=$!
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo ?); $(nproc) CPUs; $(date -u '+%F %T') UTC"
args=(--control "ipc://$dir/control" --telemetry "ipc://$dir/telemetry" --duration "$duration" --prefill "$prefill")
if [[ $xvfb == 1 ]]; then
  echo "QT_QPA_PLATFORM=xcb under xvfb-run"
  QT_QPA_PLATFORM=xcb xvfb-run -a -s '-screen 0 1600x1000x24' "$bench" "${args[@]}"
else
  # a 1600x1000 screen, as under Xvfb: on the offscreen platform's default screen the window
  # would shrink to fit it (MainWindow::fitToScreen)
  echo '{"screens": [{"name": "offscreen", "x": 0, "y": 0, "width": 1600, "height": 1000, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}' >"$dir/screen.json"
  echo "QT_QPA_PLATFORM=offscreen, a 1600x1000 screen"
  QT_QPA_PLATFORM="offscreen:configfile=$dir/screen.json" "$bench" "${args[@]}"
fi
