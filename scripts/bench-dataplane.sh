#!/usr/bin/env bash
# Data-plane forwarding benchmark: dpdk-testpmd (io forwarding) against linkemd in each
# emulation mode, on the same virtual ports (two net_null devices, which generate and
# absorb packets at no cost), for 64- and 1518-byte frames. Prints forwarded packets per
# second per data-plane lcore and the ratio to testpmd.
#
#   scripts/bench-dataplane.sh [--linkemd PATH] [--duration 5] [--warmup 2]
#                              [--sizes "64 1518"] [--mbufs 2097152]
#                              [--workers "shared"] (linkemd's --workers; a list such as
#                              "1 2 4 8" runs every mode with each, and the table says how
#                              the total scales: rate per lcore against the fewest lcores')
#                              [--mbufs-per-worker N] (instead of --mbufs: N for each pool,
#                              i.e. each worker of each direction; `shared` counts as one)
#                              [--burst 32] (rx/tx burst of both forwarders: testpmd's default;
#                              linkemd's own default is the paper's 16)
#                              [--modes "zero constant corr corr_spacer corr_spacer_ge reord reord_spacer_ge"]
#                              (also: c10us c1ms = constant 10 us / 1 ms: in-flight effect)
#                              [--out DIR] (keep the logs there) [--eal "RAW EAL ARGS for
#                              linkemd, e.g. -m 3072"]
#                              [--rounds N] (repeat everything N times; the table shows
#                              medians, each linkemd line against the testpmd run of its round)
#                              [--rt PRIO]  (run testpmd and linkemd under SCHED_FIFO PRIO, so
#                              builds and other jobs on a shared machine cannot take the
#                              polling lcore's CPU; it does not shield caches and memory)
#                              [--one-way]  (port b receives nothing (net_null no-rx=1): one
#                              direction, a to b, on the lcore, as with one lcore per
#                              direction on a NIC machine; default: both directions)
#                              [--single-port] (one direction on port a alone, back out of
#                              it: with --workers N, N lcores for it; the rows say "one way")
#                              [--rate RATE] (the spacer's rate in mode spacer_rate, default
#                              10Gbit: the table prints the bits out per second against it)
#                              [--no-testpmd] (linkemd only: the "vs testpmd" column stays empty)
#
# Needs root (DPDK EAL) but no hugepages and no NIC. Rates: packets_out of both directions
# summed, from counter deltas between stats lines after the warm-up (linkemd --stats-json)
# or testpmd's per-second Tx-pps; "per-s min..max" shows the noise. The spacer runs at
# 1 Tbit/s with the largest backlog limit so it costs its work but never holds packets
# back or drops them: this measures cost, not policy. With 10 ms of delay, pps x 10 ms
# packets are in flight, so linkemd gets a large pool (--mbufs, half per direction): at
# ~23 Mpps a direction, correlated 10 ms +- 3 ms wanders up to ~19 ms, ~440 k packets,
# more than half of 2^20 buffers leaves free beside the rings and caches (hence 2^21); a
# non-zero rx_nombuf or drops_buffer_full means the pool, not the CPU, limited the rate. "stalled"
# is the share of the measured time linkemd's lcore did not poll (its stall counters; under
# --rt mostly the kernel's real-time throttling, ~5%, which testpmd gets alike). Other load
# on the machine shows as a wide min..max; testpmd runs right before linkemd for each size
# so both see similar load. Modes: the list below; also spacer_rate (correlated + spacer at
# --rate with its default backlog limit, no loss: offered far above the rate, the workers
# together should send at it) and corr_ge (correlated + Gilbert-Elliott, no limiter: the
# workers share nothing).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PY=/usr/bin/python3
PARSE="$HERE/dataplane/bench_parse.py"

LINKEMD=${LINKEMD:-}
SECONDS_RUN=5
WARMUP=2
SIZES="64 1518"
MBUFS=2097152
BURST=32
WORKERS=shared
MBUFS_PER_WORKER=""
SINGLE_PORT=0
RATE=10Gbit
NO_TESTPMD=0
MODES="zero constant corr corr_spacer corr_spacer_ge reord reord_spacer_ge"
KEEP=""
RT=()
ROUNDS=1
ONE_WAY=0
LINKEMD_EAL=${LINKEMD_EAL_ARGS:-}
while [[ $# -gt 0 ]]; do
    case $1 in
        --linkemd) LINKEMD=$2; shift 2 ;;
        --duration) SECONDS_RUN=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --sizes) SIZES=$2; shift 2 ;;
        --mbufs) MBUFS=$2; shift 2 ;;
        --burst) BURST=$2; shift 2 ;;
        --workers) WORKERS=$2; shift 2 ;;
        --lcores) WORKERS=$2; shift 2 ;;  # as linkemd's --lcores: the same as --workers
        --mbufs-per-worker) MBUFS_PER_WORKER=$2; shift 2 ;;
        --single-port) SINGLE_PORT=1; shift ;;
        --rate) RATE=$2; shift 2 ;;
        --no-testpmd) NO_TESTPMD=1; shift ;;
        --modes) MODES=$2; shift 2 ;;
        --out) KEEP=$2; shift 2 ;;
        --eal) LINKEMD_EAL=$2; shift 2 ;;
        --rt) RT=(chrt -f "$2"); shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --one-way) ONE_WAY=1; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "bench-dataplane.sh: unknown option '$1'; allowed: --linkemd PATH, --duration S, --warmup S, --sizes LIST, --mbufs N, --burst N, --workers LIST, --mbufs-per-worker N, --single-port, --rate RATE, --no-testpmd, --modes LIST, --out DIR, --eal ARGS, --rt PRIO, --rounds N, --one-way (--help explains them)" >&2; exit 2 ;;
    esac
