#!/usr/bin/python3
"""Fault: SIGHUP with a broken --config file (docs/reliability.md, "Faults as tests").

linkemd runs with --config FILE (5 ms constant delay both ways) on virtual ports with its
built-in generator. FILE is broken twice, and each time linkemd gets SIGHUP:
- not JSON at all;
- valid JSON with an out-of-range value (loss_probability 1.5).
Each time, within 10 s:
- stderr gets a line "SIGHUP: config not applied, nothing changed: ..." naming the file and
  the problem (the parse error's place; the key and what is allowed), and telemetry a
  request_refused event (source SIGHUP, method load_config, code invalid_params) that says
  the same;
- get_link returns the same generation and the same parameters as before;
- the traffic goes on: the generator's receiving side counts more frames, and the delay
  topic's emulated delay after the signal is still 5 ms (mean within 0.1 ms of 5 ms).
At last a good file and SIGHUP apply (a new generation, the file's delay): the signal was
read all along.

Usage: test_fault_sighup_bad_config.py LINKEMD
"""

import json
import os
import signal
import sys
import tempfile
import shutil
import time

import harness as h

NAME = "control.fault_sighup_bad_config"
REFUSED = "SIGHUP: config not applied, nothing changed: "


def wait_log(lk, count, timeout=10.0):
    """The `count`-th line of stderr that says the config was not applied."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [l for l in lk.stderr().splitlines() if REFUSED in l]
        if len(lines) >= count:
            return lines[count - 1]
        time.sleep(0.1)
    raise h.Fail("no line %r in stderr %.0f s after SIGHUP:\n%s" % (
        REFUSED, timeout, lk.stderr()[-1500:]))


def received(stats):
    return sum(stats[d]["traffic"]["received"] for d in h.DIRECTIONS)


EVENTS = []


def recv(sub, timeout):
    """The next delay message (topic, body), or None; events are kept in EVENTS."""
    m = sub.recv(timeout)
    if m and m[0] == "event":
        EVENTS.append(m[1])
        return None
    return m


def wait_event(sub, line, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for e in EVENTS:
            if e.get("kind") == "request_refused" and e.get("source") == "SIGHUP":
                EVENTS.remove(e)
                if e.get("method") != "load_config" or e.get("code") != "invalid_params" or \
                        e.get("severity") != "warning" or e.get("message") not in line:
                    raise h.Fail("%s: the event %s does not match the line %r" % (
                        what, json.dumps(e), line))
                return e
        recv(sub, 0.5)
    raise h.Fail("%s: no request_refused event from SIGHUP in %.0f s" % (what, timeout))


def check_in_force(lk, c, sub, before, what):
    after = c.call("get_link")
    if after != before:
        raise h.Fail("%s: get_link changed: %s -> %s" % (
            what, json.dumps(before)[:300], json.dumps(after)[:300]))
    n0 = received(c.call("get_stats"))
    t_sig = c.call("get_stats")["t_ns"]
    # Delay messages about the time after the signal.
    means = []
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline and len(means) < 10:
        m = recv(sub, 1.0)
        if not m or m[0] != "delay":
            continue
        for d in h.DIRECTIONS:
            part = m[1].get(d)
            if part and part["start_ns"] >= t_sig and part["delay"]["count"] > 0:
                means.append(part["delay"]["mean_ns"])
    n1 = received(c.call("get_stats"))
    h.log(NAME, "%s: generation %d kept; %d frames received since; emulated delay of %d "
          "messages after the signal: %.3f .. %.3f ms" % (
              what, after["params_generation"], n1 - n0, len(means),
              min(means) / 1e6 if means else -1, max(means) / 1e6 if means else -1))
    if n1 <= n0:
        raise h.Fail("%s: no frame received after the signal" % what)
    if len(means) < 10:
        raise h.Fail("%s: only %d delay messages in 10 s" % (what, len(means)))
    bad = [x for x in means if abs(x - 5e6) > 1e5]
    if bad:
        raise h.Fail("%s: emulated delay %.3f ms after the signal, the link's is 5 ms" % (
            what, bad[0] / 1e6))


def run():
    h.require_zmq()
    work = tempfile.mkdtemp(prefix="linkem-sighup-")
    cfg = os.path.join(work, "link.json")
    with open(cfg, "w") as f:
        json.dump({"mean_delay_us": 5000, "jitter_us": 0, "distribution": "constant"}, f)
    try:
        with h.Linkemd(sys.argv[1], "sighup_bad", [
                "--port-a", "virtual", "--port-b", "virtual", "--traffic-pattern", "cbr",
                "--workers", "shared", "--config", cfg]) as lk:
            c = lk.client(timeout=10.0)
            sub = lk.subscriber(topics=(b"delay", b"event"))
            sub.wait_for("delay", 10.0)
            before = c.call("get_link")
            if before["a_to_b"]["mean_delay_us"] != 5000 or before["b_to_a"]["jitter_us"] != 0:
                raise h.Fail("the config file was not applied at start: %s" %
                             json.dumps(before)[:300])

            cases = [
                ("not JSON", '{"mean_delay_us": 8000,', ["parse error", cfg]),
                ("out of range", json.dumps({"mean_delay_us": 8000, "loss_probability": 1.5}),
                 ["loss_probability", cfg]),
            ]
            for i, (what, text, must) in enumerate(cases, 1):
                with open(cfg, "w") as f:
                    f.write(text)
                lk.proc.send_signal(signal.SIGHUP)
                line = wait_log(lk, i)
                h.log(NAME, "%s: %s" % (what, line.strip()))
                for m in must:
                    if m not in line:
                        raise h.Fail("%s: the line does not name %r: %s" % (what, m, line))
                if line.count("nothing changed") != 1:
                    raise h.Fail("%s: 'nothing changed' more than once: %s" % (what, line))
                wait_event(sub, line, what)
                check_in_force(lk, c, sub, before, what)

            with open(cfg, "w") as f:
                json.dump({"mean_delay_us": 8000, "jitter_us": 0, "distribution": "constant"}, f)
            lk.proc.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 10.0
            while c.call("get_link")["params_generation"] == before["params_generation"]:
                if time.monotonic() > deadline:
                    raise h.Fail("a good file and SIGHUP changed nothing in 10 s:\n%s" %
                                 lk.stderr()[-1500:])
                time.sleep(0.1)
            if c.call("get_link")["a_to_b"]["mean_delay_us"] != 8000:
                raise h.Fail("a good file and SIGHUP: mean_delay_us not 8000")
            h.log(NAME, "a good file and SIGHUP: applied")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    h.main(NAME, run)
