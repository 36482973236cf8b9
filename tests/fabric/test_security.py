#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""netvm-switch against hostile nodes (docs/security.md): sender
authentication on node ports, the control socket's frame injection, and
random bytes whose fate is predicted frame by frame and checked against
the switch's counters and deliveries.

Same environment as test_fabric.py; run one class: test_security.py
TestSourceAuth.
"""
import os
import random
import socket
import struct
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_fabric import (TWO_SWITCHES, Client, Switch, SwitchTest,  # noqa: E402
                         make_frame, map_msg, parse_frame)

SWITCH_NODE = 0xfffe    # include/netvm/mapper.h: src_node of switch replies


class TestSourceAuth(SwitchTest):
    def test_forged_sources_dropped_and_counted(self):
        c = [self.client(i) for i in range(3)]
        for i in range(3):
            self.wait_connected(i)
        forged = [
            make_frame([1], 2, 1, b"claims node 2"),
            make_frame([1], SWITCH_NODE, 1, b"claims a switch"),
            make_frame([1], 0x8000, 1, b"claims 0x8000"),
            bytes([0x81, 0x01, 0x01, 0x00]),       # header cut inside src_node
            bytes([0x81, 0x81, 0x01]),             # routes, then no source
        ]
        for fr in forged:
            c[0].send(fr)
        c[0].send(make_frame([1], 0, 1, b"honest"))
        c[2].send(make_frame([1], 2, 1, b"node 2 itself"))
        got = [parse_frame(f) for f in c[1].recv_all(limit=3)]
        self.assertEqual([(g[2], g[4], g[5]) for g in got],
                         [(0, b"honest", True), (2, b"node 2 itself", True)])
        p0, p1, p2 = (self.sw.port(i) for i in range(3))
        self.assertEqual((p0["drop_bad_src"], p0["rx_frames"]), (5, 6))
        self.assertEqual((p2["drop_bad_src"], p2["rx_frames"]), (0, 1))
        self.assertEqual((p1["tx_frames"], p1["drop_bad_src"]), (2, 0))
        self.assertEqual(p0["node"], 0)

    def test_checked_where_the_frame_enters(self):
        """Two switches: a forged frame from b's node is dropped at b:0; an
        honest one crosses the internal link a:3-b:2 (not a node port, not
        checked) and arrives; the mapper's probes still get answers."""
        with tempfile.NamedTemporaryFile("w", suffix=".topo") as f:
            f.write(TWO_SWITCHES)
            f.flush()
            sw = Switch("--topology", f.name)
        try:
            c0, c2 = Client(sw.node(0)), Client(sw.node(2))
            for spec in ("node0", "node2"):
                self.assertTrue(_wait_up(sw, spec))
            c2.send(make_frame([2, 0], 0, 0, b"forged as node 0"))
            c2.send(make_frame([2, 0], 2, 0, b"from node 2"))
            got = [parse_frame(x) for x in c0.recv_all(limit=2)]
            self.assertEqual([(g[2], g[4]) for g in got], [(2, b"from node 2")])
            self.assertEqual(sw.port("b:0")["drop_bad_src"], 1)
            self.assertEqual(sw.port("b:2")["drop_bad_src"], 0)
            self.assertEqual(sw.port("a:3")["node"], -1)
            # a probe of switch b from node 2 is answered (src is node 2)
            c2.send(make_frame([0x7f], 2, 0xffff, map_msg(1, 5)))
            route, t, src, dst, payload, ok = parse_frame(c2.recv())
            self.assertEqual((route, t, src, dst, ok), (b"", 1, SWITCH_NODE, 2, True))
            self.assertEqual(sw.port("b:0")["map_probes"], 1)
            c0.close()
            c2.close()
            self.assertTrue(sw.alive())
        finally:
            sw.stop()


def _wait_up(sw, spec, tries=200):
    for _ in range(tries):
        if sw.port(spec)["state"] == "up":
            return True
        time.sleep(0.01)
    return False


