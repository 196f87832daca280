#!/usr/bin/python3
"""Parses forwarder logs for scripts/bench-dataplane.sh (Debian python3, stdlib only).

  bench_parse.py testpmd LOG WARMUP_S LABEL SIZE LCORES   -> one JSON record on stdout
  bench_parse.py linkemd LOG WARMUP_S LABEL SIZE LCORES   -> one JSON record on stdout
  bench_parse.py table RESULTS.jsonl                      -> the comparison table

A record holds the forwarded packets per second (both directions summed) averaged over the
measurement window, the per-interval min/max (to show the noise of a shared machine) and
what could have limited the rate (rx_nombuf: the mbuf pool ran dry).
"""
import json
import re
import statistics
import sys


def testpmd(log, warmup):
    # With --stats-period 1 testpmd prints, per port and per period, "Tx-pps: N" measured
    # against its own TSC; the forwarded rate of a period is the sum over the ports.
    periods, cur, nports = [], [], None
    nombuf = 0
    for line in open(log, errors="replace"):
        if "Port statistics ====" in line:
            if cur:
                periods.append(cur)
            cur = []
        m = re.search(r"Tx-pps:\s+(\d+)", line)
        if m and cur is not None:
            cur.append(int(m.group(1)))
        m = re.search(r"RX-nombuf:\s+(\d+)", line)
        if m:
            nombuf = max(nombuf, int(m.group(1)))
    if cur:
        periods.append(cur)
    if periods:
        nports = max(len(p) for p in periods)
        periods = [p for p in periods if len(p) == nports]
    # The first period measures from start-up; drop it and the warm-up.
    rates = [sum(p) for p in periods[1 + warmup:]]
    if len(rates) > 1:
        rates = rates[:-1]  # the last one may be cut short by the stop
    return {"samples": rates, "rx_nombuf": nombuf, "extra": {}}


def linkemd(log, warmup):
    lines = []
    for line in open(log, errors="replace"):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            lines.append(json.loads(line))
        except ValueError:
            pass
    periodic = [x for x in lines if not x.get("final")]
    final = next((x for x in lines if x.get("final")), None)
    if not periodic:
        return {"samples": [], "rx_nombuf": None, "extra": {"error": "no stats lines"}}

    def out(x):
        return sum((x.get(d) or {}).get("packets_out", 0) for d in ("a_to_b", "b_to_a"))

    def cnt(x, key):
        return sum((x.get(d) or {}).get(key, 0) for d in ("a_to_b", "b_to_a"))

    def nombuf(x):
        return sum((p or {}).get("rx_nombuf", 0) for p in (x.get("ports") or {}).values())

    win = periodic[warmup:] if len(periodic) > warmup + 1 else periodic
    rates = []
    for a, b in zip(win, win[1:]):
        dt = (b["t_ns"] - a["t_ns"]) / 1e9
        if dt > 0:
            rates.append((out(b) - out(a)) / dt)
    first, last = win[0], win[-1]
    dt = (last["t_ns"] - first["t_ns"]) / 1e9
    mean = (out(last) - out(first)) / dt if dt > 0 else None
    pin = cnt(last, "packets_in") - cnt(first, "packets_in")
    extra = {
        "mean_exact": mean,
        "window_s": dt,
        "loss_frac": (cnt(last, "drops_loss") - cnt(first, "drops_loss")) / pin if pin else 0,
        "in_flight": cnt(last, "in_flight"),
        "delays_clamped": cnt(last, "delays_clamped"),
        "drops_buffer_full": cnt(last, "drops_buffer_full"),
        "drops_spacer": cnt(last, "drops_spacer"),
        "tx_failed": sum((p or {}).get("tx_failed", 0)
                         for p in (last.get("ports") or {}).values()),
        "final_seen": final is not None,
    }
    return {"samples": rates, "rx_nombuf": nombuf(last) - nombuf(first), "extra": extra}


def record(kind, log, warmup, label, size, lcores):
    r = testpmd(log, warmup) if kind == "testpmd" else linkemd(log, warmup)
    s = r["samples"]
    mean = r["extra"].get("mean_exact") or (statistics.fmean(s) if s else None)
    return {"forwarder": kind, "label": label, "size": size, "lcores": lcores,
            "pps": mean, "pps_min": min(s) if s else None, "pps_max": max(s) if s else None,
            "n": len(s), "rx_nombuf": r["rx_nombuf"], **r["extra"]}


def table(path):
    recs = [json.loads(x) for x in open(path) if x.strip()]
    base = {r["size"]: r["pps"] for r in recs if r["forwarder"] == "testpmd" and r["pps"]}
    by = {(r["size"], r["label"]): r for r in recs}
    hdr = ("frame", "forwarder / mode", "Mpps/lcore", "vs testpmd", "per-s min..max",
           "rx_nombuf", "notes")
    print("%-5s  %-34s %10s %10s %15s %9s  %s" % hdr)
    for r in recs:
        pps = r["pps"]
        per = pps / r["lcores"] if pps else None
        b = base.get(r["size"])
        notes = []
        if r.get("error"):
            notes.append(r["error"])
        if r.get("loss_frac"):
            notes.append("loss %.3f%%" % (100 * r["loss_frac"]))
        if r.get("in_flight"):
            notes.append("in_flight %d" % r["in_flight"])
        for k in ("delays_clamped", "drops_buffer_full", "drops_spacer", "tx_failed"):
            if r.get(k):
                notes.append("%s %d" % (k, r[k]))
        print("%-5s  %-34s %10s %10s %15s %9s  %s" % (
            r["size"], r["label"][:34],
            "%.2f" % (per / 1e6) if per else "-",
            "%.0f%%" % (100 * pps / r["lcores"] / b) if (pps and b) else "-",
            "%.1f..%.1f" % (r["pps_min"] / 1e6 / r["lcores"], r["pps_max"] / 1e6 / r["lcores"])
            if r["pps_min"] is not None else "-",
            r["rx_nombuf"] if r["rx_nombuf"] is not None else "-",
            ", ".join(notes)))
    print()
    print("Targets (per data-plane lcore):")
    for size in sorted({r["size"] for r in recs}):
        def get(label):
            r = by.get((size, label))
            return r["pps"] / r["lcores"] if r and r["pps"] else None
        b = base.get(size)
        csl = get("linkemd corr 10ms+-3ms + spacer + GE")
        if b and csl:
            print("  %sB: correlated + spacer + GE loss = %.0f%% of testpmd (target >= 50%%): %s"
                  % (size, 100 * csl / b, "met" if csl >= 0.5 * b else "NOT met"))
        for r_lbl, c_lbl in (("linkemd reordered 10ms+-3ms", "linkemd correlated 10ms+-3ms"),
                             ("linkemd reord 10ms+-3ms + spacer + GE",
                              "linkemd corr 10ms+-3ms + spacer + GE")):
            rr, cc = get(r_lbl), get(c_lbl)
            if rr and cc:
                print("  %sB: %s = %.0f%% of %s (target >= 90%%): %s"
                      % (size, r_lbl[8:], 100 * rr / cc, c_lbl[8:],
                         "met" if rr >= 0.9 * cc else "NOT met"))


def main(argv):
    if len(argv) == 3 and argv[1] == "table":
        table(argv[2])
        return 0
    if len(argv) == 7 and argv[1] in ("testpmd", "linkemd"):
        print(json.dumps(record(argv[1], argv[2], int(argv[3]), argv[4], int(argv[5]),
                                int(argv[6]))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
