#!/usr/bin/env bash
# Takes docs/figures/linkem-gui.png (desk layout) and docs/figures/linkem-gui-stage.png
# (stage layout, `linkem-gui --projector`): the real linkem-gui on a real X server (Xvfb,
# WIDTHxHEIGHT, default 1920x1080) connected to `linkemd --demo`, its window the screen's
# size, ~22 s into the built-in scenario SCENARIO (default step-response).
#   scripts/gui-screenshot.sh [--build-dir DIR] [--size WIDTHxHEIGHT] [--scenario NAME] [--out DIR]
#   scripts/gui-screenshot.sh --recording [--build-dir DIR] [--size WIDTHxHEIGHT] [--out DIR]
#   scripts/gui-screenshot.sh --script FILE [--build-dir DIR] [--size WIDTHxHEIGHT] [--out DIR]
# (defaults: build, 1920x1080, step-response, docs/figures). Needs Xvfb, xdotool and
# ImageMagick's import.
# --recording takes docs/figures/linkem-gui-recording.png instead (docs/gui.md, "Recording a
# capture"; there at 1280x720): the desk layout, no scenario, 22 s after it connected;
# `linkemctl capture start` then records to a file in a temporary folder, and the picture is
# taken 7 s later, the button reading Stop recording and the line beside it counting.
# --script FILE runs FILE (bash, sourced in the repository's root) instead, once Xvfb and
# linkemd --demo are up (scripts/teaching-screenshots.sh is such a file), with the variables
# out, w, h, build, control (linkemd's endpoint), display and tmp (a folder removed at the
# end), and these functions:
#   ctl ARGS...         linkemctl against that linkemd (its output discarded)
#   gui_start LAYOUT    linkem-gui in LAYOUT (desk or projector), its window the screen's size,
#                       with settings of its own (a fresh folder; `gui_setting KEY VALUE` before
#                       it adds one, e.g. gui_setting charts/stage_window_s 10)
#   gui_key KEY...      xdotool key names typed into linkem-gui's window (ctrl+t, F6, Down)
#   gui_stop            ends linkem-gui
#   linkemd_restart     a fresh linkemd --demo (its clock, counters and link from the start)
#   shot FILE           the screen into FILE (PNG)
# Each linkem-gui starts with an empty settings folder, so no setting of the user's (a time
# window, the docks) changes the pictures.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build size=1920x1080 scenario=step-response out=docs/figures recording=0 script=
while (($#)); do
  case $1 in
    --build-dir) build=${2:?--build-dir needs a directory} ;;
    --size) size=${2:?--size needs WIDTHxHEIGHT} ;;
    --scenario) scenario=${2:?--scenario needs a built-in scenario name} ;;
    --out) out=${2:?--out needs a directory} ;;
    --script) script=${2:?--script needs a file} ;;
    --recording) recording=1; shift; continue ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "gui-screenshot.sh: unknown argument '$1'; allowed: --build-dir DIR, --size WIDTHxHEIGHT, --scenario NAME, --out DIR, --recording, --script FILE" >&2; exit 2 ;;
  esac
  shift 2
done
[[ $size =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] ||
  { echo "gui-screenshot.sh: --size '$size' is not WIDTHxHEIGHT (e.g. 1920x1080)" >&2; exit 2; }
for tool in Xvfb xdotool import; do
  command -v "$tool" >/dev/null ||
    { echo "gui-screenshot.sh: needs $tool (apt-get install xvfb xdotool imagemagick)" >&2; exit 1; }
done
w=${size%x*} h=${size#*x}
control=tcp://127.0.0.1:47730 telemetry=tcp://127.0.0.1:47731
display=:97
[[ -z $script || -f $script ]] ||
  { echo "gui-screenshot.sh: --script '$script' is not a file" >&2; exit 2; }
mkdir -p "$out"
Xvfb "$display" -screen 0 "${size}x24" >/dev/null 2>&1 & xvfb=$!
linkemd=
linkemd_restart() {
  [[ -n $linkemd ]] && { kill "$linkemd" 2>/dev/null; wait "$linkemd" 2>/dev/null || true; }
  "$build/backend/linkemd/linkemd" --demo --control "$control" --telemetry "$telemetry" \
    >/dev/null 2>&1 & linkemd=$!
  sleep 6
}
tmp=$(mktemp -d)
gui=
trap 'kill $gui $linkemd $xvfb 2>/dev/null || true; rm -rf "$tmp"' EXIT
linkemd_restart
ctl() { "$build/backend/ctl/linkemctl" --control "$control" "$@" >/dev/null; }
settings=()
gui_setting() { settings+=("$1=$2"); }
gui_start() {
  # a settings folder of its own: linkem-gui.conf holds only what gui_setting gave
  rm -rf "$tmp/config" && mkdir -p "$tmp/config/linkem"
  local kv
  for kv in "${settings[@]}"; do
    printf '[%s]\n%s\n' "${kv%%/*}" "${kv#*/}" >>"$tmp/config/linkem/linkem-gui.conf"
  done
  settings=()
  DISPLAY=$display QT_QPA_PLATFORM=xcb XDG_CONFIG_HOME=$tmp/config "$build/gui/linkem-gui" \
    --control "$control" --telemetry "$telemetry" "--$1" >/dev/null 2>&1 & gui=$!
  sleep 4
  for win in $(DISPLAY=$display xdotool search --onlyvisible --name linkem 2>/dev/null); do
    DISPLAY=$display xdotool windowmove "$win" 0 0 windowsize "$win" "$w" "$h"
  done
  sleep 1
}
gui_key() {
  local win
  win=$(DISPLAY=$display xdotool search --onlyvisible --name '^linkem$' 2>/dev/null | head -1)
  DISPLAY=$display xdotool windowfocus --sync "$win" key --delay 150 "$@"
}
gui_stop() { kill "$gui" 2>/dev/null; wait "$gui" 2>/dev/null || true; gui=; sleep 1; }
shot() { DISPLAY=$display import -window root "$1"; echo "wrote $1"; }
if [[ -n $script ]]; then
  # shellcheck source=/dev/null
  source "$script"
  exit 0
fi
layouts=(desk projector)
((recording)) && layouts=(desk)
for layout in "${layouts[@]}"; do
  gui_start "$layout"
  if ((recording)); then
    sleep 22
    ctl capture start "$tmp/lesson.pcapng"
    sleep 7
    shot "$out/linkem-gui-recording.png"
    ctl capture stop
    gui_stop
    break
  fi
  ctl scenario play "$scenario"
  sleep 22
  name=linkem-gui.png
  [[ $layout == projector ]] && name=linkem-gui-stage.png
  shot "$out/$name"
  ctl scenario stop
  gui_stop
done
