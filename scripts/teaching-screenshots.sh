#!/usr/bin/env bash
# shellcheck disable=SC2154  # build, control, display, tmp: gui-screenshot.sh sets them
# Takes the stage pictures of docs/teaching.md, docs/figures/teach-*.png: the real linkem-gui
# in its stage layout (`--projector`) at 1920x1080 under Xvfb, connected to `linkemd --demo`
# (scripts/gui-screenshot.sh starts both and runs this file's lessons with its --script).
# Each lesson starts from a fresh linkemd --demo and linkem-gui, then does on the stage what
# the sheet says, with the keys the sheet names (xdotool), and takes its picture.
#   scripts/teaching-screenshots.sh [--build-dir DIR] [--out DIR] [--only NAME]
# (defaults: build, docs/figures; --only takes one lesson's pictures: correlation,
# reordering, bursty-loss, step-response, bufferbloat, fq-codel). Needs what gui-screenshot.sh needs,
# and ImageMagick's convert (the pictures are written with 256 colours, ~100-200 KB each).
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
  build=build out=docs/figures only=
  while (($#)); do
    case $1 in
      --build-dir) build=${2:?--build-dir needs a directory} ;;
      --out) out=${2:?--out needs a directory} ;;
      --only) only=${2:?--only needs a lesson name} ;;
      -h|--help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0 ;;
      *) echo "teaching-screenshots.sh: unknown argument '$1'; allowed: --build-dir DIR, --out DIR, --only NAME" >&2; exit 2 ;;
    esac
    shift 2
  done
  case ${only:-all} in
    all|correlation|reordering|bursty-loss|step-response|bufferbloat|fq-codel) ;;
    *) echo "teaching-screenshots.sh: --only '$only' is not a lesson; allowed: correlation, reordering, bursty-loss, step-response, bufferbloat, fq-codel" >&2; exit 2 ;;
  esac
  command -v convert >/dev/null ||
    { echo "teaching-screenshots.sh: needs convert (apt-get install imagemagick)" >&2; exit 1; }
  TEACH_ONLY=$only exec scripts/gui-screenshot.sh --build-dir "$build" --out "$out" \
    --script scripts/teaching-screenshots.sh
fi

# --- sourced by gui-screenshot.sh: ctl, gui_start, gui_key, gui_stop, linkemd_restart, shot ---

