#!/usr/bin/python3
"""The check of scripts/demo.sh: does linkemd --demo do what it says?

    demo-check.py CONTROL TELEMETRY PID [--window SECONDS] [--settle SECONDS]

Waits until the linkemd with process id PID answers on CONTROL (up to 60 s), lets the link
settle, then reads its telemetry (docs/protocol.md, `delay` and `stats`) for a window and
compares, per direction, what must agree: the one-way delay the built-in traffic measured
from the frames themselves, and the emulator's own account of the same time, taken from
the same messages over every packet: the delay it drew + its wait (spacer queueing and
order) + its lateness. They agree within 1 % or 100 us, whichever is larger, or the check
fails. It also needs traffic both ways. Then it prints, per direction, the configured and
the measured delay, jitter and loss, and why they differ; and how much the machine
disturbed the run (the data plane's stalls, the CPU waits of linkemd's threads, the load).

A run the machine disturbed (the data plane stalled, linkemd's threads waited for a CPU,
the hypervisor took CPU time, the load exceeded the CPUs) that disagrees is not judged: a
frame that arrives while the data plane does not run waits in the port's ring outside the
emulator's account, so the difference says nothing about linkem. Only an undisturbed run
that disagrees fails.

Exit status: 0 passed, 1 failed (an undisturbed run disagreed, or no traffic: the output
says what), 2 linkemd exited or never answered, 3 disturbed, not judged (the output names
what disturbed it).
"""

import argparse
import json
import math
import os
import sys
import time

import zmq

DIRS = ("a_to_b", "b_to_a")
TOLERANCE_FRACTION = 0.01  # of the account
TOLERANCE_NS = 100e3


class Stats:
    """Count, mean and sum of squared deviations; merges RunningStats JSON objects."""

    def __init__(self):
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def add_json(self, j):
        n = j.get("count", 0) if j else 0
        if n == 0:
            return
        mean, jitter = j["mean_ns"], j.get("jitter_ns", 0.0)
        total = self.n + n
        delta = mean - self.mean
        self.m2 += jitter * jitter * n + delta * delta * self.n * n / total
        self.mean += delta * n / total
        self.n = total

    def jitter(self):
        """The population standard deviation (over n), as jitter_ns."""
        return math.sqrt(self.m2 / self.n) if self.n > 1 else 0.0


class Wait:
    """The `wait` object (spacer and order wait of every queued packet), merged."""

    def __init__(self):
        self.n, self.spacer, self.order = 0, 0.0, 0.0

    def add_json(self, j):
        n = j.get("count", 0) if j else 0
        if n == 0:
            return
        self.n += n
        self.spacer += j["spacer_mean_ns"] * n
        self.order += j["order_mean_ns"] * n

    def spacer_mean(self):
        return self.spacer / self.n if self.n else 0.0

    def order_mean(self):
        return self.order / self.n if self.n else 0.0


class Direction:
    def __init__(self):
        self.delay, self.lateness, self.measured = Stats(), Stats(), Stats()
        self.wait = Wait()
        self.has_wait = False


def ms(ns):
    return f"{ns / 1e6:.3f} ms"


def signed_ms(ns):
    return f"{ns / 1e6:+.3f} ms"


def pct(part, whole):
    return part / whole * 100 if whole else float("nan")


def fmt_rate(bps):
    for unit, f in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= f:
            return f"{bps / f:g} {unit}"
    return f"{bps:g} bit/s"


def average_loss(p):
    """The configured loss rate of a direction's parameters (get_link)."""
    model = p.get("loss_model", "none")
    if model == "bernoulli":
        return p["loss_probability"]
    if model == "gilbert_elliott":
        gp, gr = p["ge_p"], p["ge_r"]
        if gp == 0:
            return p["ge_loss_good"]
        if gr == 0:
            return p["ge_loss_bad"]
        return (gr * p["ge_loss_good"] + gp * p["ge_loss_bad"]) / (gp + gr)
    return 0.0


def configured_line(p):
    parts = [f"{p['mean_delay_us'] / 1e3:g} ms"]
    if p["jitter_us"] > 0:
        parts[0] += f" ± {p['jitter_us'] / 1e3:g} ms"
        parts.append(p["strategy"] + (f" (half-life {p['half_life_us'] / 1e3:g} ms)"
                                      if p["strategy"] == "correlated" else ""))
    if p["limiter"] == "spacer":
        parts.append(f"spacer {fmt_rate(p['rate_bps'])}")
    elif p["limiter"] == "policer":
        parts.append(f"policer {fmt_rate(p['rate_bps'])}")
    loss = average_loss(p)
    if loss > 0:
        parts.append(f"loss {loss * 100:g} %" + (" (Gilbert-Elliott)"
                                                 if p["loss_model"] == "gilbert_elliott" else ""))
    return ", ".join(parts)


