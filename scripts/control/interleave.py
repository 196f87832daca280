#!/usr/bin/python3
"""Forwarding rate of two linkemd configurations under the same noise (Debian python3).

  interleave.py --linkemd PATH --slices N --slice SECONDS --work DIR [--rt PRIO]
                [--common "ARGS"] --a "ARGS" --b "ARGS" [--a-subscriber TELEMETRY]

Starts both linkemds at once (ARGS appended to --common; each gets --stats-json
--stats-interval 100ms and its own --file-prefix) and lets only one run at a time: the other
is held with SIGSTOP, and the two take turns for N slices of SECONDS each (after a's
warm-up: b, a, b, a, ...).
Both see the machine as it is during the same few seconds, so the slow drift of a shared
machine's speed (on a KVM guest it moves the rate by tens of percent between runs a minute
apart) cancels in the ratio. With --a-subscriber the `delay` topic of a's TELEMETRY
endpoint is taken as fast as it comes, by a process on CPU 0 (it idles while a is held, so
its samples/s are over the whole run, a's share of it about half).

A slice's rate: packets out of both directions between its stats lines from 0.3 s after
the resume (the backlog of the pause drained) to its last line. Each a slice is compared
with the mean of the b slices on both sides of it, so a trend favours neither; the figure
is the median of those ratios.
"""
import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dataplane"))
import bench_parse  # noqa: E402  (scripts/dataplane/bench_parse.py)


def segments(log):
    """Stats lines split where linkemd was held (a gap of more than 0.3 s)."""
    segs, cur = [], []
    for x in bench_parse.stats_lines(log)[0]:
        if cur and x["t_ns"] - cur[-1]["t_ns"] > 300e6:
            segs.append(cur)
            cur = []
        cur.append(x)
    if cur:
        segs.append(cur)
    return segs


def rate(seg):
    seg = [x for x in seg if x["t_ns"] - seg[0]["t_ns"] >= 300e6]
    if len(seg) < 3:
        return None
    dt = (seg[-1]["t_ns"] - seg[0]["t_ns"]) / 1e9
    return (bench_parse.packets_out(seg[-1]) - bench_parse.packets_out(seg[0])) / dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--linkemd", required=True)
    ap.add_argument("--slices", type=int, default=20)
    ap.add_argument("--slice", type=float, default=2.0)
    ap.add_argument("--work", required=True)
    ap.add_argument("--rt", type=int, default=0)
    ap.add_argument("--common", default="")
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--a-subscriber", default="")
    ap.add_argument("--a-companion", default="",
                    help="a command run on CPU 0 while a runs (held with it), e.g. a busy loop")
    o = ap.parse_args()
    if o.slices < 4 or o.slice < 1.0:
        sys.exit("interleave.py: --slices must be >= 4 and --slice >= 1 (seconds)")

    rt = ["chrt", "-f", str(o.rt)] if o.rt else []
    procs, logs = {}, {}
    # One at a time: a polling lcore under SCHED_FIFO leaves another on its CPU nothing, so
    # each is started alone and held (SIGSTOP) once it prints its first stats line.
    for name, args in (("b", o.b), ("a", o.a)):
        logs[name] = os.path.join(o.work, "interleave-%s.log" % name)
        cmd = rt + [o.linkemd] + shlex.split(o.common) + shlex.split(args) + [
            "--stats-json", "--stats-interval", "100ms", "--", "--file-prefix",
            "lkint-%d-%s" % (os.getpid(), name)]
        p = procs[name] = subprocess.Popen(cmd, stdout=open(logs[name], "w"),
                                           stderr=open(logs[name] + ".err", "w"),
                                           stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p.poll() is None and os.path.getsize(logs[name]) == 0:
            time.sleep(0.1)
        if os.path.getsize(logs[name]) == 0:
            for q in procs.values():
                q.kill()
            sys.exit("interleave.py: linkemd %s did not start; see %s.err" % (name, logs[name]))
        if name == "b":
            os.kill(p.pid, signal.SIGSTOP)
    sub = None
    if o.a_subscriber:
        pin = ["taskset", "-c", "0"] if subprocess.call(
            ["sh", "-c", "command -v taskset"], stdout=subprocess.DEVNULL) == 0 else []
        sub = subprocess.Popen(pin + rt + ["/usr/bin/python3", os.path.join(HERE, "bench_control.py"),
                                           "subscribe", o.a_subscriber,
                                           str(int(o.slices * o.slice * 1.5 + 30))],
                               stdout=open(os.path.join(o.work, "interleave-sub.out"), "w"))
    groups = {"a": [procs["a"].pid], "b": [procs["b"].pid]}
    comp = None
    if o.a_companion:
        comp = subprocess.Popen(["taskset", "-c", "0"] + shlex.split(o.a_companion),
                                stdout=subprocess.DEVNULL)
        groups["a"].append(comp.pid)

    def hold(name, sig):
        for pid in groups[name]:
            os.kill(pid, sig)

    time.sleep(2.0)  # warm-up of a
    order = []
    try:
        for i in range(o.slices):
            run, held = ("b", "a") if i % 2 == 0 else ("a", "b")
            hold(held, signal.SIGSTOP)
            hold(run, signal.SIGCONT)
            order.append(run)
            time.sleep(o.slice)
    finally:
        for n in groups:
            hold(n, signal.SIGCONT)
        for p in procs.values():
            p.send_signal(signal.SIGINT)
        for p in procs.values():
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
        if sub:
            sub.wait()
        if comp:
            comp.kill()
            comp.wait()

    # Each one's last segments are its slices (before them: b's start, a's start and
    # warm-up). Slice k of a ran between slices k and k + 1 of b.
    seg = {n: segments(logs[n]) for n in procs}
    ra = [rate(s) for s in seg["a"][-order.count("a"):]]
    rb = [rate(s) for s in seg["b"][-order.count("b"):]]
    ratios = []
    for k, x in enumerate(ra):
        near = [y for y in rb[k:k + 2] if y]
        if x and near:
            ratios.append(x / statistics.mean(near))
    res = {"a_mpps": [round(x / 1e6, 3) if x else None for x in ra],
           "b_mpps": [round(x / 1e6, 3) if x else None for x in rb],
           "ratios": [round(r, 4) for r in ratios]}
    if sub:
        lines = [l for l in open(os.path.join(o.work, "interleave-sub.out")) if l.startswith("{")]
        if lines:
            res["subscriber"] = json.loads(lines[-1])
    if ratios:
        q = sorted(ratios)
        res["median"] = round(statistics.median(q), 4)
        res["quartiles"] = [round(q[len(q) // 4], 4), round(q[(3 * len(q)) // 4], 4)]
    print(json.dumps(res))


if __name__ == "__main__":
    main()
