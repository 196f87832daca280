#!/usr/bin/env bash
# The layout of common/ (common/CMakeLists.txt), checked with grep: the model includes only
# model headers and nothing of JSON, ZeroMQ, CLI11, DPDK or Qt; the protocol only model and
# protocol headers and no ZeroMQ; the server reads key files without the client library; one
# layering function for per-direction overrides; one method table; one table of traffic
# flags.
# Usage: check_layout.sh [SOURCE_DIR]   (exit 0: all hold; 1: each breach is printed)
set -u
cd "${1:-$(dirname "$0")/../..}" || exit 2
fail=0
breach() {
    echo "layout: $1" >&2
    [ -n "${2:-}" ] && printf '%s\n' "${2%$'\n'}" | sed 's/^/    /' >&2
    fail=1
}

# Headers a library may include: its own and those of the libraries it depends on.
only_from() {  # LIB DIR...
    local lib=$1 bad="" f inc
    shift
    while IFS= read -r line; do
        f=${line%%:*}
        inc=$(sed -E 's/.*#include "linkem\/([^"]+)".*/\1/' <<<"${line#*:}")
        local ok=0 d
        for d in "$@"; do [ -e "$d/include/linkem/$inc" ] && ok=1; done
        [ $ok = 1 ] || bad+="$f: linkem/$inc"$'\n'
    done < <(grep -rEn '#include "linkem/' "common/$lib" | sed -E 's/^([^:]+):[0-9]+:/\1:/')
    [ -z "$bad" ] || breach "common/$lib includes headers of libraries it does not depend on" "$bad"
}
only_from model common/model
only_from protocol common/model common/capture common/protocol
only_from curve common/curve
only_from client common/model common/protocol common/curve common/client
only_from cli common/model common/protocol common/cli

hits=$(grep -rEn '#include *[<"](nlohmann/|zmq|CLI/|rte_|Q[A-Za-z]+[>/])' common/model)
[ -z "$hits" ] || breach "common/model includes JSON, ZeroMQ, CLI11, DPDK or Qt" "$hits"
hits=$(grep -rEn '#include *[<"](zmq|CLI/|rte_|Q[A-Za-z]+[>/])' common/protocol)
[ -z "$hits" ] || breach "common/protocol includes ZeroMQ, CLI11, DPDK or Qt" "$hits"
hits=$(grep -rEn 'nlohmann|zmq|CLI11' common/model/CMakeLists.txt)
[ -z "$hits" ] || breach "linkem::model links JSON, ZeroMQ or CLI11" "$hits"

# The server (backend/control) reads CURVE key files with linkem::curve, not the client.
hits=$(grep -rEn '#include "linkem/client.hpp"|linkem::client' backend/control)
[ -z "$hits" ] || breach "backend/control depends on the client library" "$hits"

# One layering function: the rule "top-level link keys for both directions, then the
# a_to_b / b_to_a object" is layered_link_keys (common/protocol/src/link_params_json.cpp);
# nothing else merges a direction's object over top-level keys.
n=$(grep -rE '^[a-z].* layered_link_keys\(' common --include=*.cpp | wc -l)
[ "$n" = 1 ] || breach "layered_link_keys is defined $n times, not once"
hits=$(grep -rnE 'merged\[key\] *= *value' common backend |
       grep -v '^common/protocol/src/link_params_json.cpp:')
[ -z "$hits" ] || breach "direction objects merged outside layered_link_keys" "$hits"

# One method table: proto::kMethods (common/protocol/include/linkem/protocol.hpp) names each
# method once in common/protocol; the server side dispatches on it, never on a name.
names=$(sed -n '/kMethods\[\] = {/,/^};/p' common/protocol/include/linkem/protocol.hpp |
        grep -oE 'Method::[a-z_]+, "[a-z_]+"' | grep -oE '"[a-z_]+"')
[ -n "$names" ] || breach "no method table (proto::kMethods) in protocol.hpp"
for m in $names; do
    n=$(grep -rhoF "$m" common/protocol | wc -l)
    [ "$n" = 1 ] || breach "method $m is named $n times in common/protocol, not once (the table)"
done
hits=$(grep -rnE '\bmethod *[!=]= *"' common/protocol backend/control backend/linkemd)
[ -z "$hits" ] || breach "a method dispatched by its name, not by the table" "$hits"

# One table of traffic flags: traffic_flags() (common/protocol/src/traffic_flags.cpp); no
# program registers --traffic-pattern, --traffic-rate, --frame-size or --period by hand.
hits=$(grep -rnE 'add_option[_a-z]*(<[^>]*>)?\( *"--(traffic|traffic-pattern|traffic-rate|frame-size|period)"' \
       backend common)
[ -z "$hits" ] || breach "traffic flags defined outside traffic_flags()" "$hits"

# One direction constant: kDirectionKeys (common/model/include/linkem/link_params.hpp) is the
# only array that spells the two direction keys; everything else indexes it.
hits=$(grep -rnE '"a_to_b", *"b_to_a"' common backend --include=*.cpp --include=*.hpp |
       grep -v '^common/model/include/linkem/link_params.hpp:.*kDirectionKeys')
[ -z "$hits" ] || breach "the direction keys spelled out beside kDirectionKeys" "$hits"

exit $fail
