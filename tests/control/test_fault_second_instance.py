#!/usr/bin/python3
"""Fault: a second linkemd on what a running one holds (docs/reliability.md, "Faults as
tests"). A first linkemd runs; a second is started on
- the same ipc:// control endpoint (ZeroMQ alone would replace the first's socket file),
- the same ipc:// telemetry endpoint,
- the same tcp:// control endpoint,
- (as root, in a network namespace of its own) the same kernel interfaces as ports, with
  endpoints of its own.
Each time the second must exit with code 2 within 60 s, its stderr naming the endpoint or the
port and saying it is in use, and the first must still answer hello on its control endpoint
with its own instance_id (and, for the ports, still run).

Usage: test_fault_second_instance.py LINKEMD
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile

import harness as h

NAME = "control.fault_second_instance"
VIRTUAL = ["--port-a", "virtual", "--port-b", "virtual", "--workers", "shared"]


def free_tcp_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def second(cmd, what, must, timeout=60):
    """Runs the second linkemd; checks exit code 2 and that stderr holds every string of
    `must`. Returns its stderr."""
    h.log(NAME, "%s: %s" % (what, " ".join(cmd)))
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise h.Fail("%s: the second linkemd still ran after %d s (not refused)" % (what, timeout))
    err = p.stderr.decode(errors="replace")
    last = [l for l in err.splitlines() if l.strip()][-1:] or ["(nothing)"]
    h.log(NAME, "%s: exit %d: %s" % (what, p.returncode, last[0]))
    if p.returncode != 2:
        raise h.Fail("%s: the second linkemd exited with %d, expected 2; stderr:\n%s" % (
            what, p.returncode, err[-1500:]))
    for m in must:
        if m not in err:
            raise h.Fail("%s: stderr does not say %r:\n%s" % (what, m, err[-1500:]))
    return err


def still_first(lk, what):
    c = h.Client(lk.control, timeout=10.0)
    try:
        hello = c.call("hello", {"client": "test fault_second_instance"})
    finally:
        c.close()
    if hello["instance_id"] != lk.hello["instance_id"]:
        raise h.Fail("%s: the control endpoint answers as instance %s, the first is %s" % (
            what, hello["instance_id"], lk.hello["instance_id"]))
    if not lk.alive():
        raise h.Fail("%s: the first linkemd died" % what)


def endpoints(binary, work):
    with h.Linkemd(binary, "first", VIRTUAL) as lk:
        base = [binary] + VIRTUAL + ["--stats-interval", "0"]
        eal = ["--", "--file-prefix", "lkfault-%d-2" % os.getpid()]
        what = "same ipc control endpoint"
        second(base + ["--control", lk.control, "--telemetry", "ipc://%s/t2" % work] + eal,
               what, ["'%s'" % lk.control, "listens there"])
        still_first(lk, what)
        what = "same ipc telemetry endpoint"
        second(base + ["--control", "ipc://%s/c2" % work, "--telemetry", lk.telemetry] + eal,
               what, ["'%s'" % lk.telemetry, "listens there"])
        still_first(lk, what)

    port = free_tcp_port()
    tcp = "tcp://127.0.0.1:%d" % port
    with h.Linkemd(binary, "first_tcp", VIRTUAL, control=tcp,
                   telemetry="tcp://127.0.0.1:%d" % free_tcp_port()) as lk:
        what = "same tcp control endpoint"
        second([binary] + VIRTUAL + ["--stats-interval", "0", "--control", tcp, "--telemetry",
                                     "ipc://%s/t3" % work, "--", "--file-prefix",
                                     "lkfault-%d-3" % os.getpid()],
               what, ["'%s'" % tcp, "in use"])
        still_first(lk, what)


def interfaces(binary, work):
    if os.geteuid() != 0 or not shutil.which("ip"):
        h.log(NAME, "same interfaces: not checked (needs root and ip)")
        return
    ns = "lkfault%d" % os.getpid()
    if subprocess.run(["ip", "netns", "add", ns], stderr=subprocess.DEVNULL).returncode != 0:
        h.log(NAME, "same interfaces: not checked ('ip netns add' failed)")
        return
    try:
        nsx = ["ip", "netns", "exec", ns]
        for cmd in (["ip", "link", "add", "lkf0", "type", "veth", "peer", "name", "lkf1"],
                    ["ip", "link", "set", "lkf0", "up"], ["ip", "link", "set", "lkf1", "up"]):
            subprocess.run(nsx + cmd, check=True)
        ports = ["--port-a", "lkf0", "--port-b", "lkf1", "--workers", "shared"]
        with h.Linkemd("ip", "first_iface", ["netns", "exec", ns, binary] + ports) as lk:
            what = "same interfaces"
            second(nsx + [binary] + ports + [
                "--stats-interval", "0", "--control", "ipc://%s/c4" % work, "--telemetry",
                "ipc://%s/t4" % work, "--", "--file-prefix", "lkfault-%d-4" % os.getpid()],
                what, ["--port-a lkf0", "interface lkf0 is in use by another linkemd",
                       "pid %d" % lk.proc.pid])
            still_first(lk, what)
    finally:
        subprocess.run(["ip", "netns", "delete", ns])


def run():
    h.require_zmq()
    binary = sys.argv[1]
    work = tempfile.mkdtemp(prefix="linkem-second-")
    try:
        endpoints(binary, work)
        interfaces(binary, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        for n in (2, 3, 4):
            shutil.rmtree("/var/run/dpdk/lkfault-%d-%d" % (os.getpid(), n), ignore_errors=True)


if __name__ == "__main__":
    h.main(NAME, run)
