#!/usr/bin/env python3
"""Writes the fuzz targets' seed inputs (tests/fuzz/*.cpp) into DIR/<target>/, from the
repository's real inputs: the JSON examples of docs/*.md, examples/, packaging/linkemd.json,
the built-in presets and scenarios, the docs' CSV and the forms the unit tests use.
scripts/fuzz.sh merges them into tests/fuzz/corpus/<target>/ (libFuzzer -merge=1 keeps only
those that add coverage).  Usage: seed_corpus.py REPO DIR"""
import hashlib, json, pathlib, re, sys

repo, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


JSON_TARGETS = ["config", "scenario_json", "request", "classes", "capture"]

# Every JSON block of the docs, every example and built-in: to every JSON target (the merge
# keeps what each one uses), and the parts that are a `classes` list or a link to those.
docs_json = []
for md in sorted((repo / "docs").glob("*.md")):
    for block in re.findall(r"```json\n(.*?)```", md.read_text(), re.S):
        docs_json.append(block)
files = sorted((repo / "examples").rglob("*.json")) + [repo / "packaging/linkemd.json"]
files += sorted((repo / "common/protocol/scenarios").glob("*.json"))
texts = docs_json + [f.read_text() for f in files if f.exists()]
presets = json.loads((repo / "common/protocol/presets/builtin.json").read_text())
for p in presets if isinstance(presets, list) else presets.get("presets", []):
    texts.append(json.dumps(p))
    if isinstance(p, dict) and "link" in p:
        texts.append(json.dumps(p["link"]))
for t in texts:
    for target in JSON_TARGETS:
        put(target, t)
    try:
        j = json.loads(t)
    except ValueError:
        continue
    if isinstance(j, dict) and isinstance(j.get("classes"), list):
        put("classes", json.dumps(j["classes"]))
        for c in j["classes"]:
            if isinstance(c, dict) and isinstance(c.get("match"), dict):
                put("classes", json.dumps(c["match"]))
    if isinstance(j, dict) and isinstance(j.get("params"), dict):
        put("config", json.dumps(j["params"]))
        put("capture", json.dumps(j["params"]))

# Requests of every method (docs/protocol.md's are in the docs' blocks above).
for m in ["hello", "get_link", "get_stats", "get_traffic", "get_scenario", "capture_status"]:
    put("request", json.dumps({"v": 1, "id": 1, "method": m}))
put("request", '{"v":1,"id":"a","method":"set_link","params":{"mean_delay_us":20000,'
               '"b_to_a":{"loss_probability":0.01},"limiter":"spacer","rate_bps":1e7}}')
put("request", '{"v":1,"id":2,"method":"set_traffic","params":{"running":true,"rate_bps":1e6}}')
put("request", '{"v":1,"id":3,"method":"capture_start","params":{"file":"x.pcapng",'
               '"points":["out","drop"],"snaplen_bytes":128,"duration_s":10}}')
put("request", '{"v":1,"id":4,"result":{"ok":true}}')
put("request", '{"v":1,"id":5,"error":{"code":"invalid_params","message":"m","field":"f"}}')

# Scenario CSV: docs/scenarios.md's and the unit tests' forms.
for md in sorted((repo / "docs").glob("*.md")):
    for block in re.findall(r"```csv\n(.*?)```", md.read_text(), re.S):
        put("scenario_csv", block)
put("scenario_csv", "# name: my-path\n# source: measured\n# loop: true\n# duration_s: 5\n"
                    "time_s,mean_delay_us,jitter_us,rate_bps,loss_probability,b_to_a.rate_bps\n"
                    "0,20000,2000,50e6,0.001,10e6\n1,24000,,45e6,,\n")
put("scenario_csv", "time_s,mean_delay_us,jitter_us,rate_bps,b_to_a.loss_probability\n"
                    "0,20000,2000,50e6,0.001\n1.5,24000,,45e6,\n3,,1000,,0.01\n")
put("scenario_csv", "time_s,distribution,jitter_us,limiter,queue\n0,constant,0,spacer,codel\n"
                    "1,,5,,fq_codel\n")

# mahimahi traces: mm-link's forms (a constant rate, bursts, a repeated timestamp).
put("trace", "".join(f"{i}\n" for i in range(1, 13)))
put("trace", "0\n0\n5\n5\n5\n10\n")
put("trace", "1\n")
put("trace", "3\r\n7\r\n")

# The units: the first byte picks the parser (units.cpp), the second the link flag.
for sel, t in [(0, "10ms"), (0, "1.5us"), (0, "250ns"), (0, "2s"), (0, "1min"),
               (1, "10Gbit"), (1, "100Mbit/s"), (1, "2.5G"), (1, "64kbit"), (1, "1e9bps"),
               (2, "1518"), (2, "64KiB"), (2, "1MB"), (2, "1GiB"),
               (3, "0.01"), (3, "1e-3"), (4, "100000")]:
    put("units", bytes([sel, 0]) + t.encode())
for i in range(64):
    for t in ["10ms", "1000p", "1MiB", "0.01", "spacer", "100Mbit", "12345", "codel"]:
        put("units", bytes([5, i]) + t.encode())

# Classes: prefixes as a match's a_net / b_net holds them.
for t in ["10.0.0.0/8", "2001:db8::/32", "10.1.2.3", "::1", "0.0.0.0/0", "fe80::1/128"]:
    put("classes", t)

# A match as text (linkemctl --match, the GUI's Classes table): docs/linkemctl.md's and
# docs/classes.md's forms, and every match object of the JSON above as text.
for t in ["protocol=udp,b_port=5060-5061", "protocol=tcp,b_port=22", "any", "*",
          "protocol=tcp,b_port=443; a_net=10.0.0.0/8", " protocol = udp , b_port=22 ",
          "ethertype=ipv6,b_net=2001:db8::/32,a_port=22,vlan=7,dscp=46",
          '{"protocol": "icmp"}', "protocol=icmp; any", "a_port=1024-65535,dscp=46"]:
    put("match_text", t)
for t in texts:
    try:
        j = json.loads(t)
    except ValueError:
        continue
    for c in (j.get("classes") or []) if isinstance(j, dict) else []:
        m = c.get("match") if isinstance(c, dict) else None
        for o in (m if isinstance(m, list) else [m]):
            if isinstance(o, dict):
                put("match_text", ",".join("%s=%s" % (k, v) for k, v in o.items()) or "any")

# Capture flags: one line per flag (points, snaplen, direction, class, duration, packets,
# max-size, files).
put("capture", "out,drop\n128\na_to_b\nvoip\n10s\n1000\n1MiB\n4\n")
put("capture", "in\n65535\n\n\n\n\n\n\n")
