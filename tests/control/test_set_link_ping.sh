#!/usr/bin/env bash
# set_link through the control socket moves the ping RTT through the namespaces from 20 ms
# (10 ms constant delay per direction) to 60 ms (30 ms) within a second of the reply, and
# linkemd loses no echo request or reply (the two namespaces' kernel counters). 300 pings
# every 20 ms, timestamped (-D); the set_link reply's time is taken on the same clock
# (CLOCK_REALTIME).
# Usage: test_set_link_ping.sh LINKEMD
TEST_NAME=control.set_link_ping
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../integration/lib.sh"
require_env "${1:-}"
$PY -c "import zmq" 2>/dev/null || skip "python3-zmq not installed for $PY"
setup_topology

CTL="ipc://$WORK/control"
TEL="ipc://$WORK/telemetry"
FWD_OUT="$WORK/fwd.out"
FWD_ERR="$WORK/fwd.err"
FWD_CMD=(timeout -s TERM 150 "$LINKEMD" --control "$CTL" --telemetry "$TEL" --port-a "$VA"
         --port-b "$VB" --workers shared --stats-json --stats-interval 1s
         --distribution constant --mean-delay 10ms --seed 1 -- --file-prefix "linkem-it-$TAG")
log "start: ${FWD_CMD[*]}"
"${FWD_CMD[@]}" >"$FWD_OUT" 2>"$FWD_ERR" </dev/null &
FWD_PID=$!
ok=0
for i in $(seq 60); do
    kill -0 "$FWD_PID" 2>/dev/null || { dump_forwarder; fail "linkemd exited during start"; }
    if nsx "$NS1" ping -c1 -W1 -q "$IP2" >/dev/null 2>&1; then ok=1; break; fi
    sleep 0.5
done
[[ $ok == 1 ]] || { dump_forwarder; fail "no ping crossed linkemd"; }
nsx "$NS2" ping -c1 -W1 -q "$IP1" >/dev/null 2>&1

COUNT=300  # 6 s at 20 ms
# -w: ping waits for every reply (up to 40 s), not only twice the longest RTT after the last
# request: a linkemd held up for seconds on a busy machine delays pings, and without it ping
# counted those still queued in linkemd's receive ring as lost. While replies are late ping
# sends on past COUNT; only the replies to requests 1..COUNT are read.
flow_begin
echoes_begin
nsx "$NS1" timeout 45 ping -D -c "$COUNT" -i 0.02 -w 40 "$IP2" >"$WORK/ping.out" 2>&1 &
PING_PID=$!
BG_PIDS+=("$PING_PID")
sleep 1.0
# set_link; prints the wall-clock time the reply arrived, its generation and whether the data
# plane acknowledged it within 2 s ("applied"; if not, it adopts it as soon as it runs again).
$PY - "$CTL" >"$WORK/set_link.out" <<'EOF' || { cat "$WORK/set_link.out"; dump_forwarder; fail "set_link failed"; }
import json, sys, time, zmq
s = zmq.Context().socket(zmq.REQ)
s.setsockopt(zmq.LINGER, 0)
s.connect(sys.argv[1])
s.send_json({"v": 1, "id": 1, "method": "set_link", "params": {"mean_delay_us": 30000}})
if not s.poll(5000):
    print("no reply"); sys.exit(1)
r = s.recv_json()
t = time.time()
if "result" not in r:
    print(json.dumps(r)); sys.exit(1)
print("%.6f %d %d" % (t, r["result"]["params_generation"], r["result"]["applied"]))
EOF
read -r T_REPLY GEN APPLIED <"$WORK/set_link.out"
log "set_link mean_delay_us 30000 answered at $T_REPLY (generation $GEN, applied $APPLIED)"
wait "$PING_PID"
echoes_end 30
flow_end
stop_forwarder
# The RTT bound is on medians: only the time the machine took from linkemd in all (or one
# long stall) moves them, not many short stalls.
flow_disturbance 0.02 centre
[[ $APPLIED == 1 ]] ||
    DISTURBED="${DISTURBED:+$DISTURBED; }the data plane did not acknowledge set_link within 2 s"

