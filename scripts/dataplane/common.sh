# Sourced by the data-plane benchmarks (scripts/bench-dataplane.sh, bench-control.sh,
# bench-strategy-switch.sh): what they share.

# The linkemd to measure: $1 if given, else the first one built in the source tree $2.
bench_linkemd() {
    if [[ -n $1 ]]; then echo "$1"; return; fi
    local d
    for d in build-release build-rel build build-dp; do
        if [[ -x $2/$d/backend/linkemd/linkemd ]]; then echo "$2/$d/backend/linkemd/linkemd"; return; fi
    done
}

# Exits (status 1, with NAME in the message) unless run as root, which the DPDK EAL needs.
bench_need_root() {
    [[ $(id -u) -eq 0 ]] || { echo "$1: needs root (DPDK EAL)" >&2; exit 1; }
}

# Writes $2 (a pcap) of $3 64-byte IPv4/UDP frames from 10.1.0.1 (with "per-frame":
# 10.1.(i / 256).(i % 256)), source port 1024 + i, to 10.2.0.1 at the ports of the
# comma-separated list $4 in turn (scripts/dataplane/udp_pcap.py; $1 the python).
bench_udp_pcap() {
    "$1" "$(dirname "${BASH_SOURCE[0]}")/udp_pcap.py" "$2" "$3" "$4" "${5:-}"
}

# Runs a linkemd command line ("$@" after $1 and $2, with --stats-json --stats-interval 1s
# among its options) into the log $1 until that holds $2 stats lines (start-up takes seconds;
# at most 60 s of waiting), then stops it (SIGTERM) and waits for it.
bench_run_stats() {
    local log=$1 want=$2 waited=0
    shift 2
    "$@" >"$log" 2>&1 &
    local pid=$!
    while kill -0 "$pid" 2>/dev/null && [[ $(grep -c '^{' "$log") -lt $want && $waited -lt 600 ]]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}