# A data plane held off by other programs (a busy machine) draws spikes that are no part of
# the lesson. stall_mark notes linkemd's longest stall so far (stats longest_stall_ns, the
# larger direction's); teach_shot takes the picture and judges it: a new longest stall of more
# than stall_limit_ms since the mark and the lesson is taken again, up to 4 times (the last
# try's pictures are kept). Stalls shorter than the longest before the mark go unseen: look
# at the pictures.
stall_limit_ms=40
longest_stall_ms() {
  "$build/backend/ctl/linkemctl" --control "$control" --json stats | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(round(max(d[k]["longest_stall_ns"] for k in ("a_to_b", "b_to_a")) / 1e6, 1))'
}
stall_mark() { stall_at=$(longest_stall_ms); }
teach_shot() {
  DISPLAY=$display import -window root "$tmp/$1"
  shots+=("$1")
  local now
  now=$(longest_stall_ms)
  if python3 -c 'import sys; a, b, l = map(float, sys.argv[1:]); sys.exit(0 if b > a and b > l else 1)' \
    "$stall_at" "$now" "$stall_limit_ms"; then
    echo "took $1: linkemd stalled for $now ms meanwhile"
    lesson_ok=0
  else
    echo "took $1: no stall of more than $stall_limit_ms ms meanwhile (longest since start $now ms)"
  fi
}
# Presets → CATEGORY → NAME for the built-in preset ID, with the keys: Alt+P, Down to its
# category, Right, Down to it, Return. The menu has the categories in the order they first
# come in common/protocol/presets/builtin.json and each one's presets in the file's order.
teach_preset() {
  local moves
  moves=$(python3 - "$1" <<'PY'
import json, sys
ps = json.load(open("common/protocol/presets/builtin.json"))["presets"]
p = next(p for p in ps if p["id"] == sys.argv[1])
cats = list(dict.fromkeys(q["category"] for q in ps))
same = [q["id"] for q in ps if q["category"] == p["category"]]
print(cats.index(p["category"]), same.index(p["id"]))
PY
)
  local keys=(alt+p) k
  for ((k = 0; k < ${moves% *}; ++k)); do keys+=(Down); done
  keys+=(Right)
  for ((k = 0; k < ${moves#* }; ++k)); do keys+=(Down); done
  gui_key "${keys[@]}" Return
}
# Sleeps until SECONDS after the time in $played (date +%s.%N, taken when linkemd answered
# `scenario play`): the scenario plays on the data plane's clock, which runs as this one.
# (Asking linkemd for the position takes up to a second on a busy machine.)
scenario_at() {
  sleep "$(python3 -c 'import sys, time; print(max(0.0, float(sys.argv[1]) + float(sys.argv[2]) - time.time()))' "$played" "$1")"
}

lesson_correlation() {
  # the demo's link (20 ms ± 4 ms, correlated, half-life 21 ms); Teaching → Compare
  # strategies: correlated (A→B) vs uncorrelated (B→A), Ctrl+T (a 2 s window)
  gui_start projector
  sleep 2
  gui_key ctrl+t
  sleep 8
  stall_mark
  sleep 2.5
  teach_shot teach-correlation.png
}
lesson_reordering() {
  gui_start projector
  sleep 2
  # Teaching → the fourth compare action: uncorrelated (A→B) vs reordered (B→A)
  gui_key alt+t Down Down Down Return
  sleep 8
  stall_mark
  sleep 2.5
  teach_shot teach-reordering.png
  gui_key F6  # all four charts: the histogram over the window
  sleep 2.5
  teach_shot teach-reordering-charts.png
}
lesson_bursty_loss() {
  gui_setting charts/stage_window_s 10
  gui_start projector
  sleep 2
  gui_key F6  # all four charts: the drops
  teach_preset bursty_loss
  sleep 2
  stall_mark
  sleep 10.5
  teach_shot teach-bursty-loss.png
  teach_preset comcast_starlink
  sleep 2
  stall_mark
  sleep 10.5
  teach_shot teach-bernoulli-loss.png
}
lesson_step_response() {
  gui_setting charts/stage_window_s 5
  gui_start projector
  sleep 2
  ctl scenario play step-response
  played=$(date +%s.%N)
  scenario_at 19
  stall_mark
  scenario_at 20.5
  # pause the charts just after the step down (a busy GUI takes it a second or more late:
  # the 5 s window keeps the step in the picture)
  gui_key space
  sleep 1
  teach_shot teach-step-response.png
  ctl scenario stop
}
lesson_bufferbloat() {
  gui_setting charts/stage_window_s 10
  gui_start projector
  sleep 4
  stall_mark
  teach_preset bufferbloat
  sleep 8
  teach_shot teach-bufferbloat.png
  teach_preset right_sized_buffer
  sleep 4
  stall_mark
  sleep 10.5
  teach_shot teach-right-sized.png
  # all four charts over both: the bloat's 1.5 s drain into the right-sized buffer, the drops
  teach_preset bufferbloat
  sleep 5
  teach_preset right_sized_buffer
  gui_key F6
  stall_mark
  sleep 4
  teach_shot teach-bufferbloat-charts.png
}
lesson_fq_codel() {
  gui_start projector
  sleep 2
  # Teaching → Bufferbloat: drop-tail against FQ-CoDel (its mnemonic u); it opens on 30 s
  gui_key alt+t u
  sleep 6
  stall_mark
  sleep 14
  teach_shot teach-fq-codel.png
}

fresh=1  # gui-screenshot.sh's linkemd, untouched yet
for name in correlation reordering bursty-loss step-response bufferbloat fq-codel; do
  [[ -z ${TEACH_ONLY:-} || $TEACH_ONLY == "$name" ]] || continue
  for _ in 1 2 3 4; do
    shots=() lesson_ok=1
    ((fresh)) || linkemd_restart
    fresh=0
    "lesson_${name//-/_}"
    gui_stop
    ((lesson_ok)) && break
    echo "lesson $name: linkemd stalled for more than ${stall_limit_ms} ms (a busy machine): again"
  done
  # written small: 256 colours (the charts' flat colours survive it)
  for f in "${shots[@]}"; do
    convert "$tmp/$f" -strip -colors 256 "PNG8:$out/$f"
    echo "wrote $out/$f ($(du -k "$out/$f" | cut -f1) KB)"
  done
done
