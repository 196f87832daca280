#!/usr/bin/env bash
# Reordered against correlated in ONE linkemd run: the strategy is switched back and forth
# at run time (SIGHUP re-reads --config) every --slice seconds, and each reordered slice is
# compared with the correlated slices on either side of it. Both strategies thus see the
# same process, pool, ports and lcore, and nearly the same machine load, which separate runs
# on a shared machine do not (there the run-to-run spread is larger than the difference).
#
#   scripts/bench-strategy-switch.sh [--linkemd PATH] [--sizes "64 1518"] [--slices 20]
#                                    [--slice 1.5] [--warmup 3] [--burst 32] [--mbufs 2097152]
#                                    [--variants "plain spacer_ge"] [--jitter 3ms] [--rt PRIO]
#                                    [--out DIR] [--one-way]
#
# Variants: plain = 10 ms +- 3 ms normal (--jitter changes the 3 ms: the wider the delays
# spread, the more calendar buckets take pushes at once, and the more reordering costs);
# spacer_ge = the same + spacer at 1 Tbit/s with the largest backlog limit (costs its work,
# never holds back) + Gilbert-Elliott loss, as in scripts/bench-dataplane.sh. Rates:
# packets_out of both directions, from --stats-json lines every 100 ms; an interval counts
# for a slice only if both its ends show that slice's parameter generation, and the first
# two such intervals of each slice are left out (the switch moves the queued packets from
# one queue to the other, and the new queue needs a mean delay or two to reach its steady
# state). Prints per-slice rates and the median of the per-slice ratios reordered /
# mean(correlated neighbours).
#
# --one-way: port b receives nothing (net_null no-rx=1), so the lcore serves one direction
# (a to b), as with one lcore per direction on a NIC machine; default: both directions.
#
# Needs root (DPDK EAL); no hugepages, no NIC (net_null ports).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
LINKEMD=${LINKEMD:-}
SIZES="64 1518"
SLICES=20
SLICE=1.5
WARMUP=3
BURST=32
MBUFS=2097152
VARIANTS="plain spacer_ge"
JITTER=3ms
RT=()
KEEP=""
B_RX=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --linkemd) LINKEMD=$2; shift 2 ;;
        --sizes) SIZES=$2; shift 2 ;;
        --slices) SLICES=$2; shift 2 ;;
        --slice) SLICE=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --burst) BURST=$2; shift 2 ;;
        --mbufs) MBUFS=$2; shift 2 ;;
        --variants) VARIANTS=$2; shift 2 ;;
        --jitter) JITTER=$2; shift 2 ;;
        --rt) RT=(chrt -f "$2"); shift 2 ;;
        --out) KEEP=$2; shift 2 ;;
        --one-way) B_RX=",no-rx=1"; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "bench-strategy-switch.sh: unknown option '$1'; allowed: --linkemd PATH, --sizes LIST, --slices N, --slice S, --warmup S, --burst N, --mbufs N, --variants LIST, --jitter DURATION, --rt PRIO, --out DIR, --one-way (--help explains them)" >&2; exit 2 ;;
    esac
done
source "$HERE/dataplane/common.sh"
LINKEMD=$(bench_linkemd "$LINKEMD" "$ROOT")
[[ -x ${LINKEMD:-} ]] || { echo "bench-strategy-switch.sh: no linkemd binary (--linkemd PATH)" >&2; exit 2; }
bench_need_root bench-strategy-switch.sh
[[ $SLICES =~ ^[0-9]+$ && $SLICES -ge 3 ]] || { echo "bench-strategy-switch.sh: --slices must be a number >= 3" >&2; exit 2; }

# linkemd checks the delay flags (and says what is allowed) before anything starts.
if ! err=$("$LINKEMD" --print-config --port-a net_null0 --port-b net_null1 --mean-delay 10ms \
               --jitter "$JITTER" 2>&1 >/dev/null); then
    echo "bench-strategy-switch.sh: $err" >&2
    exit 2
fi

DIR=${KEEP:-$(mktemp -d /tmp/lkswitch.XXXXXX)}
mkdir -p "$DIR"
cleanup() { [[ -z $KEEP ]] && rm -rf "$DIR"; }
trap cleanup EXIT

write_config() {  # strategy -> config file (both directions)
    printf '{"a_to_b": {"strategy": "%s"}, "b_to_a": {"strategy": "%s"}}\n' "$1" "$1" >"$DIR/link.json.tmp"
    mv "$DIR/link.json.tmp" "$DIR/link.json"
}

for size in $SIZES; do
    for variant in $VARIANTS; do
        case $variant in
            plain) extra=() ;;
            spacer_ge) extra=(--limiter spacer --rate 1Tbit --queue-limit 64GiB
                              --loss-model gilbert_elliott --ge-p 0.001 --ge-r 0.1
                              --ge-loss-good 0 --ge-loss-bad 0.5) ;;
            *) echo "bench-strategy-switch.sh: unknown variant '$variant' (plain, spacer_ge)" >&2; exit 2 ;;
        esac
        tag="$variant-$size"
        write_config correlated
        # Slice 0 (correlated) is the warm-up; then SLICES slices alternating reordered,
        # correlated, ... The duration leaves room for the last slice.
        total=$(python3 -c "print(int($WARMUP + ($SLICES + 1) * $SLICE + 3))")
        cmd=("${RT[@]}" "$LINKEMD" --port-a "net_null0,size=$size" --port-b "net_null1,size=$size$B_RX"
             --workers shared --mbufs "$MBUFS" --burst "$BURST" --seed 42 --stats-json
             --stats-interval 100ms --duration "${total}s" --config "$DIR/link.json"
             --mean-delay 10ms --jitter "$JITTER" "${extra[@]}" -- --file-prefix "lkswitch-$$-$tag")
        echo "# $tag: ${cmd[*]}"
        "${cmd[@]}" >"$DIR/$tag.log" 2>"$DIR/$tag.err" &
        pid=$!
        # Wait until the data plane prints its first stats line, then warm up.
        for _ in $(seq 600); do
            [[ -s $DIR/$tag.log ]] && break
            kill -0 $pid 2>/dev/null || break
            sleep 0.1
        done
        sleep "$WARMUP"
        strategies=(correlated)
        for ((i = 1; i <= SLICES; i++)); do
            if ((i % 2 == 1)); then s=reordered; else s=correlated; fi
            write_config $s
            kill -HUP $pid 2>/dev/null
            strategies+=($s)
            sleep "$SLICE"
        done
        kill -INT $pid 2>/dev/null
        wait $pid
        echo "${strategies[*]}" >"$DIR/$tag.strategies"
        grep -c "applied (generation" "$DIR/$tag.err" >/dev/null ||
            { echo "# $tag: no parameter change was applied; see $DIR/$tag.err" >&2; }
        python3 "$HERE/dataplane/switch_parse.py" "$DIR/$tag.log" "$DIR/$tag.strategies" "$size B, $variant"
    done
done
