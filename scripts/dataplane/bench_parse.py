#!/usr/bin/python3
"""Parses forwarder logs for scripts/bench-dataplane.sh (Debian python3, stdlib only).

  bench_parse.py testpmd LOG WARMUP_S LABEL SIZE LCORES [ROUND]  -> one JSON record
  bench_parse.py linkemd LOG WARMUP_S LABEL SIZE LCORES [ROUND [WORKERS [RATE_BPS]]]
                                                          -> one JSON record
  bench_parse.py table RESULTS.jsonl                      -> the comparison table

A record holds the forwarded packets per second (both directions summed) averaged over the
measurement window, the per-interval min/max (to show the noise of a shared machine) and
what could have limited the rate (rx_nombuf: the mbuf pool ran dry). WORKERS: linkemd's
--workers; RATE_BPS: a spacer's rate, against which the bits sent per second are shown.
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


def stats_lines(log):
    """linkemd --stats-json's lines of LOG: (the periodic ones, the final one or None)."""
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
    return periodic, final


def packets_out(x):
    """Packets out of both directions in one stats line (counters since start)."""
    return sum((x.get(d) or {}).get("packets_out", 0) for d in ("a_to_b", "b_to_a"))


def linkemd(log, warmup):
    periodic, final = stats_lines(log)
    if not periodic:
        return {"samples": [], "rx_nombuf": None, "extra": {"error": "no stats lines"}}
    out = packets_out

    def cnt(x, key):
        return sum((x.get(d) or {}).get(key, 0) for d in ("a_to_b", "b_to_a"))

    def bits(x):
        return 8 * sum((x.get(d) or {}).get("bytes_out", 0) for d in ("a_to_b", "b_to_a"))

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
    # every drop cause's counter but the configured loss's: drops_<cause> (docs/glossary.md)
    drop_keys = sorted({k for d in ("a_to_b", "b_to_a") for k in (last.get(d) or {})
                        if k.startswith("drops_") and k != "drops_loss"})
    extra = {
        **{k: cnt(last, k) for k in drop_keys},
        "mean_exact": mean,
        "out_bps": (bits(last) - bits(first)) / dt if dt > 0 else None,
        "window_s": dt,
        "loss_frac": (cnt(last, "drops_loss") - cnt(first, "drops_loss")) / pin if pin else 0,
        "in_flight": cnt(last, "in_flight"),
        "delays_clamped": cnt(last, "delays_clamped"),
        "tx_failed": sum((p or {}).get("tx_failed", 0)
                         for p in (last.get("ports") or {}).values()),
        "final_seen": final is not None,
        # Share of the window in which the data plane did not poll (stalls of >= 100 us;
        # under --rt, mostly the kernel's real-time throttling). Directions polled by one
        # lcore see the same stalls: the larger share of the two.
        "stalled_frac": max(((last.get(d) or {}).get("stall_ns", 0) -
                             (first.get(d) or {}).get("stall_ns", 0)) / (dt * 1e9)
                            for d in ("a_to_b", "b_to_a")) if dt > 0 else None,
    }
    return {"samples": rates, "rx_nombuf": nombuf(last) - nombuf(first), "extra": extra}


def record(kind, log, warmup, label, size, lcores, workers="", rate_bps=None):
    r = testpmd(log, warmup) if kind == "testpmd" else linkemd(log, warmup)
    s = r["samples"]
    mean = r["extra"].get("mean_exact") or (statistics.fmean(s) if s else None)
    return {"forwarder": kind, "label": label, "size": size, "lcores": lcores,
            "workers": workers, "rate_bps": rate_bps,
            "pps": mean, "pps_min": min(s) if s else None, "pps_max": max(s) if s else None,
            "n": len(s), "rx_nombuf": r["rx_nombuf"], **r["extra"]}


