#!/usr/bin/python3
"""A client that joins late (docs/protocol.md, "A client that joins late"): it subscribes,
asks get_link and get_stats, and from then on applies only telemetry newer than those by
sequence number (stats) and generation (params_applied events). Checks that what it gets
then is consistent: stats messages newer than get_stats's seq come in order with counters
that never go back, the params_applied event of a later set_link carries a newer
generation, and the REQ socket (with its empty delimiter) is served like a DEALER.

Usage: test_late_subscriber.py LINKEMD
"""

import json
import sys
import time

import harness as h

NAME = "control.late_subscriber"
COUNTERS = ("packets_in", "packets_out", "bytes_in", "bytes_out") + h.DROPS


def req_call(endpoint, method, params=None):
    """One request on a REQ socket (the REQ socket adds the empty delimiter)."""
    s = h.context().socket(h.zmq.REQ)
    s.setsockopt(h.zmq.LINGER, 0)
    s.connect(endpoint)
    try:
        s.send_json({"v": 1, "id": "req-1", "method": method, "params": params or {}})
        if not s.poll(5000):
            raise h.Fail("REQ client: no reply to %s" % method)
        reply = s.recv_json()
    finally:
        s.close(0)
    if reply.get("id") != "req-1" or "result" not in reply:
        raise h.Fail("REQ client: reply %r" % reply)
    return reply["result"]


def run():
    h.require_zmq()
    with h.Linkemd(sys.argv[1], "late", [
            "--port-a", "virtual", "--port-b", "virtual", "--traffic-pattern", "cbr", "--workers",
            "shared", "--mean-delay", "2ms", "--telemetry-hz", "20"]) as lk:
        c = lk.client()
        # Some history the late client will not see.
        c.call("set_link", {"mean_delay_us": 3000})
        time.sleep(1.0)

        sub = lk.subscriber(topics=(b"stats", b"event"))
        # The subscription is in force once a message arrives.
        first = sub.wait_for("stats", 5.0)
        link = c.call("get_link")
        stats = c.call("get_stats")
        if link["params_generation"] != 1 or link["a_to_b"]["mean_delay_us"] != 3000:
            raise h.Fail("get_link: generation %r, mean_delay_us %r" % (
                link["params_generation"], link["a_to_b"]["mean_delay_us"]))
        for k in ("v", "instance_id", "seq", "t_ns"):
            if k not in stats:
                raise h.Fail("get_stats lacks the header key %r" % k)
        if stats["instance_id"] != first["instance_id"]:
            raise h.Fail("get_stats and telemetry disagree on instance_id")
        if stats["seq"] < first["seq"]:
            raise h.Fail("get_stats seq %d older than a message already received (%d)" % (
                stats["seq"], first["seq"]))
        # A change after the snapshot: its event must be newer than get_link's generation.
        r = req_call(lk.control, "set_link", {"b_to_a": {"mean_delay_us": 4000}})
        if r["params_generation"] != link["params_generation"] + 1:
            raise h.Fail("set_link after get_link: generation %r" % r["params_generation"])

        newer, older, events = [], 0, []
        # 2 s at 20 Hz is 40 messages; a loaded machine delays linkemd's main thread, so wait
        # (up to 20 s) for 10 and the event.
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline and (len(newer) < 10 or not events or
                                               time.monotonic() < deadline - 18.0):
            m = sub.recv(0.5)
            if not m:
                continue
            topic, body = m
            if topic == "stats":
                if body["seq"] > stats["seq"]:
                    newer.append(body)
                else:
                    older += 1
            elif topic == "event" and body["kind"] == "params_applied":
                events.append(body)
        sub.close()
        c.close()
        h.log(NAME, "get_stats seq %d; then %d newer stats messages (seq %s .. %s), %d older "
              "ones skipped; params_applied events: %s" % (
                  stats["seq"], len(newer), newer[0]["seq"] if newer else "-",
                  newer[-1]["seq"] if newer else "-", older,
                  [e["params_generation"] for e in events]))
        if len(newer) < 10:
            raise h.Fail("only %d stats messages newer than get_stats in 20 s at 20 Hz" %
                         len(newer))
        prev = stats
        for b in newer:
            if b["seq"] <= prev["seq"]:
                raise h.Fail("stats seq %d after %d" % (b["seq"], prev["seq"]))
            if b["t_ns"] < prev["t_ns"]:
                raise h.Fail("stats t_ns went back at seq %d" % b["seq"])
            for d in h.DIRECTIONS:
                for k in COUNTERS:
                    if b[d][k] < prev[d][k]:
                        raise h.Fail("%s.%s went back at seq %d" % (d, k, b["seq"]))
            if h.balance_error(b):
                raise h.Fail("stats seq %d: %s" % (b["seq"], h.balance_error(b)))
            prev = b
        if newer[-1]["b_to_a"]["params_generation"] != r["params_generation"]:
            raise h.Fail("the newest stats show generation %r, set_link gave %r" % (
                newer[-1]["b_to_a"]["params_generation"], r["params_generation"]))
        mine = [e for e in events if e["params_generation"] > link["params_generation"]]
        if len(mine) != 1 or mine[0]["params_generation"] != r["params_generation"]:
            raise h.Fail("params_applied events newer than get_link: %s" % json.dumps(mine))
        if not lk.alive():
            raise h.Fail("linkemd died")


if __name__ == "__main__":
    h.main(NAME, run)
