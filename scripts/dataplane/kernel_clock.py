"""Kernel receive stamps on CLOCK_MONOTONIC: shared by accuracy_veth.py (Table 4 through veth)
and tests/integration/udp_stamp.py (the constant-delay check of linkemd's clock).

A receiving socket with SO_TIMESTAMPNS gets a CLOCK_REALTIME stamp per datagram, taken as the
frame enters the namespace's stack; the sender stamps CLOCK_MONOTONIC. The REALTIME -
MONOTONIC offset turns one into the other: read as the tightest of many pairings, at start
and at end of a run (the two must agree: no clock step meanwhile).
"""
import socket
import struct
import time

# Linux's SO_TIMESTAMPNS (asm-generic/socket.h: 35, also the cmsg type); Python 3.11's socket
# module does not name it.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def offset_realtime_minus_monotonic(pairings=2000):
    """(width of the tightest pairing in ns, CLOCK_REALTIME - CLOCK_MONOTONIC in ns)."""
    best = None
    for _ in range(pairings):
        m0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        r = time.clock_gettime_ns(time.CLOCK_REALTIME)
        m1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        if best is None or m1 - m0 < best[0]:
            best = (m1 - m0, r - (m0 + (m1 - m0) // 2))
    return best


def stamp_realtime_ns(ancillary):
    """The SO_TIMESTAMPNS stamp (CLOCK_REALTIME ns) in recvmsg's ancillary data, or None."""
    for level, kind, cdata in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(cdata) >= 16:
            sec, nsec = struct.unpack("ll", cdata[:16])
            return sec * 1_000_000_000 + nsec
    return None
