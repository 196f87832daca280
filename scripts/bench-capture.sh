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
source "$HERE/dataplane/common.sh"
[[ -n "$LINKEMD" ]] || LINKEMD=$(bench_linkemd "" "$ROOT")
[[ -x "$LINKEMD" ]] || { echo "bench-capture.sh: no linkemd (build it, or --linkemd PATH)" >&2; exit 2; }
bench_need_root bench-capture.sh
[[ -n "$OUT" ]] || OUT=$(mktemp -d /tmp/linkem-bench-capture.XXXXXX)
mkdir -p "$OUT"

bench_udp_pcap "$PY" "$OUT/udp64.pcap" 4096 5201 per-frame
"$PY" - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
with open(out + "/link.json", "w") as f:
    json.dump({"strategy": "correlated", "mean_delay_us": 10000, "jitter_us": 3000,
               "loss_model": "bernoulli", "loss_probability": 0.01}, f)
EOF

run_one() {  # CONFIG ROUND
    local cfg=$1 round=$2 log="$OUT/$1-$2.log" capture=()
    [[ $cfg == capture ]] && capture=(--capture "$OUT/cap.pcapng" --capture-points out,drop
                                      --capture-snaplen 128 --capture-max-size 256MiB
                                      --capture-files 2)
    bench_run_stats "$log" $((WARMUP + DURATION + 1)) \
        timeout -s TERM $((DURATION + WARMUP + 80)) "$LINKEMD" --no-control \
        --port-a "net_pcap0,rx_pcap=$OUT/udp64.pcap,infinite_rx=1" --port-b "net_null1,no-rx=1" \
        --workers shared --mbufs 1048576 --config "$OUT/link.json" "${capture[@]}" \
        --stats-json --stats-interval 1s -- --file-prefix "linkem-bench-capture-$$" $EAL
    rm -f "$OUT"/cap*.pcapng
    "$PY" "$HERE/dataplane/stats_rates.py" "$log" "$WARMUP" "$cfg" "$round" >>"$OUT/results.jsonl"
    tail -1 "$OUT/results.jsonl"
}

: >"$OUT/results.jsonl"
echo "linkemd: $LINKEMD; logs in $OUT"
for r in $(seq "$ROUNDS"); do
    for cfg in off capture; do run_one "$cfg" "$r"; done
done
"$PY" "$HERE/dataplane/ratio_table.py" "$OUT/results.jsonl" off "off capture" \
    --target "capture=0.8:out,drop snaplen 128" \
    --extra "records_per_s=records written" --extra "missed_per_s=missed"
