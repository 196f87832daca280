#!/usr/bin/python3
"""One-way delay by the kernel's clock, independent of linkemd's (test_clock_delay.sh).

  udp_stamp.py recv BIND_IP PORT COUNT TIMEOUT_S OUT.json
  udp_stamp.py send DEST_IP PORT COUNT PPS

The sender puts a sequence number and its CLOCK_MONOTONIC send time (read right before
sendto) in each datagram. The receiver asks the kernel for a receive stamp per datagram
(SO_TIMESTAMPNS, CLOCK_REALTIME, taken as the frame enters the receiving namespace's stack)
and turns it into CLOCK_MONOTONIC with the REALTIME - MONOTONIC offset, read (tightest of
many pairings) at start and at end; the two offsets must agree (no clock step meanwhile).
It writes the delays' order statistics and its own lateness (user-space read time minus
kernel stamp: how long a datagram waited for this process) as JSON.
"""
import json
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts", "dataplane"))
from kernel_clock import (SO_TIMESTAMPNS, offset_realtime_minus_monotonic,  # noqa: E402
                          stamp_realtime_ns)

FMT = "!QQ"  # sequence, send time (CLOCK_MONOTONIC ns)
PAD = 64     # datagram payload bytes


def quantile(sorted_v, q):
    return sorted_v[int(q * (len(sorted_v) - 1))]


def recv(bind_ip, port, count, timeout_s, out):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.bind((bind_ip, port))
    s.settimeout(1.0)
    w0, off0 = offset_realtime_minus_monotonic()
    print("ready", flush=True)
    delays, late, seqs = [], [], []
    deadline = time.monotonic() + timeout_s
    while len(delays) < count and time.monotonic() < deadline:
        try:
            data, anc, _, _ = s.recvmsg(256, socket.CMSG_SPACE(16))
        except socket.timeout:
            continue
        got = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        stamp = stamp_realtime_ns(anc)
        if stamp is None or len(data) < 16:
            continue
        stamp -= off0
        seq, sent = struct.unpack_from(FMT, data)
        seqs.append(seq)
        delays.append(stamp - sent)
        late.append(got - stamp)
    w1, off1 = offset_realtime_minus_monotonic()
    res = {"received": len(delays), "distinct": len(set(seqs)),
           "offset_change_ns": off1 - off0, "offset_width_ns": max(w0, w1)}
    if delays:
        d, l = sorted(delays), sorted(late)
        res.update({"min_ns": d[0], "p10_ns": quantile(d, 0.1), "median_ns": quantile(d, 0.5),
                    "p90_ns": quantile(d, 0.9), "max_ns": d[-1],
                    "mean_ns": sum(d) / len(d),
                    "late_median_ns": quantile(l, 0.5), "late_p90_ns": quantile(l, 0.9),
                    "late_max_ns": l[-1]})
    with open(out, "w") as f:
        json.dump(res, f)


def send(dest_ip, port, count, pps):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    pad = bytes(PAD - struct.calcsize(FMT))
    period = 1_000_000_000 // pps
    start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    behind_max = 0
    for i in range(count):
        due = start + i * period
        while True:
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            if now >= due:
                break
            if due - now > 200_000:
                time.sleep((due - now - 100_000) / 1e9)
        behind_max = max(behind_max, now - due)
        s.sendto(struct.pack(FMT, i, time.clock_gettime_ns(time.CLOCK_MONOTONIC)) + pad,
                 (dest_ip, port))
    print(json.dumps({"sent": count, "behind_max_ns": behind_max}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "recv":
        recv(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
    elif len(sys.argv) == 6 and sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(__doc__)
