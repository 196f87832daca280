#!/usr/bin/python3
"""linkem.lua (packaging/wireshark) on files linkem-sim --capture writes, read by tshark.

Every record's linkem.* fields equal its comment's keys: the *_ns fields exactly, the _ms
fields = ns / 1e6 and linkem.lateness_us = ns / 1e3 (to the double's precision), the names
(dir, class, point, drop) as written; a filter `linkem.drop == "loss"` finds exactly the
run's drops_loss records; a record without a linkem comment gets no linkem tree.

Usage: test_linkem_lua.py LINKEM_SIM LINKEM_LUA CLASS_FILE   (exit 77: tshark missing)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SIM, LUA, CLASSES = sys.argv[1:4]
FIELDS = ["dir", "class", "point", "worker", "seq", "arrived_ns", "delay_ns", "delay_ms",
          "limiter_wait_ns", "limiter_wait_ms", "order_wait_ns", "order_wait_ms",
          "scheduled_ns", "scheduled_ms", "lateness_ns", "lateness_us", "drop"]
SCALED = {"delay_ms": ("delay_ns", 1e6), "limiter_wait_ms": ("limiter_wait_ns", 1e6),
          "order_wait_ms": ("order_wait_ns", 1e6), "scheduled_ms": ("scheduled_ns", 1e6),
          "lateness_us": ("lateness_ns", 1e3)}
failures = []


def fail(msg):
    failures.append(msg)
    if len(failures) <= 20:
        print("FAIL:", msg)


def tshark(path, *args):
    cmd = ["tshark", "-X", "lua_script:" + LUA, "-r", path] + list(args)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def records(path, display_filter=None):
    args = ["-T", "fields", "-E", "separator=/t", "-e", "frame.comment"]
    for f in FIELDS:
        args += ["-e", "linkem." + f]
    if display_filter:
        args += ["-Y", display_filter]
    return tshark(path, *args)


def check_file(path):
    rows = records(path)
    if not rows:
        fail(path + ": no records")
    for row in rows:
        comment, values = row[0], dict(zip(FIELDS, row[1:]))
        kv = dict(item.split("=", 1) for item in comment.split()[1:] if "=" in item)
        for f in FIELDS:
            got = values.get(f, "")
            if f in SCALED:
                key, unit = SCALED[f]
                if key not in kv:
                    if got:
                        fail(f"{comment}: linkem.{f} = {got}, the comment has no {key}")
                    continue
                want = int(kv[key]) / unit
                if not got or abs(float(got) - want) > 1e-12 * max(1.0, abs(want)):
                    fail(f"{comment}: linkem.{f} = {got!r}, want {want}")
            elif got != kv.get(f, ""):
                fail(f"{comment}: linkem.{f} = {got!r}, want {kv.get(f, '')!r}")
    return len(rows)


def run_sim(*args):
    out = subprocess.run([SIM, "--json", "-q"] + list(args), check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def main():
    if shutil.which("tshark") is None:
        print("SKIPPED: tshark not installed (Debian: tshark)")
        return 77
    with tempfile.TemporaryDirectory(prefix="linkem-lua-") as tmp:
        # A plain run with every point and several drop causes and delay parts.
        plain = os.path.join(tmp, "plain.pcapng")
        r = run_sim("--duration", "200ms", "--traffic-rate", "50Mbit", "--mean-delay", "5ms",
                    "--jitter", "3ms", "--limiter", "policer", "--rate", "40Mbit",
                    "--loss-model", "bernoulli", "--loss-probability", "0.05",
                    "--buffer-limit", "20", "--utilization", "0.9",
                    "--capture-points", "in,out,drop", "--capture", plain)["results"][0]
        n = check_file(plain)
        if n != r["packets_in"] + r["packets_out"] + sum(
                r[k] for k in r if k.startswith("drops_")):
            fail(f"{plain}: {n} records with linkem fields")
        loss = records(plain, 'linkem.drop == "loss"')
        if len(loss) != r["drops_loss"] or r["drops_loss"] == 0:
            fail(f'linkem.drop == "loss": {len(loss)} records, drops_loss {r["drops_loss"]}')
        late = tshark(plain, "-Y", "linkem.lateness_us > 0", "-T", "fields", "-e", "frame.number")
        if not late:
            fail("linkem.lateness_us > 0 finds no record behind the virtual queue")
        # A class file: class names, both directions, the class drop cause.
        classes = os.path.join(tmp, "classes.pcapng")
        run_sim("--classes", CLASSES, "--duration", "1s", "--capture", classes)
        check_file(classes)
        if not records(classes, 'linkem.drop == "class" && linkem.class == "no-ipv6"'):
            fail("no record of the class no-ipv6 dropped by its class")
        # Records without a linkem comment (the same frames as pcap, which has no comments):
        # no linkem tree.
        bare = os.path.join(tmp, "bare.pcap")
        subprocess.run(["editcap", "-F", "pcap", plain, bare], check=True, capture_output=True)
        if tshark(bare, "-Y", "linkem", "-T", "fields", "-e", "frame.number"):
            fail("records without comments got a linkem tree")
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("linkem.lua: every field equals its comment's key")
    return 0


sys.exit(main())
