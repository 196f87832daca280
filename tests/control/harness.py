"""Plumbing for the control-server tests: start linkemd on DPDK virtual ports with its own
--file-prefix and ipc:// endpoints in a temporary directory, talk to it with pyzmq (Debian's
python3-zmq) as docs/protocol.md describes, and stop it.

Exit codes follow ctest: 0 pass, 1 fail, 77 skip.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import zmq
except ImportError:  # pragma: no cover - reported as a skip
    zmq = None

SKIP = 77
DIRECTIONS = ("a_to_b", "b_to_a")
DROPS = ("drops_loss", "drops_policer", "drops_spacer", "drops_buffer_full")


class Fail(Exception):
    pass


class NoReply(Fail):
    """A request had no reply within the client's timeout."""


class Skip(Exception):
    pass


def log(name, msg):
    print("[%s] %s" % (name, msg), flush=True)


def require_zmq():
    if zmq is None:
        raise Skip("python3-zmq is not installed for %s" % sys.executable)


def balance_error(stats):
    """The directions whose counters do not balance, as 'dir: in=… out=… …' strings."""
    bad = []
    for d in DIRECTIONS:
        c = stats.get(d)
        if c is None:
            continue
        rhs = c["packets_out"] + sum(c[k] for k in DROPS) + c["in_flight"]
        if c["packets_in"] != rhs:
            bad.append("%s: packets_in %d != out %d + drops %d + in_flight %d" % (
                d, c["packets_in"], c["packets_out"], sum(c[k] for k in DROPS), c["in_flight"]))
    return bad


class Linkemd:
    """One linkemd process, as a context manager. `args` are linkemd flags; control and
    telemetry get ipc:// endpoints in a fresh directory unless given.

        with h.Linkemd(binary, "name", args) as lk:
            c = lk.client()          # closed on exit
            ...

    The constructor starts linkemd; entering waits until its control socket answers hello
    (`lk.hello`; wait=False leaves that to the body). Leaving closes the sockets made by
    lk.client()/lk.subscriber() or given to lk.track(), stops linkemd (SIGINT, then SIGKILL
    after `stop_timeout` s) and removes its files. Only when the body succeeded is the exit
    code checked (`expect_rc`, None for no check): a failure of the body is never replaced.
    """

    def __init__(self, binary, name, args, control=None, telemetry=None, eal=(), env=None,
                 wait=True, expect_rc=0, stop_timeout=20.0):
        self.name = name
        self.wait = wait
        self.expect_rc = expect_rc
        self.stop_timeout = stop_timeout
        self.hello = None
        self.closing = []
        self.final_stderr = None
        self.dir = tempfile.mkdtemp(prefix="linkem-ctl-%s-" % name)
        self.control = control or "ipc://%s/control" % self.dir
        self.telemetry = telemetry or "ipc://%s/telemetry" % self.dir
        self.prefix = "lkctl-%d-%s" % (os.getpid(), name)
        self.cmd = [binary] + list(args)
        if "--no-control" not in args:
            self.cmd += ["--control", self.control, "--telemetry", self.telemetry]
        self.cmd += ["--stats-interval", "0", "--", "--file-prefix", self.prefix] + list(eal)
        self.out = open(os.path.join(self.dir, "stdout"), "w+")
        self.err_path = os.path.join(self.dir, "stderr")
        self.err = open(self.err_path, "w+")
        log(name, "start: " + " ".join(self.cmd))
        self.proc = subprocess.Popen(self.cmd, stdout=self.out, stderr=self.err,
                                     stdin=subprocess.DEVNULL, env=env)

    def __enter__(self):
        try:
            if self.wait:
                self.hello = self.wait_ready()
        except BaseException:
            self._finish()
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        rc = self._finish()
        if exc_type is None and self.expect_rc is not None and rc != self.expect_rc:
            log(self.name, "linkemd exit code %s; stderr tail:\n%s" % (rc, self.stderr()[-2000:]))
            raise Fail("linkemd exited with %s" % rc)
        if exc_type is not None and rc != self.expect_rc and self.expect_rc is not None:
            log(self.name, "(linkemd exited with %s after the failure)" % rc)
        return False

    def track(self, thing):
        """Closes `thing` (anything with close()) on exit, before linkemd is stopped."""
        self.closing.append(thing)
        return thing

    def client(self, timeout=5.0, curve=None):
        return self.track(Client(self.control, timeout=timeout, curve=curve))

    def subscriber(self, topics=(b"",), curve=None):
        return self.track(Subscriber(self.telemetry, topics=topics, curve=curve))

    def stderr(self):
        """linkemd's stderr so far (after exit, what it was when its files were removed)."""
        if self.final_stderr is not None:
            return self.final_stderr
        with open(self.err_path) as f:
            return f.read()

    def wait_ready(self, timeout=150.0):
        """Until the control socket answers hello; returns its result."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Fail("linkemd exited with %d during start:\n%s" % (
                    self.proc.returncode, self.stderr()[-3000:]))
            if "control on " in self.stderr():
                # A hello unanswered in 5 s is asked again (on a new socket) until the
                # deadline: a busy machine can keep linkemd's control thread from running for
                # seconds right after it opened the socket.
                c = Client(self.control, timeout=5.0)
                try:
                    return c.call("hello", {"client": "test " + self.name})
                except NoReply as e:
                    print("[%s] %s; asking again" % (self.name, e), flush=True)
                finally:
                    c.close()
            time.sleep(0.1)
        raise Fail("linkemd did not open its control socket within %.0f s:\n%s" % (
            timeout, self.stderr()[-3000:]))

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        """SIGINT, a bounded wait, then SIGKILL; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                log(self.name, "linkemd did not stop within %.0f s of SIGINT: killed" %
                    self.stop_timeout)
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def _finish(self):
        """Closes the tracked sockets, stops linkemd, removes its files; the exit code.
        Never raises for a socket that fails to close."""
        for thing in reversed(self.closing):
            try:
                thing.close()
            except Exception as e:  # a close must not hide the body's outcome
                log(self.name, "closing %r: %s" % (thing, e))
        self.closing = []
        rc = self.stop()
        self.final_stderr = self.stderr()
        self.out.close()
        self.err.close()
        shutil.rmtree("/var/run/dpdk/" + self.prefix, ignore_errors=True)
        if not os.environ.get("LINKEM_KEEP_LOGS"):
            shutil.rmtree(self.dir, ignore_errors=True)
        return rc


