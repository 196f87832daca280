#!/usr/bin/python3
"""save_config, load_config, SIGHUP and shutdown against linkemd (docs/protocol.md, section 3):

- save_config writes the parameters in force into the --config file (every key, per
  direction, the seed in use), keeps its other keys, leaves no temporary file;
- load_config re-reads it and applies it (a new generation, the file's values); a broken
  file is refused with invalid_params and changes nothing; SIGHUP does the same as
  load_config and is reported as a params_applied event from SIGHUP;
- traffic classes: set_link's `classes` and `class` (one class's keys), save_config writes
  the list, load_config replaces it with the file's, a bad list in the file is refused
  naming the class and key;
- shutdown is not_permitted without --allow-remote-shutdown; with it, the reply comes and
  linkemd stops with exit code 0.

Usage: test_config_methods.py LINKEMD
"""

import json
import os
import signal
import sys
import tempfile
import time
import shutil

import harness as h

NAME = "control.config_methods"
PORTS = ["--port-a", "virtual", "--port-b", "virtual", "--traffic-pattern", "cbr", "--workers", "shared"]


def run():
    h.require_zmq()
    binary = sys.argv[1]
    work = tempfile.mkdtemp(prefix="linkem-config-")
    try:
        checks(binary, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def checks(binary, work):
    cfg = os.path.join(work, "link.json")
    with open(cfg, "w") as f:
        json.dump({"mean_delay_us": 4000, "burst": 16}, f)
    with h.Linkemd(binary, "config", PORTS + ["--config", cfg]) as lk:
        hello = lk.hello
        if not hello["capabilities"]["save_config"] or hello["capabilities"]["shutdown"]:
            raise h.Fail("capabilities: %r" % hello["capabilities"])
        c = lk.client(timeout=10.0)
        sub = lk.subscriber(topics=(b"event",))
        if c.call("get_link")["b_to_a"]["mean_delay_us"] != 4000:
            raise h.Fail("the config file's mean_delay_us is not in force")

        # save_config: the parameters in force, the other keys kept, no temporary file.
        r = c.call("set_link", {"b_to_a": {"mean_delay_us": 7000}, "jitter_us": 300})
        saved = c.call("save_config")
        if saved["params_generation"] != r["params_generation"] or \
                os.path.realpath(saved["path"]) != os.path.realpath(cfg):
            raise h.Fail("save_config result %r" % saved)
        with open(cfg) as f:
            file = json.load(f)
        if os.path.exists(cfg + ".tmp"):
            raise h.Fail("save_config left %s.tmp" % cfg)
        if file.get("burst") != 16:
            raise h.Fail("save_config dropped a key of the file: %r" % file)
        link = c.call("get_link")
        for d in h.DIRECTIONS:
            for k, v in link[d].items():
                got = file.get(d, {}).get(k, file.get(k))
                if got != v:
                    raise h.Fail("saved %s.%s = %r, in force %r" % (d, k, got, v))
        h.log(NAME, "save_config wrote every key of both directions to %s" % cfg)

        # load_config: the file's values, a new generation.
        file["b_to_a"]["mean_delay_us"] = 9000
        with open(cfg, "w") as f:
            json.dump(file, f)
        r2 = c.call("load_config")
        if not r2["applied"]:
            h.log(NAME, "load_config not acknowledged within 2 s (a held-up data plane); "
                  "adopted %.1f s later" % c.wait_adopted(r2["params_generation"]))
        if r2["params_generation"] != r["params_generation"] + 1 or \
                r2["b_to_a"]["mean_delay_us"] != 9000 or r2["ignored"] != []:
            raise h.Fail("load_config result: gen %r applied %r b_to_a.mean_delay_us %r "
                         "ignored %r" % (r2["params_generation"], r2["applied"],
                                         r2["b_to_a"]["mean_delay_us"], r2["ignored"]))

        # A broken file: invalid_params, nothing changed.
        before = c.call("get_link")
        for text in ('{"mean_delay_us": -5}', "{not json", '{"b_to_a": {"jitter_us": "x"}}'):
            with open(cfg, "w") as f:
                f.write(text)
            bad = c.request("load_config")
            if "error" not in bad or bad["error"]["code"] != "invalid_params":
                raise h.Fail("load_config of %r answered %r" % (text, bad))
        if c.call("get_link") != before:
            raise h.Fail("a refused load_config changed the parameters in force")

        # Traffic classes: set_link replaces the list and changes one class; save_config writes
        # them; load_config replaces them; a bad list in the file is refused, naming its field.
        if not hello["capabilities"].get("classes"):
            raise h.Fail("capabilities without classes: %r" % hello["capabilities"])
        classes = [{"name": "voip", "match": {"protocol": "udp", "b_port": "5060-5061"},
                    "mean_delay_us": 80000},
                   {"name": "ssh", "match": {"protocol": "tcp", "b_port": 22}, "action": "pass"}]
        r = c.call("set_link", {"classes": classes})
        r = c.call("set_link", {"class": "voip", "b_to_a": {"loss_probability": 0.02}})
        if [k["name"] for k in r["classes"]] != ["voip", "ssh"] or \
                r["classes"][0]["b_to_a"].get("loss_probability") != 0.02 or \
                r["classes"][0].get("mean_delay_us") != 80000:
            raise h.Fail("set_link with classes and class answered %r" % r["classes"])
        bad = c.request("set_link", {"class": "video", "jitter_us": 1})
        if bad.get("error", {}).get("field") != "class":
            raise h.Fail("set_link of an unknown class answered %r" % bad)
        c.call("save_config")
        with open(cfg) as f:
            file = json.load(f)
        if file.get("classes") != r["classes"]:
            raise h.Fail("save_config wrote classes %r, in force %r" %
                         (file.get("classes"), r["classes"]))
        file["classes"] = file["classes"][1:]
        with open(cfg, "w") as f:
            json.dump(file, f)
        r = c.call("load_config")
        if [k["name"] for k in r["classes"]] != ["ssh"]:
            raise h.Fail("load_config did not replace the classes: %r" % r["classes"])
        file["classes"][0]["match"]["b_port"] = 70000
        with open(cfg, "w") as f:
            json.dump(file, f)
        bad = c.request("load_config")
        if bad.get("error", {}).get("code") != "invalid_params" or \
                "classes[0].match.b_port" not in bad["error"]["message"]:
            raise h.Fail("load_config of a bad class list answered %r" % bad)
        if [k["name"] for k in c.call("get_link")["classes"]] != ["ssh"]:
            raise h.Fail("a refused load_config changed the classes")
        h.log(NAME, "classes: set_link, save_config, load_config and a refused list")

        # SIGHUP: as load_config, reported as from SIGHUP.
        with open(cfg, "w") as f:
            json.dump({"mean_delay_us": 2500}, f)
        lk.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 20
        ev = None
        while time.monotonic() < deadline and ev is None:
            m = sub.recv(1.0)
            if m and m[1].get("kind") == "params_applied" and m[1].get("source") == "SIGHUP":
                ev = m[1]
        if ev is None:
            raise h.Fail("no params_applied event from SIGHUP")
        after = c.call("get_link")
        if after["params_generation"] != ev["params_generation"] or \
                after["a_to_b"]["mean_delay_us"] != 2500 or after["classes"] != []:
            raise h.Fail("after SIGHUP: %r, event %r" % (after["params_generation"], ev))

        # shutdown without --allow-remote-shutdown.
        r3 = c.request("shutdown")
        if r3.get("error", {}).get("code") != "not_permitted" or not lk.alive():
            raise h.Fail("shutdown without --allow-remote-shutdown answered %r" % r3)

    # Without --config: unavailable; with --allow-remote-shutdown: the reply, then exit 0.
    with h.Linkemd(binary, "shutdown", PORTS + ["--allow-remote-shutdown"]) as lk:
        c = lk.client(timeout=10.0)
        for m in ("save_config", "load_config"):
            r = c.request(m)
            if r.get("error", {}).get("code") != "unavailable":
                raise h.Fail("%s without --config answered %r" % (m, r))
        r = c.request("shutdown")
        if r.get("result") != {}:
            raise h.Fail("shutdown answered %r" % r)
        try:
            lk.proc.wait(30)
        except Exception:
            raise h.Fail("linkemd did not stop within 30 s of shutdown")
        if lk.proc.returncode != 0:
            raise h.Fail("linkemd stopped by shutdown exited with %d" % lk.proc.returncode)
        h.log(NAME, "shutdown: replied {} and linkemd exited 0")


if __name__ == "__main__":
    h.main(NAME, run)
