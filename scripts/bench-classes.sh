#!/usr/bin/env bash
# Traffic classes' forwarding cost (docs/classes.md, docs/performance.md): linkemd forwarding
# one direction of 64-byte IPv4/UDP frames, correlated 10 ms +- 3 ms + spacer (1 Tbit/s, the
# largest backlog limit: it costs its work, never holds packets back), with
#   off       no classes
#   16        16 classes, one match object each (protocol + B's port), most packets in default
#   256       16 classes with 256 match objects between them (A's /32 address + B's port)
# run in alternation, N rounds, and printed as the rate of each against `off` of its round.
#
#   scripts/bench-classes.sh [--linkemd PATH] [--rounds 3] [--duration 5] [--warmup 2]
#                            [--source pcap|null] [--out DIR] [--eal "RAW EAL ARGS"]
#
# --source pcap (default): port A is net_pcap replaying a capture of 4096 IPv4/UDP frames
# (4096 flows: A's address 10.1.x.y, source port 1024 + i, B's port one of 5060, 22, 80, 443,
# 5201, 9000) from memory without end (infinite_rx), so every frame goes through the rte_acl
# lookup; net_pcap copies each frame into its mbuf, which costs the forwarding rate too.
# --source null: port A is net_null, whose frames are all zero bytes (EtherType 0, no IP
# header): only the classifier's parse and its non-IP path run. Port B is net_null without
# receive (no-rx=1): one direction, a to b, on the lcore. Rates: packets_out of a_to_b from
# linkemd's --stats-json counter deltas after the warm-up. Needs root (DPDK EAL), no
# hugepages, no NIC.
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
SOURCE=pcap
while [[ $# -gt 0 ]]; do
    case "$1" in
        --linkemd) LINKEMD=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --duration) DURATION=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --eal) EAL=$2; shift 2 ;;
        --source) SOURCE=$2; shift 2 ;;
        -h | --help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "bench-classes.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
source "$HERE/dataplane/common.sh"
[[ -n "$LINKEMD" ]] || LINKEMD=$(bench_linkemd "" "$ROOT")
[[ -x "$LINKEMD" ]] || { echo "bench-classes.sh: no linkemd (build it, or --linkemd PATH)" >&2; exit 2; }
bench_need_root bench-classes.sh
case "$SOURCE" in
    pcap | null) ;;
    *) echo "bench-classes.sh: --source '$SOURCE': allowed pcap or null" >&2; exit 2 ;;
esac
[[ -n "$OUT" ]] || OUT=$(mktemp -d /tmp/linkem-bench-classes.XXXXXX)
mkdir -p "$OUT"

# The capture and the three configurations.
bench_udp_pcap "$PY" "$OUT/udp64.pcap" 4096 5060,22,80,443,5201,9000 per-frame
"$PY" - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
link = {"strategy": "correlated", "mean_delay_us": 10000, "jitter_us": 3000,
        "limiter": "spacer", "rate_bps": 1e12, "queue_limit_bytes": 1 << 36}
# 16 classes on protocol + B's port; a third of the frames (ports 5060, 22) land in two of them.
c16 = [{"name": "c%d" % k, "match": {"protocol": "udp", "b_port": [5060, 22][k] if k < 2 else 7000 + k},
        "mean_delay_us": 10000, "jitter_us": 3000} for k in range(16)]
# 256 match objects: 16 per class, each an /32 of A's side and a port of B's.
c256 = [{"name": "m%d" % k,
         "match": [{"protocol": "udp", "a_net": "10.1.%d.%d/32" % (k, j), "b_port": 5060 + j}
                   for j in range(16)],
         "mean_delay_us": 10000, "jitter_us": 3000} for k in range(16)]
for name, classes in (("off", []), ("16", c16), ("256", c256)):
    with open("%s/%s.json" % (out, name), "w") as f:
        json.dump(dict(link, classes=classes), f)
EOF

run_one() {  # CONFIG ROUND
    local cfg=$1 round=$2 log="$OUT/$1-$2.log" port_a="net_null0"
    [[ $SOURCE == pcap ]] && port_a="net_pcap0,rx_pcap=$OUT/udp64.pcap,infinite_rx=1"
    bench_run_stats "$log" $((WARMUP + DURATION + 1)) \
        timeout -s TERM $((DURATION + WARMUP + 80)) "$LINKEMD" --no-control \
        --port-a "$port_a" --port-b "net_null1,no-rx=1" \
        --workers shared --mbufs 1048576 --config "$OUT/$cfg.json" \
        --stats-json --stats-interval 1s -- --file-prefix "linkem-bench-classes-$$" $EAL
    "$PY" "$HERE/dataplane/stats_rates.py" "$log" "$WARMUP" "$cfg" "$round" >>"$OUT/results.jsonl"
    tail -1 "$OUT/results.jsonl"
}

: >"$OUT/results.jsonl"
echo "linkemd: $LINKEMD; source $SOURCE; logs in $OUT"
for r in $(seq "$ROUNDS"); do
    for cfg in off 16 256; do run_one "$cfg" "$r"; done
done
"$PY" "$HERE/dataplane/ratio_table.py" "$OUT/results.jsonl" off "off 16 256" \
    --target "16=0.9" --target "256=0.8"
