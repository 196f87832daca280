#!/usr/bin/env bash
# Control and telemetry benchmark (docs/performance.md, "Headline figures", [f]), on the
# virtual ports of scripts/bench-dataplane.sh (two net_null devices, which generate and
# absorb packets at no cost):
#
#  1. set_link round trip: N changes (mean delay 100 us <-> 200 us) while linkemd forwards
#     at full rate, each timed from sending the request to the reply, which linkemd sends
#     after the data plane adopted the change (Dataplane::wait_applied): p50, p90, p99, max.
#  2. Forwarding rate with control and telemetry on (--delay-samples-per-s 20000, and a
#     subscriber taking the `delay` topic as fast as it comes) / the same run with
#     --no-control, same ports and link (correlated 1 ms +- 200 us), in alternated pairs
#     (on, off, then off, on, ...); the figure is the median of the per-pair ratios. The
#     subscriber runs on CPU 0 beside linkemd's main thread (the EAL puts the main lcore on
#     the first CPU, the data-plane lcore on the next), under --rt with linkemd's priority.
#  3. The same two configurations interleaved (--slices N, default 20; 0 skips it): both
#     linkemds run at once, one at a time, taking turns of --slice seconds (the other held
#     by SIGSTOP; scripts/control/interleave.py), so both see the same minutes of a shared
#     machine whose speed drifts; the figure is the median of the per-slice ratios.
#
#   scripts/bench-control.sh [--linkemd PATH] [--changes 1000] [--rounds 3] [--duration 6]
#                            [--warmup 2] [--size 64] [--mbufs 262144] [--rt PRIO]
#                            [--slices 20] [--slice 2]
#                            [--skip-roundtrip] [--skip-ratio] [--out DIR]
#
# --duration S: seconds measured per run of part 2; --out DIR: keep the logs there.
#
# Needs root (DPDK EAL), Debian's /usr/bin/python3 with python3-zmq, no NIC, no hugepages.
# Rates come from linkemd's --stats-json counters (scripts/dataplane/bench_parse.py, as in
# bench-dataplane.sh); "stalled" is the share of the window linkemd's lcore did not poll.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PY=/usr/bin/python3
PARSE="$HERE/dataplane/bench_parse.py"
CTL_PY="$HERE/control/bench_control.py"

LINKEMD=""
CHANGES=1000
ROUNDS=3
SECONDS_RUN=6
WARMUP=2
SIZE=64
MBUFS=262144
RT=()
DO_RTT=1
DO_RATIO=1
KEEP=""
SLICES=20
SLICE=2
while [[ $# -gt 0 ]]; do
    case $1 in
        --linkemd) LINKEMD=$2; shift 2 ;;
        --changes) CHANGES=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --duration) SECONDS_RUN=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --size) SIZE=$2; shift 2 ;;
        --mbufs) MBUFS=$2; shift 2 ;;
        --rt) RT=(chrt -f "$2"); shift 2 ;;
        --skip-roundtrip) DO_RTT=0; shift ;;
        --skip-ratio) DO_RATIO=0; shift ;;
        --out) KEEP=$2; shift 2 ;;
        --slices) SLICES=$2; shift 2 ;;
        --slice) SLICE=$2; shift 2 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "bench-control.sh: unknown option '$1'; allowed: --linkemd PATH, --changes N, --rounds N, --duration S, --warmup S, --size BYTES, --mbufs N, --rt PRIO, --skip-roundtrip, --skip-ratio, --out DIR, --slices N, --slice S (--help explains them)" >&2; exit 2 ;;
    esac
done
source "$HERE/dataplane/common.sh"
LINKEMD=$(bench_linkemd "$LINKEMD" "$ROOT")
bench_need_root bench-control
[[ -n $LINKEMD && -x $LINKEMD ]] || { echo "bench-control: linkemd not found (build it or pass --linkemd)" >&2; exit 1; }
$PY -c "import zmq" 2>/dev/null || { echo "bench-control: $PY lacks python3-zmq" >&2; exit 1; }

WORK=$(mktemp -d /tmp/linkem-bench-control.XXXXXX)
RESULTS=$WORK/results.jsonl
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf /var/run/dpdk/lkbctl-$$-* 2>/dev/null
    if [[ -n $KEEP ]]; then mkdir -p "$KEEP" && cp -r "$WORK"/. "$KEEP"/; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

