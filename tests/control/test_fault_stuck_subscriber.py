#!/usr/bin/python3
"""Fault: a telemetry subscriber that never reads (docs/reliability.md, "Faults as tests").

linkemd on virtual ports with its built-in generator (cbr, 10 000 frames/s each way) and
telemetry at 100 Hz. The frames the generator's receiving side counts (`traffic.received`,
both directions) per second of data-plane time (`t_ns` of get_stats) are counted twice, over
the same length of data-plane time: without and then with a SUB socket connected to every
topic that never reads (receive high-water mark 1). The PUB socket's high-water mark must
drop the messages for it rather than hold anything up, so:

- the rate with the stuck subscriber is at least 90 % of the rate without it;
- the control socket keeps answering (every get_stats within 5 s);
- when the subscriber finally reads, the `seq` of its stats messages shows the gap (a jump of
  more than 1), and after the gap it gets current messages again (`seq` within 200 of a
  get_stats asked after the read).

Bounded: about 25 s of linkemd running (the phases are 4 s and 14 s of data-plane time; the
stuck one lasts until linkemd has sent more than its high-water mark of 1000 messages).

Usage: test_fault_stuck_subscriber.py LINKEMD
"""

import sys
import time

import harness as h

NAME = "control.fault_stuck_subscriber"
BASE_S = 4.0
STUCK_S = 14.0


def received(stats):
    return sum(stats[d]["traffic"]["received"] for d in h.DIRECTIONS)


def count_phase(c, seconds):
    """Frames received per data-plane second over `seconds` of data-plane time, and the
    largest get_stats round trip seen (s)."""
    first = c.call("get_stats")
    worst = 0.0
    while True:
        time.sleep(0.5)
        t0 = time.monotonic()
        last = c.call("get_stats")
        worst = max(worst, time.monotonic() - t0)
        span = (last["t_ns"] - first["t_ns"]) / 1e9
        if span >= seconds:
            return (received(last) - received(first)) / span, span, worst


def run():
    h.require_zmq()
    with h.Linkemd(sys.argv[1], "stuck_sub", [
            "--port-a", "virtual", "--port-b", "virtual", "--traffic-pattern", "cbr",
            "--workers", "shared", "--mean-delay", "1ms", "--telemetry-hz", "100"]) as lk:
        c = lk.client(timeout=5.0)
        # The generator runs once frames come out.
        deadline = time.monotonic() + 30
        while received(c.call("get_stats")) == 0:
            if time.monotonic() > deadline:
                raise h.Fail("no frame received in 30 s")
            time.sleep(0.2)

        base, span_a, rtt_a = count_phase(c, BASE_S)
        h.log(NAME, "without the stuck subscriber: %.0f frames/s over %.1f s (get_stats at "
              "most %.3f s)" % (base, span_a, rtt_a))

        stuck = lk.track(h.Subscriber(lk.telemetry, topics=(b"",), hwm=1, rcvbuf=4096))
        with_stuck, span_b, rtt_b = count_phase(c, STUCK_S)
        h.log(NAME, "with a subscriber that never reads: %.0f frames/s over %.1f s (get_stats "
              "at most %.3f s)" % (with_stuck, span_b, rtt_b))

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
        gaps = [(a, b) for a, b in zip(seqs, seqs[1:]) if b != a + 1]
        h.log(NAME, "the stuck subscriber read %d stats messages, seq %s .. %s; gaps %s; "
              "get_stats seq %d after the read" % (
                  len(seqs), seqs[0] if seqs else "-", seqs[-1] if seqs else "-",
                  gaps[:5], now))
        if with_stuck < 0.9 * base:
            raise h.Fail("the data plane slowed with a subscriber that never reads: %.0f "
                         "frames/s, %.0f without (allowed: at least 90 %%)" % (with_stuck, base))
        if not gaps:
            raise h.Fail("no seq gap in %d stats messages of a subscriber that read none "
                         "for %.0f s: the PUB socket did not drop for it" % (len(seqs), span_b))
        if any(b < a for a, b in gaps):
            raise h.Fail("stats seq went back: %s" % gaps)
        if not seqs or seqs[-1] < now - 200:
            raise h.Fail("after reading, the subscriber's newest stats seq is %s, get_stats "
                         "says %d" % (seqs[-1] if seqs else None, now))
        if not lk.alive():
            raise h.Fail("linkemd died")


if __name__ == "__main__":
    h.main(NAME, run)
