#!/usr/bin/python3
"""Fuzzing the control socket under traffic: 10 000 random and mutated messages (bad JSON,
wrong types, huge numbers, NaN, unknown keys, binary junk, many frames, empty frames,
requests above 64 KiB), interleaved with well-formed requests. linkemd must stay up,
answer every message it receives (an error for each bad one, a result for each good
one), keep the parameters in force exactly as they were (every set_link sent is invalid),
keep every stats message balanced, and take a message above 1 MiB (ZMQ_MAXMSGSIZE) only by
dropping that client's connection. Bounded in time: at most ~25 s of sending.

Usage: test_fuzz.py LINKEMD [COUNT]
"""

import json
import random
import sys
import time

import harness as h

NAME = "control.fuzz"
METHODS = ["hello", "get_link", "set_link", "get_stats", "save_config", "load_config",
           "get_traffic", "set_traffic", "shutdown"]
READS = ["hello", "get_link", "get_stats", "get_traffic"]
JUNK_VALUES = [None, True, False, 0, -1, 1.5, 2 ** 64, -(2 ** 63) - 1, 10 ** 30, 1e308, -1e308,
               "", "x" * 300, "\u00e9\u4e2d", [], [1, 2], {}, {"a": 1}, "NaN", "1e999"]
LINK_KEYS = ["mean_delay_us", "jitter_us", "half_life_us", "rate_window_us", "rate_bps",
             "queue_limit_bytes", "policer_burst_bytes", "buffer_limit_packets",
             "loss_probability", "ge_p", "ge_r", "ge_loss_good", "ge_loss_bad", "seed",
             "strategy", "distribution", "limiter", "byte_accounting", "loss_model"]
# Values no link parameter accepts (each invalid for every key above).
INVALID = [-1, -1e300, 1e300, "fast", [], {}, None, True, 2 ** 70, -(2 ** 70), "NaN"]


def invalid_set_link(rng):
    """set_link params with at least one value that must be refused."""
    params = {}
    for _ in range(rng.randrange(0, 4)):
        # Possibly valid keys and values on top (they must not take effect either).
        params[rng.choice(LINK_KEYS)] = rng.choice([0, 1, 1000, 0.5, "none", "normal"])
    bad_key, bad_value = rng.choice(LINK_KEYS + ["mean_delay", "unknown_key", ""]), rng.choice(
        INVALID)
    where = rng.randrange(4)
    if where == 0:
        params[bad_key] = bad_value
    elif where == 1:
        params.setdefault("a_to_b", {})[bad_key] = bad_value
    elif where == 2:
        params["b_to_a"] = rng.choice([[], 5, "x", None, {bad_key: bad_value}])
    else:
        params["unknown_" + str(rng.randrange(100))] = 1
    return params


def mutate_bytes(rng, data):
    b = bytearray(data)
    for _ in range(rng.randrange(1, 6)):
        op = rng.randrange(4)
        if op == 0 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 1 and b:
            del b[rng.randrange(len(b)):]
        elif op == 2:
            b.insert(rng.randrange(len(b) + 1), rng.randrange(256))
        else:
            b += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
    return bytes(b)


def message(rng, i):
    """(parts, kind): kind 'good' expects a result, 'bad' an error, 'bad_or_good' either."""
    r = rng.random()
    good = {"v": 1, "id": i, "method": rng.choice(READS)}
    if r < 0.15:
        return [json.dumps(good).encode()], "good"
    if r < 0.30:  # an invalid set_link
        return [json.dumps({"v": 1, "id": i, "method": "set_link",
                            "params": invalid_set_link(rng)}).encode()], "bad"
    if r < 0.40:  # wrong types and values in the envelope
        req = dict(good)
        key = rng.choice(["v", "id", "method", "params"])
        req[key] = rng.choice(JUNK_VALUES)
        if key == "id":
            return [json.dumps(req).encode()], "any"
        return [json.dumps(req).encode()], "good" if req[key] == {} and key == "params" else "bad"
    if r < 0.48:  # unknown keys, in the envelope or in params of a method taking none
        req = dict(good)
        if rng.random() < 0.5:
            req["extra_" + str(rng.randrange(1000))] = rng.choice(JUNK_VALUES)
        else:
            req["method"] = rng.choice(["get_link", "get_stats", "save_config", "load_config"])
            req["params"] = {"k" + str(rng.randrange(100)): 1}
        return [json.dumps(req).encode()], "bad"
    if r < 0.56:  # unknown methods, unsupported versions
        req = dict(good)
        if rng.random() < 0.5:
            req["method"] = rng.choice(["set_delay", "", "HELLO", "hello ", "\x00", "a" * 500])
        else:
            req["v"] = rng.choice([0, 2, -1, 1000, 2 ** 40])
        return [json.dumps(req).encode()], "bad"
    if r < 0.64:  # not JSON: NaN, Infinity, huge exponents, truncation, comments
        text = rng.choice([
            '{"v":1,"id":%d,"method":"hello","params":{"x":NaN}}' % i,
            '{"v":1,"id":%d,"method":"set_link","params":{"mean_delay_us":Infinity}}' % i,
            '{"v":1,"id":%d,"method":"set_link","params":{"mean_delay_us":1e99999}}' % i,
            '{"v":1,"id":%d,"method":"hello"' % i,
            '{"v":1,"id":%d,"method":"hello"}}' % i,
            "// x\n{}", "", "null", "[]", "1", '"hello"', "{'v':1}",
            '{"v":1,"id":%d,"method":"hello","params":' % i + "[" * 5000 + "]" * 5000 + "}",
        ])
        return [text.encode()], "bad"
    if r < 0.80:  # mutated bytes of a good or set_link request
        # (of hello and get_stats only: no few-byte change turns them into a method that
        # changes something, as get_link -> set_link would)
        base = json.dumps({"v": 1, "id": i, "method": rng.choice(["hello", "get_stats"]),
                           "params": {"client": "fuzz"} if rng.random() < 0.5 else {}})
        base = base.replace('"get_stats", "params": {"client": "fuzz"}', '"get_stats"').encode()
        return [mutate_bytes(rng, base)], "any"
    if r < 0.88:  # binary junk
        return [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))], "bad"
    if r < 0.95:  # many frames / empty frames
        n = rng.randrange(2, 12)
        parts = [json.dumps(good).encode() for _ in range(n)]
        if rng.random() < 0.3:
            parts = [b""] + parts
        if rng.random() < 0.3:
            parts.append(b"")
        return parts, "bad"
    # above 64 KiB (below ZeroMQ's 1 MiB limit)
    big = json.dumps({"v": 1, "id": i, "method": "hello",
                      "params": {"client": "x" * rng.randrange(65536, 200000)}}).encode()
    return [big], "bad"


