#!/usr/bin/env bash
# Bufferbloat through linkemd with real TCP: two network namespaces joined through linkemd
# on veth (net_af_packet, as in tests/integration/lib.sh),
#   ns1 (sender, 10.92.0.1) [veth] <-> linkemd <-> [veth] (receiver, 10.92.0.2) ns2
# a 10 Mbit/s spacer and 20 ms of constant delay each way (--link), and for each
# configuration of the spacer's queue: a latency probe from ns1 to ns2 every 10 ms (irtt;
# ping when irtt is not installed) for IDLE s alone, then beside one iperf3 TCP upload
# (cubic) ns1 -> ns2 of DURATION s, then 3 s more. One table row per configuration:
#   queue, queue limit       from `linkemd --print-config` with the row's flags
#   idle p50/p95/p99         the probe's RTT before the upload (ms)
#   load p50/p95/p99         the probe's RTT under load: probes sent from iperf3's start to
#                            DURATION s later (its data follows the connection's set-up, a
#                            few RTTs; the window includes TCP's ramp up), ms
#   probe lost               probes of that window without a reply (%)
#   goodput                  iperf3's receiver figure as % of the spacer's rate
#   retr                     iperf3's retransmits
#   drops a_to_b             linkemd's drops of the upload's direction by cause (drops_*),
#   ecn_marked               linkemd's CE marks in that direction (when it reports them), and
#                            the CE-marked packets the receiver's kernel counted (IpExt InCEPkts)
#   tcp                      the sender's congestion control as iperf3 reports it, "+ecn"
#                            when the receiver's kernel counted ECN-capable packets (IpExt)
#   linkemd                  whether the machine held it up during the row: its stalls (share
#                            of the row per direction, longest), its threads' wait for a CPU
#                            and frames the ports missed; "disturbed" past lib.sh's
#                            flow_disturbance limits (2 % stalls or CPU wait, any missed)
# The table goes to stdout and to OUT/table.md and OUT/summary.csv; the probe's RTT over time
# per configuration to OUT/rtt-NAME.csv (t_s: the probe's send time since iperf3's start,
# negative before it; rtt_ms empty for a lost probe) and all of them in one chart, OUT/rtt.png (gnuplot script
# OUT/rtt.png.gp); the raw outputs (irtt/ping, iperf3, linkemd) to OUT/raw/NAME/.
#   scripts/queues-veth.sh [--config NAME[:FLAGS]]... [--link FLAGS] [--out DIR] [--duration S]
#                          [--idle S] [--probe irtt|ping] [--no-build] [--build-dir DIR]
#     --config NAME:FLAGS  a configuration: its name (letters, digits, _ + . -) and linkemd
#                          link flags added to the link's (--link), e.g. 'pie50:--queue pie
#                          --pie-target 50ms'; NAME alone picks a row of the default list.
#                          Repeatable; default: droptail (--queue droptail --queue-limit
#                          1MiB; with a linkemd without --queue-limit: --spacer-limit 1MiB), codel
#                          (--queue codel), fq_codel (--queue fq_codel), fq_codel_ecn
#                          (--queue fq_codel --ecn on), pie (--queue pie). A row whose
#                          flags this linkemd does not know (linkemd --help) or rejects
#                          (--print-config) is skipped with linkemd's reason. A row whose
#                          config has "ecn" on runs with net.ipv4.tcp_ecn=1 in the sender's
#                          namespace, every other row with tcp_ecn=0.
#     --link FLAGS         the link every row shares, linkemd flags with a queueing limiter
#                          (default '--limiter spacer --rate 10Mbit --mean-delay 20ms
#                          --distribution constant'); e.g. '--limiter spacer --rate 50Mbit
#                          --mean-delay 20ms --distribution constant'
#     --out DIR            where the table, the CSVs and the chart go (default queues-veth-out;
#                          relative paths, here and in --build-dir, are the repository's)
#     --duration S         the upload's length in seconds (default 30)
#     --idle S             the probe alone before the upload, seconds (default 5)
#     --probe irtt|ping    the latency probe (default irtt when installed, else ping)
#     --no-build           use the build directory as it is
#     --build-dir DIR      build linkemd in DIR (default build-queues)
# Needs root (namespaces, veth, af_packet), iperf3, and irtt or ping (scripts/install-deps.sh).
# Namespaces, links and processes are removed on exit, Ctrl+C included.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
readonly PY=/usr/bin/python3  # Debian's interpreter: standard library only
readonly DEFAULT_LINK="--limiter spacer --rate 10Mbit --mean-delay 20ms --distribution constant"
readonly TAIL_S=3

