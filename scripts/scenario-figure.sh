#!/bin/bash
# The figure of docs/scenarios.md, "A scenario played": the built-in step-response scenario
# with 2 ms of jitter, played by linkemd on virtual ports with the built-in traffic
# (1000 frames/s each way), and by linkem-sim over the same arrival times and seed.
#
#   scripts/scenario-figure.sh [BUILD_DIR] [OUT.png]
#
# BUILD_DIR (default build) holds linkemd and linkem-sim; OUT defaults to
# docs/figures/scenario_step_response.png. Needs gnuplot and Debian's python3 with python3-zmq.
# No root: linkemd runs on its own virtual ports with --no-huge and its own file prefix.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
out=${2:-$here/../docs/figures/scenario_step_response.png}
work=$(mktemp -d /tmp/linkem_scenario_figure.XXXXXX)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work" "/var/run/dpdk/linkem-figure-$$"
}
trap cleanup EXIT

# The built-in scenario with 2 ms of jitter at its start (its steps change only the mean).
/usr/bin/python3 - "$here/../common/scenarios/step-response.json" "$work/scenario.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["name"] = "step-response-jitter"
s["steps"][0]["set"]["jitter_us"] = 2000
json.dump(s, open(sys.argv[2], "w"), indent=1)
PY

"$build/backend/linkemd/linkemd" --port-a virtual --port-b virtual --frame-size 1518 \
  --traffic-rate 12144000bit --delay-samples-per-s 20000 --seed 1 --stats-interval 0 \
  --control "ipc://$work/control" --telemetry "ipc://$work/telemetry" \
  -- --file-prefix "linkem-figure-$$" 2>"$work/linkemd.log" &
pid=$!
/usr/bin/python3 "$here/scenario/record.py" --control "ipc://$work/control" \
  --telemetry "ipc://$work/telemetry" --scenario "$work/scenario.json" --out "$work"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=

"$build/backend/sim/linkem-sim" --scenario "$work/scenario.json" --arrivals "$work/arrivals.txt" \
  --seed 1 --mean-delay 0ms --frame-size 1518 --trace "$work/sim.csv" --trace-interval 0 --quiet \
  >/dev/null
# linkem-sim's trace: departure, delay, the scenario's mean at the arrival (all in ms).
awk -F, 'NR > 1 { printf "%.9f,%s,%s\n", ($1 - $2) / 1000, $2, $3 }' "$work/sim.csv" >"$work/sim_by_arrival.csv"

gnuplot <<GP
set terminal pngcairo size 1100,560 font "DejaVu Sans,11"
set output "$out"
set datafile separator ","
set title "step-response (2 ms jitter) played by linkemd: a_to_b, 1000 frames/s, seed 1"
set xlabel "scenario time (s)"
set ylabel "delay (ms)"
set key top left
set xrange [0:32]
set yrange [0:125]
set grid
plot "$work/measured.csv" every ::1 using 1:2 with points pt 7 ps 0.25 lc rgb "#b0b0b0" title "measured by the built-in traffic", \
     "$work/scheduled.csv" every ::1 using 1:2 with points pt 7 ps 0.35 lc rgb "#1f77b4" title "scheduled by linkemd", \
     "$work/sim_by_arrival.csv" using 1:2 every 7 with points pt 6 ps 0.5 lc rgb "#ff7f0e" title "linkem-sim, same arrivals and seed (every 7th)", \
     "$work/sim_by_arrival.csv" using 1:3 with lines lw 2 lc rgb "black" title "target: the scenario's mean delay"
GP
echo "scenario-figure.sh: wrote $out"
