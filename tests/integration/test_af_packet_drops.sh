#!/usr/bin/env bash
# No silent loss on interface ports: a sender's burst of 6000 frames into port A.
#  1. Port A given by its interface name: linkemd's net_af_packet devargs (a receive ring of
#     8192 frames) hold the whole burst: every frame shows in port A's rx, none is missed.
#  2. Port A as net_af_packet devargs with a ring of 32 frames: the kernel drops most of the
#     burst, and port A's rx_missed (the kernel's PACKET_STATISTICS tp_drops) shows them:
#     rx + rx_missed = the frames that reached the interface, exactly (up to a stray frame).
# linkemd is stopped (SIGSTOP) while the burst is sent and continued after it, so the ring
# alone decides what fits, however fast linkemd would have polled.
# Usage: test_af_packet_drops.sh LINKEMD
TEST_NAME=af_packet_drops
source "$(dirname "$0")/lib.sh"
require_env "${1:-}"
setup_topology

N=6000
# port_a_counts: rx and rx_missed of port A in linkemd's newest stats line.
port_a_counts() {
    $PY - "$FWD_OUT" <<'PYEOF'
import json, sys
last = None
for line in open(sys.argv[1]):
    if line.startswith("{"):
        try: last = json.loads(line)
        except ValueError: pass
a = last["ports"]["a"]
print(a["rx"], a["rx_missed"])
PYEOF
}
# veth_drops: frames the veth pair VE1 -> VA itself dropped (not linkemd's to see).
veth_drops() {
    local tx rx
    tx=$(nsx "$NS1" cat "/sys/class/net/$VE1/statistics/tx_dropped")
    rx=$(cat "/sys/class/net/$VA/statistics/rx_dropped")
    echo $((tx + rx))
}
# burst: N frames of 1000 bytes (ethertype 0x88b6) from ns1 as fast as a raw socket sends;
# prints how many the kernel accepted.
burst() {
    nsx "$NS1" $PY - "$VE1" "$N" <<'PYEOF'
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
frame = b"\xff" * 6 + b"\x02\x4c\x4b\x00\x00\x09" + b"\x88\xb6" + bytes(986)
sent = 0
for _ in range(int(sys.argv[2])):
    try:
        s.send(frame)
        sent += 1
    except OSError:
        pass
print(sent)
PYEOF
}

run_case() {  # run_case NAME EXPECT(fits|drops)
    local name=$1 expect=$2
    start_forwarder
    sleep 1.3  # a stats line (one a second) after the ping
    read -r rx0 missed0 <<<"$(port_a_counts)" || fail "$name: no stats line"
    local vd0 sent vd1
    vd0=$(veth_drops)
    local pids
    pids=$(linkemd_pid)
    [[ -n $pids ]] || fail "$name: no linkemd process to pause"
    kill -STOP $pids
    sent=$(burst) || { kill -CONT $pids; fail "$name: the burst sender failed"; }
    kill -CONT $pids
    vd1=$(veth_drops)
    local lost_veth=$((vd1 - vd0))
    local arrived=$((sent - lost_veth))
    # linkemd drains its ring: at least 2.5 s, and until its stats lines (one a second) count
    # every frame that reached the interface, up to 30 s on a busy machine; its last line
    # follows at stop
    local half_s r m
    for half_s in $(seq 60); do
        sleep 0.5
        (( half_s >= 5 )) || continue
        read -r r m <<<"$(port_a_counts)" || continue
        (( r + m - rx0 - missed0 >= arrived )) && break
    done
    stop_forwarder
    read -r rx1 missed1 <<<"$(port_a_counts)"
    local rx=$((rx1 - rx0)) missed=$((missed1 - missed0))
    log "$name: sent $sent, veth dropped $lost_veth; port A rx $rx, rx_missed $missed"
    (( sent > N / 2 )) || fail "$name: only $sent of $N frames sent"
    (( rx + missed >= arrived && rx + missed <= arrived + 3 )) || {
        dump_forwarder
        fail "$name: rx + rx_missed = $((rx + missed)), expected the $arrived frames that reached $VA"
    }
    if [[ $expect == fits ]]; then
        (( missed == 0 )) || fail "$name: the burst did not fit: rx_missed $missed"
    else
        (( missed > 0 )) || fail "$name: a 32-frame ring held a burst of $sent frames?"
    fi
}

run_case "default ring" fits
FWD_PORT_A="net_af_packet_lk$TAG,iface=$VA,framecnt=32,blocksz=4096,framesz=2048"
run_case "32-frame ring" drops
log "PASS"
