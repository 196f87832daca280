#!/usr/bin/env bash
# 10 ms constant delay per direction -> ping RTT 20 ms +- 1 ms on average, none under 20 ms.
# The average is a timing bound: judged only when linkemd was not held up (lib.sh:
# flow_disturbance); that linkemd lost no echo request or reply (the two namespaces' kernel
# counters, lib.sh: echoes_end) and that none came back early are checked in every run.
# Usage: test_ping_delay.sh LINKEMD
TEST_NAME=ping_delay
source "$(dirname "$0")/lib.sh"
require_env "${1:-}"
setup_topology
start_forwarder --distribution constant --mean-delay 10ms --seed 1

COUNT=40
flow_begin
echoes_begin
# -w: every reply is waited for (up to 25 s), as in test_set_link_ping.sh: a linkemd held up
# on a busy machine delays pings, it does not lose them. While replies are late ping sends on
# past COUNT; only the replies to requests 1..COUNT are read.
out=$(nsx "$NS1" timeout 30 ping -c "$COUNT" -i 0.05 -w 25 "$IP2") || { echo "$out"; fail "ping failed"; }
echo "$out" | grep -v "time=" | sed 's/^/    /'
# replies, min, average and median RTT of requests 1..COUNT (each once). The median tells a
# shifted delay from a few late outliers (a descheduled forwarder on a busy machine); the
# requirement is on the average.
read -r recv rmin ravg median <<<"$(echo "$out" | $PY -c '
import re, statistics, sys
count = int(sys.argv[1])
rtt = {}
for l in sys.stdin:
    m = re.search(r"icmp_seq=(\d+) .*time=([\d.]+) ms", l)
    if m and 1 <= int(m.group(1)) <= count:
        rtt.setdefault(int(m.group(1)), float(m.group(2)))
v = list(rtt.values()) or [float("nan")]
print(len(rtt), "%.3f" % min(v), "%.3f" % statistics.mean(v), "%.3f" % statistics.median(v))
' "$COUNT")"
echoes_end 30
flow_end
stop_forwarder
show_forwarder_counters
flow_disturbance 0.02 centre

[[ -n "$ravg" ]] || fail "could not parse ping output"
log "measured: $recv/$COUNT replies, RTT min/avg $rmin/$ravg ms, median $median ms (expect avg 20 +- 1 ms)"
# Loss by the kernels' counters: after a long stall linkemd releases the queued requests and
# replies at once, and ping's socket (64 KiB) may drop part of that burst.
[[ -z "$ECHOES_LOST" ]] || fail "$ECHOES_LOST with no loss configured"
[[ "$recv" == "$COUNT" ]] ||
    log "ping read $recv of the replies to its first $COUNT requests; the kernels counted every request and reply through linkemd, so ping's socket dropped the rest of a burst"
float_in "$rmin" 20.0 1e9 || fail "an RTT of $rmin ms is under the 20 ms the two delays add up to"
if [[ -n "$DISTURBED" ]]; then
    bound_skipped "average RTT 19..21 ms" "$DISTURBED"
else
    bound_checked "average RTT 19..21 ms"
    float_in "$ravg" 19.0 21.0 || fail "average RTT $ravg ms is outside 19..21 ms"
fi
log "PASS"
