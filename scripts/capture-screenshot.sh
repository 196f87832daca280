#!/usr/bin/env bash
# Takes docs/figures/capture-wireshark.png, the screenshot of docs/capture.md: the lesson's
# capture (linkem-sim, 40 ms +- 10 ms, 5 % Bernoulli loss, seed 3; "A lesson, step by step")
# in Wireshark (wireshark-qt) with packaging/wireshark/linkem.lua, on a real X server (Xvfb),
# with the columns No., Time, Source, Destination, Point, Delay (ms), Scheduled (ms), Drop,
# Info, frame FRAME (default 390) selected and its linkem tree open.
#   scripts/capture-screenshot.sh [--build-dir DIR] [--frame N] [--size WIDTHxHEIGHT] [--out FILE]
# (defaults: build, 390, 1160x1000 (Wireshark's window, and the picture),
# docs/figures/capture-wireshark.png). Needs Xvfb, xdotool, ImageMagick's import and
# wireshark (apt-get install xvfb xdotool imagemagick wireshark-qt). Wireshark runs with a
# configuration folder of its own (XDG_CONFIG_HOME in a temporary folder): your preferences
# and recent files are neither used nor changed. The same seed gives the same capture, so
# the same picture (the frame numbers and values docs/capture.md quotes).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build frame=390 size=1160x1000 out=docs/figures/capture-wireshark.png
while (($#)); do
  case $1 in
    --build-dir) build=${2:?--build-dir needs a directory} ;;
    --frame) frame=${2:?--frame needs a frame number} ;;
    --size) size=${2:?--size needs WIDTHxHEIGHT} ;;
    --out) out=${2:?--out needs a file name} ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "capture-screenshot.sh: unknown argument '$1'; allowed: --build-dir DIR, --frame N, --size WIDTHxHEIGHT, --out FILE" >&2; exit 2 ;;
  esac
  shift 2
done
[[ $size =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] ||
  { echo "capture-screenshot.sh: --size '$size' is not WIDTHxHEIGHT (e.g. 1160x1000)" >&2; exit 2; }
[[ $frame =~ ^[1-9][0-9]*$ ]] ||
  { echo "capture-screenshot.sh: --frame '$frame' is not a frame number (1, 2, ...)" >&2; exit 2; }
for tool in Xvfb xdotool import wireshark; do
  command -v "$tool" >/dev/null ||
    { echo "capture-screenshot.sh: needs $tool (apt-get install xvfb xdotool imagemagick wireshark-qt)" >&2; exit 1; }
done
sim=$build/backend/sim/linkem-sim
[[ -x $sim ]] || { echo "capture-screenshot.sh: no $sim (cmake --build $build --target linkem-sim)" >&2; exit 1; }
w=${size%x*} h=${size#*x}
lua=$PWD/packaging/wireshark/linkem.lua

tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# The capture: the lesson of docs/capture.md.
"$sim" --duration 10s --traffic-rate 1Mbit --frame-size 200 --mean-delay 40ms --jitter 10ms \
  --loss-model bernoulli --loss-probability 0.05 --seed 3 --capture "$tmp/lesson.pcapng" >/dev/null

# An X server with a free display number (Xvfb writes it to fd 3).
Xvfb -displayfd 3 -screen 0 "$((w + 40))x$((h + 40))x24" 3>"$tmp/display" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do [[ -s $tmp/display ]] && break; sleep 0.1; done
[[ -s $tmp/display ]] || { echo "capture-screenshot.sh: Xvfb did not start" >&2; exit 1; }
DISPLAY=:$(head -n1 "$tmp/display")
export DISPLAY

columns='gui.column.format:"No.","%m","Time","%t","Source","%s","Destination","%d","Point","%Cus:linkem.point","Delay (ms)","%Cus:linkem.delay_ms","Scheduled (ms)","%Cus:linkem.scheduled_ms","Drop","%Cus:linkem.drop","Info","%i"'
mkdir -p "$tmp/config"
# The packet list and the details, no bytes pane; frame $frame selected once the file is read.
XDG_CONFIG_HOME=$tmp/config XDG_RUNTIME_DIR=$tmp wireshark -r "$tmp/lesson.pcapng" \
  -X "lua_script:$lua" -o "$columns" -o gui.layout_content_3:NONE -g "$frame" \
  >"$tmp/wireshark.log" 2>&1 &
pids+=($!)
win=
for _ in $(seq 60); do
  win=$(xdotool search --name '^lesson\.pcapng$' 2>/dev/null | head -n1 || true)
  [[ -n $win ]] && break
  sleep 0.5
done
[[ -n $win ]] || { echo "capture-screenshot.sh: no Wireshark window with the file; its log:" >&2; cat "$tmp/wireshark.log" >&2; exit 1; }
xdotool windowmove "$win" 0 0 windowsize "$win" "$w" "$h"
sleep 3
# Open the selected frame's last tree, linkem's: a click on the details pane's empty lower
# part gives it the focus, End selects its last line, Right opens it. The pointer then goes
# to the toolbar's empty right end, away from the list (no hover highlight).
xdotool mousemove $((w / 2)) $((h - 60)) click 1
sleep 0.5
xdotool key End
sleep 0.3
xdotool key Right
sleep 0.5
xdotool mousemove $((w - 5)) 40
sleep 1
mkdir -p "$(dirname "$out")"
import -window root -crop "${w}x${h}+0+0" +repage "$out"
echo "wrote $out (frame $frame of the lesson's capture, ${w}x${h})"