class TestMapperAuthority(SwitchTest):
    """--mapper 0: only node 0 may send SCOUT and ROUTES (a ROUTES replaces
    the receiver's whole route table); probes and replies are anyone's."""
    args = ("--ports", "4", "--mapper", "0")

    def test_only_the_mapper_scouts_and_routes(self):
        c = [self.client(i) for i in range(3)]
        for i in range(3):
            self.wait_connected(i)
        routes, scout = map_msg(5, 1), map_msg(3, 2)
        for m in (routes, scout):
            c[1].send(make_frame([2], 1, 2, m))                 # dropped
        c[1].send(make_frame([2], 1, 2, map_msg(4, 3)))         # a SCOUT_REPLY passes
        c[1].send(make_frame([2], 1, 2, routes[:60]))           # too short to be one
        got = [parse_frame(f)[2:5:2] for f in c[2].recv_all(limit=2)]
        self.assertEqual(got, [(1, map_msg(4, 3)), (1, routes[:60])])
        self.assertIsNone(c[2].recv(0.2))
        self.assertEqual(self.sw.port(1)["drop_not_mapper"], 2)
        c[0].send(make_frame([2], 0, 2, routes))                # the mapper's own
        self.assertEqual(parse_frame(c[2].recv())[2:5:2], (0, routes))
        c[1].send(make_frame([0x7f], 1, 0xffff, map_msg(1, 9)))  # a probe is answered
        self.assertEqual(parse_frame(c[1].recv())[2], SWITCH_NODE)
        # hand the role to node 1, then to anyone
        self.assertEqual(self.sw.ctl("mapper"), {"ok": True, "mapper": 0})
        self.assertEqual(self.sw.ctl("mapper 1"), {"ok": True, "mapper": 1})
        c[1].send(make_frame([2], 1, 2, routes))
        c[0].send(make_frame([2], 0, 2, routes))
        self.assertEqual([parse_frame(f)[2] for f in c[2].recv_all(limit=2)], [1])
        self.assertEqual(self.sw.port(0)["drop_not_mapper"], 1)
        self.assertEqual(self.sw.ctl("mapper any"), {"ok": True, "mapper": -1})
        c[0].send(make_frame([2], 0, 2, routes))
        self.assertEqual(parse_frame(c[2].recv())[2], 0)
        for bad in ("mapper -1", "mapper x", "mapper 65535", "mapper 1 2"):
            self.assertFalse(self.sw.ctl(bad)["ok"], bad)
        self.assertEqual(self.sw.ctl("mapper")["mapper"], -1)


class TestInject(SwitchTest):
    args = ("--ports", "4", "--queue-frames", "2", "--stall-timeout", "0")

    def inject(self, port, data):
        return self.sw.ctl("inject %s %s" % (port, data.hex()))

    def test_injected_frames_enter_as_from_the_node(self):
        b = self.client(1)
        self.wait_connected(1)
        fr = make_frame([1], 0, 1, bytes(range(256)) * 3)
        self.assertEqual(self.inject("node0", fr), {"ok": True, "held": False})
        self.assertEqual(b.recv(), fr[1:])          # route byte stripped, rest exact
        # forged: the switch's own check drops it
        self.assertTrue(self.inject(0, make_frame([1], 3, 1, b"forged"))["ok"])
        # any bytes at all: a lone header byte, a route to nowhere
        self.assertTrue(self.inject("s0:0", b"\x01")["ok"])
        self.assertTrue(self.inject(0, bytes([0x8f]) + fr[1:])["ok"])
        self.assertIsNone(b.recv(0.3))
        p0 = self.sw.port(0)
        self.assertEqual((p0["injected"], p0["rx_frames"], p0["drop_bad_src"],
                          p0["drop_bad_route"], p0["drop_no_port"]), (4, 4, 1, 1, 1))
        self.assertEqual(p0["rx_bytes"], 2 * len(fr) + len(make_frame([1], 3, 1, b"forged")) + 1)
        self.assertEqual(self.sw.port(1)["tx_frames"], 1)

    def test_bad_inject_commands(self):
        for cmd in ("inject", "inject 0", "inject 0 abc", "inject 0 zz",
                    "inject 9 0101", "inject 0 " + "00" * 65601,
                    "inject 0 01 02"):
            ans = self.sw.ctl(cmd)
            self.assertFalse(ans["ok"], cmd[:40])
        self.assertEqual(self.sw.port(0)["injected"], 0)
        self.sw.ctl("link 0 down")
        self.assertEqual(self.inject(0, make_frame([1], 0, 1, b"x")),
                         {"ok": False, "error": "port down"})
        self.assertTrue(self.sw.alive())

    def test_full_output_drops_like_the_socket(self):
        """Injection meets a full output as a frame from the socket does:
        with node 1 not reading, frames that find its queue full are
        dropped and counted at node 1's port (drop_queue_full), never held,
        and the frames kept arrive in order once node 1 reads."""
        b = self.client(1)
        self.wait_connected(1)
        b.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        big = [make_frame([1], 0, 1, struct.pack(">I", i) + bytes(60000))
               for i in range(64)]
        for fr in big:
            self.assertEqual(self.inject(0, fr), {"ok": True, "held": False})
        self.assertFalse(self.sw.port(0)["blocked_input"])
        p1 = self.sw.port(1)
        self.assertGreater(p1["drop_queue_full"], 0)
        self.assertEqual(p1["tx_frames"] + p1["queue_frames"] + p1["drop_queue_full"], 64)
        kept = 64 - p1["drop_queue_full"]
        got = b.recv_all(idle=1.0, limit=kept)
        self.assertEqual([struct.unpack(">I", parse_frame(f)[4][:4])[0] for f in got],
                         list(range(kept)))
        self.assertIsNone(b.recv(0.3))
        self.assertEqual(self.inject(0, big[0]), {"ok": True, "held": False})
        self.assertEqual(b.recv(), big[0][1:])


