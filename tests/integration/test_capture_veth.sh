#!/usr/bin/env bash
# Capture on real traffic (docs/capture.md): linkemd --capture of every point (in, out, drop)
# while ping, a UDP echo into class voip and iperf3 pass through veth, then tshark reads the
# file (and linkem.lua, when the tree has it, turns the comments into fields):
#   - tshark -r reads it without complaint; every interface's timestamps increase
#   - a record per packet: in = packets_in, out = packets_out per direction, drops by cause =
#     linkemd's final counters (the capture ran from start to stop, traffic before it stopped)
#   - each ICMP echo request's out record: delay 10 ms, limiter/order waits adding up to its
#     hold; the ping's own RTT is at least the two records' holds (kernel stamps vs ours)
#   - class voip's frames carry class=voip and its 80 ms; its loss drops are records with
#     drop=loss, as many as the client missed
#   - iperf3 through the 20 Mbit/s spacer: out records with limiter_wait > 0
# Usage: test_capture_veth.sh LINKEMD
TEST_NAME=capture_veth
source "$(dirname "$0")/lib.sh"
require_env "${1:-}"
require_tool iperf3
require_tool tshark
PROBE="$PY $(dirname "$0")/rtt_probe.py"
LUA="$(cd "$(dirname "$0")/../.." && pwd)/packaging/wireshark/linkem.lua"
setup_topology
cat >"$WORK/link.json" <<'EOF'
{"distribution": "constant", "mean_delay_us": 10000, "limiter": "spacer", "rate_bps": 20000000,
 "seed": 1,
 "classes": [
  {"name": "voip", "match": {"protocol": "udp", "b_port": 5060},
   "distribution": "constant", "mean_delay_us": 80000, "b_to_a": {"loss_probability": 0.05}}
 ]}
EOF
CAP="$WORK/veth.pcapng"
start_forwarder --config "$WORK/link.json" --capture "$CAP" --capture-points in,out,drop \
    --capture-snaplen 128

nsx "$NS1" timeout 30 ping -c 30 -i 0.05 -w 25 "$IP2" >"$WORK/ping.txt" || fail "ping failed"
nsx "$NS2" $PROBE udp-echo "$IP2" 5060 30 &
BG_PIDS+=($!)
sleep 0.3
nsx "$NS1" $PROBE udp-rtt "$IP2" 5060 300 200 1.5 >"$WORK/udp.json" || fail "udp-rtt failed"
start_iperf_server
nsx "$NS1" timeout 30 iperf3 -c "$IP2" -t 3 -J >"$WORK/iperf.json" 2>&1 || fail "iperf3 failed"
wait_iperf_server
sleep 0.5
stop_forwarder
show_forwarder_counters
last_stats_line >"$WORK/final.json"
[[ -s "$CAP" ]] || { dump_forwarder; fail "no capture file $CAP"; }
tshark -r "$CAP" -T fields -E separator=/t -e frame.interface_id -e frame.time_epoch \
    -e frame.comment -e icmp.type -e icmp.seq -e udp.dstport -e tcp.dstport \
    >"$WORK/records.tsv" 2>"$WORK/tshark.err" || fail "tshark -r: $(cat "$WORK/tshark.err")"
lost=$(json_get "$WORK/udp.json" "j['lost']")
$PY - "$WORK/records.tsv" "$WORK/final.json" "$WORK/ping.txt" "$lost" <<'EOF' || fail "the capture disagrees (above)"
import json, re, sys
recs, final, ping, lost = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], int(sys.argv[4])
errors = []
def check(ok, what):
    if not ok:
        errors.append(what)
