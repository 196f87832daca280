# Shared plumbing for the real-traffic tests (sourced, not run).
#
#   ns1 [ve1] <-> [va] linkemd [vb] <-> [ve2] ns2
#
# va/vb stay in the root namespace (up, no address); linkemd reaches them through
# net_af_packet. Every name carries the test's PID so tests and leftovers never collide.
# Set LINKEM_FORWARDER=testpmd to put dpdk-testpmd (io forwarding, no emulation) in
# linkemd's place: the plumbing is identical, only the forwarder command differs.
# LINKEMD_EXTRA_ARGS (linkemd flags) and LINKEMD_EAL_ARGS (after "--") are appended as
# words, for diagnosis (e.g. LINKEMD_EAL_ARGS="-m 2048").
#
# Exit codes follow ctest: 0 pass, 1 fail, 77 skip.

set -u

readonly SKIP=77
readonly PY=/usr/bin/python3  # Debian's interpreter: standard library only

TAG=$$
NS1="lk1-$TAG"
NS2="lk2-$TAG"
VE1="lke1-$TAG" # inside ns1
VA="lka-$TAG"   # root namespace, linkemd port A
VE2="lke2-$TAG" # inside ns2
VB="lkb-$TAG"   # root namespace, linkemd port B
IP1=10.91.0.1
IP2=10.91.0.2
WORK=""
FWD_PID=""
BG_PIDS=()
WATCHDOG_PID=""
FORWARDER="${LINKEM_FORWARDER:-linkemd}"
LINKEMD=""

log() { printf '[%s] %s\n' "${TEST_NAME:-test}" "$*"; }
skip() { log "SKIP: $*"; exit $SKIP; }
fail() { log "FAIL: $*"; exit 1; }

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    # The deadline's watchdog first (TERM: it ends its sleep and exits quietly). A background
    # `nsx ... &` is a subshell whose child runs the program: both go (else `wait` below waits
    # out a server's own time limit).
    [[ -n "$WATCHDOG_PID" ]] && kill "$WATCHDOG_PID" 2>/dev/null
    for p in "${BG_PIDS[@]}"; do pkill -TERM -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
    if [[ -n "$FWD_PID" ]] && kill -0 "$FWD_PID" 2>/dev/null; then
        kill -TERM "$FWD_PID" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$FWD_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$FWD_PID" 2>/dev/null
    fi
    wait 2>/dev/null
    ip netns del "$NS1" 2>/dev/null
    ip netns del "$NS2" 2>/dev/null
    ip link del "$VA" 2>/dev/null
    ip link del "$VB" 2>/dev/null
    # DPDK leaves its runtime directory behind when killed.
    rm -rf "/var/run/dpdk/linkem-it-$TAG" 2>/dev/null
    if [[ -n "$WORK" && -z "${LINKEM_KEEP_LOGS:-}" ]]; then rm -rf "$WORK"; fi
    exit $rc
}

# require_env LINKEMD_PATH: skips unless we are root, namespaces work, the tools
# exist and the forwarder binary is there.
require_env() {
    LINKEMD="${1:-}"
    [[ $(id -u) -eq 0 ]] || skip "needs root (network namespaces, veth, af_packet)"
    local t
    for t in ip ethtool ping timeout ss; do
        command -v "$t" >/dev/null || skip "'$t' not installed"
    done
    [[ -x $PY ]] || skip "$PY not found"
    if [[ $FORWARDER == testpmd ]]; then
        command -v dpdk-testpmd >/dev/null || skip "dpdk-testpmd not installed"
        log "forwarder: dpdk-testpmd (LINKEM_FORWARDER=testpmd: plumbing check, no emulation)"
    else
        [[ -n "$LINKEMD" && -x "$LINKEMD" ]] ||
            skip "linkemd binary not found ('${LINKEMD}'); build target linkemd first"
        log "forwarder: $LINKEMD"
    fi
    trap cleanup EXIT
    trap 'log "interrupted"; exit 1' INT TERM
    # Our own deadline, below ctest's TIMEOUT, so cleanup always runs (ctest kills hard).
    local main=$BASHPID
    # (sleep holds no pipe to ctest, so a watchdog killed early never delays ctest.)
    (
        trap 'kill "$sp" 2>/dev/null; exit 0' TERM
        sleep "${TEST_LIMIT_S:-150}" </dev/null >/dev/null 2>&1 &
        sp=$!
        wait "$sp"
        log "FAIL: test deadline ${TEST_LIMIT_S:-150}s reached"
        kill -TERM "$main"
    ) &
    WATCHDOG_PID=$!
    ip netns add "$NS1" 2>/dev/null || skip "'ip netns add' failed (no namespace support here)"
    WORK=$(mktemp -d "/tmp/linkem-it-$TAG.XXXXXX")
}

