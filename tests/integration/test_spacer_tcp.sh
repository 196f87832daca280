#!/usr/bin/env bash
# A 100 Mbit/s spacer holds TCP goodput between 90 and 100 Mbit/s.
# (Frame-byte accounting: 1448 payload bytes per 1514-byte frame -> at most ~95.6 Mbit/s.)
# Usage: test_spacer_tcp.sh LINKEMD
TEST_NAME=spacer_tcp
source "$(dirname "$0")/lib.sh"
require_env "${1:-}"
require_tool iperf3
setup_topology
start_forwarder --limiter spacer --rate 100Mbit --mean-delay 1ms --seed 5

start_iperf_server
nsx "$NS1" timeout 60 iperf3 -c "$IP2" -t 10 -J >"$WORK/client.json" 2>"$WORK/client.err" ||
    { cat "$WORK/client.err"; fail "iperf3 client failed"; }
wait_iperf_server
stop_forwarder
show_forwarder_counters

read -r rx_bps retr <<<"$(json_get "$WORK/client.json" \
    "'%s %s' % (j['end']['sum_received']['bits_per_second'], j['end']['sum_sent'].get('retransmits', 'NA'))")" ||
    fail "could not parse the iperf3 client report"
mbps=$($PY -c "print('%.2f' % ($rx_bps / 1e6))")
log "measured: receiver goodput $mbps Mbit/s, $retr retransmits (expect 90 .. 100 Mbit/s)"
float_in "$mbps" 90 100 || fail "goodput $mbps Mbit/s is outside 90 .. 100 Mbit/s"
log "PASS"
