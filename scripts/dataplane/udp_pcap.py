#!/usr/bin/env python3
"""A pcap of 64-byte IPv4/UDP frames for the data-plane benchmarks (scripts/dataplane/common.sh,
bench_udp_pcap): udp_pcap.py OUT COUNT PORTS [per-frame]. Frame i: from 10.1.0.1 (per-frame:
10.1.(i / 256).(i % 256)) port 1024 + i, to 10.2.0.1 at PORTS[i % len(PORTS)] (a
comma-separated list), 18 zero bytes of payload, a valid IPv4 header checksum."""
import struct
import sys


def csum(b):
    s = sum((b[i] << 8) + b[i + 1] for i in range(0, len(b), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def main():
    if len(sys.argv) not in (4, 5) or (len(sys.argv) == 5 and sys.argv[4] not in ("", "per-frame")):
        sys.exit("usage: udp_pcap.py OUT COUNT PORTS [per-frame]")
    out, count = sys.argv[1], int(sys.argv[2])
    ports = [int(p) for p in sys.argv[3].split(",")]
    per_frame = len(sys.argv) == 5 and sys.argv[4] == "per-frame"
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(count):
            udp = struct.pack("!HHHH", 1024 + i, ports[i % len(ports)], 26, 0) + bytes(18)
            src = bytes([10, 1, i >> 8 & 255, i & 255]) if per_frame else bytes([10, 1, 0, 1])
            ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                                       src, bytes([10, 2, 0, 1])))
            ip[10:12] = struct.pack("!H", csum(ip))
            frame = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + bytes(ip) + udp
            f.write(struct.pack("<IIII", 0, i, len(frame), len(frame)) + frame)


if __name__ == "__main__":
    main()