require_tool() { command -v "$1" >/dev/null || skip "'$1' not installed"; }

nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

setup_topology() {
    ip netns add "$NS2" || fail "ip netns add $NS2"
    ip link add "$VE1" type veth peer name "$VA" || fail "ip link add $VE1/$VA"
    ip link add "$VE2" type veth peer name "$VB" || fail "ip link add $VE2/$VB"
    ip link set "$VE1" netns "$NS1"
    ip link set "$VE2" netns "$NS2"
    local ifc
    for ifc in "$VA" "$VB"; do
        # No address and no IPv6 chatter: the root namespace must not answer or send here.
        sysctl -qw "net.ipv6.conf.$ifc.disable_ipv6=1" 2>/dev/null
        ip link set "$ifc" up
    done
    local pair ns ve ipa
    for pair in "$NS1 $VE1 $IP1" "$NS2 $VE2 $IP2"; do
        read -r ns ve ipa <<<"$pair"
        nsx "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
        nsx "$ns" sysctl -qw "net.ipv6.conf.$ve.disable_ipv6=1" 2>/dev/null
        nsx "$ns" ip link set lo up
        nsx "$ns" ip addr add "$ipa/24" dev "$ve"
        nsx "$ns" ip link set "$ve" up
        # af_packet hands the forwarder frames whose checksum the kernel left for the
        # "hardware"; compute them in software instead (see design/field-notes.md).
        nsx "$ns" ethtool -K "$ve" tx off >/dev/null 2>&1 || fail "ethtool -K $ve tx off"
    done
    log "topology: $NS1/$VE1 $IP1 <-> $VA [fwd] $VB <-> $VE2 $IP2/$NS2"
}

# start_forwarder LINK_FLAGS...: starts linkemd (or testpmd) between VA and VB and waits
# until a ping crosses. Link flags are linkemd's; testpmd ignores them. FWD_PORT_A and
# FWD_PORT_B, when set, are linkemd's --port-a/--port-b values instead of the bare interface
# names (e.g. net_af_packet devargs of their own); FWD_WORKERS its --workers (default shared).
start_forwarder() {
    local max_s=${FWD_MAX_S:-150}
    FWD_OUT="$WORK/fwd.out"
    FWD_ERR="$WORK/fwd.err"
    # LINKEM_TEST_RT=1 (diagnosis only): run the forwarder SCHED_FIFO, standing in for the
    # dedicated core a DPDK data plane is meant to have when other work loads the machine.
    # The kernel's RT throttling (950 ms per 1 s) then stalls the busy-polling lcore for
    # 50 ms every second, which shows as a few late packets.
    local rt=()
    [[ ${LINKEM_TEST_RT:-0} == 1 ]] && rt=(chrt -f 1)
    if [[ $FORWARDER == testpmd ]]; then
        FWD_CMD=("${rt[@]}" timeout -s INT "$max_s" dpdk-testpmd --no-huge --no-pci -m 1024
                 -l 0,1 --file-prefix "linkem-it-$TAG"
                 --vdev "net_af_packet0,iface=$VA" --vdev "net_af_packet1,iface=$VB"
                 -- --forward-mode=io --total-num-mbufs=16384 --stats-period 5 --auto-start)
    else
        FWD_CMD=("${rt[@]}" timeout -s TERM "$max_s" "$LINKEMD" --no-control
                 --port-a "${FWD_PORT_A:-$VA}" --port-b "${FWD_PORT_B:-$VB}"
                 --workers "${FWD_WORKERS:-shared}" --stats-json --stats-interval 1s "$@"
                 ${LINKEMD_EXTRA_ARGS:-} -- --file-prefix "linkem-it-$TAG" ${LINKEMD_EAL_ARGS:-})
    fi
    log "start: ${FWD_CMD[*]}"
    "${FWD_CMD[@]}" >"$FWD_OUT" 2>"$FWD_ERR" </dev/null &
    FWD_PID=$!
    local i
    for i in $(seq 60); do
        kill -0 "$FWD_PID" 2>/dev/null || { dump_forwarder; fail "forwarder exited during start"; }
        if nsx "$NS1" ping -c1 -W1 -q "$IP2" >/dev/null 2>&1; then
            log "forwarder passes traffic after ~${i} probe(s)"
            # Let ARP settle both ways before measuring.
            nsx "$NS2" ping -c1 -W1 -q "$IP1" >/dev/null 2>&1
            return 0
        fi
        sleep 0.5
    done
    dump_forwarder
    fail "no ping crossed the forwarder within 60 probes"
}

