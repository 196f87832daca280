#!/usr/bin/env bash
# Takes docs/figures/linkem-gui.png (desk layout) and docs/figures/linkem-gui-stage.png
# (stage layout, `linkem-gui --projector`): the real linkem-gui on a real X server (Xvfb,
# WIDTHxHEIGHT, default 1920x1080) connected to `linkemd --demo`, its window the screen's
# size, ~22 s into the built-in scenario SCENARIO (default step-response).
#   scripts/gui-screenshot.sh [--build-dir DIR] [--size WIDTHxHEIGHT] [--scenario NAME] [--out DIR]
#   scripts/gui-screenshot.sh --recording [--build-dir DIR] [--size WIDTHxHEIGHT] [--out DIR]
# (defaults: build, 1920x1080, step-response, docs/figures). Needs Xvfb, xdotool and
# ImageMagick's import.
# --recording takes docs/figures/linkem-gui-recording.png instead (docs/gui.md, "Recording a
# capture"; there at 1280x720): the desk layout, no scenario, 22 s after it connected;
# `linkemctl capture start` then records to a file in a temporary folder, and the picture is
# taken 7 s later, the button reading Stop recording and the line beside it counting.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build size=1920x1080 scenario=step-response out=docs/figures recording=0
while (($#)); do
  case $1 in
    --build-dir) build=${2:?--build-dir needs a directory} ;;
    --size) size=${2:?--size needs WIDTHxHEIGHT} ;;
    --scenario) scenario=${2:?--scenario needs a built-in scenario name} ;;
    --out) out=${2:?--out needs a directory} ;;
    --recording) recording=1; shift; continue ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "gui-screenshot.sh: unknown argument '$1'; allowed: --build-dir DIR, --size WIDTHxHEIGHT, --scenario NAME, --out DIR, --recording" >&2; exit 2 ;;
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
mkdir -p "$out"
Xvfb "$display" -screen 0 "${size}x24" >/dev/null 2>&1 & xvfb=$!
"$build/backend/linkemd/linkemd" --demo --control "$control" --telemetry "$telemetry" \
  >/dev/null 2>&1 & linkemd=$!
tmp=$(mktemp -d)
trap 'kill $linkemd $xvfb 2>/dev/null || true; rm -rf "$tmp"' EXIT
sleep 6
ctl() { "$build/backend/ctl/linkemctl" --control "$control" "$@" >/dev/null; }
layouts=(desk projector)
((recording)) && layouts=(desk)
for layout in "${layouts[@]}"; do
  DISPLAY=$display QT_QPA_PLATFORM=xcb "$build/gui/linkem-gui" --control "$control" \
    --telemetry "$telemetry" "--$layout" >/dev/null 2>&1 & gui=$!
  sleep 4
  for win in $(DISPLAY=$display xdotool search --onlyvisible --name linkem 2>/dev/null); do
    DISPLAY=$display xdotool windowmove "$win" 0 0 windowsize "$win" "$w" "$h"
  done
  sleep 1
  if ((recording)); then
    sleep 22
    ctl capture start "$tmp/lesson.pcapng"
    sleep 7
    DISPLAY=$display import -window root "$out/linkem-gui-recording.png"
    echo "wrote $out/linkem-gui-recording.png"
    ctl capture stop
    kill "$gui"
    break
  fi
  ctl scenario play "$scenario"
  sleep 22
  name=linkem-gui.png
  [[ $layout == projector ]] && name=linkem-gui-stage.png
  DISPLAY=$display import -window root "$out/$name"
  echo "wrote $out/$name"
  ctl scenario stop
  kill "$gui"
  sleep 1
done
