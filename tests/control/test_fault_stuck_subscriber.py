#!/usr/bin/python3
"""Fault: a telemetry subscriber that never reads (docs/reliability.md, "Faults as tests").

linkemd on virtual ports with its built-in generator (cbr, 10 000 frames/s each way) and
telemetry at 100 Hz. The frames the generator's receiving side counts (`traffic.received`,
both directions) per second of data-plane time (`t_ns` of get_stats), and their share of the
frames it sent (`traffic.sent`), are counted in three phases: 4 s without; with a SUB socket
connected to every topic that never reads (receive high-water mark 1, a 4 KiB kernel buffer)
until linkemd has sent 2000 stats messages (20 s at 100 Hz); 4 s without (after it read and
closed). The PUB socket's high-water mark must drop
the messages for it rather than hold anything up, so:

- the rate with the stuck subscriber is at least 90 % of the mean of the two without it
  (they bracket it: the machine's other load moves all three);
- the share of the frames sent that came out is within 0.01 of the smaller share without;
- the control socket keeps answering (every get_stats within 5 s);
- when the subscriber finally reads, the `seq` of its stats messages shows the gap (a jump of
  more than 1), and after the gap it gets current messages again (`seq` within 200 of a
  get_stats asked after the read).

Bounded: about 40 s of linkemd running on an idle machine; each phase gives up after 90 s.

Usage: test_fault_stuck_subscriber.py LINKEMD
"""

import sys
import time

import harness as h

NAME = "control.fault_stuck_subscriber"
BASE_S = 4.0
STUCK_S = 10.0
# Twice the PUB socket's high-water mark (1000 messages) in stats messages alone, beyond what
# the kernel's socket buffers and ZeroMQ's batches hold.
STUCK_MESSAGES = 2000


def counts(stats):
    """(frames sent, frames received) by the generator, both directions."""
    return tuple(sum(stats[d]["traffic"][k] for d in h.DIRECTIONS) for k in ("sent", "received"))


def count_phase(c, seconds, messages=0):
    """Over `seconds` of data-plane time and until linkemd sent `messages` stats messages:
    frames received per data-plane second, the share of the frames sent that came out, the
    span, and the largest get_stats round trip (s)."""
    first = c.call("get_stats")
    worst = 0.0
    deadline = time.monotonic() + 90
    while True:
        time.sleep(0.5)
        t0 = time.monotonic()
        last = c.call("get_stats")
        worst = max(worst, time.monotonic() - t0)
        span = (last["t_ns"] - first["t_ns"]) / 1e9
        if time.monotonic() > deadline:
            raise h.Fail("linkemd sent %d stats messages in 90 s" % (last["seq"] - first["seq"]))
        if span >= seconds and last["seq"] - first["seq"] >= messages:
            (s0, r0), (s1, r1) = counts(first), counts(last)
            return {"rate": (r1 - r0) / span, "share": (r1 - r0) / max(s1 - s0, 1),
                    "span": span, "rtt": worst}


def show(what, p):
    h.log(NAME, "%s: %.0f frames/s received over %.1f s, %.4f of those sent; get_stats at "
          "most %.3f s" % (what, p["rate"], p["span"], p["share"], p["rtt"]))


def run():
    h.require_zmq()
    with h.Linkemd(sys.argv[1], "stuck_sub", [
            "--port-a", "virtual", "--port-b", "virtual", "--traffic-pattern", "cbr",
            "--workers", "shared", "--mean-delay", "1ms", "--telemetry-hz", "100"]) as lk:
        c = lk.client(timeout=5.0)
        # The generator runs once frames come out.
        deadline = time.monotonic() + 30
        while counts(c.call("get_stats"))[1] == 0:
            if time.monotonic() > deadline:
                raise h.Fail("no frame received in 30 s")
            time.sleep(0.2)

        before = count_phase(c, BASE_S)
        show("without the stuck subscriber (before)", before)
        stuck = lk.track(h.Subscriber(lk.telemetry, topics=(b"",), hwm=1, rcvbuf=4096))
        during = count_phase(c, STUCK_S, STUCK_MESSAGES)
        show("with a subscriber that never reads", during)

        # It reads now: everything queued for it, then current messages.
        seqs = []
        t_end = time.monotonic() + 5.0
        while time.monotonic() < t_end:
            m = stuck.recv(0.5)
            if m is None:
                break
            if m[0] == "stats":
                seqs.append(m[1]["seq"])
        now = c.call("get_stats")["seq"]
        for _ in range(50):
            m = stuck.recv(1.0)
            if m and m[0] == "stats":
                seqs.append(m[1]["seq"])
                break
        stuck.close()
        gaps = [(a, b) for a, b in zip(seqs, seqs[1:]) if b != a + 1]
        h.log(NAME, "the stuck subscriber read %d stats messages, seq %s .. %s; gaps %s; "
              "get_stats seq %d after the read" % (
                  len(seqs), seqs[0] if seqs else "-", seqs[-1] if seqs else "-",
                  gaps[:5], now))
        after = count_phase(c, BASE_S)
        show("without the stuck subscriber (after)", after)

        # The machine's other load moves the rates of all phases: the phases before and after
        # bracket the one with the stuck subscriber.
        base = (before["rate"] + after["rate"]) / 2
        base_share = min(before["share"], after["share"])
        if during["rate"] < 0.9 * base:
            raise h.Fail("the data plane slowed with a subscriber that never reads: %.0f "
                         "frames/s, %.0f without (allowed: at least 90 %%)" % (
                             during["rate"], base))
        if during["share"] < base_share - 0.01:
            raise h.Fail("with a subscriber that never reads %.4f of the frames sent came "
                         "out, %.4f without" % (during["share"], base_share))
        if not gaps:
            raise h.Fail("no seq gap in %d stats messages of a subscriber that read none "
                         "for %.0f s: the PUB socket did not drop for it" % (
                             len(seqs), during["span"]))
        if any(b < a for a, b in gaps):
            raise h.Fail("stats seq went back: %s" % gaps)
        if not seqs or seqs[-1] < now - 200:
            raise h.Fail("after reading, the subscriber's newest stats seq is %s, get_stats "
                         "says %d" % (seqs[-1] if seqs else None, now))
        if not lk.alive():
            raise h.Fail("linkemd died")


if __name__ == "__main__":
    h.main(NAME, run)