PIN0=()
command -v taskset >/dev/null && PIN0=(taskset -c 0)
PORTS=(--port-a "net_null0,size=$SIZE" --port-b "net_null1,size=$SIZE")
LINK=(--mean-delay 1ms --jitter 200us --seed 42)
echo "# linkem control benchmark: $(date -u +%FT%TZ), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# linkemd: $LINKEMD; ${SIZE} B frames on two net_null ports, --workers shared, --mbufs $MBUFS"
[[ ${#RT[@]} -gt 0 ]] && echo "# real-time scheduling: ${RT[*]}"

if [[ $DO_RTT == 1 ]]; then
    name=roundtrip
    echo "# $name: $CHANGES set_link changes"
    timeout -s INT -k 10 600 "${RT[@]}" "$LINKEMD" "${PORTS[@]}" --workers shared --mbufs "$MBUFS" \
        --mean-delay 100us --seed 42 --control "ipc://$WORK/c-$name" --telemetry "ipc://$WORK/t-$name" \
        --stats-interval 0 -- --file-prefix "lkbctl-$$-$name" >"$WORK/$name.log" 2>"$WORK/$name.err" </dev/null &
    pid=$!
    PIDS+=("$pid")
    $PY "$CTL_PY" roundtrip "ipc://$WORK/c-$name" "$CHANGES" | tee "$WORK/$name.out" | grep -v '^{'
    kill -INT "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
fi

if [[ $DO_RATIO == 1 ]]; then
    TOTAL=$((WARMUP + SECONDS_RUN + 1))
    echo "# forwarding rate: control+telemetry (--delay-samples-per-s 20000, a delay subscriber) vs --no-control; $ROUNDS pairs, warm-up ${WARMUP}s, measure ${SECONDS_RUN}s"
    for ((round = 0; round < ROUNDS; ++round)); do
        order="on off"
        ((round % 2)) && order="off on"
        for mode in $order; do
            name="$mode-r$round"
            extra=(--no-control)
            [[ $mode == on ]] && extra=(--control "ipc://$WORK/c-$name" --telemetry "ipc://$WORK/t-$name"
                                        --delay-samples-per-s 20000)
            echo "#   $name"
            timeout -s INT -k 10 $((TOTAL + 60)) "${RT[@]}" "$LINKEMD" "${PORTS[@]}" --workers shared \
                --mbufs "$MBUFS" "${LINK[@]}" "${extra[@]}" --stats-json --stats-interval 1s \
                --duration "${TOTAL}s" -- --file-prefix "lkbctl-$$-$name" \
                >"$WORK/$name.log" 2>"$WORK/$name.err" </dev/null &
            pid=$!
            PIDS+=("$pid")
            sub=""
            if [[ $mode == on ]]; then
                $PY "$CTL_PY" wait "ipc://$WORK/c-$name" >/dev/null
                # On CPU 0 with linkemd's main thread: the data-plane lcore polls CPU 1.
                "${PIN0[@]}" "${RT[@]}" $PY "$CTL_PY" subscribe "ipc://$WORK/t-$name" "$((TOTAL - 1))" >"$WORK/$name.sub" &
                sub=$!
            fi
            wait "$pid"
            rc=$?
            [[ -n $sub ]] && wait "$sub"
            if [[ $rc -ne 0 ]]; then
                echo "#   exit code $rc; stderr tail:"; tail -n 8 "$WORK/$name.err" | sed 's/^/#     /'
            fi
            $PY - "$PARSE" "$WORK/$name.log" "$WARMUP" "$mode" "$SIZE" "$round" "$WORK/$name.sub" >>"$RESULTS" <<'EOF'
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("bench_parse", sys.argv[1])
bp = importlib.util.module_from_spec(spec); spec.loader.exec_module(bp)
rec = bp.record("linkemd", sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), 1)
rec["round"] = int(sys.argv[6])
if os.path.exists(sys.argv[7]):
    lines = [l for l in open(sys.argv[7]) if l.startswith("{")]
    if lines:
        rec["subscriber"] = json.loads(lines[-1])
print(json.dumps(rec))
EOF
        done
    done
    echo
    $PY "$CTL_PY" ratio "$RESULTS"
fi

if [[ $SLICES -gt 0 ]]; then
    echo
    echo "# interleaved: control+telemetry against --no-control, $SLICES slices of ${SLICE}s"
    RTP=0
    [[ ${#RT[@]} -gt 0 ]] && RTP=${RT[2]}
    $PY "$HERE/control/interleave.py" --linkemd "$LINKEMD" --slices "$SLICES" --slice "$SLICE" \
        --work "$WORK" --rt "$RTP" \
        --common="${PORTS[*]} --workers shared --mbufs $MBUFS ${LINK[*]}" \
        --a="--control ipc://$WORK/c-int --telemetry ipc://$WORK/t-int --delay-samples-per-s 20000" \
        --b="--no-control" --a-subscriber "ipc://$WORK/t-int" | tee "$WORK/interleaved.json" |
        $PY -c 'import json, sys
r = json.loads(sys.stdin.read())
print("control+telemetry Mpps per slice:", r["a_mpps"])
print("--no-control Mpps per slice:     ", r["b_mpps"])
if "median" in r:
    print("on / off, median of %d slices: %.3f (quartiles %.3f-%.3f; target >= 0.97: %s)" % (
        len(r["ratios"]), r["median"], r["quartiles"][0], r["quartiles"][1],
        "met" if r["median"] >= 0.97 else "NOT met"))'
fi
