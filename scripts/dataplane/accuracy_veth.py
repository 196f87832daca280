#!/usr/bin/python3
"""The DPDS paper's Table 4 through interface ports (scripts/measure-accuracy.sh --ports veth).

  ns1 [ve1] <-> [va] linkemd [vb] <-> [ve2] ns2

Per point a UDP sender in ns1 sends 1518-byte Ethernet frames (1472-byte payload; 1514 bytes
on the veth, the FCS counted as in the paper) carrying a sequence number and their
CLOCK_MONOTONIC send time; the receiver in ns2 takes the kernel's receive stamp of each
(SO_TIMESTAMPNS). linkemd runs between va and vb (net_af_packet, its default rings for
interfaces), correlated, mean 10 ms, half-life 21 ms, the jitter, --seed. The mean delay and
jitter (standard deviation) of the packets after the warm-up, minus what the path adds with 0
delay (a constant-0 run per rate: its median subtracted, its jitter from the quartiles
subtracted in quadrature), are compared with the configured ones in %, beside the paper and
linkem-sim with the same seed over the same packets (its trace of every packet); their
per-packet correlation is printed.
Loss is accounted: frames sent (without the sender's errors) = linkemd's a_to_b packets_in +
the kernel's ring drops (rx_missed), linkemd's packets_out = received + receiver socket drops.

The sender and receiver are linkem-udp-probe (tests/integration/udp_probe.cpp; --probe PATH,
which measure-accuracy.sh gives when the build has it), or else this file's own (accuracy_veth.py
send|recv ..., the same arguments and outputs), which fall behind their schedule at 50 000
frames/s; the progress lines and the table say which ran, and every point's sender_late_pct
how many frames were sent more than 100 us late.
"""
import argparse
import array
import atexit
import json
import math
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_parse  # noqa: E402  (scripts/dataplane/bench_parse.py: linkemd's stats lines)
from kernel_clock import (SO_TIMESTAMPNS, offset_realtime_minus_monotonic,  # noqa: E402
                          stamp_realtime_ns)

FMT = "!QQ"  # sequence, send time (CLOCK_MONOTONIC ns)
FRAME = 1518  # Ethernet frame with FCS
T_MIN_S = 0.010  # the rate estimator's T_min (linkemd's and linkem-sim's default)
PAYLOAD = FRAME - 4 - 14 - 20 - 8  # 1472
MEAN_NS = 10e6
PAPER = {("cbr", 0.1): (0.33, 0.23), ("cbr", 0.3): (0.52, -0.45), ("cbr", 1): (1.17, -0.49),
         ("cbr", 3): (2.97, -0.55), ("sine", 0.1): (0.29, 0.64), ("sine", 0.3): (0.47, -0.19),
         ("sine", 1): (1.10, -0.20), ("sine", 3): (2.74, -0.88)}
PERIOD_S = 30.0  # the sine's period, as in the paper


# ---------------------------------------------------------------- sender and receiver

def sine_schedule(mean_pps, count):
    """Send times (s) of the paper's sine: rate(t) = peak (1 + sin(w t)) / 2, peak = 2 mean;
    packet k when the expected count reaches k (linkem's SineSource)."""
    peak, w = 2.0 * mean_pps, 2 * math.pi / PERIOD_S
    cnt = lambda t: 0.5 * peak * (t + (1 - math.cos(w * t)) / w)
    rate = lambda t: 0.5 * peak * (1 + math.sin(w * t))
    out, t = array.array("d", [0.0]), 0.0
    for k in range(1, count):
        lo, hi = t, t + PERIOD_S
        r = rate(t)
        x = t + (1.0 / r if r > 0 else 0.5 * PERIOD_S)
        for _ in range(100):
            if not lo < x < hi:
                x = 0.5 * (lo + hi)
            f = cnt(x) - k
            if f > 0:
                hi = x
            else:
                lo = x
            if hi - lo < 1e-12:
                break
            r = rate(x)
            step = f / r if r > 0 else 0
            if abs(step) < 1e-12:
                x -= step
                break
            x -= step
        t = x
        out.append(t)
    return out


