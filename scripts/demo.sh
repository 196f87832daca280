#!/usr/bin/env bash
# The demo: installs what is needed (scripts/install-deps.sh), builds what the demo runs
# in build-demo/ (linkemd, linkemctl, and linkem-gui when Qt 6 is there; the tests and
# benchmarks are scripts/run-tests.sh's), then starts `linkemd --demo` (two virtual ports,
# built-in traffic of 1000 frames/s both ways, a 20 ms +- 4 ms correlated link with a
# 100 Mbit/s spacer and 0.5 % loss; control and telemetry on loopback, no root and no NIC
# needed) and shows it:
#   - linkem-gui connected to it when DISPLAY or WAYLAND_DISPLAY is set,
#   - otherwise `linkemctl watch` in the terminal,
#   - and if neither program is built, a one-line-a-second view of linkemd's telemetry.
# First it checks it (scripts/demo-check.py): for 10 s, traffic both ways, and the delay
# the built-in traffic measures equal to the emulator's own account of it (the delay it
# drew + spacer and order wait + lateness) within 1 % or 100 us; it prints configured
# against measured per direction and why they differ, and what disturbed the run (stalls,
# CPU waits, CPU steal, load). A run that disagrees while the machine disturbed it is
# "disturbed, not judged", not a failure; the link is shown either way. Ctrl+C (or closing
# the GUI) stops both.
#   scripts/demo.sh [--check] [--duration SECONDS] [--no-build] [--build-dir DIR]
#     --check       only start linkemd, run the check above (11 s once linkemd answers),
#                   stop (what CI or a headless machine can run); exit status 0 passed,
#                   1 failed (an undisturbed run disagreed, no traffic, or linkemd did not
#                   start), 3 disturbed, not judged (the output names what disturbed it)
#     --duration S  stop after S seconds
#     --no-build    use the build directory as it is
#     --build-dir D build in D (default build-demo)
# linkemd's own output goes to linkemd-demo.log in the build directory. Endpoints:
# linkemd's defaults (tcp://127.0.0.1:7710 and :7711); LINKEM_DEMO_CONTROL and
# LINKEM_DEMO_TELEMETRY override them (linkem-gui and linkemctl are given the same).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-demo
check_only=0
duration=0
do_build=1
while (($#)); do
  case $1 in
    --check) check_only=1 ;;
    --duration) duration=${2:?--duration needs a number of seconds}; shift ;;
    --no-build) do_build=0 ;;
    --build-dir) build=${2:?--build-dir needs a directory}; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument '$1'; allowed: --check, --duration SECONDS, --no-build, --build-dir DIR" >&2; exit 2 ;;
  esac
  shift
done
[[ $duration =~ ^[0-9]+$ ]] || { echo "demo.sh: --duration: '$duration' is not a whole number of seconds" >&2; exit 2; }

if ((do_build)); then
  scripts/install-deps.sh
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLINKEM_WITH_GUI=ON \
        -DLINKEM_BUILD_TESTS=OFF -DLINKEM_BUILD_BENCH=OFF >/dev/null
  # Only the programs the demo runs (the check, scripts/demo-check.py, is Python): the
  # targets of those this configuration has (linkem-gui only with Qt 6, linkemd only with
  # DPDK: without it the next step says so).
  mapfile -t targets < <(cmake --build "$build" --target help |
    sed -n 's/^\(linkemd\|linkemctl\|linkem-gui\): .*/\1/p')
  ((${#targets[@]} == 0)) || cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
fi

program() {  # the built program $1, or nothing
  find "$build" -maxdepth 4 -type f -name "$1" -perm -u+x 2>/dev/null | head -1
}
linkemd=$(program linkemd)
linkemctl=$(program linkemctl)
gui=$(program linkem-gui)
[[ -n $linkemd ]] || { echo "demo.sh: no linkemd in $build (DPDK missing? see the cmake output)" >&2; exit 1; }

control=${LINKEM_DEMO_CONTROL:-tcp://127.0.0.1:7710}
telemetry=${LINKEM_DEMO_TELEMETRY:-tcp://127.0.0.1:7711}

# Debian's python3 (python3-zmq is installed for it), not another one earlier in PATH.
py=/usr/bin/python3
log=$build/linkemd-demo.log
# (linkemd gives itself a DPDK runtime directory of its own: it runs beside other DPDK
# programs.)
"$linkemd" --demo --control "$control" --telemetry "$telemetry" --stats-interval 0 >"$log" 2>&1 &
pid=$!
stop() {
  trap - INT TERM EXIT
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null || true
  echo "demo: linkemd stopped (its log: $log)"
}
trap stop EXIT
trap 'exit 130' INT TERM

# The check (scripts/demo-check.py): once linkemd answers (up to 60 s), 1 s to settle, then
# 10 s of telemetry: the delay the built-in traffic measured against the emulator's own
# account of it, per direction. Exit 0: passed; 1: failed; 2: linkemd exited or never
# answered; 3: disturbed, not judged.
check=0
"$py" scripts/demo-check.py "$control" "$telemetry" "$pid" || check=$?
if ((check == 2)); then
  echo "demo: linkemd's log ($log), last lines:"
  tail -5 "$log"
  exit 1
fi
if ((check != 0)); then
  ((check_only)) && { ((check == 3)) && exit 3; exit 1; }
  echo "demo: showing the link anyway"
fi
if ((check_only)); then exit 0; fi

deadline=()
((duration > 0)) && deadline=(timeout --foreground -s INT "$duration")
endpoints=(--control "$control" --telemetry "$telemetry")
if [[ -n ${DISPLAY:-}${WAYLAND_DISPLAY:-} && -n $gui ]]; then
  echo "demo: linkem-gui (close its window to stop the demo)"
  "${deadline[@]}" "$gui" "${endpoints[@]}" || true
elif [[ -n $linkemctl ]]; then
  [[ -n ${DISPLAY:-}${WAYLAND_DISPLAY:-} ]] && echo "demo: linkem-gui is not built here; showing linkemctl watch"
  echo "demo: linkemctl watch (Ctrl+C stops the demo)"
  "${deadline[@]}" "$linkemctl" "${endpoints[@]}" watch || true
else
  echo "demo: linkemctl and linkem-gui are not built here; linkemd's telemetry, once a second (Ctrl+C stops the demo)"
  "${deadline[@]}" "$py" - "$telemetry" <<'EOF' || true
import sys, zmq
s = zmq.Context().socket(zmq.SUB)
s.connect(sys.argv[1])
s.setsockopt_string(zmq.SUBSCRIBE, "stats")
last = {}
try:
    while True:
        _, body = s.recv_multipart()
        m = __import__("json").loads(body)
        if m["seq"] % 10:
            continue
        out = []
        for d in ("a_to_b", "b_to_a"):
            t, x = m[d].get("traffic", {}), m[d]
            prev = last.get(d, (m["t_ns"], x["packets_out"]))
            dt = (m["t_ns"] - prev[0]) / 1e9
            pps = (x["packets_out"] - prev[1]) / dt if dt > 0 else 0
            last[d] = (m["t_ns"], x["packets_out"])
            dl = t.get("delay", {})
            out.append(f"{d} {pps:8.0f} pps out, measured delay {dl.get('mean_ns', 0) / 1e6:7.3f} ms "
                       f"(jitter {dl.get('jitter_ns', 0) / 1e6:.3f}), lost {t.get('lost', 0)}")
        print(" | ".join(out), flush=True)
except KeyboardInterrupt:
    pass
EOF
fi