_ctx = None


def context():
    global _ctx
    if _ctx is None:
        _ctx = zmq.Context()
    return _ctx


class Client:
    """A DEALER client: one request at a time, replies matched by id, a timeout per call."""

    def __init__(self, endpoint, timeout=5.0, curve=None):
        self.sock = context().socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        # A DEALER blocks a send while it has no peer: after a refused CURVE handshake it has
        # none until it reconnects, and that send would wait for ever.
        self.sock.setsockopt(zmq.SNDTIMEO, max(1, int(timeout * 1000)))
        if curve:
            self.sock.curve_secretkey = curve["secret"]
            self.sock.curve_publickey = curve["public"]
            self.sock.curve_serverkey = curve["server"]
        self.sock.connect(endpoint)
        self.timeout = timeout
        self.next_id = 1

    def close(self):
        self.sock.close(0)

    def send_raw(self, parts):
        """Sends parts; False when the socket had no peer to take them within the timeout."""
        try:
            self.sock.send_multipart(parts)
            return True
        except zmq.Again:
            return False

    def recv(self, timeout=None):
        """One reply (the parts after an optional empty delimiter), or None on timeout."""
        t = self.timeout if timeout is None else timeout
        if not self.sock.poll(int(t * 1000)):
            return None
        parts = self.sock.recv_multipart()
        if len(parts) > 1 and parts[0] == b"":
            parts = parts[1:]
        return parts

    def request(self, method, params=None, id_=None):
        """Sends a request and returns the whole reply object (result or error)."""
        if id_ is None:
            id_ = self.next_id
            self.next_id += 1
        req = {"v": 1, "id": id_, "method": method}
        if params is not None:
            req["params"] = params
        if not self.send_raw([json.dumps(req).encode()]):
            raise NoReply("%s (id %r) not sent within %.1f s: no connection to linkemd"
                          % (method, id_, self.timeout))
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            parts = self.recv(max(left, 0))
            if parts is None:
                raise NoReply("no reply to %s (id %r) within %.1f s" % (method, id_, self.timeout))
            reply = json.loads(parts[-1])
            if reply.get("id") == id_:
                return reply

    def call(self, method, params=None):
        reply = self.request(method, params)
        if "error" in reply:
            raise Fail("%s refused: %s" % (method, reply["error"]))
        return reply["result"]

    def wait_adopted(self, generation, timeout=30.0):
        """A change answered with "applied": false (the data plane did not acknowledge it
        within 2 s: held up on a busy machine) is adopted as soon as the data plane runs
        again (docs/protocol.md). Waits until every direction's stats run with `generation`;
        returns the seconds it took, or raises Fail."""
        t0 = time.monotonic()
        while True:
            stats = self.call("get_stats")
            gens = [stats[d]["params_generation"] for d in DIRECTIONS if d in stats]
            if gens and min(gens) >= generation:
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                raise Fail("the data plane runs generation %r, not %d, %.0f s after a change it "
                           "did not acknowledge" % (gens, generation, timeout))
            time.sleep(0.1)


class Subscriber:
    def __init__(self, endpoint, topics=(b"",), curve=None, hwm=100000, rcvbuf=None):
        self.sock = context().socket(zmq.SUB)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.RCVHWM, hwm)
        if rcvbuf is not None:  # the kernel's receive buffer (bytes), before connecting
            self.sock.setsockopt(zmq.RCVBUF, rcvbuf)
        if curve:
            self.sock.curve_secretkey = curve["secret"]
            self.sock.curve_publickey = curve["public"]
            self.sock.curve_serverkey = curve["server"]
        for t in topics:
            self.sock.setsockopt(zmq.SUBSCRIBE, t)
        self.sock.connect(endpoint)

    def recv(self, timeout=2.0):
        """(topic, body) or None on timeout."""
        if not self.sock.poll(int(timeout * 1000)):
            return None
        topic, body = self.sock.recv_multipart()
        return topic.decode(), json.loads(body)

    def wait_for(self, topic, timeout=5.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = self.recv(max(deadline - time.monotonic(), 0.01))
            if m and m[0] == topic:
                return m[1]
        raise Fail("no %s message within %.1f s" % (topic, timeout))

    def close(self):
        self.sock.close(0)


def main(name, fn):
    """Runs fn() and maps Fail/Skip to ctest's exit codes."""
    try:
        fn()
    except Skip as e:
        log(name, "SKIP: %s" % e)
        sys.exit(SKIP)
    except Fail as e:
        log(name, "FAIL: %s" % e)
        sys.exit(1)
    log(name, "PASS")
    sys.exit(0)
