#!/usr/bin/python3
"""Helpers of scripts/bench-control.sh (Debian python3 with python3-zmq).

  bench_control.py roundtrip CONTROL N        -> set_link round trips: p50/p90/p99/max
  bench_control.py subscribe TELEMETRY SECONDS -> takes the `delay` topic as fast as it comes
  bench_control.py ratio RESULTS.jsonl         -> the on/off forwarding table
"""
import json
import os
import statistics
import sys
import time

import zmq


def wait_ready(endpoint, timeout=60.0):
    ctx = zmq.Context.instance()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = ctx.socket(zmq.REQ)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(endpoint)
        s.send_json({"v": 1, "id": 0, "method": "hello"})
        ok = s.poll(1000)
        if ok:
            r = s.recv_json()
            s.close(0)
            return r["result"]
        s.close(0)
    raise SystemExit("no answer from %s within %.0f s" % (endpoint, timeout))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def roundtrip(endpoint, n):
    wait_ready(endpoint)
    ctx = zmq.Context.instance()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(endpoint)

    def call(i, method, params=None):
        req = {"v": 1, "id": i, "method": method}
        if params is not None:
            req["params"] = params
        t0 = time.perf_counter()
        s.send(json.dumps(req).encode())
        if not s.poll(10000):
            raise SystemExit("no reply to %s %d" % (method, i))
        r = json.loads(s.recv())
        return time.perf_counter() - t0, r

    _, before = call(0, "get_stats")
    _, link = call(0, "get_link")
    gen = link["result"]["params_generation"]
    times, not_applied = [], 0
    for i in range(1, n + 1):
        dt, r = call(i, "set_link", {"mean_delay_us": 100 if i % 2 else 200})
        res = r.get("result")
        if res is None or res["params_generation"] != gen + i:
            raise SystemExit("set_link %d: %r" % (i, r))
        if not res["applied"]:
            not_applied += 1
        times.append(dt * 1e3)
    _, after = call(0, "get_stats")
    a, b = before["result"], after["result"]
    stall = max(b[d]["stall_ns"] - a[d]["stall_ns"] for d in ("a_to_b", "b_to_a"))
    longest = max(b[d]["longest_stall_ns"] for d in ("a_to_b", "b_to_a"))
    span = (b["t_ns"] - a["t_ns"]) / 1e9
    pin = sum(b[d]["packets_in"] - a[d]["packets_in"] for d in ("a_to_b", "b_to_a"))
    print("set_link round trip over %d changes (request sent -> reply after the data plane "
          "adopted them): p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms; %d not "
          "acknowledged within 2 s" % (n, pct(times, 50), pct(times, 90), pct(times, 99),
                                       max(times), not_applied))
    print("  under traffic: %.2f Mpps into the emulator (both directions) during the %.1f s; "
          "data-plane stalls %.2f %% of it, longest since start %.2f ms" % (
              pin / span / 1e6, span, 100 * stall / 1e9 / span, longest / 1e6))
    print(json.dumps({"p50_ms": pct(times, 50), "p99_ms": pct(times, 99), "max_ms": max(times),
                      "n": n, "mpps": pin / span / 1e6, "stalled_frac": stall / 1e9 / span}))


def subscribe(endpoint, seconds):
    ctx = zmq.Context.instance()
    s = ctx.socket(zmq.SUB)
    s.setsockopt(zmq.RCVHWM, 100000)
    s.setsockopt(zmq.SUBSCRIBE, b"delay")
    s.connect(endpoint)
    msgs = samples = gaps = 0
    last = None
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if not s.poll(200):
            continue
        _, body = s.recv_multipart()
        j = json.loads(body)
        msgs += 1
        for d in ("a_to_b", "b_to_a"):
            if d in j:
                samples += len(j[d]["samples"]["arrival_ns"])
        if last is not None and j["seq"] != last + 1:
            gaps += j["seq"] - last - 1
        last = j["seq"]
    el = time.monotonic() - t0
    print(json.dumps({"delay_msgs_per_s": msgs / el, "samples_per_s": samples / el,
                      "seq_gaps": gaps}))


def ratio(path):
    recs = [json.loads(x) for x in open(path) if x.strip()]
    rounds = sorted({r["round"] for r in recs})
    ratios = []
    print("%-6s %-26s %10s %16s %10s  %s" % ("round", "run", "Mpps", "per-s min..max",
                                             "stalled", "delay topic taken"))
    for rd in rounds:
        on = next((r for r in recs if r["round"] == rd and r["label"] == "on"), None)
        off = next((r for r in recs if r["round"] == rd and r["label"] == "off"), None)
        for r in (x for x in recs if x["round"] == rd):
            sub = r.get("subscriber") or {}
            print("%-6d %-26s %10s %16s %9.2f%%  %s" % (
                rd, "control+telemetry" if r["label"] == "on" else "--no-control",
                "%.3f" % (r["pps"] / 1e6) if r.get("pps") else "-",
                "%.2f..%.2f" % (r["pps_min"] / 1e6, r["pps_max"] / 1e6) if r.get("pps_min")
                else "-", 100 * (r.get("stalled_frac") or 0),
                "%.1f msg/s, %.0f samples/s, %d seq gaps" % (
                    sub["delay_msgs_per_s"], sub["samples_per_s"], sub["seq_gaps"])
                if sub else ""))
        if on and off and on.get("pps") and off.get("pps"):
            ratios.append(on["pps"] / off["pps"])
    if ratios:
        print()
        print("on / off per round: %s; median %.3f (target >= 0.97: %s)" % (
            ", ".join("%.3f" % x for x in ratios), statistics.median(ratios),
            "met" if statistics.median(ratios) >= 0.97 else "NOT met"))


def main(argv):
    if len(argv) == 4 and argv[1] == "roundtrip":
        roundtrip(argv[2], int(argv[3]))
    elif len(argv) == 4 and argv[1] == "subscribe":
        subscribe(argv[2], float(argv[3]))
    elif len(argv) == 3 and argv[1] == "ratio":
        ratio(argv[2])
    elif len(argv) == 3 and argv[1] == "wait":
        wait_ready(argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
