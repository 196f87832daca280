#!/usr/bin/env bash
# Capture's cost to forwarding (docs/capture.md, docs/performance.md): linkemd forwarding one
# direction of 64-byte IPv4/UDP frames as fast as it can (net_pcap replaying 4096 frames from
# memory without end, correlated 10 ms +- 3 ms, 1 % Bernoulli loss so that drop records occur)
#   off       no capture
#   capture   linkemd --capture of every packet: out,drop, snaplen 128, into a ring of two
#             256 MiB files in --out (the disk is not filled)
# run in alternation, N rounds, and printed as packets forwarded per second, the ratio of
# capture to off in its round, and the capture's records written and missed per second (the
# stats' capture block). Port B is net_null without receive; one direction on the lcore; the
# writer thread runs on the main lcore's CPU. Needs root (DPDK EAL), no hugepages, no NIC.
#
#   scripts/bench-capture.sh [--linkemd PATH] [--rounds 3] [--duration 5] [--warmup 2]
#                            [--out DIR] [--eal "RAW EAL ARGS"]
#
# The writer alone (records per second on one CPU, and where records start to be missed at a
# paced offered rate): tests/bench/bench_capture (build-release/tests/bench/bench_capture).
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
while [[ $# -gt 0 ]]; do
    case "$1" in
        --linkemd) LINKEMD=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --duration) DURATION=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --eal) EAL=$2; shift 2 ;;
        -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "bench-capture.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if [[ -z "$LINKEMD" ]]; then
    for c in "$ROOT/build-release/backend/linkemd/linkemd" "$ROOT/build/backend/linkemd/linkemd"; do
        [[ -x "$c" ]] && { LINKEMD=$c; break; }
    done
fi
[[ -x "$LINKEMD" ]] || { echo "bench-capture.sh: no linkemd (build it, or --linkemd PATH)" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "bench-capture.sh: needs root (DPDK EAL)" >&2; exit 2; }
[[ -n "$OUT" ]] || OUT=$(mktemp -d /tmp/linkem-bench-capture.XXXXXX)
mkdir -p "$OUT"

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
    for i in range(4096):
        udp = struct.pack("!HHHH", 1024 + i, 5201, 26, 0) + bytes(18)
        ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                                   bytes([10, 1, i >> 8, i & 255]), bytes([10, 2, 0, 1])))
        ip[10:12] = struct.pack("!H", csum(ip))
        frame = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + bytes(ip) + udp
        f.write(struct.pack("<IIII", 0, i, len(frame), len(frame)) + frame)
with open(out + "/link.json", "w") as f:
    json.dump({"strategy": "correlated", "mean_delay_us": 10000, "jitter_us": 3000,
               "loss_model": "bernoulli", "loss_probability": 0.01}, f)
EOF

run_one() {  # CONFIG ROUND
    local cfg=$1 round=$2 log="$OUT/$1-$2.log" capture=()
    [[ $cfg == capture ]] && capture=(--capture "$OUT/cap.pcapng" --capture-points out,drop
                                      --capture-snaplen 128 --capture-max-size 256MiB
                                      --capture-files 2)
    timeout -s TERM $((DURATION + WARMUP + 80)) "$LINKEMD" --no-control \
        --port-a "net_pcap0,rx_pcap=$OUT/udp64.pcap,infinite_rx=1" --port-b "net_null1,no-rx=1" \
        --workers shared --mbufs 1048576 --config "$OUT/link.json" "${capture[@]}" \
        --stats-json --stats-interval 1s -- --file-prefix "linkem-bench-capture-$$" $EAL \
        >"$log" 2>&1 &
    local pid=$! want=$((WARMUP + DURATION + 1)) waited=0
    while kill -0 "$pid" 2>/dev/null && [[ $(grep -c '^{' "$log") -lt $want && $waited -lt 600 ]]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rm -f "$OUT"/cap*.pcapng
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
            c = j.get("capture") or {}
            rows.append((j["t_ns"] / 1e9, j["a_to_b"]["packets_out"], c.get("records", 0),
                         c.get("capture_missed", 0)))
t0 = rows[0][0] if rows else 0
rows = [r for r in rows if r[0] - t0 >= warmup]
dt = rows[-1][0] - rows[0][0] if len(rows) > 1 else 0
rate = lambda i: (rows[-1][i] - rows[0][i]) / dt if dt else 0
print(json.dumps({"config": cfg, "round": rnd, "pps": rate(1), "records_per_s": rate(2),
                  "missed_per_s": rate(3), "intervals": len(rows) - 1}))
EOF
    tail -1 "$OUT/results.jsonl"
}

: >"$OUT/results.jsonl"
echo "linkemd: $LINKEMD; logs in $OUT"
for r in $(seq "$ROUNDS"); do
    for cfg in off capture; do run_one "$cfg" "$r"; done
done
"$PY" - "$OUT/results.jsonl" <<'EOF'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rs:
    by.setdefault(r["round"], {})[r["config"]] = r
print("\nround   off Mpps   capture Mpps (ratio)   records written M/s   missed M/s")
ratios = []
for rnd in sorted(by):
    b = by[rnd]
    off = b.get("off", {}).get("pps", 0)
    c = b.get("capture", {})
    q = c.get("pps", 0) / off if off else float("nan")
    ratios.append(q)
    print("%5d   %8.2f   %8.2f (%.3f)       %8.3f            %8.3f" % (
        rnd, off / 1e6, c.get("pps", 0) / 1e6, q, c.get("records_per_s", 0) / 1e6,
        c.get("missed_per_s", 0) / 1e6))
print("median ratio: capture out,drop snaplen 128 %.3f (target >= 0.8)" % statistics.median(ratios))
EOF
