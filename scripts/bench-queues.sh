#!/usr/bin/env bash
# The queue disciplines' cost on the packet path (docs/queues.md, docs/performance.md):
# linkemd forwarding one direction of 64-byte frames through a spacer at 1 Tbit/s with no
# delay, so that every packet passes the limiter's queue and none waits there (the link is
# free again within a nanosecond): what is measured is the per-packet work of each
# discipline's enqueue and dequeue (CoDel's sojourn check, FQ-CoDel's hash and flow
# scheduling), not its control, which a queue that never builds does not exercise.
# Configurations, in alternation, N rounds, each printed as its rate against `droptail` of
# its round:
#   bytes     --queue droptail with a byte limit: the spacer's own path (no Bottleneck)
#   droptail  --queue droptail --queue-limit 100000p: the same policy through the Bottleneck
#   codel     --queue codel --queue-limit 100000p
#   fq_codel  --queue fq_codel --queue-limit 100000p, fq_flows 1024
#
#   scripts/bench-queues.sh [--linkemd PATH] [--rounds 3] [--duration 5] [--warmup 2]
#                           [--source null|pcap] [--configs "bytes droptail codel fq_codel"]
#                           [--out DIR] [--eal "RAW EAL ARGS"]
#
# --source null (default): port A is net_null, whose frames are all zero bytes (no IP
# header): they all hash to one FQ-CoDel flow. --source pcap: port A is net_pcap replaying
# 1024 IPv4/UDP frames of 1024 flows (source ports 1024 .. 2047) from memory without end
# (infinite_rx), so FQ-CoDel spreads them over its 1024 queues; net_pcap copies each frame
# into its mbuf, which costs rate too (compare within one source only). Port B is net_null
# without receive (no-rx=1): one direction, a to b, on one lcore (--workers shared). Rates:
# packets_out of a_to_b from linkemd's --stats-json counter deltas after the warm-up. Needs
# root (DPDK EAL), no hugepages, no NIC.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PY=/usr/bin/python3
LINKEMD=${LINKEMD:-}
ROUNDS=3
DURATION=5
WARMUP=2
OUT=""
EAL=""
SOURCE=null
CONFIGS="bytes droptail codel fq_codel"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --linkemd) LINKEMD=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --duration) DURATION=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --eal) EAL=$2; shift 2 ;;
        --source) SOURCE=$2; shift 2 ;;
        --configs) CONFIGS=$2; shift 2 ;;
        -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
        *) echo "bench-queues.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
source "$HERE/dataplane/common.sh"
[[ -n "$LINKEMD" ]] || LINKEMD=$(bench_linkemd "" "$ROOT")
[[ -n "$LINKEMD" ]] || LINKEMD=$ROOT/build-tests/backend/linkemd/linkemd
[[ -x "$LINKEMD" ]] || { echo "bench-queues.sh: no linkemd (build it, or --linkemd PATH)" >&2; exit 2; }
bench_need_root bench-queues.sh
case "$SOURCE" in
    pcap | null) ;;
    *) echo "bench-queues.sh: --source '$SOURCE': allowed null or pcap" >&2; exit 2 ;;
esac
for c in $CONFIGS; do
    case "$c" in
        bytes | droptail | codel | fq_codel) ;;
        *) echo "bench-queues.sh: --configs: '$c' is not a configuration; allowed bytes, droptail, codel, fq_codel" >&2
           exit 2 ;;
    esac
done
[[ " $CONFIGS " == *" droptail "* ]] ||
    { echo "bench-queues.sh: --configs: needs droptail (the ratios' base)" >&2; exit 2; }
[[ -n "$OUT" ]] || OUT=$(mktemp -d /tmp/linkem-bench-queues.XXXXXX)
mkdir -p "$OUT"

# The capture and the configurations.
bench_udp_pcap "$PY" "$OUT/udp64.pcap" 1024 9000
"$PY" - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
link = {"limiter": "spacer", "rate_bps": 1e12}
configs = {
    "bytes": dict(link, queue="droptail", queue_limit_bytes=1 << 36),
    "droptail": dict(link, queue="droptail", queue_limit_packets=100000),
    "codel": dict(link, queue="codel", queue_limit_packets=100000),
    "fq_codel": dict(link, queue="fq_codel", queue_limit_packets=100000, fq_flows=1024),
}
for name, c in configs.items():
    with open("%s/%s.json" % (out, name), "w") as f:
        json.dump(c, f)
EOF

run_one() {  # CONFIG ROUND
    local cfg=$1 round=$2 log="$OUT/$1-$2.log" port_a="net_null0"
    [[ $SOURCE == pcap ]] && port_a="net_pcap0,rx_pcap=$OUT/udp64.pcap,infinite_rx=1"
    bench_run_stats "$log" $((WARMUP + DURATION + 1)) \
        timeout -s TERM $((DURATION + WARMUP + 80)) "$LINKEMD" --no-control \
        --port-a "$port_a" --port-b "net_null1,no-rx=1" \
        --workers shared --mbufs 262144 --config "$OUT/$cfg.json" \
        --stats-json --stats-interval 1s -- --file-prefix "linkem-bench-queues-$$" $EAL
    "$PY" "$HERE/dataplane/stats_rates.py" "$log" "$WARMUP" "$cfg" "$round" >>"$OUT/results.jsonl"
    tail -1 "$OUT/results.jsonl"
}

: >"$OUT/results.jsonl"
echo "linkemd: $LINKEMD; source $SOURCE; logs in $OUT"
for r in $(seq "$ROUNDS"); do
    for cfg in $CONFIGS; do run_one "$cfg" "$r"; done
done
"$PY" "$HERE/dataplane/ratio_table.py" "$OUT/results.jsonl" droptail "$CONFIGS" \
    --target "codel=0.909:at most 10 % slower" --target "fq_codel=0.8:at most 25 % slower"