# stop_forwarder: SIGTERM, wait for the final stats line.
stop_forwarder() {
    [[ -n "$FWD_PID" ]] || return 0
    kill -TERM "$FWD_PID" 2>/dev/null
    local _
    for _ in $(seq 100); do kill -0 "$FWD_PID" 2>/dev/null || break; sleep 0.1; done
    wait "$FWD_PID" 2>/dev/null
    FWD_RC=$?
    FWD_PID=""
    log "forwarder exit code $FWD_RC"
}

dump_forwarder() {
    log "--- forwarder stderr (tail) ---"
    tail -n 25 "$FWD_ERR" 2>/dev/null | sed 's/^/    /'
    log "--- forwarder stdout (tail) ---"
    tail -n 5 "$FWD_OUT" 2>/dev/null | cut -c1-600 | sed 's/^/    /'
}

# Prints linkemd's final counters, one direction per line (testpmd: its port stats).
show_forwarder_counters() {
    if [[ $FORWARDER == testpmd ]]; then
        grep -E "RX-packets|TX-packets" "$FWD_OUT" | tail -n 4 | sed 's/^/    /'
        return 0
    fi
    last_stats_line | $PY -c '
import json, sys
text = sys.stdin.read().strip()
if not text:
    print("    (no stats line from linkemd)"); sys.exit(0)
last = json.loads(text)
keys = ("packets_in", "packets_out", "drops_loss", "drops_spacer", "drops_policer",
        "drops_buffer_full", "delays_clamped", "waited", "in_flight")
for d in ("a_to_b", "b_to_a"):
    c = last.get(d) or {}
    print("    %s%s: %s" % (d, " (final)" if last.get("final") else "",
                            " ".join("%s=%s" % (k, c.get(k)) for k in keys if k in c)))
for p, c in sorted((last.get("ports") or {}).items()):
    print("    port %s: %s" % (p, " ".join("%s=%s" % kv for kv in sorted(c.items()))))
'
}

# last_stats_line: linkemd's last complete JSON stats line in $FWD_OUT (nothing without one).
last_stats_line() {
    $PY - "$FWD_OUT" <<'PYEOF'
import json, sys
last = None
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        try: json.loads(line); last = line
        except ValueError: pass
if last: print(last)
PYEOF
}

# start_iperf_server: one-shot server in ns2, JSON to $WORK/server.json.
start_iperf_server() {
    require_tool iperf3
    IPERF_SERVER_JSON="$WORK/server.json"
    nsx "$NS2" timeout 120 iperf3 -s -1 -B "$IP2" -J >"$IPERF_SERVER_JSON" 2>"$WORK/server.err" &
    IPERF_SERVER_PID=$!
    BG_PIDS+=("$IPERF_SERVER_PID")
    local _
    for _ in $(seq 50); do
        nsx "$NS2" ss -ltn 2>/dev/null | grep -q ":5201 " && return 0
        sleep 0.1
    done
    fail "iperf3 server did not start: $(cat "$WORK/server.err")"
}

wait_iperf_server() {
    local _
    for _ in $(seq 100); do kill -0 "$IPERF_SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    wait "$IPERF_SERVER_PID" 2>/dev/null
}