def send(dest_ip, port, count, pps, pattern):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
    buf = bytearray(PAYLOAD)
    sched = sine_schedule(pps, count) if pattern == "sine" else None
    period = 1e9 / pps
    mono = time.clock_gettime_ns
    M = time.CLOCK_MONOTONIC
    addr = (dest_ip, port)
    errors = behind_max = late = 0
    start = mono(M) + 20_000_000
    for i in range(count):
        due = start + int((sched[i] * 1e9) if sched is not None else i * period)
        now = mono(M)
        if due - now > 300_000:
            time.sleep((due - now - 200_000) / 1e9)
        while now < due:
            now = mono(M)
        if now - due > 100_000:  # the arrivals at linkemd are then not the pattern's
            late += 1
            if now - due > behind_max:
                behind_max = now - due
        struct.pack_into(FMT, buf, 0, i, mono(M))
        try:
            s.sendto(buf, addr)
        except OSError:
            errors += 1
    print(json.dumps({"sent": count, "send_errors": errors, "behind_max_ns": behind_max,
                      "late_100us": late,
                      "seconds": (mono(M) - start) / 1e9}), flush=True)


def recv(bind_ip, port, count, timeout_s, out):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:  # root: beyond net.core.rmem_max
        s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), 64 << 20)
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.bind((bind_ip, port))
    s.settimeout(0.5)
    _, off0 = offset_realtime_minus_monotonic()
    print("ready", flush=True)
    seqs, delays = array.array("q"), array.array("q")
    deadline = time.monotonic() + timeout_s
    last = None
    space = socket.CMSG_SPACE(16)
    while len(seqs) < count and time.monotonic() < deadline:
        try:
            data, anc, _, _ = s.recvmsg(16, space)
        except socket.timeout:
            # as linkem-udp-probe: a linkemd stalled for seconds still delivers its ring
            if last is not None and time.monotonic() - last > 20.0:
                break  # the flow is over; the rest was lost
            continue
        last = time.monotonic()
        stamp = stamp_realtime_ns(anc)
        if stamp is not None and len(data) >= 16:
            seq, sent = struct.unpack_from(FMT, data)
            seqs.append(seq)
            delays.append(stamp - off0 - sent)
    _, off1 = offset_realtime_minus_monotonic()
    with open(out + ".seq", "wb") as f:
        seqs.tofile(f)
    with open(out + ".delay", "wb") as f:
        delays.tofile(f)
    with open(out, "w") as f:
        json.dump({"received": len(seqs), "offset_change_ns": off1 - off0}, f)


# ---------------------------------------------------------------- orchestration

def run(cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, capture_output=True, text=True, **kw)