class Linkemd:
    def __init__(self, control, pid):
        self.ctx = zmq.Context()
        self.control, self.pid, self.id = control, pid, 0

    def alive(self):
        try:
            os.kill(self.pid, 0)
            return True
        except OSError:
            return False

    def call(self, method, timeout_ms=2000):
        """The result, None when no reply came in time (a new socket each time: a lost
        reply costs nothing)."""
        s = self.ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(self.control)
        self.id += 1
        s.send_json({"v": 1, "id": self.id, "method": method})
        reply = s.recv_json() if s.poll(timeout_ms) else None
        s.close()
        if reply is not None and "error" in reply:
            print(f"demo: {method}: {reply['error'].get('message', reply['error'])}")
            sys.exit(2)
        return reply["result"] if reply else None

    def sched(self):
        """Per thread of linkemd: (name, time waiting for a CPU in ns), from
        /proc/PID/task/*/schedstat (its second field); {} where the kernel has none."""
        out = {}
        base = f"/proc/{self.pid}/task"
        try:
            tids = os.listdir(base)
        except OSError:
            return out
        for tid in tids:
            try:
                with open(f"{base}/{tid}/comm") as f:
                    name = f.read().strip()
                with open(f"{base}/{tid}/schedstat") as f:
                    wait = int(f.read().split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if tid == str(self.pid):
                role = "control"
            elif name.startswith(("rte-worker-", "lcore-worker-")):
                role = "data plane"
            elif name == "linkem-traffic":
                role = "traffic generator"
            else:
                role = "other threads"
            out[tid] = (role, wait)
        return out


def steal_ns():
    """CPU time the hypervisor took from this VM (all CPUs, /proc/stat), in ns; None if
    unknown."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) * 1e9 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def cpu_waits(before, after):
    """Time each role's threads waited for a CPU between two sched() readings, in ns."""
    waits = {}
    for tid, (role, w1) in after.items():
        w0 = before.get(tid, (role, 0))[1]
        waits[role] = waits.get(role, 0) + max(0, w1 - w0)
    return waits


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("control")
    ap.add_argument("telemetry")
    ap.add_argument("pid", type=int)
    ap.add_argument("--window", type=float, default=10.0,
                    help="seconds of telemetry compared (default 10)")
    ap.add_argument("--settle", type=float, default=1.0,
                    help="seconds to let the link settle first (default 1)")
    args = ap.parse_args()
    d = Linkemd(args.control, args.pid)

    t0 = time.monotonic()
    link = None
    while link is None:
        if not d.alive() or time.monotonic() - t0 > 60:
            print("demo: linkemd " + ("exited" if not d.alive() else
                                      f"did not answer on {args.control} within 60 s"))
            sys.exit(2)
        link = d.call("get_link", 500)
    up = time.monotonic()
    traffic = d.call("get_traffic") or {}
    if not traffic.get("available") or not traffic.get("running"):
        print("demo: check FAILED: linkemd's built-in traffic is not running: " + str(traffic))
        sys.exit(1)
    dirs = [x for x in DIRS if x in link]
    print(f"demo: linkemd answers on {args.control} ({up - t0:.1f} s after its start); "
          f"measuring {args.window:g} s of its built-in traffic ({traffic['frames_per_s']:g} "
          f"frames/s of {traffic['frame_size_bytes']} B each way) after {args.settle:g} s "
          f"to settle", flush=True)

    sub = d.ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.connect(args.telemetry)
    for topic in (b"delay", b"stats"):
        sub.setsockopt(zmq.SUBSCRIBE, topic)

    def messages(until):
        while time.monotonic() < until:
            if not d.alive():
                print("demo: linkemd exited")
                sys.exit(2)
            if sub.poll(200):
                topic, body = sub.recv_multipart()
                yield topic.decode(), json.loads(body)

    for _ in messages(up + args.settle):
        pass
    # The window: every delay message in it, the stats messages at its ends.
    start = time.monotonic()
    sched0, steal0, load0 = d.sched(), steal_ns(), os.getloadavg()
    acc = {x: Direction() for x in dirs}
    first_stats = last_stats = None
    delay_msgs, lost_msgs, last_seq = 0, 0, None
    for topic, m in messages(start + args.window):
        if topic == "stats":
            first_stats = first_stats or m
            last_stats = m
            continue
        if last_seq is not None and m["seq"] > last_seq + 1:
            lost_msgs += m["seq"] - last_seq - 1
        last_seq = m["seq"]
        delay_msgs += 1
        for x in dirs:
            dm = m.get(x, {})
            a = acc[x]
            a.delay.add_json(dm.get("delay"))
            a.lateness.add_json(dm.get("lateness"))
            a.measured.add_json(dm.get("measured_delay"))
            if "wait" in dm:
                a.has_wait = True
                a.wait.add_json(dm["wait"])
    span = time.monotonic() - start
    sched1, steal1, load1 = d.sched(), steal_ns(), os.getloadavg()
    link_after = d.call("get_link") or link

    if first_stats is None or last_stats is None or delay_msgs == 0:
        print(f"demo: check FAILED: no telemetry from {args.telemetry} within "
              f"{args.window:g} s")
        sys.exit(1)
    t_span = (last_stats["t_ns"] - first_stats["t_ns"]) or 1

    # Per direction: the comparison, then configured against measured and why.
    failed, lines = [], []
    for x in dirs:
        a, p = acc[x], link[x]
        s0, s1 = first_stats[x], last_stats[x]
        tr0, tr1 = s0.get("traffic", {}), s1.get("traffic", {})
        same_run = tr0.get("run") == tr1.get("run")
        sent = tr1.get("sent", 0) - (tr0.get("sent", 0) if same_run else 0)
        received = tr1.get("received", 0) - (tr0.get("received", 0) if same_run else 0)
        ooo = tr1.get("out_of_order", 0) - (tr0.get("out_of_order", 0) if same_run else 0)
        pin = s1["packets_in"] - s0["packets_in"]
        lost = s1["drops_loss"] - s0["drops_loss"]
        # the other causes' drops_<cause> counters, by cause (docs/glossary.md, Drop causes)
        other_drops = {k[len("drops_"):]: s1[k] - s0.get(k, 0) for k in sorted(s1)
                       if k.startswith("drops_") and k != "drops_loss" and s1[k] - s0.get(k, 0)}
        if a.measured.n < 100 or received <= 0:
            failed.append(x)
            lines.append(f"  {x}: no traffic: {a.measured.n} frames measured, {received} "
                         f"received of {sent} sent in {span:.1f} s")
            continue
        account = a.delay.mean + a.wait.spacer_mean() + a.wait.order_mean() + a.lateness.mean
        apart = a.measured.mean - account
        allowed = max(TOLERANCE_FRACTION * account, TOLERANCE_NS)
        ok = abs(apart) <= allowed and a.has_wait
        if not ok:
            failed.append(x)
        want, want_jitter = p["mean_delay_us"] * 1e3, p["jitter_us"] * 1e3
        got, got_jitter = a.measured.mean, a.measured.jitter()
        # The drawn delays' own wander: the mean of N correlated delays (weight alpha per
        # packet) has a standard deviation of jitter * sqrt((1 + alpha) / (1 - alpha) / N).
        alpha = s1.get("alpha", 0.0) if p["strategy"] == "correlated" else 0.0
        alpha = min(alpha, 1 - 1e-12)
        wander = want_jitter * math.sqrt((1 + alpha) / (1 - alpha) / max(a.delay.n, 1))
        lines.append(f"  {x}: configured {configured_line(p)}")
        measured = f"  {x}: measured   {ms(got)}"
        if want_jitter > 0 or got_jitter > 0:
            measured += f" ± {ms(got_jitter)}"
        measured += f" ({pct(got - want, want):+.2f} %" if want else " ("
        if want_jitter > 0:
            measured += f", jitter {pct(got_jitter - want_jitter, want_jitter):+.1f} %"
        measured += (f"), loss {pct(lost, pin):.2f} % ({lost} of {pin})"
                     + (f", {sum(other_drops.values())} dropped for other causes ("
                        + ", ".join(f"{c} {n}" for c, n in other_drops.items()) + ")"
                        if other_drops else "")
                     + f", {ooo} out of order; measured by the built-in traffic over "
                     f"{a.measured.n} frames")
        lines.append(measured)
        lines.append(f"      why {signed_ms(got - want)}: the delay the emulator drew "
                     f"{ms(a.delay.mean)} ({signed_ms(a.delay.mean - want)}"
                     + (f"; the correlated series' own wander over {span:.0f} s has a standard "
                        f"deviation of {ms(wander)}" if wander > 0 else "") + ")")
        lines.append(f"      + order wait {ms(a.wait.order_mean())} + spacer queueing "
                     f"{ms(a.wait.spacer_mean())} + lateness {ms(a.lateness.mean)} = the "
                     f"emulator's account {ms(account)}")
        verdict = "ok" if ok else "DISAGREE"
        lines.append(f"      measured {ms(got)}: {signed_ms(apart)} from the account (the "
                     f"ports' rings and the generator's polling; allowed ± {ms(allowed)}): "
                     f"{verdict}" + ("" if a.has_wait else
                                      " (this linkemd publishes no `wait`: too old?)"))

    # How much the machine disturbed the run.
    stall_ns = max(last_stats[x]["stall_ns"] - first_stats[x]["stall_ns"] for x in dirs)
    stalls = max(last_stats[x]["stalls"] - first_stats[x]["stalls"] for x in dirs)
    longest = max(last_stats[x]["longest_stall_ns"] for x in dirs)
    longest_new = any(last_stats[x]["longest_stall_ns"] > first_stats[x]["longest_stall_ns"]
                      for x in dirs)
    waits = cpu_waits(sched0, sched1)
    cpus = os.cpu_count() or 1
    window_ns = span * 1e9
    machine = (f"  machine: load {load1[0]:.2f} on {cpus} CPUs; the data plane stalled "
               f"{pct(stall_ns, t_span):.1f} % of the window ({stalls} stalls of >= 100 us, "
               f"the longest since start {longest / 1e6:.1f} ms"
               + (", in this window" if longest_new else "") + ")")
    if waits:
        machine += "; waited for a CPU: " + ", ".join(
            f"{role} {w / 1e6:.0f} ms ({pct(w, window_ns):.1f} %)"
            for role, w in sorted(waits.items(), key=lambda kv: -kv[1]) if w > 0)
    if steal0 is not None and steal1 is not None and steal1 > steal0:
        machine += f"; the hypervisor took {(steal1 - steal0) / 1e6:.0f} ms of CPU time"
    if lost_msgs:
        machine += f"; {lost_msgs} delay messages lost (the check was too slow to read them)"
    lines.append(machine)
    changed = link_after.get("params_generation") != link.get("params_generation")
    if changed:
        lines.append("  (the link's parameters changed during the window: the figures mix "
                     "two settings)")

    # What disturbed the run. A frame that arrives while the data plane is not polling waits
    # in the port's ring before the emulator stamps it, and a frame the generator does not
    # take at once waits in the other port's ring: both are outside the emulator's account.
    why = []
    if stall_ns >= 0.005 * t_span or longest_new and longest >= 1e6:
        # Evenly spaced frames that arrive during a stall of length S wait S / 2 on average,
        # so stalls S_i add sum(S_i^2) / (2 T) to the mean; with their total and count known,
        # sum(S_i^2) lies between total^2 / count and longest * total.
        low = stall_ns * stall_ns / max(stalls, 1) / (2 * t_span)
        high = min(longest, t_span) * stall_ns / (2 * t_span)
        why.append(f"the data plane stalled {pct(stall_ns, t_span):.1f} % of the time "
                   f"({stall_ns / 1e6:.0f} ms of the {t_span / 1e9:.1f} s, {stalls} stalls, the "
                   f"longest {longest / 1e6:.1f} ms): frames arriving meanwhile waited "
                   f"unstamped in the port's ring, {low / 1e6:.2f} to {high / 1e6:.2f} ms on "
                   f"average")
    for role in ("traffic generator", "data plane", "control"):
        w = waits.get(role, 0)
        if w >= 0.01 * window_ns:
            why.append(f"linkemd's {role} waited {w / 1e6:.0f} ms for a CPU "
                       f"({pct(w, window_ns):.1f} % of the window)")
    if steal0 is not None and steal1 is not None and steal1 - steal0 >= 0.01 * window_ns:
        why.append(f"CPU steal: the hypervisor took {(steal1 - steal0) / 1e6:.0f} ms of CPU "
                   f"time ({pct(steal1 - steal0, window_ns * cpus):.1f} % of {cpus} CPUs)")
    if load1[0] > cpus or load0[0] > cpus:
        why.append(f"the machine was busy: load average {load0[0]:.2f} -> {load1[0]:.2f} on "
                   f"{cpus} CPUs (other programs)")

    if not failed:
        print(f"demo: check passed: traffic both ways, and the delay the built-in traffic "
              f"measured is the emulator's own account of it (within 1 % or 100 us):")
        print("\n".join(lines))
        if why:
            print("demo: it passed although the machine was busy: " + "; ".join(why) + ".")
        sys.exit(0)
    if why:
        print(f"demo: check disturbed, not judged ({', '.join(failed)} outside 1 % or 100 us "
              f"of the emulator's account, or no traffic, while the machine disturbed the "
              f"run):")
        print("\n".join(lines))
        print("demo: what disturbed it: " + "; ".join(why) + ". The difference says nothing "
              "about linkem. Run it again on an idle machine, or give linkemd's data plane a "
              "CPU of its own (docs/dataplane.md, \"Stalls\").")
        sys.exit(3)
    print(f"demo: check FAILED ({', '.join(failed)}): the delay the built-in traffic "
          f"measured is not the emulator's account of it within 1 % or 100 us, or no "
          f"traffic, and nothing on this machine disturbed the run:")
    print("\n".join(lines))
    print("demo: nothing on this machine explains the difference (no stalls, no CPU "
          "waits, no steal, no load): this looks like a fault in linkem; please report it "
          "with linkemd's log.")
    sys.exit(1)

if __name__ == "__main__":
    main()