done
source "$HERE/dataplane/common.sh"
LINKEMD=$(bench_linkemd "$LINKEMD" "$ROOT")
bench_need_root bench-dataplane
[[ $NO_TESTPMD == 1 ]] || command -v dpdk-testpmd >/dev/null ||
    { echo "bench-dataplane: dpdk-testpmd not found (Debian package dpdk-dev)" >&2; exit 1; }
[[ -x $PY ]] || { echo "bench-dataplane: $PY not found" >&2; exit 1; }
if [[ -z $LINKEMD || ! -x $LINKEMD ]]; then
    echo "bench-dataplane: linkemd not found (build it or pass --linkemd); running testpmd only" >&2
    LINKEMD=""
fi
# lcores W: the polling lcores linkemd runs with --workers W (one per worker per direction
# that receives).
lcores() {
    case $1 in
        shared) echo 1 ;;
        *) if [[ $SINGLE_PORT == 1 || $ONE_WAY == 1 ]]; then echo "$1"; else echo $((2 * $1)); fi ;;
    esac
}
for w in $WORKERS; do
    [[ $w == shared || $w =~ ^[0-9]+$ ]] || { echo "--workers: '$w' is neither shared nor a number" >&2; exit 2; }
done
[[ $SINGLE_PORT == 1 && $ONE_WAY == 1 ]] && { echo "--single-port and --one-way exclude each other" >&2; exit 2; }
RATE_BPS=$($PY -c "
import re, sys
m = re.fullmatch(r'([0-9.]+)([kMGT]?)bit', sys.argv[1])
print(int(float(m.group(1)) * {'': 1, 'k': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12}[m.group(2)]) if m else '')" "$RATE")
[[ -n $RATE_BPS ]] || { echo "--rate: '$RATE' is not a rate such as 10Gbit" >&2; exit 2; }

WORK=$(mktemp -d /tmp/linkem-bench.XXXXXX)
RESULTS=$WORK/results.jsonl
PID=""
cleanup() {
    [[ -n $PID ]] && kill -INT "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    rm -rf /var/run/dpdk/lkbench-$$-* 2>/dev/null
    if [[ -n $KEEP ]]; then mkdir -p "$KEEP" && cp -r "$WORK"/. "$KEEP"/; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

DELAY="--mean-delay 10ms --jitter 3ms"
# The spacer's backlog is (link free time - delayed arrival) x rate, so with 3 ms of jitter
# at 1 Tbit/s the default 1 MiB limit drops most packets; the largest limit keeps this a
# measurement of the spacer's cost.
SPACER="--limiter spacer --rate 1Tbit --queue-limit 64GiB"
GE="--loss-model gilbert_elliott --ge-p 0.001 --ge-r 0.1 --ge-loss-good 0 --ge-loss-bad 0.5"
# The largest buffer limit: the link's limit is split between the workers, and the default
# (2^20 packets) would drop 8 workers' backlog of 10 ms as buffer_full; the pool still caps
# each worker (a non-zero drops_buffer_full then means the pool, as before).
BUFFER="--buffer-limit 268435456"
mode_label() {
    case $1 in
        zero) echo "linkemd no delay (pass-through)" ;;
        constant) echo "linkemd constant 10ms" ;;
        c10us) echo "linkemd constant 10us" ;;
        c1ms) echo "linkemd constant 1ms" ;;
        corr) echo "linkemd correlated 10ms+-3ms" ;;
        corr_spacer) echo "linkemd corr 10ms+-3ms + spacer" ;;
        corr_spacer_ge) echo "linkemd corr 10ms+-3ms + spacer + GE" ;;
        reord) echo "linkemd reordered 10ms+-3ms" ;;
        reord_spacer_ge) echo "linkemd reord 10ms+-3ms + spacer + GE" ;;
        spacer_rate) echo "linkemd corr + spacer $RATE" ;;
        corr_ge) echo "linkemd corr 10ms+-3ms + GE" ;;
        *) return 1 ;;
    esac
}
mode_flags() {
    case $1 in
        zero) echo "" ;;
        constant) echo "--distribution constant --mean-delay 10ms" ;;
        c10us) echo "--distribution constant --mean-delay 10us" ;;
        c1ms) echo "--distribution constant --mean-delay 1ms" ;;
        corr) echo "--strategy correlated $DELAY" ;;
        corr_spacer) echo "--strategy correlated $DELAY $SPACER" ;;
        corr_spacer_ge) echo "--strategy correlated $DELAY $SPACER $GE" ;;
        reord) echo "--strategy reordered $DELAY" ;;
        reord_spacer_ge) echo "--strategy reordered $DELAY $SPACER $GE" ;;
        spacer_rate) echo "--strategy correlated $DELAY --limiter spacer --rate $RATE" ;;
        corr_ge) echo "--strategy correlated $DELAY $GE" ;;
    esac
}
for m in $MODES; do mode_label "$m" >/dev/null || { echo "unknown mode '$m'" >&2; exit 2; }; done

