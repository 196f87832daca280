#!/usr/bin/env bash
# A short Table 4 point through veth pairs: scripts/measure-accuracy.sh --ports veth, CBR
# 10 000 frames/s of 1518 bytes, jitter 1 ms, 3 s (plus a 2 s 0-delay baseline). Exact, always:
# every frame the sender sent entered linkemd or is counted in the kernel's ring drops
# (rx_missed), every frame linkemd sent was received or counted as a socket drop, none twice,
# and linkem-sim's trace covers every received frame. Timing, only when linkemd did not stall
# (under 0.5 % of the flow) and nothing was lost: the mean delay deviation within 1.5 points
# of linkem-sim's with the same seed over the same frames. The UDP sender and receiver are
# linkem-udp-probe (the Python ones of accuracy_veth.py without PROBE).
# Usage: test_accuracy_veth.sh LINKEMD SCRIPT BUILD_DIR [PROBE]
TEST_NAME=accuracy_veth
source "$(dirname "$0")/lib.sh"
[[ $(id -u) -eq 0 ]] || skip "needs root (network namespaces, veth, af_packet)"
for t in ip ethtool ping taskset chrt timeout; do require_tool "$t"; done
linkemd=${1:-} script=${2:-} build=${3:-} probe=${4:-python}
[[ -x $linkemd && -x $script ]] || skip "linkemd ('$linkemd') or the script ('$script') missing"
[[ $probe == python || -x $probe ]] || fail "linkem-udp-probe ('$probe') missing"
want_probe=$([[ $probe == python ]] && echo python || echo linkem-udp-probe)
sim=()
[[ -x $build/backend/sim/linkem-sim ]] || sim=(--no-sim)
out=$(mktemp -d /tmp/linkem-it-accv.XXXXXX)
trap 'rm -rf "$out"' EXIT
ip netns add "lkaccv-probe-$$" 2>/dev/null || skip "'ip netns add' failed"
ip netns del "lkaccv-probe-$$"
# SCHED_FIFO as measure-accuracy's users run it on a loaded machine; the script removes its
# namespaces itself, also when timeout stops it.
timeout -s TERM 170 "$script" --build-dir "$build" --ports veth --pps 10000 --jitters 1 \
    --duration 3 --baseline-duration 2 --rt 50 "${sim[@]}" --probe "$probe" --json "$out/r.json" \
    >"$out/table.md" 2>"$out/log"
rc=$?
sed 's/^/    /' "$out/log" | tail -n 8
[[ -s $out/r.json ]] || fail "no result (exit code $rc): $(tail -n 20 "$out/log")"
$PY - "$out/r.json" "${#sim[@]}" "$want_probe" <<'EOF' || fail "frame accounting (above)"
import json, sys
j = json.load(open(sys.argv[1]))
no_sim = sys.argv[2] != "0"
bad = []
runs = [("baseline", b) for b in j["baseline"].values()] + [("point", p) for p in j["points"]]
for name, r in runs:
    if r.get("probe") != sys.argv[3]:
        bad.append(f"{name}: sender and receiver {r.get('probe')}, not {sys.argv[3]}")
    if "sender_late_pct" in r:
        print(f"    {name}: sender ({r.get('probe')}) late {r['sender_late_pct']:.2f} % of the "
              f"frames (max {r['sender_behind_max_ms']:.2f} ms)")
    print(f"    {name}: sent {r['sent']}, linkemd in {r['linkemd_in']} out {r['linkemd_out']}, "
          f"ring drops {r['ring_drops']}, received {r['received']} ({r['distinct']} distinct), "
          f"socket drops {r['socket_drops']}, reordered {r['out_of_order']}")
    if r["unexplained_in"]:
        bad.append(f"{name}: {r['unexplained_in']} frames sent neither entered linkemd nor "
                   "are counted in rx_missed")
    if r["unexplained_out"]:
        bad.append(f"{name}: {r['unexplained_out']} frames linkemd sent were neither received "
                   "nor counted as socket drops")
    if r["received"] != r["distinct"]:
        bad.append(f"{name}: {r['received'] - r['distinct']} frames arrived twice")
    if r["linkemd_drops"]:
        bad.append(f"{name}: linkemd dropped {r['linkemd_drops']} frames (no loss configured)")
for p in j["points"]:
    if not no_sim and p.get("corr_pairs", 0) < p["distinct"] - 10000:  # all after warm-up
        bad.append(f"linkem-sim's trace covers {p.get('corr_pairs')} of the received frames")
print("\n".join("    " + b for b in bad))
sys.exit(1 if bad else 0)
EOF
(( rc == 0 )) || fail "measure-accuracy exited with $rc: $(tail -n 5 "$out/log")"
if (( ${#sim[@]} )); then
    bound_skipped "mean delay near linkem-sim's" "linkem-sim not built"
    log "PASS"
    exit 0
fi
read -r stall lost dev simdev <<<"$(json_get "$out/r.json" \
    "'%f %d %f %f' % (j['points'][0]['stall_pct'], j['points'][0]['lost'], j['points'][0]['mean_dev_pct'], j['points'][0]['sim_mean_dev_pct'])")"
log "mean delay deviation ${dev} % (linkem-sim ${simdev} %), linkemd stalled ${stall} % of the flow, ${lost} frames lost"
if ! float_in "$stall" 0 0.5 || (( lost > 0 )); then
    bound_skipped "mean delay near linkem-sim's" "linkemd stalled ${stall} % of the flow, ${lost} frames lost"
else
    bound_checked "mean delay within 1.5 points of linkem-sim's"
    $PY -c 'import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) <= 1.5 else 1)' \
        "$dev" "$simdev" || fail "mean delay deviation ${dev} % is more than 1.5 points from linkem-sim's ${simdev} %"
fi
log "PASS"
