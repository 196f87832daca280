#!/usr/bin/env python3
"""The rounds of an alternated benchmark as a table of rates against a base configuration
(scripts/bench-queues.sh, bench-classes.sh, bench-capture.sh):

  ratio_table.py RESULTS.jsonl BASE "CONFIGS" [--target CONFIG=RATIO:TEXT]... [--extra FIELD=LABEL]...

RESULTS: stats_rates.py's lines. Per round: BASE's Mpps, each other configuration's Mpps and
its ratio to BASE of the same round, and for each --extra that configuration's FIELD in M/s;
then the median ratio per configuration, with its target (a ratio of at least RATIO) if
given."""
import argparse
import json
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("base")
    ap.add_argument("configs")
    ap.add_argument("--target", action="append", default=[], metavar="CONFIG=RATIO:TEXT")
    ap.add_argument("--extra", action="append", default=[], metavar="FIELD=LABEL")
    a = ap.parse_args()
    results, base, configs = a.results, a.base, a.configs.split()
    targets, extras = {}, []
    for t in a.target:
        key, _, text = t.partition("=")
        ratio, _, why = text.partition(":")
        targets[key] = (float(ratio), why)
    for e in a.extra:
        key, _, label = e.partition("=")
        extras.append((key, label))
    others = [c for c in configs if c != base]
    by = {}
    for line in open(results):
        r = json.loads(line)
        by.setdefault(r["round"], {})[r["config"]] = r
    head = ["round", "%s Mpps" % base] + ["%s Mpps (ratio)" % c for c in others]
    head += ["%s %s M/s" % (c, label) for c in others for _, label in extras]
    print("\n" + "   ".join(head))
    ratios = {c: [] for c in others}
    for rnd in sorted(by):
        b = by[rnd]
        x0 = b.get(base, {}).get("pps", 0)
        cells = ["%5d" % rnd, "%*.2f" % (len(head[1]), x0 / 1e6)]
        for i, c in enumerate(others):
            x = b.get(c, {}).get("pps", 0)
            q = x / x0 if x0 else float("nan")
            ratios[c].append(q)
            cells.append("%*s" % (len(head[2 + i]), "%.2f (%.3f)" % (x / 1e6, q)))
        for c in others:
            for field, label in extras:
                w = len("%s %s M/s" % (c, label))
                cells.append("%*.3f" % (w, b.get(c, {}).get(field, 0) / 1e6))
        print("   ".join(cells))

    def target(c):
        if c not in targets:
            return ""
        ratio, why = targets[c]
        return " (target >= %g%s)" % (ratio, ": " + why if why else "")

    print("median ratio against %s: " % base + ", ".join(
        "%s %.3f%s" % (c, statistics.median(ratios[c]), target(c)) for c in others))


if __name__ == "__main__":
    main()