# Each reply line: [epoch] ... icmp_seq=N ... time=RTT ms; its request left at epoch - RTT.
$PY - "$WORK/ping.out" "$T_REPLY" "$COUNT" "$DISTURBED" "$ECHOES_LOST" <<'EOF'
import re, statistics, sys
lines = open(sys.argv[1]).read().splitlines()
t_reply, count = float(sys.argv[2]), int(sys.argv[3])
rows, seen = [], set()
for l in lines:
    m = re.match(r"\[(\d+\.\d+)\].*icmp_seq=(\d+).*time=([\d.]+) ms", l)
    if m and 1 <= int(m.group(2)) <= count and int(m.group(2)) not in seen:
        seen.add(int(m.group(2)))
        t, rtt = float(m.group(1)), float(m.group(3))
        rows.append((t - rtt / 1000.0, int(m.group(2)), rtt))
before = [r for s, _, r in rows if s < t_reply - 0.1]
after = [r for s, _, r in rows if s > t_reply + 1.0]
between = [(round(s - t_reply, 3), r) for s, _, r in rows if t_reply - 0.1 <= s <= t_reply + 1.0]
print("    %d/%d replies; before the change: %d, median %.2f ms; from 1 s after the reply: %d, "
      "median %.2f ms, min %.2f, max %.2f" % (
          len(rows), count, len(before), statistics.median(before) if before else -1,
          len(after), statistics.median(after) if after else -1,
          min(after) if after else -1, max(after) if after else -1))
print("    around the change (sent s after the reply, RTT ms): %s" % between[:12])
# The run's own stall and CPU-wait figures (lib.sh: flow_disturbance): a disturbed data
# plane excuses the timing bound, not loss.
disturbed = sys.argv[4]
fails = []
# Loss is judged by the kernels' echo counters (lib.sh: echoes_end): after a long stall
# linkemd releases hundreds of replies at once and ping's socket drops some of them.
if sys.argv[5]:
    fails.append(sys.argv[5])
elif len(rows) != count:
    print("    ping read %d of the replies to its first %d requests; the kernels counted "
          "every request and reply through linkemd, so ping's socket dropped the rest of a "
          "burst" % (len(rows), count))
if len(before) < 20 or len(after) < 40:
    # The reply came too late to leave pings on both sides: the machine is loaded.
    print("    timing bound: skipped (RTT 20 -> 60 ms: too few pings before (%d) or from 1 s "
          "after (%d) the set_link reply, which came %.1f s after the first ping)" % (
              len(before), len(after), t_reply - rows[0][0] if rows else -1))
elif disturbed:
    print("    timing bound: skipped (RTT 20 -> 60 ms: %s)" % disturbed)
else:
    print("    timing bound: checked (RTT 20 -> 60 ms)")
    mb, ma = statistics.median(before), statistics.median(after)
    if not (abs(mb - 20) <= 1.5 and abs(ma - 60) <= 1.5 and min(after) >= 59.0):
        fails.append("RTT median %.2f ms before (want 20 +- 1.5), %.2f ms from 1 s after the "
                     "reply (want 60 +- 1.5, min %.2f >= 59)" % (mb, ma, min(after)))
for f in fails:
    print("    " + f)
sys.exit(1 if fails else 0)
EOF
rc=$?
show_forwarder_counters
if [[ $rc != 0 ]]; then
    # Where lost pings went: ping's own summary and the kernel's counters of both veth ends.
    tail -n 3 "$WORK/ping.out" | sed 's/^/    ping: /'
    for ifc in "$VA" "$VB"; do ip -s link show "$ifc" | sed "s/^/    $ifc: /"; done
    nsx "$NS1" ip -s link show "$VE1" | sed "s/^/    $VE1: /"
    fail "see above"
fi
log "PASS"
