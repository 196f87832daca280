#!/usr/bin/env bash
# linkem-udp-probe on its own, on loopback (no root, no linkemd). Exact, always: bad arguments
# are refused with exit code 2 and a message naming the argument; its send schedule is
# accuracy_veth.py's (sine_schedule(), and CBR) to the nanosecond; 20 000 frames at
# 10 000 frames/s from its sender reach its receiver each once, with a kernel-stamped delay
# >= 0, and both write accuracy_veth.py's formats. Timing, only when the sender was not
# disturbed (it waited for a CPU under 0.5 % of the run, and its own stalls over 100 us add up
# to under half the time that makes 1 % of the frames late): at most 1 % of the frames more
# than 100 us late.
# Usage: test_udp_probe.sh LINKEM_UDP_PROBE SCRIPTS_DATAPLANE_DIR
TEST_NAME=udp_probe
source "$(dirname "$0")/lib.sh"
probe=${1:-} dir=${2:-}
[[ -x $probe ]] || skip "linkem-udp-probe ('$probe') not built"
[[ -f $dir/accuracy_veth.py ]] || fail "accuracy_veth.py not found in '$dir'"
[[ -x $PY ]] || skip "$PY not found"
out=$(mktemp -d /tmp/linkem-it-probe.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$out"' EXIT

# Bad arguments: exit code 2, the wrong one named.
while IFS='|' read -r want args; do
    # shellcheck disable=SC2086
    "$probe" $args >/dev/null 2>"$out/err"
    rc=$?
    (( rc == 2 )) || fail "'$args': exit code $rc, not 2"
    grep -q -- "$want" "$out/err" || fail "'$args': the message does not name $want: $(head -n1 "$out/err")"
done <<'EOF'
no mode|
unknown mode 'sned'|sned 127.0.0.1 1 1 1 cbr
send takes 5 arguments|send 127.0.0.1 1 1 1
DEST_IP|send 127.0.0.300 9 10 100 cbr
PORT|send 127.0.0.1 0 10 100 cbr
COUNT|send 127.0.0.1 9 -1 100 cbr
PPS|send 127.0.0.1 9 10 10k cbr
cbr or sine|send 127.0.0.1 9 10 100 square
TIMEOUT_S|recv 127.0.0.1 9 10 0 /dev/null
BIND_IP|recv localhost 9 10 1 /dev/null
schedule takes 3 arguments|schedule 10 100
EOF
log "bad arguments: exit code 2, named"

# The schedule: the same ns offsets as accuracy_veth.py's send() computes.
PYTHONDONTWRITEBYTECODE=1 $PY - "$probe" "$dir" <<'EOF' || fail "schedule differs from accuracy_veth.py's"
import subprocess, sys
sys.path.insert(0, sys.argv[2])
import accuracy_veth as av
bad = 0
for pps, n in ((10000, 20000), (50000, 60000), (137, 3000), (3, 200)):
    for pat in ("sine", "cbr"):
        py = ([int(t * 1e9) for t in av.sine_schedule(pps, n)] if pat == "sine"
              else [int(i * (1e9 / pps)) for i in range(n)])
        c = [int(x) for x in subprocess.run([sys.argv[1], "schedule", str(n), str(pps), pat],
                                            check=True, capture_output=True, text=True).stdout.split()]
        d = sum(a != b for a, b in zip(py, c)) + abs(len(py) - len(c))
        print(f"    {pat} {pps} frames/s, {n} frames: {d} differ (last at {c[-1]} ns)")
        bad += d
sys.exit(1 if bad else 0)
EOF

# A flow on loopback: sender -> receiver.
port=$($PY -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
count=20000
coproc RCV { exec "$probe" recv 127.0.0.1 "$port" "$count" 30 "$out/r.json"; }
rpid=$RCV_PID  # (bash unsets RCV_PID once the receiver has ended)
read -r -t 10 line <&"${RCV[0]}" || fail "the receiver did not start"
[[ $line == ready ]] || fail "the receiver said '$line', not 'ready'"
"$probe" send 127.0.0.1 "$port" "$count" 10000 cbr >"$out/send.json" &
spid=$!
wait0=0
while kill -0 "$spid" 2>/dev/null; do  # the time it waited for a CPU, last seen before exit
    read -r _ w _ <"/proc/$spid/schedstat" 2>/dev/null && wait0=$w
    sleep 0.1
done
wait "$spid" || fail "the sender failed"
wait "$rpid" 2>/dev/null
[[ -s $out/r.json ]] || fail "the receiver wrote no result"
$PY - "$out" "$count" "$wait0" <<'EOF' || fail "frames or formats (above)"
import array, json, sys
out, count, waited = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
snd = json.loads(open(f"{out}/send.json").read())
rcv = json.load(open(f"{out}/r.json"))
bad = []
if list(snd) != ["sent", "send_errors", "behind_max_ns", "late_100us", "seconds",
                 "stall_max_ns", "stall_total_ns"]:
    bad.append(f"sender's keys {list(snd)}")
if list(rcv) != ["received", "offset_change_ns"]:
    bad.append(f"receiver's keys {list(rcv)}")
seqs, delays = array.array("q"), array.array("q")
seqs.frombytes(open(f"{out}/r.json.seq", "rb").read())
delays.frombytes(open(f"{out}/r.json.delay", "rb").read())
print(f"    sent {snd['sent']} ({snd['send_errors']} errors) in {snd['seconds']} s, "
      f"late {snd['late_100us']} (max {snd['behind_max_ns'] / 1e3:.0f} us); received "
      f"{rcv['received']}, offset change {rcv['offset_change_ns']} ns; delays "
      f"{min(delays, default=0) / 1e3:.1f} .. {max(delays, default=0) / 1e3:.1f} us; "
      f"the sender waited {waited / 1e6:.1f} ms for a CPU, stalled {snd['stall_total_ns'] / 1e6:.1f} ms "
      f"in stalls over 100 us (longest {snd['stall_max_ns'] / 1e3:.0f} us)")
if snd["sent"] != count or snd["send_errors"]:
    bad.append(f"sent {snd['sent']} with {snd['send_errors']} errors")
if not (len(seqs) == len(delays) == rcv["received"] == count):
    bad.append(f"received {rcv['received']}, {len(seqs)} sequences, {len(delays)} delays")
if sorted(seqs) != list(range(count)):
    bad.append(f"{len(set(seqs))} distinct sequences of {count}")
if min(delays, default=0) < 0:
    bad.append(f"{sum(d < 0 for d in delays)} delays < 0 (min {min(delays)} ns)")
print("\n".join("    " + b for b in bad))
sys.exit(1 if bad else 0)
EOF
read -r late secs stalls longest <<<"$(json_get "$out/send.json" \
    "'%d %f %d %d' % (j['late_100us'], j['seconds'], j['stall_total_ns'], j['stall_max_ns'])")"
# A stall of S ns makes about S / 100 000 frames late at 10 000 frames/s, so stalls adding up
# to count * 1000 ns make 1 % of the frames late; the bound is checked below half of that.
stall_limit=$((count * 1000 / 2))
if ! $PY -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 0.005 * float(sys.argv[2]) * 1e9 else 1)' "$wait0" "$secs"; then
    bound_skipped "late frames <= 1 %" "the sender waited $((wait0 / 1000000)) ms for a CPU in ${secs} s"
elif (( stalls >= stall_limit )); then
    bound_skipped "late frames <= 1 %" "the sender stalled $((stalls / 1000)) us in ${secs} s (longest $((longest / 1000)) us; limit $((stall_limit / 1000)) us)"
else
    bound_checked "late frames <= 1 %"
    (( late * 100 <= count )) || fail "$late of $count frames more than 100 us late"
fi
log "PASS"