per_if, last_t, drops = {}, {}, {}
echo_out = {}   # (dir, icmp seq) -> hold ns
voip = {"out": 0, "drop_loss": 0, "bad_delay": 0}
limited = 0
bad_parts = 0
for line in open(recs):
    col = line.rstrip("\n").split("\t")
    iface, when, comment = int(col[0]), col[1], col[2]
    sec, _, frac = when.partition(".")
    t = int(sec) * 10**9 + int(frac.ljust(9, "0"))
    per_if[iface] = per_if.get(iface, 0) + 1
    check(t >= last_t.get(iface, 0), "interface %d goes back in time at %s" % (iface, when))
    last_t[iface] = t
    f = dict(kv.split("=", 1) for kv in comment.split()[1:])
    if iface == 4:
        drops[f["drop"]] = drops.get(f["drop"], 0) + 1
        if f.get("class") == "voip" and f["drop"] == "loss":
            voip["drop_loss"] += 1
        continue
    if iface not in (1, 3) or "scheduled_ns" not in f:
        continue
    d, lw, ow, em = (int(f[k]) for k in ("delay_ns", "limiter_wait_ns", "order_wait_ns", "scheduled_ns"))
    bad_parts += em != d + lw + ow or ow < 0 or lw < 0 or int(f["lateness_ns"]) < 0
    hold = t - int(f["arrived_ns"])
    bad_parts += hold != em + int(f["lateness_ns"])
    limited += lw > 0
    if col[3] in ("8", "0") and col[4]:
        echo_out[(iface, col[3], int(col[4].split(",")[0]))] = hold
        check(d == 10_000_000, "an ICMP echo's delay is %d ns, not 10 ms" % d)
    if f["class"] == "voip":
        voip["out"] += 1
        voip["bad_delay"] += d != 80_000_000
check(bad_parts == 0, "%d out records whose delay parts do not add up" % bad_parts)
for k, i in (("a_to_b", 0), ("b_to_a", 2)):
    c = final[k]
    check(per_if.get(i, 0) == c["packets_in"], "%s in: %d records, packets_in %d" % (k, per_if.get(i, 0), c["packets_in"]))
    check(per_if.get(i + 1, 0) == c["packets_out"], "%s out: %d records, packets_out %d" % (k, per_if.get(i + 1, 0), c["packets_out"]))
for cause in ("loss", "policer", "spacer", "buffer_full", "class"):
    n = sum(final[k].get("drops_" + cause, 0) for k in ("a_to_b", "b_to_a"))
    check(drops.get(cause, 0) == n, "drop=%s: %d records, the counters %d" % (cause, drops.get(cause, 0), n))
check(voip["drop_loss"] == lost, "voip: %d loss records, the client missed %d echoes" % (voip["drop_loss"], lost))
check(voip["out"] > 0 and voip["bad_delay"] == 0, "voip: %d out records, %d not 80 ms" % (voip["out"], voip["bad_delay"]))
check(limited > 0, "no record waited at the 20 Mbit/s spacer (iperf3 through it)")
# Each ping's RTT (the kernel's stamps) is at least its request's and its reply's holds.
# ping rounds its time to 3, 2, 1 or 0 decimals as it grows (iputils: under 1, 10, 100 ms
# and above): a printed time may be up to half its last digit below the true one.
rtt = {}
for m in (re.search(r"icmp_seq=(\d+) .*time=([\d.]+) ms", l) for l in open(ping)):
    if m:
        t = m.group(2)
        decimals = len(t.split(".")[1]) if "." in t else 0
        rtt[int(m.group(1))] = (float(t), 0.5 * 10 ** -decimals)
pairs = short = 0
for (iface, typ, seq), hold in echo_out.items():
    if iface != 1 or typ != "8":
        continue
    back = echo_out.get((3, "0", seq))
    if back is None or seq not in rtt:
        continue
    pairs += 1
    ms, rounding_ms = rtt[seq]
    short += (ms + rounding_ms) * 1e6 < hold + back
check(pairs >= 25, "only %d echo request/reply pairs in the capture" % pairs)
check(short == 0, "%d pings took less than their records' holds" % short)
print("records per interface %s; drops %s; %d echo pairs; voip out %d, loss %d; %d waited at the spacer"
      % (dict(sorted(per_if.items())), drops, pairs, voip["out"], voip["drop_loss"], limited))
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
EOF
if [[ -f "$LUA" ]]; then
    n=$(tshark -X "lua_script:$LUA" -r "$CAP" -Y 'linkem.drop == "loss"' 2>/dev/null | wc -l)
    want=$(json_get "$WORK/final.json" "j['a_to_b'].get('drops_loss',0)+j['b_to_a'].get('drops_loss',0)")
    log "linkem.lua: $n records with linkem.drop == \"loss\" (the counters: $want)"
    [[ "$n" == "$want" ]] || fail "linkem.lua's filter found $n loss records, not $want"
else
    log "linkem.lua not in this tree: its filter not checked"
fi
log "PASS"
