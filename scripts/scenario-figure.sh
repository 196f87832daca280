#!/bin/bash
# The figure of docs/scenarios.md, "A scenario played": the built-in step-response scenario
# with 2 ms of jitter, played by linkemd on virtual ports with the built-in traffic
# (by default 10 frames/s each way: a data-plane stall then rarely puts two frames in one
# burst, so that every frame is sampled), and by linkem-sim over the arrival times of the
# frames up to the first that was not sampled, with the same seed.
#
#   scripts/scenario-figure.sh [--from DIR] [--pps FRAMES_PER_S] [--build-dir DIR] [--out FILE]
#
# --build-dir DIR (default build) holds linkemd and linkem-sim; --out FILE defaults to
# docs/figures/scenario_step_response.png. Needs gnuplot and Debian's python3 with python3-zmq.
# No root: linkemd runs on its own virtual ports with --no-huge and its own file prefix.
# --pps: the built-in traffic's frames per second (default 10). --from DIR: plot what
# scripts/scenario/record.py recorded into DIR elsewhere (scenario.json, scheduled.csv,
# measured.csv, arrivals.txt) instead of running linkemd here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
from= rate=10 build=$here/../build out=$here/../docs/figures/scenario_step_response.png
while (($#)); do
  case $1 in
    --from) from=${2:?--from needs a directory} ;;
    --pps) rate=${2:?--pps needs a number of frames per second} ;;
    --build-dir) build=${2:?--build-dir needs a directory} ;;
    --out) out=${2:?--out needs a file name} ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "scenario-figure.sh: unknown argument '$1'; allowed: --from DIR, --pps FRAMES_PER_S, --build-dir DIR, --out FILE" >&2; exit 2 ;;
  esac
  shift 2
done
[[ $rate =~ ^[1-9][0-9]*$ ]] || { echo "scenario-figure.sh: --pps '$rate' is not a positive whole number" >&2; exit 2; }
work=$(mktemp -d /tmp/linkem_scenario_figure.XXXXXX)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [[ -n ${KEEP:-} ]] || rm -rf "$work"; rm -rf "/var/run/dpdk/linkem-figure-$$"
}
trap cleanup EXIT

if [[ -n $from ]]; then
  cp "$from"/scenario.json "$from"/scheduled.csv "$from"/measured.csv "$from"/arrivals.txt "$work/"
  rate=$(cat "$from/rate")
else
  # The built-in scenario with 2 ms of jitter at its start (its steps change only the mean).
  /usr/bin/python3 "$here/scenario/record.py" --jitter-copy \
    "$here/../common/protocol/scenarios/step-response.json" "$work/scenario.json"
  "$build/backend/linkemd/linkemd" --port-a virtual --port-b virtual --frame-size 1518 \
    --traffic-rate $((rate * 12144))bit --delay-samples-per-s 20000 --seed 1 --stats-interval 0 \
    --control "ipc://$work/control" --telemetry "ipc://$work/telemetry" \
    -- --file-prefix "linkem-figure-$$" 2>"$work/linkemd.log" &
  pid=$!
  /usr/bin/python3 "$here/scenario/record.py" --control "ipc://$work/control" \
    --telemetry "ipc://$work/telemetry" --scenario "$work/scenario.json" --out "$work"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
fi

"$build/backend/sim/linkem-sim" --scenario "$work/scenario.json" --arrivals "$work/arrivals.txt" \
  --seed 1 --mean-delay 0ms --frame-size 1518 --delay-series "$work/sim.csv" --delay-series-interval 0 --quiet \
  >/dev/null
# linkem-sim's trace: departure, delay, the scenario's mean at the arrival (all in ms).
awk -F, 'NR > 1 { printf "%.9f,%s,%s\n", ($1 - $2) / 1000, $2, $3 }' "$work/sim.csv" >"$work/sim_by_arrival.csv"

gnuplot <<GP
set terminal pngcairo size 1100,560 font "DejaVu Sans,11"
set output "$out"
set datafile separator ","
set title "step-response with 2 ms jitter, played by linkemd: a_to_b, $rate frames/s, seed 1" noenhanced
set xlabel "scenario time (s)"
set ylabel "delay (ms)"
set key outside below center horizontal noenhanced
set xrange [0:32]
set yrange [0:140]
set grid
plot "$work/measured.csv" every ::1 using 1:2 with points pt 7 ps 0.5 lc rgb "#a0a0a0" title "measured by the built-in traffic", \
     "$work/scheduled.csv" every ::1 using 1:2 with points pt 7 ps 0.6 lc rgb "#1f77b4" title "scheduled by linkemd", \
     "$work/sim_by_arrival.csv" using 1:2 with points pt 6 ps 1.1 lc rgb "#ff7f0e" title "linkem-sim, same arrivals and seed", \
     "$work/sim_by_arrival.csv" using 1:3 with lines lw 2 lc rgb "black" title "target: the scenario's mean delay"
GP
echo "scenario-figure.sh: wrote $out"