# run_one NAME TIMEOUT_S CMD...: runs CMD in the background, logs to $WORK/NAME.log.
run_one() {
    local name=$1 t=$2; shift 2
    echo "# $name: $*" >&2
    timeout -s INT -k 10 "$t" "$@" >"$WORK/$name.log" 2>"$WORK/$name.err" </dev/null &
    PID=$!
    wait "$PID"
    local rc=$?
    PID=""
    # timeout's 124 is how testpmd is stopped; anything else non-zero is a failure.
    if [[ $rc -ne 0 && $rc -ne 124 ]]; then
        echo "#   exit code $rc; stderr tail:" >&2
        tail -n 8 "$WORK/$name.err" | sed 's/^/#     /' >&2
    fi
    return 0
}

TOTAL=$((WARMUP + SECONDS_RUN + 1))
echo "# linkem data-plane benchmark: $(date -u +%FT%TZ), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
[[ ${#RT[@]} -gt 0 ]] && echo "# real-time scheduling: ${RT[*]}" >&2
[[ $ROUNDS -gt 1 ]] && echo "# $ROUNDS rounds" >&2
B_RX=""
if [[ $ONE_WAY == 1 ]]; then
    B_RX=",no-rx=1"
    echo "# one way: port b receives nothing (net_null no-rx=1); rates are a to b only" >&2
fi
[[ $SINGLE_PORT == 1 ]] && echo "# single port: one direction, net_null0 back out of itself" >&2
MBUFS_TEXT=$MBUFS
[[ -n $MBUFS_PER_WORKER ]] && MBUFS_TEXT="$MBUFS_PER_WORKER per worker"
echo "# warm-up ${WARMUP}s, measure ${SECONDS_RUN}s per config; burst $BURST for both; linkemd: ${LINKEMD:-none} (--workers ${WORKERS// /,}, --mbufs $MBUFS_TEXT)" >&2
for ((round = 0; round < ROUNDS; ++round)); do
for size in $SIZES; do
    name="testpmd-$size-r$round"
    [[ $NO_TESTPMD == 1 ]] || run_one "$name" $((TOTAL + 3)) "${RT[@]}" dpdk-testpmd --no-huge --no-pci -m 1024 -l 0,1 \
        --file-prefix "lkbench-$$-$name" \
        --vdev "net_null0,size=$size" --vdev "net_null1,size=$size$B_RX" \
        -- --forward-mode=io --total-num-mbufs=16384 --burst="$BURST" --stats-period 1 --auto-start
    [[ $NO_TESTPMD == 1 ]] || $PY "$PARSE" testpmd "$WORK/$name.log" "$WARMUP" "testpmd io" "$size" 1 "$round" >>"$RESULTS"

    [[ -n $LINKEMD ]] || continue
    for m in $MODES; do
    for w in $WORKERS; do
        name="linkemd-$m-$size-w$w-r$round"
        ports=(--port-a "net_null0,size=$size" --port-b "net_null1,size=$size$B_RX")
        [[ $SINGLE_PORT == 1 ]] && ports=(--port-a "net_null0,size=$size")
        mbufs=$MBUFS
        if [[ -n $MBUFS_PER_WORKER ]]; then  # a pool per receive queue of each port
            q=$w; [[ $w == shared ]] && q=1
            mbufs=$((MBUFS_PER_WORKER * q * ${#ports[@]} / 2))
        fi
        label=$(mode_label "$m")
        [[ $SINGLE_PORT == 1 || $ONE_WAY == 1 ]] && label="$label, one way"
        rate=""
        [[ $m == spacer_rate ]] && rate=$RATE_BPS
        # shellcheck disable=SC2046  # mode_flags is a list of words on purpose
        run_one "$name" $((TOTAL + 60)) "${RT[@]}" "$LINKEMD" "${ports[@]}" \
            --workers "$w" --mbufs "$mbufs" --burst "$BURST" --seed 42 $BUFFER \
            --stats-json --stats-interval 1s --duration "${TOTAL}s" $(mode_flags "$m") \
            -- --file-prefix "lkbench-$$-$name" $LINKEMD_EAL
        $PY "$PARSE" linkemd "$WORK/$name.log" "$WARMUP" "$label" "$size" "$(lcores "$w")" "$round" "$w" "$rate" >>"$RESULTS"
        # what a shared limiter cost the workers (one compare-and-swap per reservation)
        grep -h "reserved the shared link" "$WORK/$name.err" | sed "s/^linkemd: /#   $name: /" >&2
    done
    done
done
done
echo
$PY "$PARSE" table "$RESULTS"
