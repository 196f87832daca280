#!/usr/bin/env bash
# linkemd on several cores (as root; ~5 min on a 16-core machine; needs 9 CPUs and ~25 GiB):
#   1. one direction on 1, 2, 4, 8 workers (one net_null port, a queue per worker),
#      correlated 10 ms +- 3 ms + spacer + Gilbert-Elliott, 64 B, and testpmd's io rate;
#   2. reordered against correlated, paired within one run (bench-strategy-switch.sh), one
#      lcore for both directions, burst 16: 64 B plain and with spacer + GE, 1518 B plain;
#   3. the shared spacer's rate with 4 workers, 10 Gbit/s, offered far above it;
#   4. both directions: shared, 1, 2, 4 workers per direction;
#   5. without a limiter (the workers share nothing): correlated + GE, 1 and 8 workers;
#   6. with --profile-linkemd (built with -DLINKEM_DP_PROFILE=ON): TSC cycles per packet and
#      stage, correlated against reordered, one lcore for both directions;
#   7. dpdk-testpmd io on one net_null port's 1, 4, 8 queues (how far the port itself scales);
#   8. correlated and reordered in fresh processes (2 rounds), against 2.'s switching.
# Everything it prints also goes to DIR/summary.txt, the logs to DIR/logs.tar.gz.
#
#   scripts/bench-workers.sh --linkemd PATH [--profile-linkemd PATH] [--out DIR] [--quick]
#
# --quick: small pools and short slices, to try the script on a small machine (its figures
# mean nothing). dpdk-testpmd comes from PATH; the EAL's plugins from DPDK's own directory
# unless the linkemd given is a wrapper that adds -d (linkemd warns when the stack mempool
# driver is missing: its figures are then not the data plane's).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
LK="" PROF="" OUTDIR=/tmp/linkem-bench-workers QUICK=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --linkemd) LK=$2; shift 2 ;;
        --profile-linkemd) PROF=$2; shift 2 ;;
        --out) OUTDIR=$2; shift 2 ;;
        --quick) QUICK=1; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "bench-workers.sh: unknown option '$1'; allowed: --linkemd PATH, --profile-linkemd PATH, --out DIR, --quick (--help explains them)" >&2; exit 2 ;;
    esac
done
[[ -x $LK ]] || { echo "bench-workers.sh: --linkemd PATH is required (an executable)" >&2; exit 2; }
mkdir -p "$OUTDIR"
W=$(mktemp -d /tmp/linkem-bench-workers.XXXXXX)
exec > >(tee -a "$OUTDIR/summary.txt") 2>&1
T0=$(date +%s)
stamp() { echo; echo "=== [$(( $(date +%s) - T0 )) s] $*"; }
finish() { stamp "end"; tar czf "$OUTDIR/logs.tar.gz" -C "$W" . 2>/dev/null; rm -rf "$W"; }
trap finish EXIT

if [[ $QUICK == 1 ]]; then MPW=65536 SECS=1 WARM=1 SLICES=4 SLICE=0.5 MB2=131072 PD=2s
else MPW=1048576 SECS=3 WARM=2 SLICES=10 SLICE=1.5 MB2=2097152 PD=7s; fi
COMMON=(--duration "$SECS" --warmup "$WARM" --burst 16 --mbufs-per-worker "$MPW")
SWITCH=(--slices "$SLICES" --slice "$SLICE" --warmup "$WARM" --burst 16 --mbufs "$MB2")
quiet() { grep -v "^# linkemd-\|^# testpmd-\|^# plain\|^# spacer"; }

stamp "machine"
date -u +%FT%TZ
nproc; uname -r
lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|L2|L3|MHz" | head -12
free -g | head -2
cat /proc/loadavg
"$LK" --port-a net_null0 --workers 1 --mbufs 16384 --duration 1s --stats-interval 0 --no-control \
    -- --file-prefix lkbw-check 2>&1 | grep -E "warning|data plane running|rror" | head -5

stamp "1. one direction on 1, 2, 4, 8 workers, correlated + spacer + GE, 64 B (and testpmd)"
bash "$HERE/bench-dataplane.sh" --linkemd "$LK" --single-port --workers "1 2 4 8" \
    --modes corr_spacer_ge --sizes 64 "${COMMON[@]}" --out "$W/scale" 2>&1 | quiet

