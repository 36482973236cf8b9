#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Tests of netvm-switch: fake nodes speak QEMU's -netdev stream framing
(4-byte big-endian length, then the frame) on the switch's sockets.

Environment: NETVM_SWITCH (the binary), FABRIC_DIR (fabric/ sources:
topologies/ and netvm.lua).  Run one class: test_fabric.py TestRouting.
"""
import json
import os
import random
import select
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import unittest
import warnings
import zlib

warnings.simplefilter("ignore", ResourceWarning)

SWITCH = os.environ.get("NETVM_SWITCH", "build/fabric/netvm-switch")
FABRIC_DIR = os.environ.get("FABRIC_DIR", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "fabric"))


def make_frame(route, src, dst, payload, ptype=1):
    """route bytes (list of port numbers or raw bytes) + header + payload + CRC."""
    hdr = struct.pack(">BBHHH", ptype, 1, src, dst, len(payload))
    body = hdr + payload
    r = bytes((b | 0x80) for b in route)
    return r + body + struct.pack(">I", zlib.crc32(body) & 0xffffffff)


def parse_frame(fr):
    """-> (route bytes, type, src, dst, payload, crc_ok)"""
    i = 0
    while i < len(fr) and fr[i] & 0x80:
        i += 1
    route, rest = fr[:i], fr[i:]
    t, v, src, dst, ln = struct.unpack(">BBHHH", rest[:8])
    payload = rest[8:8 + ln]
    crc, = struct.unpack(">I", rest[8 + ln:12 + ln])
    ok = (zlib.crc32(rest[:8 + ln]) & 0xffffffff) == crc
    return route, t, src, dst, payload, ok


class Client:
    """A fake node: one stream connection to a switch port."""

    def __init__(self, path, connect=True):
        self.path = path
        self.sock = None
        self.buf = b""
        if connect:
            self.connect()

    def connect(self, timeout=5.0):
        deadline = time.time() + timeout
        while True:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(self.path)
                self.sock = s
                return
            except OSError:
                s.close()
                if time.time() > deadline:
                    raise
                time.sleep(0.02)

    def send(self, frame):
        self.sock.sendall(struct.pack(">I", len(frame)) + frame)

    def send_raw(self, data):
        self.sock.sendall(data)

    def recv(self, timeout=2.0):
        """One frame, or None on timeout."""
        deadline = time.time() + timeout
        while True:
            if len(self.buf) >= 4:
                ln, = struct.unpack(">I", self.buf[:4])
                if len(self.buf) >= 4 + ln:
                    fr = self.buf[4:4 + ln]
                    self.buf = self.buf[4 + ln:]
                    return fr
            left = deadline - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([self.sock], [], [], left)
            if r:
                d = self.sock.recv(1 << 20)
                if not d:
                    raise EOFError("switch closed the connection")
                self.buf += d

    def recv_all(self, idle=0.4, limit=None):
        out = []
        while limit is None or len(out) < limit:
            fr = self.recv(idle)
            if fr is None:
                break
            out.append(fr)
        return out

    def closed_by_peer(self, timeout=2.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            r, _, _ = select.select([self.sock], [], [], deadline - time.time())
            if r:
                try:
                    d = self.sock.recv(65536)
                except ConnectionResetError:
                    return True
                if not d:
                    return True
        return False

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None


class Switch:
    def __init__(self, *args, sockdir=None):
        self.dir = sockdir or tempfile.mkdtemp(prefix="nvsw-")
        self.own_dir = sockdir is None
        self.proc = subprocess.Popen(
            [SWITCH, "--sock-dir", self.dir, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if "ready" not in line:
            self.proc.kill()
            raise RuntimeError("switch did not start: %r %r" %
                               (line, self.proc.stderr.read()))
        self.ctl_sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ctl = os.path.join(self.dir, "control.sock")
        if "--control" in args:
            ctl = args[list(args).index("--control") + 1]
        self.ctl_sock.connect(ctl)
        self.ctl_file = self.ctl_sock.makefile("r")

    def node(self, n):
        return os.path.join(self.dir, "node%d.sock" % n)

    def ctl(self, cmd):
        self.ctl_sock.sendall((cmd + "\n").encode())
        return json.loads(self.ctl_file.readline())

    def port(self, spec):
        r = self.ctl("stats " + str(spec))
        assert r["ok"], r
        return r["port"]

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.ctl_sock.close()
        self.proc.stdout.close()
        self.proc.stderr.close()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def routes_of(topo):
    out = subprocess.run([SWITCH, "--routes", topo], check=True,
                         capture_output=True, text=True).stdout
    d = json.loads(out)
    return {(r["src"], r["dst"]): bytes(r["route"]) for r in d["routes"]}, d


class SwitchTest(unittest.TestCase):
    args = ("--ports", "4")

    def setUp(self):
        self.sw = Switch(*self.args)
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            c.close()
        alive = self.sw.alive() or getattr(self, "expect_exit", False)
        self.sw.stop()
        self.assertTrue(alive, "the switch died during the test")

    def client(self, n):
        c = Client(self.sw.node(n))
        self.clients.append(c)
        return c

    def wait_connected(self, n, timeout=2.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.sw.port(n)["state"] == "up":
                return
            time.sleep(0.01)
        self.fail("port %s never connected" % n)


class TestRouting(SwitchTest):
    def test_leading_byte_routes_and_is_stripped(self):
        c = [self.client(i) for i in range(4)]
        for i in range(4):
            self.wait_connected(i)
        c[0].send(make_frame([2], 0, 2, b"hello"))
        fr = c[2].recv()
        self.assertIsNotNone(fr)
        route, t, src, dst, payload, ok = parse_frame(fr)
        self.assertEqual(route, b"")
        self.assertEqual((t, src, dst, payload, ok), (1, 0, 2, b"hello", True))
        # only the leading byte is consumed; later ones stay for the next switch
        c[3].send(make_frame([1, 5, 6], 3, 1, b"x" * 100))
        route, _, src, _, payload, ok = parse_frame(c[1].recv())
        self.assertEqual(route, bytes([0x85, 0x86]))
        self.assertEqual((src, payload, ok), (3, b"x" * 100, True))
        # a frame may go back out of the port it came in on
        c[1].send(make_frame([1], 1, 1, b"loop"))
        self.assertEqual(parse_frame(c[1].recv())[4], b"loop")
        self.assertIsNone(c[0].recv(0.1))

    def test_bad_route_and_missing_ports_are_counted(self):
        a, b = self.client(0), self.client(1)
        self.wait_connected(0)
        self.wait_connected(1)
        a.send(make_frame([], 0, 1, b"no route"))        # MSB clear
        a.send(make_frame([9], 0, 9, b"no such port"))   # 4-port switch
        a.send(make_frame([3], 0, 3, b"nobody there"))   # port 3 unconnected
        a.send(bytes([0x81]))                            # route byte only
        a.send(make_frame([1], 0, 1, b"fine"))
        self.assertEqual(parse_frame(b.recv())[4], b"fine")
        self.assertIsNone(b.recv(0.2))
        p = self.sw.port(0)
        self.assertEqual(p["drop_bad_route"], 2)
        self.assertEqual(p["drop_no_port"], 1)
        self.assertEqual(p["drop_port_down"], 1)
        self.assertEqual(p["rx_frames"], 5)
        self.assertEqual(self.sw.port(1)["tx_frames"], 1)

    def test_one_client_per_port_and_reconnect(self):
        a = self.client(0)
        b = self.client(1)
        self.wait_connected(1)
        intruder = Client(self.sw.node(1))
        self.assertTrue(intruder.closed_by_peer())
        intruder.close()
        self.assertEqual(self.sw.port(1)["refused"], 1)
        b.close()
        deadline = time.time() + 2
        while self.sw.port(1)["state"] != "disconnected":
            self.assertLess(time.time(), deadline)
            time.sleep(0.01)
        b2 = self.client(1)
        self.wait_connected(1)
        a.send(make_frame([1], 0, 1, b"again"))
        self.assertEqual(parse_frame(b2.recv())[4], b"again")
        self.assertEqual(self.sw.port(1)["connects"], 2)

    def test_tcp_ports(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        d = tempfile.mkdtemp(prefix="nvsw-")
        sw = Switch("--ports", "2", "--tcp", "127.0.0.1:%d" % base, sockdir=d)
        try:
            a = socket.create_connection(("127.0.0.1", base))
            b = socket.create_connection(("127.0.0.1", base + 1))
            fr = make_frame([1], 0, 1, b"tcp")
            time.sleep(0.1)
            a.sendall(struct.pack(">I", len(fr)) + fr)
            b.settimeout(2)
            got = b""
            while len(got) < 4 + len(fr) - 1:
                got += b.recv(4096)
            self.assertEqual(parse_frame(got[4:])[4], b"tcp")
            a.close()
            b.close()
        finally:
            sw.stop()
            shutil.rmtree(d, ignore_errors=True)


TWO_SWITCHES = """
switch a 4
switch b 4
link a:3 b:2
node 0 a:0
node 1 a:1
node 2 b:0
node 3 b:1
"""


class TestTopology(unittest.TestCase):
    def all_pairs(self, topo, nodes):
        routes, info = routes_of(topo)
        sw = Switch("--topology", topo)
        try:
            cl = {n: Client(sw.node(n)) for n in nodes}
            time.sleep(0.1)
            for (s, d), r in sorted(routes.items()):
                cl[s].send(make_frame(list(r), s, d, b"%d->%d" % (s, d)))
            got = {n: [] for n in nodes}
            for n in nodes:
                for fr in cl[n].recv_all(idle=2, limit=len(nodes) - 1):
                    route, _, src, dst, payload, ok = parse_frame(fr)
                    self.assertEqual(route, b"")
                    self.assertTrue(ok)
                    self.assertEqual(dst, n)
                    self.assertEqual(payload, b"%d->%d" % (src, dst))
                    got[n].append(src)
            for n in nodes:
                self.assertEqual(sorted(got[n]), [s for s in nodes if s != n])
            for c in cl.values():
                c.close()
            self.assertTrue(sw.alive())
        finally:
            sw.stop()
        return routes, info

    def test_two_switches(self):
        with tempfile.NamedTemporaryFile("w", suffix=".topo") as f:
            f.write(TWO_SWITCHES)
            f.flush()
            routes, _ = self.all_pairs(f.name, range(4))
        self.assertEqual(routes[(0, 2)], bytes([0x83, 0x80]))
        self.assertEqual(routes[(3, 1)], bytes([0x82, 0x81]))
        self.assertEqual(routes[(0, 1)], bytes([0x81]))

    def test_shipped_topologies_all_pairs(self):
        _, info = self.all_pairs(os.path.join(FABRIC_DIR, "topologies", "ring4.topo"),
                                 range(8))
        self.assertEqual(len(info["routes"]), 8 * 7)
        routes, info = self.all_pairs(
            os.path.join(FABRIC_DIR, "topologies", "tree16.topo"), range(16))
        self.assertEqual(max(len(r) for r in routes.values()), 3)
        # the two spines both carry traffic (routes spread by destination)
        self.assertEqual({r[0] for (s, d), r in routes.items() if s // 4 != d // 4},
                         {0x84, 0x85})
        routes, _ = routes_of(os.path.join(FABRIC_DIR, "topologies", "single.topo"))
        self.assertEqual(len(routes), 56)
        self.assertEqual(routes[(5, 2)], bytes([0x82]))

    def test_switches_in_separate_processes(self):
        d = tempfile.mkdtemp(prefix="nvsw-")
        with tempfile.NamedTemporaryFile("w", suffix=".topo") as f:
            f.write(TWO_SWITCHES)
            f.flush()
            sa = Switch("--topology", f.name, "--only", "a",
                        "--control", os.path.join(d, "ca.sock"), sockdir=d)
            # the second process's control socket is the default control.sock
            sb = Switch("--topology", f.name, "--only", "b", sockdir=d)
        try:
            deadline = time.time() + 3
            while sb.port("b:2")["state"] != "up":
                self.assertLess(time.time(), deadline, "link never came up")
                time.sleep(0.02)
            c0, c3 = Client(os.path.join(d, "node0.sock")), Client(os.path.join(d, "node3.sock"))
            time.sleep(0.1)
            c0.send(make_frame([3, 1], 0, 3, b"across"))
            c3.send(make_frame([2, 0], 3, 0, b"back"))
            self.assertEqual(parse_frame(c3.recv())[4], b"across")
            self.assertEqual(parse_frame(c0.recv())[4], b"back")
            c0.close()
            c3.close()
        finally:
            sa.stop()
            sb.stop()
            shutil.rmtree(d, ignore_errors=True)

    def test_bad_topology_rejected(self):
        with tempfile.NamedTemporaryFile("w", suffix=".topo") as f:
            f.write("switch a 4\nnode 0 a:9\n")
            f.flush()
            r = subprocess.run([SWITCH, "--routes", f.name], capture_output=True,
                               text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("line 2", r.stderr)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class TestStuckDestination(SwitchTest):
    """A node that never reads costs only the frames sent to it: its output
    queue fills, then frames for it are dropped and counted
    (drop_queue_full), and its senders' frames to everyone else flow.  The
    default queue bound (512 frames, 2 MiB), with no stall timeout: all the
    traffic between the others fits in their queues, so none of it may be
    lost however late this test reads it."""
    args = ("--ports", "4", "--stall-timeout", "0")

    def wait_rx(self, port, n, timeout=20.0):
        deadline = time.time() + timeout
        while self.sw.port(port)["rx_frames"] < n:
            self.assertLess(time.time(), deadline, "port %d read %d of %d frames" % (
                port, self.sw.port(port)["rx_frames"], n))
            time.sleep(0.02)

    def test_stuck_port_costs_only_its_own_frames(self):
        a, b, c = (self.client(i) for i in range(3))
        for i in range(3):
            self.wait_connected(i)
        b.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        rnd = random.Random(14)
        n, m = 2000, 500    # frames to the stuck node 1 (8 MiB); each way between 0 and 2
        to_b = [struct.pack(">I", i) + rnd.randbytes(4092) for i in range(n)]
        a_to_c = [struct.pack(">I", i) + rnd.randbytes(rnd.randrange(1, 1000)) for i in range(m)]
        c_to_a = [struct.pack(">I", i) + rnd.randbytes(rnd.randrange(1, 1000)) for i in range(m)]

        def a_sends():
            # node 0: four frames to the stuck node 1, one to node 2
            for i in range(n):
                a.send(make_frame([1], 0, 1, to_b[i]))
                if i % 4 == 3:
                    a.send(make_frame([2], 0, 2, a_to_c[i // 4]))

        def c_sends():
            for i in range(m):
                c.send(make_frame([0], 2, 0, c_to_a[i]))
        threads = [threading.Thread(target=f, daemon=True) for f in (a_sends, c_sends)]
        for t in threads:
            t.start()
        # every frame between nodes 0 and 2 arrives, byte for byte, in order
        for rx, sent, src, dst in ((c, a_to_c, 0, 2), (a, c_to_a, 2, 0)):
            got = []
            while len(got) < m:
                fr = rx.recv(10)
                self.assertIsNotNone(fr, "node %d got %d of %d frames from node %d" % (
                    dst, len(got), m, src))
                _, _, fsrc, fdst, payload, ok = parse_frame(fr)
                self.assertEqual((fsrc, fdst, ok), (src, dst, True))
                got.append(payload)
            self.assertEqual(got, sent)
        for t in threads:
            t.join(10)
            self.assertFalse(t.is_alive(), "a sender is still blocked")
        self.wait_rx(0, n + m)
        # the stuck port: every frame for it was written, is queued or was
        # dropped, and only frames for it were dropped
        p1 = self.sw.port(1)
        self.assertLessEqual(p1["queue_frames"], 512)
        self.assertLess(p1["queue_bytes"], (2 << 20) + 4200)  # the bound, plus the frame that crossed it
        self.assertGreater(p1["drop_queue_full"], 0)
        self.assertEqual(p1["tx_frames"] + p1["queue_frames"] + p1["drop_queue_full"], n)
        for port in (0, 2):
            drops = {k: v for k, v in self.sw.port(port).items() if k.startswith("drop_") and v}
            self.assertEqual(drops, {}, "port %d" % port)
            self.assertEqual(self.sw.port(port)["tx_frames"], m)
        self.assertEqual(self.sw.port(0)["bp_stalls"], 0)
        # node 1 reads at last: the frames that were kept, in order, exact
        kept = n - p1["drop_queue_full"]
        got_b = []
        while len(got_b) < kept:
            fr = b.recv(3)
            self.assertIsNotNone(fr, "node 1 got %d of the %d kept frames" % (len(got_b), kept))
            got_b.append(parse_frame(fr)[4])
        self.assertEqual(got_b, to_b[:kept])
        self.assertIsNone(b.recv(0.3))
        self.assertLess(rss_kib(self.sw.proc.pid), 64 * 1024, "switch memory is not bounded")


class TestStallPolicy(SwitchTest):
    args = ("--ports", "4", "--queue-frames", "8", "--stall-timeout", "300")

    def test_stalled_port_is_flushed_and_drops_until_progress(self):
        a, b = self.client(0), self.client(1)
        self.wait_connected(0)
        self.wait_connected(1)
        b.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        a.sock.settimeout(5)
        # far more than the queue and the socket buffers hold: the frames
        # that find the queue full are dropped at once; after the stall
        # timeout the queue is flushed and the stalled port drops
        n = 2000
        for i in range(n):
            a.send(make_frame([1], 0, 1, bytes(4096)))
        deadline = time.time() + 20
        while self.sw.port(1)["stall_timeouts"] < 1:
            self.assertLess(time.time(), deadline, "the port never timed out")
            time.sleep(0.05)
        p = self.sw.port(1)
        self.assertEqual(p["state"], "stalled")
        self.assertGreater(p["drop_queue_full"], 0)
        self.assertGreater(p["drop_stalled"], 0)
        self.assertLessEqual(p["queue_frames"], 1)      # at most a frame partly written
        a.send(make_frame([1], 0, 1, b"while stalled"))
        while self.sw.port(0)["rx_frames"] < n + 1:
            self.assertLess(time.time(), deadline, "the switch did not read the frame")
            time.sleep(0.05)
        self.assertEqual(self.sw.port(0)["drop_stalled"], 1)
        p = self.sw.port(1)
        self.assertEqual(p["tx_frames"] + p["queue_frames"] + p["drop_queue_full"] +
                         p["drop_stalled"], n)
        # reading again is progress: the port forwards again
        b.recv_all(idle=0.3)
        a.send(make_frame([1], 0, 1, b"after"))
        frames = b.recv_all(idle=0.5)
        self.assertEqual(parse_frame(frames[-1])[4], b"after")
        self.assertEqual(self.sw.port(1)["state"], "up")


class TestFaults(SwitchTest):
    args = ("--ports", "4", "--seed", "42")

    def run_flow(self, n=2000, setting=None, idle=0.5):
        a, b = self.client(0), self.client(1)
        self.wait_connected(0)
        self.wait_connected(1)
        if setting:
            self.assertTrue(self.sw.ctl("fault 1 " + setting)["ok"])
        seqs, bad = [], 0
        for i in range(n):
            a.send(make_frame([1], 0, 1, struct.pack(">I", i) + bytes(60)))
            if i % 200 == 199:      # keep the socket buffers from filling
                for fr in b.recv_all(idle=0.01):
                    seqs.append(fr)
        seqs += b.recv_all(idle=idle)
        out = []
        for fr in seqs:
            _, _, _, _, payload, ok = parse_frame(fr)
            if not ok:
                bad += 1
                continue
            out.append(struct.unpack(">I", payload[:4])[0])
        return out, bad, self.sw.port(1)

    def test_drop(self):
        got, bad, p = self.run_flow(setting="drop=0.3")
        self.assertEqual(bad, 0)
        self.assertEqual(len(got) + p["drop_injected"], 2000)
        self.assertTrue(500 < p["drop_injected"] < 700, p["drop_injected"])
        self.assertEqual(got, sorted(got))
        # the same seed drops the same frames
        self.tearDown()
        self.setUp()
        got2, _, _ = self.run_flow(setting="drop=0.3")
        self.assertEqual(got, got2)

    def test_dup(self):
        got, _, p = self.run_flow(setting="dup=0.2")
        self.assertTrue(300 < p["dup_injected"] < 500, p["dup_injected"])
        self.assertEqual(len(got), 2000 + p["dup_injected"])
        self.assertEqual(sorted(set(got)), list(range(2000)))

    def test_reorder(self):
        got, _, p = self.run_flow(setting="reorder=0.1")
        self.assertGreater(p["reorder_injected"], 100)
        self.assertEqual(sorted(got), list(range(2000)))
        inversions = sum(1 for x, y in zip(got, got[1:]) if y < x)
        self.assertGreater(inversions, 50)

    def test_corrupt(self):
        got, bad, p = self.run_flow(setting="corrupt=0.1")
        self.assertTrue(150 < p["corrupt_injected"] < 250, p["corrupt_injected"])
        self.assertEqual(bad, p["corrupt_injected"])
        self.assertEqual(len(got) + bad, 2000)

    def test_delay(self):
        a, b = self.client(0), self.client(1)
        self.wait_connected(1)
        self.assertTrue(self.sw.ctl("fault node1 delay_ms=200")["ok"])
        t0 = time.time()
        a.send(make_frame([1], 0, 1, b"late"))
        self.assertIsNone(b.recv(0.1))
        self.assertEqual(parse_frame(b.recv(2))[4], b"late")
        self.assertGreaterEqual(time.time() - t0, 0.19)
        self.assertTrue(self.sw.ctl("fault node1 clear")["ok"])
        t0 = time.time()
        a.send(make_frame([1], 0, 1, b"now"))
        self.assertEqual(parse_frame(b.recv(2))[4], b"now")
        self.assertLess(time.time() - t0, 0.15)

    def test_link_down_holds_then_up_delivers(self):
        a, b = self.client(0), self.client(1)
        self.wait_connected(1)
        self.assertTrue(self.sw.ctl("link 1 down")["ok"])
        self.assertEqual(self.sw.port(1)["state"], "down")
        for i in range(20):
            a.send(make_frame([1], 0, 1, struct.pack(">I", i)))
        self.assertIsNone(b.recv(0.3))
        # the downed link does not read either: its node's frames wait
        b.send(make_frame([0], 1, 0, b"held"))
        self.assertIsNone(a.recv(0.2))
        self.assertTrue(self.sw.ctl("link 1 up")["ok"])
        got = [struct.unpack(">I", parse_frame(f)[4])[0] for f in b.recv_all(limit=20)]
        self.assertEqual(got, list(range(20)))
        self.assertEqual(parse_frame(a.recv())[4], b"held")
        drops = sum(v for k, v in self.sw.port(0).items() if k.startswith("drop_"))
        self.assertEqual(drops, 0)

    def test_bad_fault_commands(self):
        self.assertFalse(self.sw.ctl("fault 1 drop=2")["ok"])
        self.assertFalse(self.sw.ctl("fault 1 wobble=0.1")["ok"])
        self.assertFalse(self.sw.ctl("fault 77 drop=0.1")["ok"])
        self.assertFalse(self.sw.ctl("link 1 sideways")["ok"])
        self.assertFalse(self.sw.ctl("frobnicate")["ok"])
        self.assertTrue(self.sw.ctl("help")["ok"])
        self.assertTrue(self.sw.ctl("fault s0:1 drop=0.5 dup=0.1")["ok"])
        f = self.sw.port(1)["faults"]
        self.assertEqual((f["drop"], f["dup"]), (0.5, 0.1))


class TestCounters(SwitchTest):
    def test_counters(self):
        a, b = self.client(0), self.client(1)
        self.wait_connected(1)
        sizes = [1, 10, 100, 1000, 4096]
        total = 0
        for s in sizes:
            fr = make_frame([1], 0, 1, bytes(s))
            total += len(fr)
            a.send(fr)
        self.assertEqual(len(b.recv_all(limit=5)), 5)
        p0, p1 = self.sw.port(0), self.sw.port("node1")
        self.assertEqual((p0["rx_frames"], p0["rx_bytes"]), (5, total))
        self.assertEqual((p1["tx_frames"], p1["tx_bytes"]), (5, total - 5))
        self.assertEqual(self.sw.port("s0:1"), p1)
        st = self.sw.ctl("stats")
        self.assertTrue(st["ok"])
        ports = st["switches"][0]["ports"]
        self.assertEqual(len(ports), 4)
        self.assertEqual(ports[1]["tx_frames"], 5)
        self.assertFalse(self.sw.ctl("stats 9")["ok"])

    def test_quit(self):
        self.assertTrue(self.sw.ctl("quit")["ok"])
        self.assertEqual(self.sw.proc.wait(5), 0)
        self.assertFalse(os.path.exists(self.sw.node(0)))
        self.expect_exit = True


class TestBadInput(SwitchTest):
    def test_garbage_and_oversized(self):
        a, b, c = self.client(0), self.client(1), self.client(2)
        for i in range(3):
            self.wait_connected(i)
        a.send_raw(struct.pack(">I", 0))            # zero length
        a.send(b"\x01garbage")                      # no route
        a.send(make_frame([1], 0, 1, b"ok"))
        self.assertEqual(parse_frame(b.recv())[4], b"ok")
        p = self.sw.port(0)
        self.assertEqual((p["drop_garbage_len"], p["drop_bad_route"]), (1, 1))
        # an impossible length: the stream is closed, counted
        c.send_raw(struct.pack(">I", 0x7fffffff) + b"junk")
        self.assertTrue(c.closed_by_peer())
        self.assertEqual(self.sw.port(2)["drop_oversized"], 1)
        # random bytes: whatever happens to them, the switch keeps serving
        rnd = random.Random(7)
        c2 = self.client(2)
        self.wait_connected(2)
        for _ in range(50):
            ln = rnd.randrange(0, 3000)
            c2.send_raw(struct.pack(">I", ln) +
                        bytes(rnd.randrange(256) for _ in range(ln)))
        a.send(make_frame([1], 0, 1, b"still"))
        frames = b.recv_all(idle=0.3)
        self.assertIn(b"still", [parse_frame(f)[4] for f in frames
                                 if f and not f[0] & 0x80 and len(f) >= 12
                                 and f[0] == 1])

    def test_half_frame_then_stall(self):
        a, b, c = self.client(0), self.client(1), self.client(2)
        for i in range(3):
            self.wait_connected(i)
        c.send_raw(struct.pack(">I", 1000) + b"\x81" + bytes(100))  # never finished
        for i in range(100):
            a.send(make_frame([1], 0, 1, struct.pack(">I", i)))
        self.assertEqual(len(b.recv_all(limit=100)), 100)
        self.assertEqual(self.sw.port(1)["tx_frames"], 100)


MAP_MAGIC = b"NVMMAP\x00\x01"


def map_msg(kind, cookie, ret=b""):
    """struct nvm_map_msg (include/netvm/mapper.h), big-endian, 64 bytes."""
    return (MAP_MAGIC + struct.pack(">BBHIIHHQ16s", kind, len(ret), 0, cookie,
                                    0, 0, 0, 0, b"") +
            ret.ljust(8, b"\0") + struct.pack(">HHI", 0, 0, 0))


def parse_switch_reply(payload):
    kind, _, nports, cookie, _, _, in_port, sid, name = struct.unpack(
        ">BBHIIHHQ16s", payload[8:48])
    return dict(kind=kind, nports=nports, cookie=cookie, in_port=in_port,
                id=sid, name=name.rstrip(b"\0").decode())


class TestMapperProbe(unittest.TestCase):
    """Switch probes (route byte 0xff): the switch answers out of the port the
    probe came in on, behind the return route that follows the byte."""

    def test_probe_one_and_two_hops(self):
        with tempfile.NamedTemporaryFile("w", suffix=".topo") as f:
            f.write(TWO_SWITCHES)
            f.flush()
            sw = Switch("--topology", f.name)
        try:
            c0 = Client(sw.node(0))
            c2 = Client(sw.node(2))
            time.sleep(0.1)
            # switch a, probed from node 0 on a:0, answers straight back
            c0.send(make_frame([0x7f], 0, 0xffff, map_msg(1, 0x1234)))
            route, t, src, dst, payload, ok = parse_frame(c0.recv())
            self.assertTrue(ok)
            self.assertEqual((route, t, src, dst), (b"", 1, 0xfffe, 0))
            a = parse_switch_reply(payload)
            self.assertEqual((a["kind"], a["cookie"], a["in_port"], a["nports"],
                              a["name"]), (2, 0x1234, 0, 4, "a"))
            # switch b through a:3; b answers out of b:2, a needs 0x80 back
            c0.send(make_frame([3, 0x7f, 0], 0, 0xffff, map_msg(1, 7)))
            route, t, src, dst, payload, ok = parse_frame(c0.recv())
            self.assertTrue(ok)
            b = parse_switch_reply(payload)
            self.assertEqual((b["kind"], b["cookie"], b["in_port"], b["name"]),
                             (2, 7, 2, "b"))
            self.assertNotEqual(a["id"], b["id"])
            # from node 2 the same switch b has the same id
            c2.send(make_frame([0x7f], 2, 0xffff, map_msg(1, 9)))
            b2 = parse_switch_reply(parse_frame(c2.recv())[4])
            self.assertEqual((b2["id"], b2["in_port"]), (b["id"], 0))
            self.assertEqual(sw.port("a:0")["map_probes"], 1)
            self.assertEqual(sw.port("b:2")["map_probes"], 1)
            # malformed probes: counted, nothing answered, switch serves on
            for bad in (make_frame([0x7f], 0, 0, b"short"),
                        make_frame([0x7f], 0, 0, map_msg(3, 1)),
                        make_frame([0x7f], 0, 0, map_msg(1, 1), ptype=2),
                        bytes([0xff]) + bytes([0x81] * 9) + b"\x01" * 80):
                c0.send(bad)
            self.assertEqual(c0.recv_all(idle=0.5), [])
            self.assertEqual(sw.port("a:0")["drop_bad_probe"], 4)
            c0.send(make_frame([3, 0], 0, 2, b"still routing"))
            self.assertEqual(parse_frame(c2.recv())[4], b"still routing")
            c0.close()
            c2.close()
            self.assertTrue(sw.alive())
        finally:
            sw.stop()


def have_tshark():
    return shutil.which("tshark") is not None


class TestCapture(SwitchTest):
    def test_pcap(self):
        a, b = self.client(0), self.client(1)
        self.wait_connected(1)
        path = os.path.join(self.sw.dir, "cap.pcap")
        self.assertTrue(self.sw.ctl("capture start " + path)["ok"])
        for i in range(10):
            a.send(make_frame([1], 0, 1, b"pkt%d" % i))
        a.send(make_frame([1, 3], 0, 3, bytes(64)))   # a route byte left
        self.assertEqual(len(b.recv_all(limit=11)), 11)
        self.assertTrue(self.sw.ctl("capture stop")["ok"])
        with open(path, "rb") as f:
            data = f.read()
        magic, major, minor, _, _, snap, link = struct.unpack("<IHHiIII", data[:24])
        self.assertEqual((magic, major, minor, link), (0xa1b2c3d4, 2, 4, 147))
        off, recs = 24, []
        while off < len(data):
            _, _, incl, orig = struct.unpack("<IIII", data[off:off + 16])
            self.assertEqual(incl, orig)
            recs.append(data[off + 16:off + 16 + incl])
            off += 16 + incl
        self.assertEqual(off, len(data))
        self.assertEqual(len(recs), 11)
        for i, r in enumerate(recs[:10]):
            self.assertEqual(r[:2], bytes([0, 1]))       # switch 0, port 1
            self.assertEqual(parse_frame(r[4:])[4], b"pkt%d" % i)
        if not have_tshark():
            # a developer may lack it; under CI the check must run
            self.assertFalse(os.environ.get("CI", "").lower() not in ("", "0", "false"),
                             "tshark not installed, and CI is set")
            self.skipTest("tshark not installed: dissector not checked")
        lua = os.path.join(FABRIC_DIR, "netvm.lua")
        env = dict(os.environ, HOME=self.sw.dir)
        r = subprocess.run(["tshark", "-X", "lua_script:" + lua, "-r", path,
                            "-T", "fields", "-e", "netvm.port", "-e", "netvm.src",
                            "-e", "netvm.dst", "-e", "netvm.len",
                            "-e", "netvm.crc.status", "-e", "netvm.route"],
                           capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.strip().split("\n")
        self.assertEqual(len(lines), 11, r.stdout)
        self.assertEqual(lines[0].split("\t")[:5], ["1", "0", "1", "4", "1"])
        self.assertEqual(lines[10].split("\t"), ["1", "0", "3", "64", "1", "0x83"])
        r = subprocess.run(["tshark", "-X", "lua_script:" + lua, "-r", path, "-V"],
                           capture_output=True, text=True, env=env, timeout=60)
        self.assertNotIn("Malformed", r.stdout)
        self.assertNotIn("Lua: Error", r.stdout + r.stderr)


class TestShutdown(unittest.TestCase):
    def test_sigterm_removes_sockets(self):
        sw = Switch("--ports", "3")
        files = sorted(os.listdir(sw.dir))
        self.assertEqual(files, ["control.sock", "node0.sock", "node1.sock",
                                 "node2.sock"])
        sw.proc.send_signal(signal.SIGTERM)
        self.assertEqual(sw.proc.wait(5), 0)
        self.assertEqual(os.listdir(sw.dir), [])
        sw.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
