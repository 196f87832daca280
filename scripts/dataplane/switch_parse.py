#!/usr/bin/python3
"""Parses a linkemd --stats-json log of scripts/bench-strategy-switch.sh (stdlib only).

  switch_parse.py LOG STRATEGIES LABEL

STRATEGIES holds the strategy of each parameter generation (0, 1, 2, ...) separated by
blanks. An interval between two stats lines counts for generation g only if both lines show
g in both directions; the first SKIP (2) such intervals of each generation are left out (the
switch moves the queued packets between the queues, and the new strategy's queue takes a
mean delay or two to reach its steady state). The rate of a
generation is packets_out of both directions over its counted intervals. Each reordered
generation is compared with the mean of the correlated generations on either side.
"""
import json
import statistics
import sys

SKIP = 2


def main(log, strategies_file, label):
    strategies = open(strategies_file).read().split()
    recs = []
    for line in open(log, errors="replace"):
        if line.startswith("{"):
            r = json.loads(line)
            if not r.get("final"):
                recs.append(r)
    dirs = [d for d in ("a_to_b", "b_to_a") if recs and d in recs[0]]

    def gen(r):
        g = {r[d].get("params_generation", -1) for d in dirs}
        return g.pop() if len(g) == 1 else None

    def out(r):
        return sum(r[d]["packets_out"] for d in dirs)

    pkts, secs, seen = {}, {}, {}
    for a, b in zip(recs, recs[1:]):
        g = gen(a)
        if g is None or g != gen(b):
            continue
        seen[g] = seen.get(g, 0) + 1
        if seen[g] <= SKIP:
            continue
        pkts[g] = pkts.get(g, 0) + out(b) - out(a)
        secs[g] = secs.get(g, 0) + (b["t_ns"] - a["t_ns"]) / 1e9
    rate = {g: pkts[g] / secs[g] / 1e6 for g in pkts if secs[g] > 0}
    ratios = []
    rows = []
    for g in sorted(rate):
        if g >= len(strategies) or strategies[g] != "reordered":
            continue
        nb = [rate[h] for h in (g - 1, g + 1)
              if h in rate and h < len(strategies) and strategies[h] == "correlated"]
        if not nb:
            continue
        ratios.append(rate[g] / statistics.mean(nb))
        rows.append((g, rate[g], statistics.mean(nb)))
    corr = [rate[g] for g in rate if g < len(strategies) and strategies[g] == "correlated"]
    reord = [rate[g] for g in rate if g < len(strategies) and strategies[g] == "reordered"]
    print(f"{label}: slices (generation: reordered Mpps / correlated neighbours Mpps):")
    print("  " + "  ".join(f"{g}: {r:.1f}/{c:.1f}" for g, r, c in rows))
    if not ratios:
        print(f"{label}: no complete slice pairs (is --slice long enough for 100 ms stats?)")
        return 1
    q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else [ratios[0]] * 3
    print(f"{label}: correlated median {statistics.median(corr):.2f} Mpps, reordered median "
          f"{statistics.median(reord):.2f} Mpps; reordered / correlated, median of "
          f"{len(ratios)} slices: {100 * statistics.median(ratios):.0f}% "
          f"(quartiles {100 * q[0]:.0f}-{100 * q[2]:.0f}%; target >= 90%: "
          f"{'met' if statistics.median(ratios) >= 0.9 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