class TestHostileBytes(SwitchTest):
    """Random frames from node 0, each one's fate predicted by the rules of
    docs/fabric.md: counters exact, deliveries byte for byte."""
    args = ("--ports", "4", "--max-frame", "3000", "--stall-timeout", "0")

    def random_frame(self, rnd):
        kind = rnd.randrange(6)
        dst = rnd.choice([1, 2, 3, 3, 9, 0x7e])       # 3: nobody there
        if kind == 0:       # anything
            return bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40)))
        if kind == 1:       # truncated header
            return bytes([0x80 | dst]) + bytes([1, 1, 0])[:rnd.randrange(4)]
        if kind == 2:       # forged source
            return make_frame([dst], rnd.choice([1, 2, 0xfffe, 0x100]), dst,
                              os.urandom(rnd.randrange(100)))
        if kind == 3:       # honest header, lying length, bad CRC, odd type
            hdr = struct.pack(">BBHHH", rnd.randrange(128), rnd.randrange(256),
                              0, dst, rnd.randrange(65536))
            return bytes([0x80 | dst]) + hdr + os.urandom(rnd.randrange(2800))
        if kind == 4:       # several route bytes
            return bytes(0x80 | rnd.randrange(128) for _ in range(rnd.randrange(1, 12))) + \
                make_frame([], 0, dst, b"deep")
        return make_frame([dst], 0, dst, os.urandom(rnd.randrange(200)))

    @staticmethod
    def fate(fr):
        """What the switch does with fr from node 0: (counter, out port)."""
        if len(fr) < 2 or not fr[0] & 0x80:
            return "drop_bad_route", None
        port = fr[0] & 0x7f
        if port == 0x7f:
            return "drop_bad_probe", None       # none of these is a probe
        i = 0
        while i < len(fr) and fr[i] & 0x80:
            i += 1
        if len(fr) - i < 4 or struct.unpack(">H", fr[i + 2:i + 4])[0] != 0:
            return "drop_bad_src", None
        if port >= 4:
            return "drop_no_port", None
        if port == 3:
            return "drop_port_down", None
        return "tx", port

    def test_random_frames(self):
        c = [self.client(i) for i in range(3)]
        for i in range(3):
            self.wait_connected(i)
        rnd = random.Random(14)
        want = {"drop_bad_route": 0, "drop_bad_probe": 0, "drop_bad_src": 0,
                "drop_no_port": 0, "drop_port_down": 0}
        out = {0: [], 1: [], 2: []}
        for _ in range(400):
            fr = self.random_frame(rnd)
            what, port = self.fate(fr)
            if port is None:
                want[what] += 1
            else:
                out[port].append(fr[1:])
            c[0].send(fr)
        c[0].send(make_frame([1], 0, 1, b"last"))
        out[1].append(make_frame([1], 0, 1, b"last")[1:])
        for p in (1, 2):
            self.assertEqual(c[p].recv_all(idle=0.5, limit=len(out[p])), out[p])
            self.assertIsNone(c[p].recv(0.1))
        self.assertEqual(c[0].recv_all(idle=0.2), out[0])
        p0 = self.sw.port(0)
        self.assertEqual({k: p0[k] for k in want}, want)
        self.assertEqual(p0["rx_frames"], 401)
        self.assertGreater(min(want.values()), 0)   # every rule was exercised

    def test_length_limits(self):
        """max-frame bytes pass; one more closes the stream (counted) and
        the node reconnects; a length prefix cut short then a close is
        forgotten."""
        a, b = self.client(0), self.client(1)
        self.wait_connected(1)
        body = 3000 - 1 - 8 - 4
        fr = make_frame([1], 0, 1, bytes(body))
        self.assertEqual(len(fr), 3000)
        a.send(fr)
        self.assertEqual(b.recv(), fr[1:])
        a.send(make_frame([1], 0, 1, bytes(body + 1)))
        self.assertTrue(a.closed_by_peer())
        self.assertEqual(self.sw.port(0)["drop_oversized"], 1)
        a2 = self.client(0)
        self.wait_connected(0)
        a2.send_raw(b"\x00\x00")
        a2.close()
        for _ in range(200):        # the switch saw a2 leave: the port is free
            if self.sw.port(0)["disconnects"] == 2:
                break
            time.sleep(0.01)
        a3 = self.client(0)
        self.wait_connected(0)
        a3.send(make_frame([1], 0, 1, b"again"))
        self.assertEqual(parse_frame(b.recv())[4], b"again")


if __name__ == "__main__":
    unittest.main(verbosity=2)
