#!/usr/bin/env python3
"""One benchmark run's figures from linkemd's --stats-json log (scripts/bench-queues.sh,
bench-classes.sh, bench-capture.sh): stats_rates.py LOG WARMUP CONFIG ROUND prints one JSON
line: a_to_b's packets_out per second, its drops (every drops_* key) and the capture's
records and missed records per second, over the stats lines after WARMUP seconds; the
buffer_full drops at the end; the intervals measured."""
import json
import sys


def main():
    log, warmup, cfg, rnd = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    rows = []
    for line in open(log, errors="replace"):
        if not line.startswith("{"):
            continue
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if "a_to_b" in j and "t_ns" in j:
            d, c = j["a_to_b"], j.get("capture") or {}
            rows.append((j["t_ns"] / 1e9, d["packets_out"],
                         sum(v for k, v in d.items() if k.startswith("drops_")),
                         c.get("records", 0), c.get("capture_missed", 0),
                         d.get("drops_buffer_full", 0)))
    t0 = rows[0][0] if rows else 0
    rows = [r for r in rows if r[0] - t0 >= warmup]
    dt = rows[-1][0] - rows[0][0] if len(rows) > 1 else 0

    def rate(i):
        return (rows[-1][i] - rows[0][i]) / dt if dt else 0

    print(json.dumps({"config": cfg, "round": rnd, "pps": rate(1),
                      "drops": rows[-1][2] - rows[0][2] if dt else None,
                      "records_per_s": rate(3), "missed_per_s": rate(4),
                      "drops_buffer_full": rows[-1][5] if rows else None,
                      "intervals": len(rows) - 1}))


if __name__ == "__main__":
    main()
