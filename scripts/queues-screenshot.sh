#!/usr/bin/env bash
# shellcheck disable=SC2154  # build, control, out, tmp: gui-screenshot.sh sets them
# Takes docs/figures/linkem-gui-queues.png (docs/gui.md, "Queue disciplines"): the real
# linkem-gui in the desk layout at 1920x1080 under Xvfb, connected to `linkemd --demo` with a
# 10 Mbit/s spacer and a 1 MiB queue limit both ways (the demo's traffic, 12.1 Mbit/s each
# way, keeps both queues full); A->B stays drop-tail, B->A is switched to fq_codel from the
# Link panel with the keys docs/gui.md names (Alt+Q twice, Down, Down), and the picture is
# taken 25 s later, the queue chart showing both.
#   scripts/queues-screenshot.sh [--build-dir DIR] [--out DIR]
# (defaults: build, docs/figures). Needs what gui-screenshot.sh needs, and ImageMagick's
# convert (written with 256 colours).
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
  build=build out=docs/figures
  while (($#)); do
    case $1 in
      --build-dir) build=${2:?--build-dir needs a directory} ;;
      --out) out=${2:?--out needs a directory} ;;
      -h|--help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0 ;;
      *) echo "queues-screenshot.sh: unknown argument '$1'; allowed: --build-dir DIR, --out DIR" >&2; exit 2 ;;
    esac
    shift 2
  done
  command -v convert >/dev/null ||
    { echo "queues-screenshot.sh: needs convert (apt-get install imagemagick)" >&2; exit 1; }
  exec scripts/gui-screenshot.sh --build-dir "$build" --out "$out" --script scripts/queues-screenshot.sh
fi

# --- sourced by gui-screenshot.sh: ctl, gui_start, gui_key, gui_stop, shot ---
ctl set --limiter spacer --rate 10Mbit --queue-limit 1MiB --queue droptail
gui_start desk
sleep 8
gui_key alt+q alt+q Down Down
sleep 1
queue_b=$("$build/backend/ctl/linkemctl" --control "$control" --json get | python3 -c '
import json, sys
print(json.load(sys.stdin)["b_to_a"]["queue"])')
[[ $queue_b == fq_codel ]] ||
  { echo "queues-screenshot.sh: B->A's queue is '$queue_b' after the keys, not fq_codel" >&2; exit 1; }
sleep 25
shot "$tmp/queues.png"
convert "$tmp/queues.png" -colors 256 "PNG8:$out/linkem-gui-queues.png"
echo "wrote $out/linkem-gui-queues.png"
gui_stop