build="build-queues"
do_build=1
out=queues-veth-out
duration=30
idle=5
probe=""
configs=()
link=$DEFAULT_LINK
die() { echo "queues-veth.sh: $*" >&2; exit 2; }
while (($#)); do
  case $1 in
    --config) configs+=("${2:?--config needs NAME or NAME:FLAGS}"); shift ;;
    --link) link=${2:?--link needs linkemd link flags}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    --duration) duration=${2:?--duration needs a number of seconds}; shift ;;
    --idle) idle=${2:?--idle needs a number of seconds}; shift ;;
    --probe) probe=${2:?--probe needs irtt or ping}; shift ;;
    --no-build) do_build=0 ;;
    --build-dir) build=${2:?--build-dir needs a directory}; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument '$1'; allowed: --config NAME[:FLAGS], --link FLAGS, --out DIR, --duration S, --idle S, --probe irtt|ping, --no-build, --build-dir DIR" ;;
  esac
  shift
done
read -ra BASE_FLAGS <<<"$link"
readonly BASE_FLAGS
[[ $duration =~ ^[1-9][0-9]*$ ]] || die "--duration: '$duration' is not a whole number of seconds (1 or more)"
[[ $idle =~ ^[1-9][0-9]*$ ]] || die "--idle: '$idle' is not a whole number of seconds (1 or more)"
case $probe in
  "") probe=ping; command -v irtt >/dev/null && probe=irtt ;;
  irtt|ping) command -v "$probe" >/dev/null || die "--probe $probe: '$probe' is not installed (scripts/install-deps.sh)" ;;
  *) die "--probe: '$probe' is neither irtt nor ping" ;;
esac
(($(id -u) == 0)) || die "needs root (network namespaces, veth, af_packet)"
for t in ip ethtool ping iperf3 timeout ss sysctl gnuplot; do
  command -v "$t" >/dev/null || die "'$t' is not installed (scripts/install-deps.sh)"
done
[[ $probe == irtt ]] || echo "queues-veth: irtt is not installed: the probe is ping (-i 0.01)"

if ((do_build)); then
  scripts/install-deps.sh
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLINKEM_WITH_GUI=OFF \
        -DLINKEM_BUILD_TESTS=OFF -DLINKEM_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null || exit 1
  cmake --build "$build" -j"$(nproc)" --target linkemd || exit 1
fi
linkemd=$(find "$build" -maxdepth 4 -type f -name linkemd -perm -u+x 2>/dev/null | head -1)
[[ -n $linkemd ]] || die "no linkemd in $build (build it, or give --build-dir; without DPDK it is not built)"
linkemd=$(realpath "$linkemd")
help=$("$linkemd" --help 2>&1)
has_flag() { grep -qE -- "^ +(--[a-z0-9-]+,)*$1[ ,]" <<<"$help"; }  # also an alias: --a,--b

# The default rows (the issue's list). Without --queue-limit the drop-tail row is the
# spacer's own limit.
declare -A default_flags=(
  [codel]="--queue codel"
  [fq_codel]="--queue fq_codel"
  [fq_codel_ecn]="--queue fq_codel --ecn on"
  [pie]="--queue pie"
)
default_order=(droptail codel fq_codel fq_codel_ecn pie)
if has_flag --queue-limit; then
  default_flags[droptail]="--queue droptail --queue-limit 1MiB"
else
  default_flags[droptail]="--spacer-limit 1MiB"
