#!/usr/bin/env bash
# 10 ms constant delay per direction -> ping RTT 20 ms +- 1 ms on average, none under 20 ms.
# The average is a timing bound: judged only when linkemd was not held up (lib.sh:
# flow_disturbance); every reply back and none early are checked in every run.
# Usage: test_ping_delay.sh LINKEMD
TEST_NAME=ping_delay
source "$(dirname "$0")/lib.sh"
require_env "${1:-}"
setup_topology
start_forwarder --distribution constant --mean-delay 10ms --seed 1

COUNT=40
flow_begin
# -w: every reply is waited for (up to 25 s), as in test_set_link_ping.sh: a linkemd held up
# on a busy machine delays pings, it does not lose them.
out=$(nsx "$NS1" timeout 30 ping -c "$COUNT" -i 0.05 -w 25 "$IP2") || { echo "$out"; fail "ping failed"; }
echo "$out" | grep -v "time=" | sed 's/^/    /'
# The median is printed to tell a shifted delay from a few late outliers (a descheduled
# forwarder on a busy machine); the requirement is on the average.
median=$(echo "$out" | sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' |
    $PY -c 'import statistics,sys; print("%.3f" % statistics.median(float(x) for x in sys.stdin))')
flow_end
stop_forwarder
show_forwarder_counters
flow_disturbance

rtt=$(echo "$out" | sed -n 's#^rtt min/avg/max/mdev = \([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\) ms.*#\1 \2 \3 \4#p')
read -r rmin ravg rmax rmdev <<<"$rtt"
recv=$(echo "$out" | sed -n 's/.* \([0-9]*\) received.*/\1/p')
[[ -n "$ravg" ]] || fail "could not parse ping output"
log "measured: $recv/$COUNT replies, RTT min/avg/max/mdev = $rmin/$ravg/$rmax/$rmdev ms, median $median ms (expect avg 20 +- 1 ms)"
[[ "$recv" == "$COUNT" ]] || fail "lost $((COUNT - recv)) of $COUNT pings with no loss configured"
float_in "$rmin" 20.0 1e9 || fail "an RTT of $rmin ms is under the 20 ms the two delays add up to"
if [[ -n "$DISTURBED" ]]; then
    bound_skipped "average RTT 19..21 ms" "$DISTURBED"
else
    bound_checked "average RTT 19..21 ms"
    float_in "$ravg" 19.0 21.0 || fail "average RTT $ravg ms is outside 19..21 ms"
fi
log "PASS"
