#!/usr/bin/env bash
# Flows through two workers per direction (net_af_packet with qpairs=2: the kernel's fanout
# group hashes each flow onto one of two sockets, one per worker): 16 UDP streams through a
# correlated 10 ms +- 2 ms delay each keep their order, although the two workers' delays
# differ; linkemd's log shows how the flows spread over the workers (16 streams all on one of
# two queues: a chance of 1 in 32768).
# Usage: test_udp_flows_workers.sh LINKEMD
TEST_NAME=udp_flows_workers
source "$(dirname "$0")/lib.sh"
require_env "${1:-}"
require_tool iperf3
setup_topology
FWD_WORKERS=2
start_forwarder --strategy correlated --distribution normal --mean-delay 10ms --jitter 2ms --seed 7

start_iperf_server
flow_begin
nsx "$NS1" timeout 60 iperf3 -c "$IP2" -u -P 16 -b 3M -l 1000 -t 6 -J >"$WORK/client.json" 2>"$WORK/client.err" ||
    { cat "$WORK/client.err"; fail "iperf3 client failed"; }
wait_iperf_server
flow_end
stop_forwarder
show_forwarder_counters
flow_disturbance 0.02 centre

read -r streams packets ooo <<<"$(json_get "$IPERF_SERVER_JSON" \
    "'%d %s %s' % (len(j['end']['streams']), j['end']['sum']['packets'],
                   sum(x['udp'].get('out_of_order', 0) for x in j['end']['streams'])
                   if all('out_of_order' in x.get('udp', {}) for x in j['end']['streams'])
                   else 'NA')")" ||
    fail "could not parse the iperf3 server report"
split=$(grep -o "direction 0: packets in per worker: .*" "$FWD_ERR" | head -n 1)
log "measured: $streams streams, $packets datagrams, $ooo out of order; linkemd: ${split:-no per-worker line}"
[[ $ooo != NA ]] || fail "iperf3 report has no out_of_order count"
(( streams == 16 )) || fail "$streams streams reported, expected 16"
(( packets > 0 )) || fail "no datagram arrived"
(( ooo == 0 )) || fail "$ooo datagrams out of order: a flow lost its order across the workers"
[[ -n $split ]] || fail "linkemd did not log its per-worker counts"
read -r w0 w1 <<<"$(sed 's/.*worker: //; s/,//' <<<"$split")"
(( w0 > 0 && w1 > 0 )) || fail "one worker got every flow ($split)"
log "PASS"
