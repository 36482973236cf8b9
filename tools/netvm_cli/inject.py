"""./netvm inject: put arbitrary bytes on a cluster's wire as if a node had
sent them (docs/security.md, the hostile-peer harness).

Through the switch the bytes enter the sending node's port (control
command `inject nodeN HEX`): routed, checked and counted there like
anything that node's NIC sends, so a forged source is dropped at the
switch.  On a back-to-back pair they go into the receiving node's
nodeI.inject FIFO, read by a filter-redirector on its link (cluster.py
link_auth): they reach its NIC as if they came off the cable, where
peer-node checks the source.
"""
import os
import socket
import struct
import time
import zlib

from . import fabric
from .command import Command
from .common import NetvmError, rel

BUSY_RETRY_S = 0.01
# Longer than the switch's default stall timeout (5 s), after which it
# flushes a stuck output and the port moves again.
BUSY_GIVE_UP_S = 30


def frame_bytes(c, frm, to, data, crc):
    """data, with the route from frm to to in front when going through the
    switch and to is given, and the CRC appended when crc is set."""
    st = c.require_up()
    rl = 0
    while rl < len(data) and data[rl] & 0x80:
        rl += 1
    if crc:
        data = data + struct.pack(">I", zlib.crc32(data[rl:]) & 0xffffffff)
    if st.get("fabric") and to is not None:
        route = st["fabric"]["routes"].get(str(frm), {}).get(str(to))
        if route is None:
            raise NetvmError("inject: no route from node %d to node %d" % (frm, to))
        data = bytes.fromhex(route) + data
    return data


def _via_switch(c, frm, data, count):
    path = c.path("control.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    line = ("inject node%d %s\n" % (frm, data.hex())).encode()
    held = 0
    try:
        s.connect(path)
        f = s.makefile("rb")
        sent = 0
        moved = time.monotonic()
        while sent < count:
            s.sendall(line)
            ans = fabric.parse_answer(f.readline(), "inject")
            if ans.get("ok"):
                sent += 1
                held += bool(ans.get("held"))
                moved = time.monotonic()
            elif "busy" in ans.get("error", ""):
                if time.monotonic() - moved > BUSY_GIVE_UP_S:
                    raise NetvmError("inject: node%d's port held by a full output for %d s "
                                     "(%d of %d frames sent)" % (frm, BUSY_GIVE_UP_S, sent, count))
                time.sleep(BUSY_RETRY_S)    # back-pressure, as a NIC waits
            else:
                raise NetvmError("switch: inject: %s" % ans.get("error", "failed"))
    except OSError as e:
        raise NetvmError("switch control socket %s: %s" % (rel(path), e.strerror or e))
    finally:
        s.close()
    return held


def _back_to_back(c, to, data, count):
    path = c.path("node%d.inject" % to)
    try:
        # non-blocking open: ENXIO instead of waiting if no QEMU reads it
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        raise NetvmError("node %d's inject FIFO %s: %s (a cluster started before "
                         "./netvm inject existed has none)" % (to, rel(path), e.strerror))
    try:
        os.set_blocking(fd, True)
        rec = struct.pack(">I", len(data)) + data
        for _ in range(count):
            view = memoryview(rec)
            while view:
                view = view[os.write(fd, view):]
    except OSError as e:
        raise NetvmError("node %d's inject FIFO %s: %s" % (to, rel(path), e.strerror))
    finally:
        os.close(fd)


MAX_FRAME = 65600   # netvm-switch's default --max-frame; QEMU's stream takes as much


def cmd_inject(c, frm, to, data, crc=False, count=1):
    st = c.require_up()
    n = len(st["nodes"])
    for what, v in (("--from", frm), ("--to", to)):
        if v is not None and not 0 <= v < n:
            raise NetvmError("inject: %s %d: cluster '%s' has nodes 0..%d" % (what, v, c.name, n - 1))
    if count < 1:
        raise NetvmError("inject: --count must be at least 1")
    data = frame_bytes(c, frm, to, data, crc)
    if not 1 <= len(data) <= MAX_FRAME:
        raise NetvmError("inject: a frame is 1..%d bytes, not %d" % (MAX_FRAME, len(data)))
    if st.get("fabric"):
        fabric.require_fabric(c)
        held = _via_switch(c, frm, data, count)
        print("injected %d frame(s) of %d bytes at node%d's switch port%s" % (
            count, len(data), frm, " (%d held by back-pressure)" % held if held else ""))
        return 0
    if n != 2:
        raise NetvmError("inject: cluster '%s' has no link (1 node)" % c.name)
    if to is None:
        to = 1 - frm
    if to != 1 - frm:
        raise NetvmError("inject: back to back, node %d's frames can only reach node %d"
                         % (frm, 1 - frm))
    _back_to_back(c, to, data, count)
    print("injected %d frame(s) of %d bytes on the link into node %d" % (count, len(data), to))
    return 0


def read_frame_arg(path, hexstr):
    """./netvm inject's bytes: FILE's contents or --hex."""
    if hexstr is not None:
        try:
            return bytes.fromhex(hexstr)
        except ValueError:
            raise NetvmError("inject: --hex: not an even number of hex digits")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise NetvmError("inject: %s: %s" % (path, e.strerror))


def add_inject_args(sp):
    sp.add_argument("--from", dest="frm", type=int, required=True, metavar="NODE", help="the sender")
    sp.add_argument("--to", type=int, metavar="NODE",
                    help="through the switch: put the static route to NODE in front (routes.json); "
                    "back to back: the other node (default)")
    src = sp.add_mutually_exclusive_group(required=True)
    src.add_argument("file", nargs="?", metavar="FILE", help="the frame's bytes")
    src.add_argument("--hex", metavar="HEX", help="the frame's bytes in hex")
    sp.add_argument("--crc", action="store_true",
                    help="append the CRC-32 of the bytes after any route bytes, as a NIC does")
    sp.add_argument("--count", type=int, default=1, metavar="N", help="send it N times (default 1)")
    sp.set_defaults(func=lambda a, c: cmd_inject(c, a.frm, a.to, read_frame_arg(a.file, a.hex),
                                                 a.crc, a.count))


COMMANDS = [
    Command("inject", "put arbitrary bytes on the wire as if NODE had sent them (through the switch: "
            "into its port; back to back: into the other node's link)", add_inject_args),
]
