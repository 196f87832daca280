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
if [[ -z "$LINKEMD" ]]; then
    for c in "$ROOT/build-release/backend/linkemd/linkemd" "$ROOT/build/backend/linkemd/linkemd"; do
        [[ -x "$c" ]] && { LINKEMD=$c; break; }
    done
fi
[[ -x "$LINKEMD" ]] || { echo "bench-classes.sh: no linkemd (build it, or --linkemd PATH)" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "bench-classes.sh: needs root (DPDK EAL)" >&2; exit 2; }
case "$SOURCE" in
    pcap | null) ;;
    *) echo "bench-classes.sh: --source '$SOURCE': allowed pcap or null" >&2; exit 2 ;;
esac
[[ -n "$OUT" ]] || OUT=$(mktemp -d /tmp/linkem-bench-classes.XXXXXX)
mkdir -p "$OUT"

# The capture and the three configurations.
"$PY" - "$OUT" <<'EOF'
import json, struct, sys
out = sys.argv[1]
def csum(b):
    s = sum((b[i] << 8) + b[i + 1] for i in range(0, len(b), 2))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
ports = [5060, 22, 80, 443, 5201, 9000]
with open(out + "/udp64.pcap", "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(4096):
        udp = struct.pack("!HHHH", 1024 + i, ports[i % 6], 26, 0) + bytes(18)
        ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                                   bytes([10, 1, i >> 8, i & 255]), bytes([10, 2, 0, 1])))
        ip[10:12] = struct.pack("!H", csum(ip))
        frame = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + bytes(ip) + udp
        f.write(struct.pack("<IIII", 0, i, len(frame), len(frame)) + frame)
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
    timeout -s TERM $((DURATION + WARMUP + 80)) "$LINKEMD" --no-control \
        --port-a "$port_a" --port-b "net_null1,no-rx=1" \
        --workers shared --mbufs 1048576 --config "$OUT/$cfg.json" \
        --stats-json --stats-interval 1s -- --file-prefix "linkem-bench-classes-$$" $EAL \
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
            rows.append((j["t_ns"] / 1e9, j["a_to_b"]["packets_out"],
                         j["a_to_b"].get("drops_buffer_full", 0)))
t0 = rows[0][0] if rows else 0
rows = [r for r in rows if r[0] - t0 >= warmup]
pps = (rows[-1][1] - rows[0][1]) / (rows[-1][0] - rows[0][0]) if len(rows) > 1 else 0
print(json.dumps({"config": cfg, "round": rnd, "pps": pps, "intervals": len(rows) - 1,
                  "drops_buffer_full": rows[-1][2] if rows else None}))
EOF
    tail -1 "$OUT/results.jsonl"
}

: >"$OUT/results.jsonl"
echo "linkemd: $LINKEMD; source $SOURCE; logs in $OUT"
for r in $(seq "$ROUNDS"); do
    for cfg in off 16 256; do run_one "$cfg" "$r"; done
done
"$PY" - "$OUT/results.jsonl" <<'EOF'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rs:
    by.setdefault(r["round"], {})[r["config"]] = r["pps"]
print("\nround   off Mpps   16 classes (ratio)   256 match objects (ratio)")
ratios = {"16": [], "256": []}
for rnd in sorted(by):
    b = by[rnd]
    off = b.get("off", 0)
    cells = []
    for c in ("16", "256"):
        x = b.get(c, 0)
        q = x / off if off else float("nan")
        ratios[c].append(q)
        cells.append("%6.2f (%.3f)" % (x / 1e6, q))
    print("%5d   %8.2f   %-20s %s" % (rnd, off / 1e6, cells[0], cells[1]))
print("median ratio: 16 classes %.3f (target >= 0.9), 256 match objects %.3f (target >= 0.8)"
      % (statistics.median(ratios["16"]), statistics.median(ratios["256"])))
EOF