def table(path):
    """One line per (frame size, forwarder/mode). With several rounds (the script's
    --rounds), a line shows the median over rounds, and each round's linkemd rate is
    compared with the testpmd rate of the same round (they ran minutes apart at most), the
    median of those ratios being the figure; "rounds min..max" shows the spread."""
    recs = [json.loads(x) for x in open(path) if x.strip()]
    for r in recs:
        r.setdefault("round", 0)
        r["per"] = r["pps"] / r["lcores"] if r.get("pps") else None
    base = {(r["size"], r["round"]): r["per"] for r in recs
            if r["forwarder"] == "testpmd" and r["per"]}
    groups = {}
    for r in recs:
        r.setdefault("workers", "")
        groups.setdefault((r["size"], r["label"], r["workers"]), []).append(r)
    rounds = len({r["round"] for r in recs})

    def med(xs):
        xs = [x for x in xs if x is not None]
        return statistics.median(xs) if xs else None

    def ratio(rs, ref):
        """Median over rounds of rate(rs) / rate(ref), ref being a list of records or the
        testpmd base, matched by round."""
        xs = []
        for r in rs:
            b = base.get((r["size"], r["round"])) if ref is None else next(
                (q["per"] for q in ref if q["round"] == r["round"]), None)
            if r["per"] and b:
                xs.append(r["per"] / b)
        return med(xs)

    # Scaling: a mode's rate per lcore against the same mode's with the fewest lcores (the
    # median over rounds of each); with --workers 1 2 4 8 that is total / (N x one worker's).
    fewest = {}
    for (size, label, _), rs in groups.items():
        per = med([r["per"] for r in rs])
        n = rs[0]["lcores"]
        if per and ((size, label) not in fewest or n < fewest[(size, label)][0]):
            fewest[(size, label)] = (n, per)

    hdr = ("frame", "forwarder / mode", "workers", "lcores", "total Mpps", "Mpps/lcore",
           "vs testpmd", "scaling", "per-s min..max" if rounds == 1 else "rounds min..max",
           "rx_nombuf", "notes")
    print("%-5s  %-44s %7s %6s %10s %10s %10s %7s %15s %9s  %s" % hdr)
    for (size, label, workers), rs in groups.items():
        per = med([r["per"] for r in rs])
        total = med([r["pps"] for r in rs])
        rel = ratio(rs, None)
        few = fewest.get((size, label))
        scaling = per / few[1] if per and few and few[0] < rs[0]["lcores"] else None
        last = rs[-1]
        notes = []
        if last.get("error"):
            notes.append(last["error"])
        loss = med([r.get("loss_frac") for r in rs])
        if loss:
            notes.append("loss %.3f%%" % (100 * loss))
        if last.get("in_flight"):
            notes.append("in_flight %d" % last["in_flight"])
        drop_keys = sorted(k for k in last if k.startswith("drops_"))
        for k in ["delays_clamped"] + drop_keys + ["tx_failed"]:
            if last.get(k):
                notes.append("%s %d" % (k, last[k]))
        stalled = med([r.get("stalled_frac") for r in rs])
        if stalled:
            notes.append("stalled %.1f%%" % (100 * stalled))
        rate = last.get("rate_bps")
        out = med([r.get("out_bps") for r in rs])
        if rate and out:
            notes.append("out %.4f Gbit/s = %.2f%% of the rate" % (out / 1e9, 100 * out / rate))
        if rounds == 1:
            lo, hi = last["pps_min"], last["pps_max"]
            spread = "%.1f..%.1f" % (lo / 1e6 / last["lcores"], hi / 1e6 / last["lcores"]) \
                if lo is not None else "-"
        else:
            xs = [r["per"] for r in rs if r["per"]]
            spread = "%.1f..%.1f" % (min(xs) / 1e6, max(xs) / 1e6) if xs else "-"
        nombuf = [r["rx_nombuf"] for r in rs if r["rx_nombuf"] is not None]
        print("%-5s  %-44s %7s %6s %10s %10s %10s %7s %15s %9s  %s" % (
            size, label[:44], workers or "-", rs[0]["lcores"],
            "%.2f" % (total / 1e6) if total else "-", "%.2f" % (per / 1e6) if per else "-",
            "%.0f%%" % (100 * rel) if rel else "-", "%.2f" % scaling if scaling else "-",
            spread, max(nombuf) if nombuf else "-", ", ".join(notes)))
    print()
    print("Targets (per data-plane lcore%s):" %
          ("" if rounds == 1 else "; medians over %d rounds of same-round ratios" % rounds))
    for (size, label, workers), rs in groups.items():
        few = fewest.get((size, label))
        if few and few[0] < rs[0]["lcores"] and "one way" in label:
            sc = med([r["per"] for r in rs]) / few[1]
            print("  %sB: %s, %s workers: total = %.2f x (%d x the %d-lcore rate) (target >= 0.85)"
                  ": %s" % (size, label[8:], workers, sc, rs[0]["lcores"] // few[0], few[0],
                            "met" if sc >= 0.85 else "NOT met"))
        rate, out = rs[-1].get("rate_bps"), med([r.get("out_bps") for r in rs])
        if rate and out:
            print("  %sB: %s, %s workers: out %.3f%% of the spacer's rate (target within 0.5%%)"
                  ": %s" % (size, label[8:], workers, 100 * out / rate,
                            "met" if abs(out / rate - 1) <= 0.005 else "NOT met"))
    for size in sorted({r["size"] for r in recs}):
        csl = next((g for (sz, lb, _), g in groups.items()
                    if sz == size and lb == "linkemd corr 10ms+-3ms + spacer + GE"), None)
        rel = ratio(csl, None) if csl else None
        if rel:
            print("  %sB: correlated + spacer + GE loss = %.0f%% of testpmd (target >= 50%%): %s"
                  % (size, 100 * rel, "met" if rel >= 0.5 else "NOT met"))
        for r_lbl, c_lbl in (("linkemd reordered 10ms+-3ms", "linkemd correlated 10ms+-3ms"),
                             ("linkemd reord 10ms+-3ms + spacer + GE",
                              "linkemd corr 10ms+-3ms + spacer + GE")):
            rr = next((g for (sz, lb, _), g in groups.items() if sz == size and lb == r_lbl), None)
            cc = next((g for (sz, lb, _), g in groups.items() if sz == size and lb == c_lbl), None)
            rel = ratio(rr, cc) if rr and cc else None
            if rel:
                print("  %sB: %s = %.0f%% of %s (target >= 90%%): %s"
                      % (size, r_lbl[8:], 100 * rel, c_lbl[8:],
                         "met" if rel >= 0.9 else "NOT met"))


def main(argv):
    if len(argv) == 3 and argv[1] == "table":
        table(argv[2])
        return 0
    if 7 <= len(argv) <= 10 and argv[1] in ("testpmd", "linkemd"):
        rate = float(argv[9]) if len(argv) == 10 and argv[9] else None
        rec = record(argv[1], argv[2], int(argv[3]), argv[4], int(argv[5]), int(argv[6]),
                     argv[8] if len(argv) >= 9 else "", rate)
        rec["round"] = int(argv[7]) if len(argv) >= 8 else 0
        print(json.dumps(rec))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