stamp "2. reordered / correlated paired in one run (SIGHUP), one lcore for both directions"
bash "$HERE/bench-strategy-switch.sh" --linkemd "$LK" --sizes 64 --variants "plain spacer_ge" \
    "${SWITCH[@]}" --out "$W/switch64" 2>&1 | quiet
bash "$HERE/bench-strategy-switch.sh" --linkemd "$LK" --sizes 1518 --variants plain \
    "${SWITCH[@]}" --out "$W/switch1518" 2>&1 | quiet

stamp "3. the shared spacer's rate: 4 workers, one direction, 10 Gbit/s"
bash "$HERE/bench-dataplane.sh" --linkemd "$LK" --single-port --workers 4 --modes spacer_rate \
    --rate 10Gbit --sizes 64 --no-testpmd "${COMMON[@]}" --out "$W/rate" 2>&1 | quiet

stamp "4. both directions: shared, 1, 2, 4 workers per direction"
bash "$HERE/bench-dataplane.sh" --linkemd "$LK" --workers "shared 1 2 4" --modes corr_spacer_ge \
    --sizes 64 --no-testpmd "${COMMON[@]}" --out "$W/layouts" 2>&1 | quiet

stamp "5. without a limiter: correlated + GE, one direction, 1 and 8 workers"
bash "$HERE/bench-dataplane.sh" --linkemd "$LK" --single-port --workers "1 8" --modes corr_ge \
    --sizes 64 --no-testpmd "${COMMON[@]}" --out "$W/nolimiter" 2>&1 | quiet

# profile NAME BINARY ARGS...: a short run; its profile lines and forwarding rate.
profile() {
    local name=$1 bin=$2; shift 2
    timeout -s INT -k 10 60 "$bin" "$@" --mbufs "$MB2" --burst 16 --seed 42 --duration "$PD" \
        --stats-interval 1s --stats-json --mean-delay 10ms --jitter 3ms \
        -- --file-prefix "lkbw-$name" >"$W/profile-$name.log" 2>"$W/profile-$name.err"
    echo "--- $name ($(grep -c "warning" "$W/profile-$name.err") warnings in its log)"
    grep -E "profile:" "$W/profile-$name.err"
    /usr/bin/python3 - "$W/profile-$name.log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
lines = [x for x in lines if not x.get("final")]
if len(lines) > 3:
    a, b = lines[2], lines[-1]
    dt = (b["t_ns"] - a["t_ns"]) / 1e9
    out = sum(b[d]["packets_out"] - a[d]["packets_out"] for d in ("a_to_b", "b_to_a") if d in b)
    print("    %.2f Mpps forwarded" % (out / dt / 1e6))
PY
}
if [[ -n $PROF ]]; then
    stamp "6. TSC cycles per packet and stage, 64 B, one lcore for both directions"
    for s in correlated reordered; do
        profile "$s" "$PROF" --port-a net_null0,size=64 --port-b net_null1,size=64 \
            --workers shared --strategy "$s"
    done
fi

stamp "7. dpdk-testpmd io on one net_null port (loop): N queues on N cores, 64 B, burst 16"
for n in 1 4 8; do
    timeout -s INT -k 5 $((WARM + SECS + 8)) dpdk-testpmd --no-huge --no-pci -m 2048 -l 0-$n \
        --file-prefix "lkbw-tp$n" --vdev net_null0,size=64 -- --forward-mode=io --port-topology=loop \
        --rxq=$n --txq=$n --nb-cores=$n --rxd=512 --txd=512 --total-num-mbufs=32768 --burst=16 \
        --stats-period 1 --auto-start </dev/null >"$W/testpmd-q$n.log" 2>&1
    /usr/bin/python3 "$HERE/dataplane/bench_parse.py" testpmd "$W/testpmd-q$n.log" "$WARM" q 64 "$n" |
        /usr/bin/python3 -c 'import json, sys
r = json.load(sys.stdin); p = (r["pps"] or 0) / 1e6
print("  %d queues: %.2f Mpps, %.2f per core" % (r["lcores"], p, p / r["lcores"]))'
done

stamp "8. correlated and reordered in fresh processes, one lcore for both directions, 64 B"
bash "$HERE/bench-dataplane.sh" --linkemd "$LK" --workers shared --modes "corr reord" --sizes 64 \
    --no-testpmd --rounds 2 --duration "$SECS" --warmup "$WARM" --burst 16 --mbufs "$MB2" \
    --out "$W/fresh" 2>&1 | quiet
