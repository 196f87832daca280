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
if [[ -z "$LINKEMD" ]]; then
    for c in "$ROOT/build-release/backend/linkemd/linkemd" "$ROOT/build/backend/linkemd/linkemd" \
             "$ROOT/build-tests/backend/linkemd/linkemd"; do
        [[ -x "$c" ]] && { LINKEMD=$c; break; }
    done
fi
[[ -x "$LINKEMD" ]] || { echo "bench-queues.sh: no linkemd (build it, or --linkemd PATH)" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "bench-queues.sh: needs root (DPDK EAL)" >&2; exit 2; }
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
"$PY" - "$OUT" <<'EOF'
import json, struct, sys
out = sys.argv[1]
def csum(b):
    s = sum((b[i] << 8) + b[i + 1] for i in range(0, len(b), 2))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
with open(out + "/udp64.pcap", "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(1024):
        udp = struct.pack("!HHHH", 1024 + i, 9000, 26, 0) + bytes(18)
        ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                                   bytes([10, 1, 0, 1]), bytes([10, 2, 0, 1])))
        ip[10:12] = struct.pack("!H", csum(ip))
        frame = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + bytes(ip) + udp
        f.write(struct.pack("<IIII", 0, i, len(frame), len(frame)) + frame)
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
    timeout -s TERM $((DURATION + WARMUP + 80)) "$LINKEMD" --no-control \
        --port-a "$port_a" --port-b "net_null1,no-rx=1" \
        --workers shared --mbufs 262144 --config "$OUT/$cfg.json" \
        --stats-json --stats-interval 1s -- --file-prefix "linkem-bench-queues-$$" $EAL \
        >"$log" 2>&1 &
    local pid=$! want=$((WARMUP + DURATION + 1)) waited=0
    # Until the stats lines cover the warm-up and the measurement (start-up takes seconds).
    while kill -0 "$pid" 2>/dev/null && [[ $(grep -c '^{' "$log") -lt $want && $waited -lt 600 ]]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    "$PY" - "$log" "$WARMUP" "$cfg" "$round" <<'EOF' >>"$OUT/results.jsonl"
import json, sys
log, warmup, cfg, rnd = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rows = []
for line in open(log, errors="replace"):
    if line.startswith("{"):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if "a_to_b" in j and "t_ns" in j:
            d = j["a_to_b"]
            rows.append((j["t_ns"] / 1e9, d["packets_out"],
                         sum(v for k, v in d.items() if k.startswith("drops_"))))
t0 = rows[0][0] if rows else 0
rows = [r for r in rows if r[0] - t0 >= warmup]
pps = (rows[-1][1] - rows[0][1]) / (rows[-1][0] - rows[0][0]) if len(rows) > 1 else 0
print(json.dumps({"config": cfg, "round": rnd, "pps": pps, "intervals": len(rows) - 1,
                  "drops": rows[-1][2] - rows[0][2] if len(rows) > 1 else None}))
EOF
    tail -1 "$OUT/results.jsonl"
}

: >"$OUT/results.jsonl"
echo "linkemd: $LINKEMD; source $SOURCE; logs in $OUT"
for r in $(seq "$ROUNDS"); do
    for cfg in $CONFIGS; do run_one "$cfg" "$r"; done
done
"$PY" - "$OUT/results.jsonl" "$CONFIGS" <<'EOF'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
configs = sys.argv[2].split()
others = [c for c in configs if c != "droptail"]
by = {}
for r in rs:
    by.setdefault(r["round"], {})[r["config"]] = r["pps"]
print("\nround   droptail Mpps   " + "   ".join("%s Mpps (ratio)" % c for c in others))
ratios = {c: [] for c in others}
for rnd in sorted(by):
    b = by[rnd]
    base = b.get("droptail", 0)
    cells = []
    for c in others:
        x = b.get(c, 0)
        q = x / base if base else float("nan")
        ratios[c].append(q)
        cells.append("%10.2f (%.3f)" % (x / 1e6, q))
    print("%5d   %13.2f   %s" % (rnd, base / 1e6, "   ".join(cells)))
targets = {"codel": " (target >= 0.909: at most 10 % slower)",
           "fq_codel": " (target >= 0.8: at most 25 % slower)"}
print("median ratio against droptail: " + ", ".join(
    "%s %.3f%s" % (c, statistics.median(ratios[c]), targets.get(c, "")) for c in others))
EOF
