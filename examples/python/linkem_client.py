#!/usr/bin/python3
"""A linkemd client written from docs/protocol.md alone (pyzmq; Debian: python3-zmq).

Says hello, sets the mean delay of both directions with set_link, subscribes to the `delay`
telemetry and prints, per message and direction, the delay the emulator gave the sampled
packets (drawn) and their actual delay (departure - arrival, as the data plane measured it).

  examples/python/linkem_client.py [--control tcp://127.0.0.1:7710] [--telemetry ENDPOINT]
                                   [--mean-delay-ms 20] [--messages 20]
"""
import argparse, json, sys, zmq

ctx = zmq.Context()


def call(endpoint, method, params, rid):
    # REQ, one request per socket: a lost reply cannot block the next call (Lazy Pirate).
    req = ctx.socket(zmq.REQ)
    req.setsockopt(zmq.LINGER, 0)
    req.connect(endpoint)
    req.send_json({"v": 1, "id": rid, "method": method, "params": params})
    if not req.poll(5000):
        sys.exit(f"no answer from {endpoint} to {method}")
    reply = req.recv_json()
    req.close()
    if "error" in reply:
        e = reply["error"]
        sys.exit(f"{method} refused: {e['code']}: {e['message']} (field {e.get('field')})")
    return reply["result"]


ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--control", default="tcp://127.0.0.1:7710")
ap.add_argument("--telemetry", help="default: the endpoint hello names")
ap.add_argument("--mean-delay-ms", type=float, default=20.0)
ap.add_argument("--messages", type=int, default=20, help="delay messages to print")
args = ap.parse_args()

hello = call(args.control, "hello", {"client": "linkem_client.py"}, 1)
print(f"linkemd {hello['linkemd_version']}, instance {hello['instance_id']}, "
      f"directions {', '.join(hello['directions'])}")
sub = ctx.socket(zmq.SUB)
sub.connect(args.telemetry or hello["telemetry"]["endpoint"])
sub.subscribe(b"delay")
res = call(args.control, "set_link", {"mean_delay_us": args.mean_delay_ms * 1000}, 2)
print(f"generation {res['params_generation']}: mean_delay_us "
      + ", ".join(f"{d} {res[d]['mean_delay_us']}" for d in hello["directions"]))
for _ in range(args.messages):
    if not sub.poll(5000):
        sys.exit("no delay telemetry within 5 s")
    topic, body = sub.recv_multipart()
    msg = json.loads(body)
    for d in hello["directions"]:
        s = msg.get(d, {}).get("samples", {})
        given, actual = s.get("delay_ns", []), s.get("actual_ns", [])
        if actual:
            print(f"seq {msg['seq']} {d}: {len(actual)} samples, drawn "
                  f"{sum(given) / len(given) / 1e6:.3f} ms, actual "
                  f"{sum(actual) / len(actual) / 1e6:.3f} ms")