def run():
    h.require_zmq()
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    with h.Linkemd(sys.argv[1], "fuzz", [
            "--port-a", "virtual", "--port-b", "virtual", "--traffic-pattern", "cbr", "--workers",
            "shared", "--mean-delay", "3ms", "--jitter", "500us", "--telemetry-hz", "20"]) as lk:
        c = lk.client(timeout=10.0)
        link0 = c.call("get_link")
        sub = lk.subscriber(topics=(b"stats",))
        rng = random.Random(int(time.time()))
        seed = rng.randrange(1 << 30)
        rng = random.Random(seed)
        h.log(NAME, "random seed %d, %d messages" % (seed, count))
        sent = answered = results = errors = 0
        wrong = []
        stats = []
        t0 = time.monotonic()
        i = 0
        while i < count and time.monotonic() - t0 < 25.0:
            batch = []
            for _ in range(50):
                if i >= count:
                    break
                parts, kind = message(rng, i)
                c.send_raw(parts)
                batch.append((parts, kind))
                sent += 1
                i += 1
            got = 0
            while got < len(batch):
                rep = c.recv(10.0)
                if rep is None:
                    raise h.Fail("%d of a batch of %d messages unanswered after 10 s (sent %d)"
                                 % (len(batch) - got, len(batch), sent))
                got += 1
                answered += 1
                if len(rep) != 1:
                    wrong.append("a reply of %d parts" % len(rep))
                    continue
                try:
                    reply = json.loads(rep[0])
                except ValueError:
                    wrong.append("a reply that is not JSON: %r" % rep[0][:100])
                    continue
                if reply.get("v") != 1 or ("result" in reply) == ("error" in reply):
                    wrong.append("not a reply: %r" % rep[0][:200])
                    continue
                if "result" in reply:
                    results += 1
                else:
                    errors += 1
                    e = reply["error"]
                    if not (isinstance(e.get("code"), str) and e.get("message")):
                        wrong.append("an error without code or message: %r" % e)
            while True:
                m = sub.recv(0)
                if not m:
                    break
                stats.append(m[1])
        elapsed = time.monotonic() - t0
        # Every good request got a result and every bad one an error: count by kind.
        h.log(NAME, "sent %d messages in %.1f s: %d answered (%d results, %d errors)" % (
            sent, elapsed, answered, results, errors))
        if wrong:
            raise h.Fail("%d malformed replies, e.g. %s" % (len(wrong), wrong[:3]))
        if answered != sent:
            raise h.Fail("%d messages sent, %d answered" % (sent, answered))
        if sent < min(count, 2000):
            raise h.Fail("only %d messages in 25 s" % sent)

        # Checked one by one on a clean socket: each kind gets what it must.
        check = lk.client(timeout=5.0)
        rng2 = random.Random(seed + 1)
        for j in range(300):
            parts, kind = message(rng2, 10 ** 6 + j)
            check.send_raw(parts)
            rep = check.recv(5.0)
            if rep is None:
                raise h.Fail("no reply to %r" % parts[0][:200])
            reply = json.loads(rep[-1])
            if kind == "good" and "result" not in reply:
                raise h.Fail("well-formed %r answered %r" % (parts[0][:200], reply))
            if kind == "bad" and "error" not in reply:
                raise h.Fail("bad %r answered %r" % ([p[:200] for p in parts], reply))
        check.close()

        # Above 1 MiB: ZeroMQ drops the connection, no reply; the server goes on serving.
        huge = lk.client(timeout=2.0)
        huge.send_raw([b"x" * (2 << 20)])
        if huge.recv(1.0) is not None:
            raise h.Fail("a 2 MiB message was answered")
        huge.close()

        link1 = c.call("get_link")
        if link1 != link0:
            raise h.Fail("the parameters in force changed:\nbefore %s\nafter  %s" % (
                json.dumps(link0), json.dumps(link1)))
        final = c.call("get_stats")
        stats.append(final)
        unbalanced = [s["seq"] for s in stats if h.balance_error(s)]
        h.log(NAME, "%d stats messages during the fuzz, %d unbalanced; packets_in a_to_b %d" % (
            len(stats), len(unbalanced), final["a_to_b"]["packets_in"]))
        if unbalanced:
            raise h.Fail("unbalanced stats messages: seq %s" % unbalanced[:10])
        if final["a_to_b"]["packets_in"] == 0:
            raise h.Fail("no traffic flowed during the fuzz")
        if not lk.alive():
            raise h.Fail("linkemd died:\n" + lk.stderr()[-2000:])


if __name__ == "__main__":
    h.main(NAME, run)