fi
((${#configs[@]})) || configs=("${default_order[@]}")

if ! err=$("$linkemd" --print-config --port-a net_null0 --port-b net_null1 "${BASE_FLAGS[@]}" 2>&1 >/dev/null); then
  die "--link: linkemd rejects '${BASE_FLAGS[*]}': $err"
fi

# --- the rows: name, flags, checked against this linkemd ---------------------------------
mkdir -p "$out/raw" || die "cannot create --out directory '$out'"
out=$(realpath "$out")
WORK=$(mktemp -d /tmp/linkem-queues.XXXXXX)
row_names=()
row_flags=()
declare -A seen=()
for c in "${configs[@]}"; do
  name=${c%%:*}
  if [[ $c == *:* ]]; then
    flags=${c#*:}
  else
    [[ -v default_flags[$name] ]] ||
      die "--config '$c': no default row '$name' (defaults: ${default_order[*]}); give NAME:FLAGS"
    flags=${default_flags[$name]}
  fi
  [[ $name =~ ^[A-Za-z0-9_+.-]+$ ]] ||
    die "--config '$c': the name '$name' may hold only letters, digits, _ + . and -"
  [[ -v seen[$name] ]] && die "--config: the name '$name' is given twice"
  seen[$name]=1
  read -r -a words <<<"$flags"
  unknown=""
  for w in "${words[@]}"; do
    [[ $w == --* ]] || continue
    f=${w%%=*}
    f=${f/#--a-to-b-/--}
    f=${f/#--b-to-a-/--}
    has_flag "$f" || unknown+="${unknown:+, }$f"
  done
  if [[ -n $unknown ]]; then
    echo "queues-veth: row '$name' skipped: this linkemd has no $unknown (flags: $flags)"
    continue
  fi
  if ! "$linkemd" --print-config --port-a net_null0 --port-b net_null1 "${BASE_FLAGS[@]}" \
       "${words[@]}" >"$WORK/$name.config.json" 2>"$WORK/$name.config.err"; then
    echo "queues-veth: row '$name' skipped: linkemd rejects its flags ($flags): $(tr '\n' ' ' <"$WORK/$name.config.err")"
    continue
  fi
  row_names+=("$name")
  row_flags+=("$flags")
done
((${#row_names[@]})) || { rm -rf "$WORK"; die "no configuration left to run"; }

# --- topology and cleanup -----------------------------------------------------------------
TAG=$$
NS1="lq1-$TAG" NS2="lq2-$TAG"
VE1="lqe1-$TAG" VA="lqa-$TAG" VE2="lqe2-$TAG" VB="lqb-$TAG"
IP1=10.92.0.1 IP2=10.92.0.2
FWD_PID="" PROBE_PID="" IRTT_SERVER_PID="" IPERF_SERVER_PID="" IPERF_PID=""
nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
end_pid() {  # end_pid PID: TERM its children (an `ip netns exec` or `timeout` child) and it
  [[ -n $1 ]] || return 0
  pkill -TERM -P "$1" 2>/dev/null
  kill -TERM "$1" 2>/dev/null
}
stop_linkemd() {  # TERM, then up to 5 s for its final stats line, then KILL
  [[ -n $FWD_PID ]] || return 0
  kill -TERM "$FWD_PID" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$FWD_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$FWD_PID" 2>/dev/null
  wait "$FWD_PID" 2>/dev/null
  FWD_PID=""
}
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  end_pid "$IPERF_PID"
  end_pid "$PROBE_PID"
  end_pid "$IPERF_SERVER_PID"
  end_pid "$IRTT_SERVER_PID"
  stop_linkemd
  wait 2>/dev/null
  ip netns del "$NS1" 2>/dev/null
  ip netns del "$NS2" 2>/dev/null
  ip link del "$VA" 2>/dev/null
  ip link del "$VB" 2>/dev/null
  rm -rf /var/run/dpdk/linkem-queues-"$TAG"-* 2>/dev/null
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "queues-veth: interrupted" >&2; exit 130' INT TERM

ip netns add "$NS1" || exit 1
ip netns add "$NS2" || exit 1
ip link add "$VE1" type veth peer name "$VA" || exit 1
ip link add "$VE2" type veth peer name "$VB" || exit 1
ip link set "$VE1" netns "$NS1"
ip link set "$VE2" netns "$NS2"
for ifc in "$VA" "$VB"; do
  # No address and no IPv6 chatter: the root namespace must not answer or send here.
  sysctl -qw "net.ipv6.conf.$ifc.disable_ipv6=1" 2>/dev/null
  ip link set "$ifc" up
done
for pair in "$NS1 $VE1 $IP1" "$NS2 $VE2 $IP2"; do
  read -r ns ve ipa <<<"$pair"
  nsx "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
  nsx "$ns" ip link set lo up
  nsx "$ns" ip addr add "$ipa/24" dev "$ve"
  nsx "$ns" ip link set "$ve" up
  # af_packet hands linkemd frames whose checksum the kernel left for the "hardware":
  # computed in software instead (this also turns off TSO: frames of at most the MTU).
  nsx "$ns" ethtool -K "$ve" tx off >/dev/null 2>&1 || { echo "ethtool -K $ve tx off failed" >&2; exit 1; }
  # No TCP metrics carried from one row's connection to the next (ssthresh, RTT).
  nsx "$ns" sysctl -qw net.ipv4.tcp_no_metrics_save=1
done
# cubic by iperf3's -C (setsockopt, root): a namespace's default may only be one of the
# host's tcp_allowed_congestion_control. Each row reports what iperf3 says the sender used.

# Static neighbours: ARP does not cross the emulated link (its requests would wait behind
# the upload in the queue like any packet).
mac1=$(nsx "$NS1" cat "/sys/class/net/$VE1/address")
mac2=$(nsx "$NS2" cat "/sys/class/net/$VE2/address")
nsx "$NS1" ip neigh replace "$IP2" lladdr "$mac2" dev "$VE1" nud permanent || exit 1
nsx "$NS2" ip neigh replace "$IP1" lladdr "$mac1" dev "$VE2" nud permanent || exit 1

# The background programs start through `ip netns exec` itself, not nsx: their PIDs are
# then the programs' own (ip execs them), which cleanup ends and waits for.
ip netns exec "$NS2" iperf3 -s -B "$IP2" >"$WORK/iperf3-server.log" 2>&1 &
IPERF_SERVER_PID=$!
if [[ $probe == irtt ]]; then
  # -i 0: no minimum interval. Probes sent 10 ms apart arrive closer when the queue
  # drains or linkemd was held up, and irtt's default (10 ms) makes the server ignore those.
  ip netns exec "$NS2" irtt server -b "$IP2:2112" -i 0 >"$WORK/irtt-server.log" 2>&1 &
  IRTT_SERVER_PID=$!
fi
for _ in $(seq 50); do
  nsx "$NS2" ss -ltn 2>/dev/null | grep -q ":5201 " && break
  sleep 0.1
done

sched_wait_ns() {  # time all threads of PID waited runnable for a CPU, ns
  local sum=0 t w
  for t in /proc/"$1"/task/*/schedstat; do
    read -r _ w _ <"$t" 2>/dev/null && sum=$((sum + w))
  done 2>/dev/null
  echo "$sum"
}
steal_ticks() { awk '/^cpu / { print $9 }' /proc/stat; }

echo "queues-veth: linkemd $linkemd; probe $probe; upload ${duration} s after ${idle} s idle; out $out"
echo "queues-veth: link ${BASE_FLAGS[*]} + each row's flags; machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$WORK/rows.jsonl"
for i in "${!row_names[@]}"; do
  name=${row_names[$i]}
  read -r -a words <<<"${row_flags[$i]}"
  raw="$out/raw/$name"
  rm -rf "$raw" && mkdir -p "$raw"
  cp "$WORK/$name.config.json" "$raw/config.json"
  ecn=$($PY -c 'import json,sys; v=json.load(open(sys.argv[1]))["a_to_b"].get("ecn", False); print(1 if v in (True, "on", 1) else 0)' "$raw/config.json")
  nsx "$NS1" sysctl -qw "net.ipv4.tcp_ecn=$ecn" || exit 1
  echo "queues-veth: [$name] flags: ${row_flags[$i]}; sender tcp_ecn=$ecn; load $(cut -d' ' -f1-3 /proc/loadavg)"

  timeout -s TERM $((idle + duration + 120)) "$linkemd" --no-control --port-a "$VA" --port-b "$VB" \
    --workers shared --stats-json --stats-interval 1s "${BASE_FLAGS[@]}" "${words[@]}" \
    -- --file-prefix "linkem-queues-$TAG-$i" >"$raw/linkemd.jsonl" 2>"$raw/linkemd.err" </dev/null &
  FWD_PID=$!
  up=0
  for _ in $(seq 60); do
    kill -0 "$FWD_PID" 2>/dev/null || break
    if nsx "$NS1" ping -c1 -W1 -q "$IP2" >/dev/null 2>&1; then up=1; break; fi
    sleep 0.5
  done
  if ((!up)); then
    echo "queues-veth: [$name] linkemd did not pass traffic; its stderr:" >&2
    tail -n 20 "$raw/linkemd.err" >&2
    exit 1
  fi
  nsx "$NS2" ping -c1 -W1 -q "$IP1" >/dev/null 2>&1
  sleep 1
  lpid=$(pgrep -P "$FWD_PID" | head -n1)
  w0=$(sched_wait_ns "${lpid:-0}") st0=$(steal_ticks) t_row0=$(date +%s%N)

  kstats() {  # the namespaces' kernel counters (SNMP, links), into raw/ before and after
    local ns
    for ns in "$NS1" "$NS2"; do
      echo "== $ns"; nsx "$ns" cat /proc/net/snmp /proc/net/netstat; nsx "$ns" ip -s -s link
    done
  }
  kstats >"$raw/kernel-before.txt" 2>&1
  probe_s=$((idle + duration + TAIL_S))
  if [[ $probe == irtt ]]; then
    ip netns exec "$NS1" irtt client -i 10ms -d "${probe_s}s" -Q -o "$raw/probe.json" "$IP2:2112" \
      >"$raw/probe.err" 2>&1 &
  else
    ip netns exec "$NS1" ping -D -O -i 0.01 -w "$probe_s" "$IP2" >"$raw/probe.txt" 2>"$raw/probe.err" &
  fi
  PROBE_PID=$!
  sleep "$idle"
  t0=$(date +%s%N)
  ip netns exec "$NS1" timeout $((duration + 60)) iperf3 -c "$IP2" -t "$duration" -C cubic -J \
    >"$raw/iperf3.json" 2>"$raw/iperf3.err" &
  IPERF_PID=$!
  # Halfway: the upload's socket as the sender's kernel sees it (raw/NAME/ss.txt: cwnd,
  # ssthresh, rtt).
  sleep $((duration / 2))
  nsx "$NS1" ss -tin dst "$IP2" dport = :5201 >"$raw/ss.txt" 2>&1
  wait "$IPERF_PID"
  irc=$?
  IPERF_PID=""
  ((irc == 0)) || echo "queues-veth: [$name] iperf3 exited with $irc: $(head -c 300 "$raw/iperf3.err")" >&2
  wait "$PROBE_PID"
  PROBE_PID=""
  t_row1=$(date +%s%N) w1=$(sched_wait_ns "${lpid:-0}") st1=$(steal_ticks)
  kstats >"$raw/kernel-after.txt" 2>&1
  stop_linkemd
  $PY - "$name" "${row_flags[$i]}" "$probe" "$raw" "$t0" "$duration" "$out/rtt-$name.csv" \
    "$((t_row1 - t_row0))" "$((w1 - w0))" "$((st1 - st0))" "$(nproc)" "$ecn" \
    >>"$WORK/rows.jsonl" <<'PYEOF' || { echo "queues-veth: [$name] could not read its results (raw outputs: $raw)" >&2; exit 1; }
import json, os, re, sys
name, flags, probe, raw, t0, dur, csv_path, row_ns, waited_ns, steal, ncpu, ecn = sys.argv[1:13]
t0, dur, row_ns, waited_ns, steal, ncpu = int(t0), int(dur), int(row_ns), int(waited_ns), int(steal), int(ncpu)

# The probe: (send time ns, rtt ns or None when lost)
samples = []
if probe == "irtt":
    j = json.load(open(os.path.join(raw, "probe.json")))
    for rt in j.get("round_trips", []):
        send = rt["timestamps"]["client"]["send"]["wall"]
        rtt = rt.get("delay", {}).get("rtt") if rt.get("lost") == "false" else None
        samples.append((send, rtt))
else:
    got, first = {}, None
    for line in open(os.path.join(raw, "probe.txt")):
        m = re.match(r"\[(\d+\.\d+)\] .*icmp_seq=(\d+) .*time=([\d.]+) ms", line)
        if m:
            recv, seq, rtt = float(m.group(1)) * 1e9, int(m.group(2)), float(m.group(3)) * 1e6
            got[seq] = (recv - rtt, rtt)
            if first is None:
                first = (seq, recv - rtt)
        m = re.match(r"\[(\d+\.\d+)\] no answer yet for icmp_seq=(\d+)", line)
        if m:
            got.setdefault(int(m.group(2)), None)
    if first:
        # a lost probe's send time from its sequence number (10 ms apart)
        for seq in sorted(got):
            v = got[seq]
            samples.append((int(v[0]), v[1]) if v else (int(first[1] + (seq - first[0]) * 1e7), None))
samples.sort()

def pct(vals, p):
    if not vals:
        return None
    vals = sorted(vals)
    k = (len(vals) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (k - lo)

end = t0 + dur * 10**9
idle = [r for s, r in samples if s < t0 and r is not None]
load_all = [r for s, r in samples if t0 <= s < end]
load = [r for r in load_all if r is not None]
with open(csv_path, "w") as f:
    f.write("t_s,rtt_ms\n")
    for s, r in samples:
        f.write("%.4f,%s\n" % ((s - t0) / 1e9, "" if r is None else "%.3f" % (r / 1e6)))

cfg = json.load(open(os.path.join(raw, "config.json")))["a_to_b"]
queue = cfg.get("queue", "droptail")
if cfg.get("queue_limit_packets"):
    limit = "%dp" % cfg["queue_limit_packets"]
else:
    b = cfg.get("queue_limit_bytes") or cfg.get("spacer_limit_bytes") or 0
    limit = ("%g MiB" % (b / 2**20)) if b >= 2**20 else ("%g KiB" % (b / 2**10)) if b >= 2**10 else "%d B" % b
rate = cfg.get("rate_bps", 0)

ip = json.load(open(os.path.join(raw, "iperf3.json")))
if "error" in ip and "end" not in ip:
    raise SystemExit("iperf3: " + ip["error"])
rx_bps = ip["end"]["sum_received"]["bits_per_second"]
retr = ip["end"]["sum_sent"].get("retransmits")
cc = ip["end"].get("sender_tcp_congestion", "?")
# The receiver's kernel (IpExt of the second namespace, after - before): packets that
# arrived ECN-capable (ECT) and marked CE. Only the upload is ECN-capable (irtt and ping
# are not), so ECT > 0 says its connection negotiated ECN.
def ipext(path):
    sections = open(path).read().split("== ")[1:]
    lines = sections[1].split("\n")
    for k in range(len(lines) - 1):
        if lines[k].startswith("IpExt:") and lines[k + 1].startswith("IpExt:"):
            return dict(zip(lines[k].split()[1:], map(int, lines[k + 1].split()[1:])))
    return {}
try:
    b, a = ipext(os.path.join(raw, "kernel-before.txt")), ipext(os.path.join(raw, "kernel-after.txt"))
    ect = sum(a.get(k, 0) - b.get(k, 0) for k in ("InECT0Pkts", "InECT1Pkts", "InCEPkts"))
    ce = a.get("InCEPkts", 0) - b.get("InCEPkts", 0)
except (OSError, IndexError, ValueError):
    ect, ce = 0, None

last = None
for line in open(os.path.join(raw, "linkemd.jsonl")):
    line = line.strip()
    if line.startswith("{"):
        try:
            last = json.loads(line)
        except ValueError:
            pass
if last is None:
    raise SystemExit("no stats line from linkemd")
ab = last.get("a_to_b") or {}
drops = {k[6:]: v for k, v in sorted(ab.items()) if k.startswith("drops_") and v}
ba_drops = {k[6:]: v for k, v in sorted((last.get("b_to_a") or {}).items()) if k.startswith("drops_") and v}
stalls = sum((last.get(d) or {}).get("stalls", 0) for d in ("a_to_b", "b_to_a"))
stall_ns = sum((last.get(d) or {}).get("stall_ns", 0) for d in ("a_to_b", "b_to_a"))
longest = max((last.get(d) or {}).get("longest_stall_ns", 0) for d in ("a_to_b", "b_to_a"))
missed = sum(p.get("rx_missed", 0) + p.get("rx_nombuf", 0) for p in (last.get("ports") or {}).values())
# lib.sh's flow_disturbance: two directions poll, their stall time is counted per
# direction; over 2 % of the row (stalls or CPU wait) it calls a run disturbed
stall_share = 100.0 * stall_ns / (2 * row_ns) if row_ns else 0
wait_share = 100.0 * waited_ns / row_ns if row_ns else 0
disturbed = stall_share > 2 or wait_share > 2 or missed > 0
ms = lambda v: None if v is None else round(v / 1e6, 1)
print(json.dumps({
    "name": name, "flags": flags, "queue": queue + ("+ecn" if ecn == "1" else ""), "limit": limit,
    "idle": [ms(pct(idle, p)) for p in (50, 95, 99)], "idle_n": len(idle),
    "load": [ms(pct(load, p)) for p in (50, 95, 99)], "load_n": len(load_all),
    "load_lost_pct": round(100.0 * (len(load_all) - len(load)) / len(load_all), 1) if load_all else None,
    "goodput_pct": round(100.0 * rx_bps / rate, 1) if rate else None, "goodput_mbps": round(rx_bps / 1e6, 2),
    "retransmits": retr, "cc": cc, "tcp": cc + ("+ecn" if ect > 0 else ""), "rx_ce": ce, "drops": drops, "b_to_a_drops": ba_drops, "ecn_marked": ab.get("ecn_marked"),
    "stalls": stalls, "stall_ms": round(stall_ns / 1e6, 1), "longest_stall_ms": round(longest / 1e6, 1),
    "cpu_wait_ms": round(waited_ns / 1e6, 1), "missed": missed, "row_s": round(row_ns / 1e9, 1),
    "steal_pct": round(100.0 * steal / (row_ns / 1e7 * ncpu), 1) if row_ns else 0,
    "stall_pct": round(stall_share, 1), "cpu_wait_pct": round(wait_share, 1),
    "disturbance": "%s: stalls %.1f %% (longest %.0f ms), CPU wait %.1f %%, missed %d" % (
        "disturbed" if disturbed else "quiet", stall_share, longest / 1e6, wait_share, missed),
    "loadavg": open("/proc/loadavg").read().split()[:3],
}))
PYEOF
  tail -n1 "$WORK/rows.jsonl" | $PY -c '
import json, sys
r = json.loads(sys.stdin.read())
f = lambda v: "-" if v is None else "%g" % v
print("queues-veth: [%s] idle %s ms, load %s ms, goodput %s %% (%s), retr %s, drops %s, ecn_marked %s; linkemd %s (%d stalls, %.1f ms summed over both directions; CPU wait %.1f ms; steal %.1f %%; load %s)" % (
    r["name"], "/".join(map(f, r["idle"])), "/".join(map(f, r["load"])), f(r["goodput_pct"]), r["tcp"],
    r["retransmits"], r["drops"] or "none", f(r["ecn_marked"]), r["disturbance"], r["stalls"], r["stall_ms"],
    r["cpu_wait_ms"], r["steal_pct"], " ".join(r["loadavg"])))'
done

# --- the table and the chart --------------------------------------------------------------
$PY - "$WORK/rows.jsonl" "$out" "$probe" "$duration" "${BASE_FLAGS[*]}" <<'PYEOF'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out, probe, dur, link = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
f = lambda v: "-" if v is None else "%g" % v
trip = lambda t: " / ".join(f(v) for v in t)
drops = lambda r: ", ".join("%s %d" % kv for kv in r["drops"].items()) or "0"
head = ["config", "queue", "limit", "tcp", "idle p50/p95/p99 ms", "load p50/p95/p99 ms",
        "probe lost", "goodput", "retr", "drops a_to_b", "ecn_marked", "linkemd"]
body = [[r["name"], r["queue"], r["limit"], r["tcp"], trip(r["idle"]), trip(r["load"]),
         "%s %%" % f(r["load_lost_pct"]), "%s %%" % f(r["goodput_pct"]), str(r["retransmits"]),
         drops(r), "-" if r["ecn_marked"] is None else "%s (rx CE %s)" % (r["ecn_marked"], f(r["rx_ce"])), r["disturbance"]] for r in rows]
w = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
print()
for line in [head] + body:
    print("  ".join(x.ljust(w[i]) for i, x in enumerate(line)).rstrip())
with open(os.path.join(out, "table.md"), "w") as t:
    t.write("| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n")
    for line in body:
        t.write("| " + " | ".join(line) + " |\n")
with open(os.path.join(out, "summary.csv"), "w") as c:
    c.write("config,flags,queue,limit,tcp,idle_p50_ms,idle_p95_ms,idle_p99_ms,load_p50_ms,load_p95_ms,"
            "load_p99_ms,probe_lost_pct,goodput_pct,goodput_mbps,retransmits,drops,ecn_marked,rx_ce,"
            "stalls,stall_pct,cpu_wait_pct,missed,disturbance\n")
    for r in rows:
        c.write(",".join('"%s"' % str(v).replace('"', "'") for v in [
            r["name"], r["flags"], r["queue"], r["limit"], r["tcp"], *r["idle"], *r["load"], r["load_lost_pct"],
            r["goodput_pct"], r["goodput_mbps"], r["retransmits"], drops(r), r["ecn_marked"], r["rx_ce"],
            r["stalls"], r["stall_pct"], r["cpu_wait_pct"], r["missed"], r["disturbance"]]) + "\n")
colors = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#e6ab02", "#66a61e", "#a6761d", "#666666"]
gp = os.path.join(out, "rtt.png.gp")
with open(gp, "w") as g:
    g.write("set datafile separator ','\nset datafile missing ''\n"
            "set terminal pngcairo size 1600,650 noenhanced font ',10'\n"
            "set output '%s'\n" % os.path.join(out, "rtt.png"))
    g.write("set title 'Probe RTT (%s, every 10 ms) beside one iperf3 TCP upload (cubic) from t = 0 to %s s; "
            "linkemd %s'\n" % (probe, dur, link))
    g.write("set xlabel 'Probe send time since iperf3 started (s)'\nset ylabel 'Probe RTT (ms)'\n"
            "set logscale y\nset grid\nset key outside right top vertical font ',8'\n")
    g.write("set arrow from 0, graph 0 to 0, graph 1 nohead dt 3 lc rgb '#888888'\n")
    g.write("set arrow from %s, graph 0 to %s, graph 1 nohead dt 3 lc rgb '#888888'\n" % (dur, dur))
    g.write("plot " + ", \\\n     ".join(
        "'%s' every ::1 using 1:($2) with lines lw 1.5 lc rgb '%s' title '%s (%s, %s)'" % (
            os.path.join(out, "rtt-%s.csv" % r["name"]), colors[i % len(colors)], r["name"], r["queue"], r["limit"])
        for i, r in enumerate(rows)) + "\n")
print("\nqueues-veth: %s/table.md, summary.csv, rtt-*.csv, rtt.png (gnuplot %s), raw/" % (out, gp))
PYEOF
gnuplot "$out/rtt.png.gp" || echo "queues-veth: gnuplot failed on $out/rtt.png.gp" >&2