# json_get FILE EXPR: evaluates EXPR (Python, the document is `j`) and prints the result.
json_get() {
    $PY -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# float_in VALUE LOW HIGH: true when LOW <= VALUE <= HIGH.
float_in() {
    $PY -c 'import sys; v,l,h=map(float,sys.argv[1:]); sys.exit(0 if l<=v<=h else 1)' "$1" "$2" "$3"
}

# linkemd_pid: the linkemd process under the forwarder's `timeout` (empty if none).
linkemd_pid() {
    [[ -n "$FWD_PID" ]] || return 0
    pgrep -P "$FWD_PID" | head -n1
}

# sched_wait_ns PID: time all threads of PID have spent runnable but waiting for a CPU
# (second field of /proc/PID/task/*/schedstat), in ns; 0 when unknown.
sched_wait_ns() {
    local sum=0 t w
    for t in /proc/"$1"/task/*/schedstat; do
        read -r _ w _ <"$t" 2>/dev/null && sum=$((sum + w))
    done 2>/dev/null
    echo "$sum"
}

# lcore_cpus PID: the CPUs linkemd's polling lcores are bound to (DPDK names its worker
# threads "rte-worker-N" in 22.11, "lcore-worker-N" in later releases), comma-separated.
lcore_cpus() {
    local t cpus=""
    for t in /proc/"$1"/task/*; do
        case $(cat "$t/comm" 2>/dev/null) in rte-worker-* | lcore-worker-*) ;; *) continue ;; esac
        cpus+="$(taskset -cp "${t##*/}" 2>/dev/null | sed 's/.*: //'),"
    done
    echo "${cpus%,}"
}

# forwarder_stalls: "<stalls> <stall_ns> <longest_stall_ns>" summed over both directions
# from linkemd's last stats line (its counters since start); "0 0 0" without one.
forwarder_stalls() {
    last_stats_line | $PY -c '
import json, sys
text = sys.stdin.read().strip()
last = json.loads(text) if text else {}
n = ns = lo = 0
for d in ("a_to_b", "b_to_a"):
    c = (last or {}).get(d) or {}
    n += c.get("stalls", 0); ns += c.get("stall_ns", 0)
    lo = max(lo, c.get("longest_stall_ns", 0))
print(n, ns, lo)
'
}

# icmp_echoes NS: the IPv4 echo counters of namespace NS's kernel (/proc/net/snmp), as
# "InEchos InEchoReps OutEchos OutEchoReps". They count what crossed linkemd whatever ping
# itself read: ping's socket (64 KiB) drops replies when a held-up linkemd releases
# hundreds at once, the kernel has counted them by then.
icmp_echoes() {
    nsx "$1" cat /proc/net/snmp | $PY -c '
import sys
rows = [l.split() for l in sys.stdin if l.startswith("Icmp:")]
v = dict(zip(rows[0][1:], rows[1][1:]))
print(v["InEchos"], v["InEchoReps"], v["OutEchos"], v["OutEchoReps"])'
}

# echoes_begin / echoes_end: around a ping from NS1 to NS2, whether linkemd delivered every
# echo request and every reply, by the two kernels' counters. echoes_end waits (up to
# ${1:-30} s) for what is still in linkemd, then sets ECHOES_LOST to what it lost (empty
# when nothing) and prints the counts.
echoes_begin() {
    read -r _ ECHO_REPS1 ECHO_OUT1 _ <<<"$(icmp_echoes "$NS1")"
    read -r ECHO_IN2 _ _ ECHO_OUTREPS2 <<<"$(icmp_echoes "$NS2")"
}
echoes_end() {
    local deadline=$(( $(date +%s) + ${1:-30} )) reps1 out1 in2 outreps2 _
    while :; do
        read -r _ reps1 out1 _ <<<"$(icmp_echoes "$NS1")"
        read -r in2 _ _ outreps2 <<<"$(icmp_echoes "$NS2")"
        local sent=$((out1 - ECHO_OUT1)) arrived=$((in2 - ECHO_IN2))
        local answered=$((outreps2 - ECHO_OUTREPS2)) back=$((reps1 - ECHO_REPS1))
        # >=: a reply to an earlier ping (one that timed out while linkemd started) may
        # still arrive and count.
        (( arrived >= sent && back >= answered )) && break
        (( $(date +%s) >= deadline )) && break
        sleep 0.2
    done
    log "echo requests: $sent sent, $arrived arrived; replies: $answered sent, $back arrived (kernel counters)"
    ECHOES_LOST=
    (( arrived < sent )) && ECHOES_LOST="linkemd lost $((sent - arrived)) of $sent echo requests"
    (( back < answered )) &&
        ECHOES_LOST="${ECHOES_LOST:+$ECHOES_LOST; }linkemd lost $((answered - back)) of $answered echo replies"
    return 0
}

