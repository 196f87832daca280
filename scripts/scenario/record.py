#!/usr/bin/python3
"""Plays a scenario in a running linkemd and records what its telemetry says (Debian python3).

  record.py --control EP --telemetry EP --scenario FILE --out DIR [--direction a_to_b]

Subscribes to linkemd's telemetry, loads and starts the scenario (load_scenario with a path,
start_scenario), starts the built-in traffic, and collects the `delay` samples until the
scenario has finished and half a second more. Writes into DIR:
  scheduled.csv  position_s,scheduled_ms   per sampled frame: its arrival in the scenario's
                 time, and the delay the emulator scheduled for it (docs/protocol.md, delay)
  measured.csv   position_s,measured_ms    per measured sample: the frame's send time in the
                 scenario's time, and the one-way delay the built-in traffic measured
  arrivals.txt   the arrival in ns since the scenario's start of every frame up to the
                 first report interval in which not every frame was sampled (a data-plane
                 stall put several in one burst), for linkem-sim --arrivals: its delays for
                 these frames are linkemd's (tests: LinkemSimGivesTheSameDelaySeries)
"""
import argparse
import json
import os
import sys
import time

import zmq


def call(sock, method, params=None, _id=[0]):
    _id[0] += 1
    sock.send_json({"v": 1, "id": _id[0], "method": method, "params": params or {}})
    reply = sock.recv_json()
    if "error" in reply:
        sys.exit(f"record.py: {method}: {reply['error']}")
    return reply["result"]


def jitter_copy(src, dst):
    """The built-in step-response with 2 ms of jitter at its start (its steps change only
    the mean): the scenario of docs/scenarios.md's figure."""
    s = json.load(open(src))
    s["name"] = "step-response-jitter"
    s["steps"][0]["set"]["jitter_us"] = 2000
    json.dump(s, open(dst, "w"), indent=1)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--jitter-copy":
        return jitter_copy(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser()
    ap.add_argument("--control", required=True)
    ap.add_argument("--telemetry", required=True)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--direction", default="a_to_b")
    a = ap.parse_args()
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.connect(a.telemetry)
    for t in (b"delay", b"event"):
        sub.setsockopt(zmq.SUBSCRIBE, t)
    req = ctx.socket(zmq.REQ)
    req.connect(a.control)
    call(req, "hello", {"client": "scenario-figure"})
    sub.recv_multipart()  # telemetry flows: the subscription is in place
    call(req, "load_scenario", {"path": os.path.abspath(a.scenario)})
    origin = call(req, "start_scenario")["origin_ns"]
    call(req, "set_traffic", {"pattern": "cbr", "running": True})
    scheduled, measured, intervals, finished = [], [], [], None
    while True:
        topic, body = sub.recv_multipart()
        m = json.loads(body)
        if topic == b"event" and m.get("kind") == "scenario" and m.get("action") == "finished":
            finished = m["t_ns"]
        if topic != b"delay":
            continue
        d = m.get(a.direction, {})
        s = d.get("samples", {})
        scheduled += zip(s.get("arrival_ns", []), s.get("scheduled_ns", []))
        if d.get("end_ns", 0) > 0:
            intervals.append((d["start_ns"], d["end_ns"], d["delay"]["count"]))
        ms = d.get("measured", {})
        measured += zip(ms.get("send_ns", []), ms.get("delay_ns", []))
        if finished is not None and m["t_ns"] > finished + 500_000_000:
            break
    call(req, "set_traffic", {"running": False})
    time.sleep(1)
    taken = call(req, "get_stats")[a.direction]["packets_in"]
    scheduled.sort()
    measured.sort()
    with open(os.path.join(a.out, "scheduled.csv"), "w") as f:
        f.write("position_s,scheduled_ms\n")
        for t, d in scheduled:
            f.write(f"{(t - origin) / 1e9:.9f},{d / 1e6:.6f}\n")
    with open(os.path.join(a.out, "measured.csv"), "w") as f:
        f.write("position_s,measured_ms\n")
        for t, d in measured:
            f.write(f"{(t - origin) / 1e9:.9f},{d / 1e6:.6f}\n")
    complete_to = intervals[-1][1] if intervals else 0
    for start, end, count in intervals:
        if sum(1 for t, _ in scheduled if start < t <= end) != count:
            complete_to = start
            break
    with open(os.path.join(a.out, "arrivals.txt"), "w") as f:
        for t, _ in scheduled:
            if t <= complete_to:
                f.write(f"{t - origin}\n")
    print(f"record.py: every frame sampled up to {(complete_to - origin) / 1e9:.2f} s")
    print(f"record.py: {a.direction}: {len(scheduled)} scheduled samples of the {taken} frames "
          f"the data plane took, {len(measured)} measured samples")


if __name__ == "__main__":
    main()
