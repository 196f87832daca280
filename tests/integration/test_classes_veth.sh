#!/usr/bin/env bash
# Traffic classes on real traffic (docs/classes.md), each measured by its own client:
#   default  10 ms each way (constant), the link's spacer at 20 Mbit/s: ping RTT ~20 ms
#   voip     UDP to B's ports 5060-5061, 80 ms each way, 2 % loss B to A: UDP RTT ~160 ms,
#            ~2 % of the echoes lost (exactly the class's drops_loss)
#   ssh      TCP to B's port 22, action pass: its RTT within 0.3 ms of the same probe's over a
#            veth pair without linkemd
#   bulk     TCP to B's port 5201, "limiter": "link": iperf3 into bulk and into default (port
#            5202) at once share the one 20 Mbit/s spacer: together within 1 % of 20 Mbit/s
#            on the wire (goodput x 1518 / 1448: a full segment's frame with its FCS)
# Exact checks (counts, nothing early, nothing above the rate) in every run; the averages and
# the rate's floor are timing bounds, judged only when linkemd was not held up (lib.sh).
# Usage: test_classes_veth.sh LINKEMD
TEST_NAME=classes_veth
source "$(dirname "$0")/lib.sh"
require_env "${1:-}"
require_tool iperf3
PROBE="$PY $(dirname "$0")/rtt_probe.py"
setup_topology
cat >"$WORK/classes.json" <<'EOF'
{"distribution": "constant", "mean_delay_us": 10000, "limiter": "spacer", "rate_bps": 20000000,
 "seed": 1,
 "classes": [
  {"name": "voip", "match": {"protocol": "udp", "b_port": "5060-5061"},
   "distribution": "constant", "mean_delay_us": 80000, "b_to_a": {"loss_probability": 0.02}},
  {"name": "ssh", "match": {"protocol": "tcp", "b_port": 22}, "action": "pass"},
  {"name": "bulk", "match": {"protocol": "tcp", "b_port": 5201}, "limiter": "link",
   "distribution": "constant", "mean_delay_us": 10000}
 ]}
EOF
start_forwarder --config "$WORK/classes.json"
BOUNDS=()
check_bound() {  # WHAT VALUE LOW HIGH
    if [[ -n "$DISTURBED" ]]; then
        bound_skipped "$1" "$DISTURBED"
    else
        bound_checked "$1"
        float_in "$2" "$3" "$4" || fail "$1: $2 is outside $3 .. $4"
    fi
}

# --- default: ping
flow_begin
out=$(nsx "$NS1" timeout 30 ping -c 40 -i 0.05 -w 25 "$IP2") || { echo "$out"; fail "ping failed"; }
flow_end
read -r rmin ravg <<<"$(echo "$out" | $PY -c '
import re, statistics, sys
v = [float(m.group(1)) for m in (re.search(r"time=([\d.]+) ms", l) for l in sys.stdin) if m]
print("%.3f %.3f" % (min(v), statistics.mean(v)))')"
flow_disturbance 0.02 centre
log "default (ping): RTT min/avg $rmin/$ravg ms (expect avg 20 +- 1 ms)"
float_in "$rmin" 20.0 1e9 || fail "a ping RTT of $rmin ms is under the 20 ms of class default"
check_bound "default: average ping RTT 19..21 ms" "$ravg" 19 21

# --- voip: UDP echo on B's port 5060
nsx "$NS2" $PROBE udp-echo "$IP2" 5060 30 &
BG_PIDS+=($!)
sleep 0.3
flow_begin
nsx "$NS1" $PROBE udp-rtt "$IP2" 5060 1000 200 1.5 >"$WORK/udp.json" || fail "udp-rtt failed"
flow_end
flow_disturbance 0.02 centre
read -r lost umin umed <<<"$(json_get "$WORK/udp.json" "'%d %.3f %.3f' % (j['lost'], j['min_ms'], j['median_ms'])")"
log "voip (UDP 5060): $lost of 1000 echoes lost, RTT min/median $umin/$umed ms (expect ~2 %, 160 ms)"
float_in "$umin" 160.0 1e9 || fail "a UDP RTT of $umin ms is under the 160 ms of class voip"
float_in "$lost" 8 35 || fail "$lost of 1000 echoes lost; class voip drops 2 % of them (8 .. 35)"
check_bound "voip: median UDP RTT 159..162 ms" "$umed" 159 162

