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