# A timing bound's verdict, one greppable line each (counted over loaded runs):
# bound_checked WHAT, bound_skipped WHAT REASON.
bound_checked() { log "timing bound: checked ($1)"; }
bound_skipped() { log "timing bound: skipped ($1: $2)"; log "SKIP bound: $1 not checked: $2"; }

# flow_begin / flow_end: bracket the traffic of a test (call flow_end before
# stop_forwarder). flow_disturbance (after stop_forwarder, whose final stats line it reads)
# then prints what the machine took from linkemd during the flow - all its stalls (count
# and total time, the longest if it grew), the time its threads waited for a CPU - and sets
# DISTURBED to the reason a timing bound cannot be judged (empty when the run was quiet
# enough). SHARE: the part of the flow the machine may take (default 0.02). BOUND: what the bound judges - spread (the
# default: a tail, a jitter, TCP's goodput, which many short stalls hurt even when their
# sum is small) or centre (a median, a mean, a count of datagrams: moved by the time the
# machine took in all and by one long stall, not by how many short pieces it came in).
#   flow_disturbance [SHARE [spread|centre]]
flow_begin() {
    FLOW_LPID=$(linkemd_pid)
    FLOW_T0=$(date +%s%N)
    FLOW_W0=0
    [[ -n "$FLOW_LPID" ]] && FLOW_W0=$(sched_wait_ns "$FLOW_LPID")
    read -r FLOW_S0 FLOW_SNS0 FLOW_LO0 <<<"$(forwarder_stalls)"
}
flow_end() {
    FLOW_T1=$(date +%s%N)
    FLOW_W1=$FLOW_W0
    [[ -n "$FLOW_LPID" ]] && FLOW_W1=$(sched_wait_ns "$FLOW_LPID")
}
flow_disturbance() {
    local share=${1:-0.02} bound=${2:-spread} s1 sns1 lo
    [[ $bound == spread || $bound == centre ]] ||
        fail "flow_disturbance: bound '$bound' is not spread or centre"
    read -r s1 sns1 lo <<<"$(forwarder_stalls)"
    local run=$((FLOW_T1 - FLOW_T0)) stalls=$((s1 - FLOW_S0)) stall_ns=$((sns1 - FLOW_SNS0))
    local waited=$((FLOW_W1 - FLOW_W0))
    log "disturbance over the $((run / 1000000)) ms flow: linkemd stalled $stalls times, $((stall_ns / 1000)) us in all (longest since start $((lo / 1000)) us); its threads waited $((waited / 1000)) us for a CPU"
    DISTURBED=$($PY -c '
import sys
run, stalls, stall_ns, waited, share, lo0, lo = (float(x) for x in sys.argv[1:8])
spread = sys.argv[8] == "spread"
r = []
# Two directions poll: their stall time is counted per direction.
if stall_ns > share * 2 * run:
    r.append("linkemd stalled %.1f ms in %d stalls (over %g %% of the flow per direction)" % (stall_ns / 1e6, stalls, share * 100))
elif spread and stalls > 40 * 2 * run / 1e9:
    r.append("linkemd stalled %d times (%.1f ms)" % (stalls, stall_ns / 1e6))
# A longest stall that grew during the flow (stats lines come once a second, so it may
# also be one just before it).
if lo > lo0 and lo >= 10e6:
    r.append("one stall lasted %.1f ms" % (lo / 1e6))
if waited > share * run:
    r.append("its threads waited %.1f ms for a CPU (over %g %% of the flow)" % (waited / 1e6, share * 100))
print("; ".join(r))' "$run" "$stalls" "$stall_ns" "$waited" "$share" "${FLOW_LO0:-0}" "$lo" "$bound")
}