# --- ssh: TCP to B's port 22 passes untouched
nsx "$NS2" $PROBE tcp-echo "$IP2" 22 30 &
BG_PIDS+=($!)
sleep 0.3
flow_begin
nsx "$NS1" $PROBE tcp-rtt "$IP2" 22 500 >"$WORK/ssh.json" || fail "tcp-rtt through linkemd failed"
flow_end
flow_disturbance 0.02 centre
ssh_disturbed=$DISTURBED
# The same probe over a veth pair of two more namespaces, without linkemd.
NS3="lk3-$TAG"
NS4="lk4-$TAG"
ip netns add "$NS3" && ip netns add "$NS4" || fail "ip netns add"
trap 'rc=$?; ip netns del "$NS3" 2>/dev/null; ip netns del "$NS4" 2>/dev/null; (exit $rc); cleanup' EXIT
ip link add "lkd3-$TAG" netns "$NS3" type veth peer name "lkd4-$TAG" netns "$NS4" || fail "veth"
nsx "$NS3" ip addr add 10.92.0.1/24 dev "lkd3-$TAG"
nsx "$NS4" ip addr add 10.92.0.2/24 dev "lkd4-$TAG"
for ns in "$NS3 lkd3-$TAG" "$NS4 lkd4-$TAG"; do
    read -r n ifc <<<"$ns"
    nsx "$n" ip link set lo up
    nsx "$n" ip link set "$ifc" up
done
nsx "$NS4" $PROBE tcp-echo 10.92.0.2 22 30 &
BG_PIDS+=($!)
sleep 0.3
nsx "$NS3" $PROBE tcp-rtt 10.92.0.2 22 500 >"$WORK/direct.json" || fail "tcp-rtt without linkemd failed"
read -r smed <<<"$(json_get "$WORK/ssh.json" "'%.4f' % j['median_ms']")"
read -r dmed <<<"$(json_get "$WORK/direct.json" "'%.4f' % j['median_ms']")"
extra=$($PY -c "print('%.4f' % ($smed - $dmed))")
log "ssh (TCP 22, pass): median RTT $smed ms through linkemd, $dmed ms without: $extra ms more (expect <= 0.3 ms)"
DISTURBED=$ssh_disturbed
check_bound "ssh: pass adds at most 0.3 ms to the median TCP RTT" "$extra" -1 0.3

# --- bulk and default share the 20 Mbit/s spacer
for port in 5201 5202; do
    nsx "$NS2" timeout 60 iperf3 -s -1 -B "$IP2" -p "$port" -J >"$WORK/server-$port.json" 2>&1 &
    BG_PIDS+=($!)
done
sleep 0.5
flow_begin
nsx "$NS1" timeout 40 iperf3 -c "$IP2" -p 5201 -t 10 -J >"$WORK/bulk.json" 2>&1 &
c1=$!
nsx "$NS1" timeout 40 iperf3 -c "$IP2" -p 5202 -t 10 -J >"$WORK/default.json" 2>&1 &
c2=$!
wait "$c1" || fail "iperf3 into class bulk failed: $(tail -3 "$WORK/bulk.json")"
wait "$c2" || fail "iperf3 into class default failed: $(tail -3 "$WORK/default.json")"
flow_end
flow_disturbance
b=$(json_get "$WORK/bulk.json" "j['end']['sum_received']['bits_per_second']")
d=$(json_get "$WORK/default.json" "j['end']['sum_received']['bits_per_second']")
read -r bm dm wire <<<"$($PY -c "b,d=$b,$d; print('%.3f %.3f %.3f' % (b/1e6, d/1e6, (b+d)*1518/1448/1e6))")"
log "bulk + default (iperf3): $bm + $dm Mbit/s goodput, $wire Mbit/s on the wire (expect 20 +- 1 %)"
float_in "$wire" 0 20.2 || fail "the two classes sent $wire Mbit/s through a 20 Mbit/s spacer"
check_bound "bulk + default: together 19.8 .. 20.2 Mbit/s" "$wire" 19.8 20.2

stop_forwarder
show_forwarder_counters
# Class voip's own count of the echoes it dropped is what the client missed.
voip_loss=$(last_stats_line | $PY -c '
import json, sys
j = json.loads(sys.stdin.read())
c = {x["name"]: x for x in j.get("classes", [])}
print(c["voip"]["b_to_a"]["drops_loss"] if "voip" in c else "none")')
log "class voip's drops_loss B to A: $voip_loss"
[[ "$voip_loss" == "$lost" ]] || fail "class voip counted $voip_loss losses; the client missed $lost echoes"
log "PASS"
