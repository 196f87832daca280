#!/usr/bin/python3
"""Round-trip times as a client measures them, for test_classes_veth.sh (stdlib only).

  rtt_probe.py udp-echo BIND_IP PORT SECONDS        echo every datagram back, until SECONDS
  rtt_probe.py udp-rtt DEST_IP PORT COUNT PPS WAIT_S
      COUNT datagrams at PPS, each with its sequence number; replies read until WAIT_S after
      the last send. Prints JSON: sent, received, lost, RTT min / median / mean (ms).
  rtt_probe.py tcp-echo BIND_IP PORT SECONDS        echo one connection's bytes back
  rtt_probe.py tcp-rtt DEST_IP PORT COUNT
      one connection (TCP_NODELAY), COUNT 64-byte messages, each sent once the previous came
      back. Prints JSON: count, RTT min / median / mean (ms).
"""
import json
import socket
import statistics
import struct
import sys
import time


def summary(rtts):
    if not rtts:
        return {"min_ms": None, "median_ms": None, "mean_ms": None}
    return {"min_ms": min(rtts), "median_ms": statistics.median(rtts),
            "mean_ms": statistics.mean(rtts)}


def udp_echo(ip, port, seconds):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((ip, port))
    s.settimeout(0.2)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            data, peer = s.recvfrom(2048)
        except socket.timeout:
            continue
        s.sendto(data, peer)


def udp_rtt(ip, port, count, pps, wait_s):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.connect((ip, port))
    s.setblocking(False)
    sent_at, rtts = {}, {}
    start = time.monotonic()
    seq = 0
    last_send = None
    while True:
        now = time.monotonic()
        if seq < count and now >= start + seq / pps:
            sent_at[seq] = time.monotonic()
            s.send(struct.pack("!Q", seq) + bytes(56))
            seq += 1
            if seq == count:
                last_send = time.monotonic()
        try:
            while True:
                data = s.recv(2048)
                k = struct.unpack("!Q", data[:8])[0]
                if k in sent_at and k not in rtts:
                    rtts[k] = (time.monotonic() - sent_at[k]) * 1e3
        except BlockingIOError:
            pass
        if last_send is not None and (len(rtts) == count or time.monotonic() > last_send + wait_s):
            break
        time.sleep(0.0002)
    out = {"sent": count, "received": len(rtts), "lost": count - len(rtts)}
    out.update(summary(list(rtts.values())))
    print(json.dumps(out))


def tcp_echo(ip, port, seconds):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((ip, port))
    s.listen(1)
    s.settimeout(seconds)
    c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        data = c.recv(4096)
        if not data:
            break
        c.sendall(data)


def tcp_rtt(ip, port, count):
    c = socket.create_connection((ip, port), timeout=10)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    rtts = []
    msg = bytes(64)
    for _ in range(count):
        t = time.monotonic()
        c.sendall(msg)
        got = 0
        while got < len(msg):
            got += len(c.recv(len(msg) - got))
        rtts.append((time.monotonic() - t) * 1e3)
    c.close()
    out = {"count": len(rtts)}
    out.update(summary(rtts))
    print(json.dumps(out))


def main(a):
    if len(a) >= 4 and a[0] == "udp-echo":
        udp_echo(a[1], int(a[2]), float(a[3]))
    elif len(a) >= 6 and a[0] == "udp-rtt":
        udp_rtt(a[1], int(a[2]), int(a[3]), float(a[4]), float(a[5]))
    elif len(a) >= 4 and a[0] == "tcp-echo":
        tcp_echo(a[1], int(a[2]), float(a[3]))
    elif len(a) >= 4 and a[0] == "tcp-rtt":
        tcp_rtt(a[1], int(a[2]), int(a[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