class Topology:
    IP1, IP2 = "10.93.0.1", "10.93.0.2"

    def __init__(self):
        t = os.getpid()
        self.ns1, self.ns2 = f"lkacc1-{t}", f"lkacc2-{t}"
        self.ve1, self.va, self.ve2, self.vb = (f"lkx1-{t}", f"lkxa-{t}", f"lkx2-{t}",
                                                f"lkxb-{t}")
        self.up = False

    def nsx(self, ns, *cmd):
        return ["ip", "netns", "exec", ns, *cmd]

    def create(self):
        self.up = True
        run(["ip", "netns", "add", self.ns1])
        run(["ip", "netns", "add", self.ns2])
        for ve, v, ns, ip in ((self.ve1, self.va, self.ns1, self.IP1),
                              (self.ve2, self.vb, self.ns2, self.IP2)):
            run(["ip", "link", "add", ve, "type", "veth", "peer", "name", v])
            run(["ip", "link", "set", ve, "netns", ns])
            run(["sysctl", "-qw", f"net.ipv6.conf.{v}.disable_ipv6=1"], check=False)
            run(["ip", "link", "set", v, "up"])
            run(self.nsx(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"), check=False)
            run(self.nsx(ns, "ip", "link", "set", "lo", "up"))
            run(self.nsx(ns, "ip", "addr", "add", f"{ip}/24", "dev", ve))
            run(self.nsx(ns, "ip", "link", "set", ve, "up"))
            # af_packet forwards frames with the checksum left for the "hardware".
            run(self.nsx(ns, "ethtool", "-K", ve, "tx", "off"))
        # Static ARP: no frame but the flow's (and the start probes) crosses linkemd.
        mac = lambda ns, ve: run(self.nsx(ns, "cat", f"/sys/class/net/{ve}/address")).stdout.strip()
        run(self.nsx(self.ns1, "ip", "neigh", "replace", self.IP2, "lladdr",
                     mac(self.ns2, self.ve2), "dev", self.ve1, "nud", "permanent"))
        run(self.nsx(self.ns2, "ip", "neigh", "replace", self.IP1, "lladdr",
                     mac(self.ns1, self.ve1), "dev", self.ve2, "nud", "permanent"))

    def destroy(self):
        if not self.up:
            return
        self.up = False
        for ns in (self.ns1, self.ns2):
            run(["ip", "netns", "del", ns], check=False)
        for v in (self.va, self.vb):
            run(["ip", "link", "del", v], check=False)

    def udp_counters(self, ns):
        """Udp line of /proc/net/snmp in NS as a dict."""
        lines = [l.split() for l in run(self.nsx(ns, "cat", "/proc/net/snmp")).stdout.splitlines()
                 if l.startswith("Udp:")]
        return dict(zip(lines[0][1:], map(int, lines[1][1:])))


def stats_lines(path):
    """linkemd's --stats-json lines in the order written (the final one last)."""
    periodic, final = bench_parse.stats_lines(path)
    return periodic + ([final] if final else [])


def cpu_set(text):
    out = set()
    for part in filter(None, text.strip().split(",")):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def lcore_cpus(pid):
    cpus = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            comm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
        except OSError:
            continue
        if comm.startswith(("rte-worker-", "lcore-worker-")):
            cpus |= cpu_set(run(["taskset", "-cp", tid]).stdout.split(":")[1])
    return cpus


def mean_jitter(v):
    n = len(v)
    if not n:
        return None, None
    m = sum(v) / n
    return m, math.sqrt(max(sum((x - m) ** 2 for x in v) / n, 0.0))


def pearson(x, y):
    n = min(len(x), len(y))
    if n < 3:
        return None
    mx, my = sum(x[:n]) / n, sum(y[:n]) / n
    sxy = sxx = syy = 0.0
    for a, b in zip(x[:n], y[:n]):
        a -= mx
        b -= my
        sxy += a * b
        sxx += a * a
        syy += b * b
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


def ranks(v):
    out = [0.0] * len(v)
    for r, i in enumerate(sorted(range(len(v)), key=v.__getitem__)):
        out[i] = float(r)
    return out


class Runner:
    def __init__(self, a, linkemd, sim, me):
        self.a, self.linkemd, self.sim, self.me = a, linkemd, sim, me
        # The sender's and receiver's command: linkem-udp-probe, or this file's own.
        self.probe_cmd = [a.probe] if a.probe else [sys.executable, me]
        self.topo = Topology()
        self.tmp = tempfile.mkdtemp(prefix="linkem-accuracy-veth-")
        self.proc = self.rcv = None
        self.k = 0

    def cleanup(self):
        if self.rcv and self.rcv.poll() is None:
            self.rcv.kill()
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.topo.destroy()
        for k in range(1, self.k + 1):
            run(["rm", "-rf", f"/var/run/dpdk/linkem-accv-{os.getpid()}-{k}"], check=False)
        if not self.a.keep:
            run(["rm", "-rf", self.tmp], check=False)

    def point(self, pattern, pps, link):
        """One linkemd run with a flow through it; returns the raw figures."""
        a, t = self.a, self.topo
        self.k += 1
        k = self.k
        out, err = f"{self.tmp}/linkemd{k}.out", f"{self.tmp}/linkemd{k}.err"
        cmd = (([] if a.rt is None else ["chrt", "-f", str(a.rt)]) +
               [self.linkemd, "--no-control", "--port-a", t.va, "--port-b", t.vb,
                "--stats-json", "--stats-interval", "1s", *link, "--",
                f"--file-prefix=linkem-accv-{os.getpid()}-{k}"])
        self.proc = subprocess.Popen(cmd, stdout=open(out, "w"), stderr=open(err, "w"))
        try:
            for _ in range(60):
                if self.proc.poll() is not None:
                    raise RuntimeError("linkemd stopped at start:\n" + open(err).read()[-3000:])
                ping = run(t.nsx(t.ns1, "ping", "-c1", "-W1", "-q", t.IP2), check=False)
                if ping.returncode == 0:
                    break
                time.sleep(0.5)
            else:
                raise RuntimeError("no ping crossed linkemd:\n" + open(err).read()[-3000:])
            cpus = lcore_cpus(self.proc.pid)
            free = sorted(cpu_set(run(["taskset", "-cp", str(os.getpid())]).stdout.split(":")[1])
                          - cpus)
            cpu = str(free[0] if free else 0)
            count = int((a.warmup + a.seconds) * pps)
            port = 20000 + os.getpid() % 20000
            res = f"{self.tmp}/recv{k}.json"
            self.rcv = rcv = subprocess.Popen(
                t.nsx(t.ns2, "taskset", "-c", cpu, *self.probe_cmd, "recv", t.IP2,
                      str(port), str(count), str(a.seconds + a.warmup + 60), res),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if rcv.stdout.readline().strip() != "ready":
                raise RuntimeError("receiver did not start: " + rcv.stderr.read())
            time.sleep(1.3)  # a stats line after the probes: the flow's packets come after it
            s0 = stats_lines(out)[-1]
            t_s0 = time.monotonic_ns()
            u1, u2 = t.udp_counters(t.ns1), t.udp_counters(t.ns2)
            rt = [] if a.sender_rt is None else ["chrt", "-f", str(a.sender_rt)]
            snd = run(t.nsx(t.ns1, *rt, "taskset", "-c", cpu, *self.probe_cmd, "send",
                            t.IP2, str(port), str(count), str(pps), pattern))
            rcv.wait()
            # linkemd's clock: its stats lines' t_ns against the last line before the flow.
            t_end_ns = s0["t_ns"] + (time.monotonic_ns() - t_s0)
            if rcv.returncode:
                raise RuntimeError("receiver failed: " + rcv.stderr.read())
            time.sleep(0.1)
        finally:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None
        lines = stats_lines(out)
        s1 = lines[-1]
        v1, v2 = t.udp_counters(t.ns1), t.udp_counters(t.ns2)
        r = json.load(open(res))
        seqs, delays = array.array("q"), array.array("q")
        with open(res + ".seq", "rb") as f:
            seqs.fromfile(f, r["received"])
        with open(res + ".delay", "rb") as f:
            delays.fromfile(f, r["received"])
        return {"s0": s0, "s1": s1, "lines": lines, "t_end_ns": t_end_ns,
                "send": json.loads(snd.stdout), "recv": r, "count": count,
                "seqs": seqs, "delays": delays, "cpu": cpu, "lcores": sorted(cpus),
                "snd_udp": {x: v1[x] - u1[x] for x in v1},
                "rcv_udp": {x: v2[x] - u2[x] for x in v2}}

    def accounting(self, p):
        """Loss, reordering and where every frame went (all from counters, exact)."""
        s0, s1 = p["s0"], p["s1"]
        d = lambda key: s1["a_to_b"][key] - s0["a_to_b"].get(key, 0)
        port = lambda name, key: (s1.get("ports", {}).get(name, {}).get(key, 0) -
                                  s0.get("ports", {}).get(name, {}).get(key, 0))
        seen, ooo, hi = set(), 0, -1
        for s in p["seqs"]:
            if s < hi:
                ooo += 1
            hi = max(hi, s)
            seen.add(s)
        drops = {x: d(x) for x in s1["a_to_b"] if x.startswith("drops_")}
        acc = {
            "sent": p["count"] - p["send"]["send_errors"], "send_errors": p["send"]["send_errors"],
            "linkemd_in": d("packets_in"), "linkemd_out": d("packets_out"),
            "linkemd_drops": sum(drops.values()),
            "ring_drops": port("a", "rx_missed"), "received": p["recv"]["received"],
            "distinct": len(seen), "out_of_order": ooo,
            "socket_drops": p["rcv_udp"].get("RcvbufErrors", 0),
            "sndbuf_errors": p["snd_udp"].get("SndbufErrors", 0)}
        acc["lost"] = acc["sent"] - acc["distinct"]
        # Every frame sent entered linkemd or was dropped by the kernel's ring; every frame
        # linkemd sent was received or dropped at the receiver's socket.
        acc["unexplained_in"] = acc["sent"] - acc["linkemd_in"] - acc["ring_drops"]
        acc["unexplained_out"] = acc["linkemd_out"] - acc["received"] - acc["socket_drops"]
        span = (s1["t_ns"] - s0["t_ns"]) / 1e9 if "t_ns" in s1 else None
        rates = [l["a_to_b"]["rate_pps"] for l in p["lines"]
                 if s0["t_ns"] < l["t_ns"] <= p["t_end_ns"] - 1e9 and l["a_to_b"].get("rate_pps")]
        acc["rate_min"], acc["rate_max"] = (min(rates), max(rates)) if rates else (None, None)
        st = lambda key: s1["a_to_b"].get(key, 0) - s0["a_to_b"].get(key, 0)
        acc["stall_pct"] = 100 * st("stall_ns") / 1e9 / span if span else None
        acc["stalls"] = st("stalls")
        acc["longest_stall_ms"] = s1["a_to_b"].get("longest_stall_ns", 0) / 1e6
        return acc

    def sim_trace(self, pattern, pps, jitter_ms, n, strategy="correlated"):
        """linkem-sim's delay (ns) of each of its first n packets. The trace keeps one row per
        nanosecond of departure time: a packet that order-keeping sends in the same
        nanosecond as the one before it has no row of its own; its delay is that departure
        minus its arrival (the correlated strategy keeps order, so rows come in arrival
        order)."""
        a = self.a
        path = f"{self.tmp}/sim-{strategy}-{pattern}-{pps}-{jitter_ms}.csv"
        rate = pps * 8 * FRAME * (2 if pattern == "sine" else 1)
        run([self.sim, "--strategy", strategy, "--mean-delay", "10ms", "--jitter",
             f"{jitter_ms}ms", "--half-life", "21ms", "--traffic-pattern", pattern, "--traffic-rate",
             f"{rate / 1e6:.9g}Mbit", "--frame-size", str(FRAME), "--period", f"{PERIOD_S:g}s",
             "--duration", f"{n / pps + 1.0:.6f}s", "--seed", str(a.seed), "--delay-series", path,
             "--delay-series-interval", "1ns", "-q"])
        if pattern == "sine":  # linkem's SineSource, rounded to ns as it is
            arrival = [round(t * 1e9) for t in sine_schedule(pps, n)]
        else:  # CbrSource
            arrival = [round(k * 1e9 / pps) for k in range(n)]
        out, j, last_dep = [None] * n, 0, None
        with open(path) as f:
            next(f)
            for line in f:
                dep, dl = (float(x) * 1e6 for x in line.split(","))  # ms -> ns
                arr = dep - dl
                while j < n and arrival[j] < arr - 0.5:
                    if last_dep is not None:
                        out[j] = last_dep - arrival[j]
                    j += 1
                if j >= n:
                    break
                out[j], last_dep = dl, dep
                j += 1
        return out


def sender_late(r):
    if "sender_late_pct" not in r:
        return "–"
    return f"{r['sender_late_pct']:.1f} ({r['sender_behind_max_ms']:.1f})"


def corr_text(r):
    c, rc = r.get("corr"), r.get("rank_corr")
    return "–" if c is None else f"{c:.3f} ({rc:.3f})"


def rate_k(r):
    if r["rate_min"] is None:
        return "–"
    return f"{r['rate_min'] / 1e3:.1f}-{r['rate_max'] / 1e3:.1f}"


def fmt(v, nd=2):
    return "–" if v is None else f"{v:+.{nd}f}"


def main_run(argv):
    linkemd, sim, me = argv[0], argv[1], os.path.abspath(__file__)
    ap = argparse.ArgumentParser(prog="measure-accuracy.sh --ports veth")
    ap.add_argument("--duration", dest="seconds", type=float, default=60, help="seconds per point")
    ap.add_argument("--warmup", type=float, default=1.0, help="s of flow not counted")
    ap.add_argument("--baseline-duration", dest="baseline_seconds", metavar="SECONDS",
                    type=float, default=5.0, help="seconds of the 0-delay run per rate")
    ap.add_argument("--pps", default="10000,50000", help="frames/s (sine: mean)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jitters", default="0.1,0.3,1,3", help="ms")
    ap.add_argument("--patterns", default="cbr")
    ap.add_argument("--strategies", default="correlated",
                    help="comma-separated, each point run once per strategy (e.g. "
                         "correlated,smooth)")
    ap.add_argument("--no-sim", action="store_true")
    ap.add_argument("--rt", type=int)
    ap.add_argument("--sender-rt", type=int, help="run the UDP sender SCHED_FIFO at this "
                    "priority (a loaded machine)")
    ap.add_argument("--probe", help="the UDP sender and receiver: linkem-udp-probe at PATH "
                    "(measure-accuracy.sh gives the build's), or 'python' for this file's own")
    ap.add_argument("--json")
    ap.add_argument("--keep", action="store_true", help="keep the temporary files")
    a = ap.parse_args(argv[2:])
    try:
        pps_list = [int(x) for x in a.pps.split(",")]
        jitters = [float(x) for x in a.jitters.split(",")]
    except ValueError:
        sys.exit("measure-accuracy: --pps takes integers (frames/s), --jitters numbers (ms), "
                 "comma-separated")
    patterns = a.patterns.split(",")
    strategies = a.strategies.split(",")
    if not set(strategies) <= {"correlated", "smooth", "uncorrelated", "reordered"}:
        sys.exit("measure-accuracy: --strategies takes correlated, smooth, uncorrelated, "
                 f"reordered (comma-separated), not '{a.strategies}'")
    if (a.seconds < 1 or a.warmup < 0.2 or not all(100 <= p <= 100000 for p in pps_list)
            or not all(x > 0 for x in jitters) or not set(patterns) <= {"cbr", "sine"}):
        sys.exit("measure-accuracy: --duration >= 1 (seconds), --warmup >= 0.2, --pps 100 .. 100000 "
                 "frames/s, --jitters > 0 ms, --patterns cbr,sine")
    if a.probe == "python":
        a.probe = None
    elif a.probe is not None and not (os.path.isfile(a.probe) and os.access(a.probe, os.X_OK)):
        sys.exit(f"measure-accuracy: --probe takes linkem-udp-probe's path or 'python'; "
                 f"'{a.probe}' is not an executable file")
    probe_name = "linkem-udp-probe" if a.probe else "python"
    print(f"measure-accuracy: UDP sender and receiver: "
          + (f"linkem-udp-probe ({a.probe})" if a.probe else
             "accuracy_veth.py's own (Python; behind its schedule at high rates)"),
          file=sys.stderr, flush=True)
    if os.geteuid() != 0:
        sys.exit("measure-accuracy: --ports veth needs root (namespaces, veth, af_packet)")
    R = Runner(a, linkemd, sim, me)
    atexit.register(R.cleanup)
    for sg in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sg, lambda *_: sys.exit(130))
    R.topo.create()
    rows, base = [], {}
    for pps in pps_list:
        print(f"measure-accuracy: veth, 0-delay baseline at {pps} frames/s, "
              f"{a.baseline_seconds:g} s ...", file=sys.stderr, flush=True)
        sec = a.seconds
        a.seconds = a.baseline_seconds
        p = R.point("cbr", pps, ["--distribution", "constant", "--mean-delay", "0ms",
                                 "--seed", str(a.seed)])
        a.seconds = sec
        skip = int(a.warmup * pps)
        v = sorted(d for s, d in zip(p["seqs"], p["delays"]) if s >= skip)
        if not v:
            sys.exit(f"measure-accuracy: no frame of the 0-delay run at {pps} frames/s arrived "
                     f"after the warm-up: {R.accounting(p)}")
        m, jitter = mean_jitter(v)
        q = lambda f: v[int(f * (len(v) - 1))]
        # The path's own offset and noise: median and the jitter (standard deviation) of a
        # normal law with the same quartiles, so that frames held in a stall of linkemd (which
        # belong to the measurement) do not count as the path's.
        base[pps] = {"mean_ns": m, "jitter_ns": jitter, "median_ns": q(0.5), "probe": probe_name,
                     "sender_late_pct": 100 * p["send"]["late_100us"] / p["count"],
                     "sender_behind_max_ms": p["send"]["behind_max_ns"] / 1e6,
                     "robust_jitter_ns": (q(0.75) - q(0.25)) / 1.349, **R.accounting(p)}
        for pattern in patterns:
            for j in jitters:
                for strategy in strategies:
                    print(f"measure-accuracy: veth, {strategy}, {pattern} {pps} frames/s, "
                      f"jitter {j:g} ms, "
                          f"{a.seconds:g} s ...", file=sys.stderr, flush=True)
                    p = R.point(pattern, pps, ["--strategy", strategy, "--mean-delay", "10ms",
                                               "--jitter", f"{j}ms", "--half-life", "21ms",
                                               "--seed", str(a.seed)])
                    acc = R.accounting(p)
                    skip = int(a.warmup * pps)
                    by_seq = {}
                    for s, d in zip(p["seqs"], p["delays"]):
                        by_seq.setdefault(s, d)
                    v = [by_seq[s] for s in sorted(by_seq) if s >= skip]
                    m, jitter = mean_jitter(v)
                    J = j * 1e6
                    if m is None:  # nothing arrived after the warm-up: the accounting says why
                        rows.append({"strategy": strategy, "pattern": pattern, "pps": pps, "jitter_ms": j,
                                     "seconds": a.seconds, "seed": a.seed, "mean_dev_pct": None,
                                     "jitter_dev_pct": None, **acc,
                                     "sender": p["send"], "receiver": p["recv"],
                                     "probe": probe_name})
                        print(f"measure-accuracy:   no frame after the warm-up: {acc}",
                              file=sys.stderr, flush=True)
                        continue
                    bm, b_jitter = base[pps]["median_ns"], base[pps]["robust_jitter_ns"]
                    m_link = m - bm
                    jitter_link = math.sqrt(max(jitter * jitter - b_jitter * b_jitter, 0.0))
                    r = {"strategy": strategy, "pattern": pattern, "pps": pps, "jitter_ms": j, "seconds": a.seconds,
                         "seed": a.seed, "raw_mean_ns": m, "raw_jitter_ns": jitter, "mean_ns": m_link,
                         "jitter_ns": jitter_link, "mean_dev_pct": 100 * (m_link - MEAN_NS) / MEAN_NS,
                         "jitter_dev_pct": 100 * (jitter_link - J) / J, "baseline": base[pps],
                         "cpu": p["cpu"], "lcores": p["lcores"], **acc,
                         "sender_behind_max_ms": p["send"]["behind_max_ns"] / 1e6,
                         "sender_late_pct": 100 * p["send"]["late_100us"] / p["count"],
                         "probe": probe_name}
                    if not a.no_sim and strategy != "correlated":
                        # smooth's delay is a function of the time since the first packet
                        # (linkemd's first probe, linkem-sim's first frame): the same law,
                        # over the same number of frames, but not aligned frame by frame.
                        simd = R.sim_trace(pattern, pps, j, p["count"], strategy)
                        sv = [d for d in simd[skip:] if d is not None]
                        sm, s_jitter = mean_jitter(sv)
                        r["sim_mean_dev_pct"] = 100 * (sm - MEAN_NS) / MEAN_NS if sm else None
                        r["sim_jitter_dev_pct"] = 100 * (s_jitter - J) / J if sm else None
                    elif not a.no_sim:
                        # The k-th UDP packet is linkemd's (probes + k)-th a_to_b packet. Until
                        # the rate estimator's first interval closes (T_min, 10 ms) the emulator
                        # holds its first delay and draws none: in linkemd that is the first probe
                        # (the next one comes later than T_min), in linkem-sim the flow's first
                        # `hold` packets. So UDP packet k meets the same draw as linkem-sim's
                        # packet k + off + hold - 1.
                        off = p["s0"]["a_to_b"]["packets_in"]
                        arrivals = (sine_schedule(pps, 4 * pps // 100 + 2) if pattern == "sine"
                                    else [k / pps for k in range(4 * pps // 100 + 2)])
                        hold = sum(1 for t in arrivals if t - arrivals[0] < T_MIN_S)
                        off = off + hold - 1 if off >= 1 else hold
                        simd = R.sim_trace(pattern, pps, j, off + p["count"])
                        sv = [simd[off + s] for s in sorted(by_seq)
                              if s >= skip and off + s < len(simd) and simd[off + s] is not None]
                        sm, s_jitter = mean_jitter(sv)
                        r["sim_mean_dev_pct"] = 100 * (sm - MEAN_NS) / MEAN_NS if sm else None
                        r["sim_jitter_dev_pct"] = 100 * (s_jitter - J) / J if sm else None
                        r["probes"] = p["s0"]["a_to_b"]["packets_in"]
                        r["sim_offset"] = off
                        lag_corr = {}
                        seq_ok = [s for s in sorted(by_seq) if s >= skip]
                        for lag in range(max(0, off - 2), off + 3):
                            pairs = [(by_seq[s], simd[lag + s]) for s in seq_ok[:200000]
                                     if lag + s < len(simd) and simd[lag + s] is not None]
                            lag_corr[lag] = pearson([x for x, _ in pairs], [y for _, y in pairs])
                        r["corr_by_lag"] = {str(l): c for l, c in lag_corr.items()}
                        pairs = [(by_seq[s], simd[off + s]) for s in seq_ok
                                 if off + s < len(simd) and simd[off + s] is not None]
                        r["corr"] = pearson([x for x, _ in pairs], [y for _, y in pairs])
                        # Spearman's: frames held in a stall are outliers for Pearson's, not here.
                        r["rank_corr"] = pearson(ranks([x for x, _ in pairs]),
                                                 ranks([y for _, y in pairs]))
                        r["corr_pairs"] = len(pairs)
                    rows.append(r)
                    print(f"measure-accuracy:   mean {fmt(r['mean_dev_pct'])} %, jitter "
                          f"{fmt(r['jitter_dev_pct'])} %, sim {fmt(r.get('sim_mean_dev_pct'))} / "
                          f"{fmt(r.get('sim_jitter_dev_pct'))} %, corr {corr_text(r)}, lost "
                          f"{r['lost']}, unexplained {r['unexplained_in']}/{r['unexplained_out']}, "
                          f"sender late {sender_late(r)}, "
                          f"stalls {fmt(r['stall_pct'])} %", file=sys.stderr, flush=True)

    print(f"Through veth pairs (net_af_packet): {', '.join(strategies)}, mean 10 ms, half-life 21 ms, seed "
          f"{a.seed}, {FRAME}-byte frames, {a.seconds:g} s per point after {a.warmup:g} s "
          f"warm-up" + ("" if a.rt is None else f", linkemd SCHED_FIFO {a.rt}") +
          f", UDP sender and receiver: {probe_name}" +
          "; deviations in % (a_to_b), measured from kernel receive stamps minus the 0-delay "
          "path (its median subtracted, its jitter from the quartiles subtracted in "
          "quadrature); rate: linkemd's estimate during the flow (min-max), which sets the "
          "correlation's alpha.\n")
    print("| frames/s | 0-delay path: median, jitter from the quartiles; mean, jitter (µs) "
          "| lost (ring, socket) | unexplained | stalls % (longest ms) |")
    print("|---|---|---|---|---|")
    for pps, b in base.items():
        print(f"| {pps} | {b['median_ns'] / 1e3:.1f}, {b['robust_jitter_ns'] / 1e3:.1f}; "
              f"{b['mean_ns'] / 1e3:.1f}, {b['jitter_ns'] / 1e3:.1f} | {b['lost']} "
              f"({b['ring_drops']}, {b['socket_drops']}) | {b['unexplained_in']} / "
              f"{b['unexplained_out']} | {b['stall_pct']:.2f} ({b['longest_stall_ms']:.1f}) |")
    print()
    print("| strategy | traffic | frames/s | jitter | mean dev: paper | linkem-sim | linkemd | "
          "jitter dev: paper | linkem-sim | linkemd | corr. with sim (rank) | rate (k/s) | "
          "lost (ring, socket) | reordered | stalls % (longest ms) | sender late % (max ms) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        j = r["jitter_ms"]
        pm, pj = PAPER.get((r["pattern"], int(j) if j == int(j) else j), (None, None))
        print(f"| {r['strategy']} | {r['pattern']} | {r['pps']} | {j:g} ms | {fmt(pm)} | "
              f"{fmt(r.get('sim_mean_dev_pct'))} | {fmt(r['mean_dev_pct'])} | {fmt(pj)} | "
              f"{fmt(r.get('sim_jitter_dev_pct'))} | {fmt(r['jitter_dev_pct'])} | "
              f"{corr_text(r)} | {rate_k(r)} | {r['lost']} ({r['ring_drops']}, "
              f"{r['socket_drops']}) | {r['out_of_order']} | {r['stall_pct']:.2f} "
              f"({r['longest_stall_ms']:.1f}) | {sender_late(r)} |")
    bad = [r for r in rows + list(base.values()) if r["unexplained_in"] or r["unexplained_out"]]
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"baseline": {str(k): v for k, v in base.items()}, "points": rows}, f,
                      indent=1)
    if bad:
        print(f"\nmeasure-accuracy: {len(bad)} run(s) lost frames no counter explains",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    elif len(sys.argv) == 7 and sys.argv[1] == "recv":
        recv(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        sys.exit(main_run(sys.argv[2:]))
    else:
        sys.exit(__doc__)
