#!/usr/bin/python3
"""Device fuzzer for the lanai NIC: random sequences of register writes,
doorbells, SRAM contents, host-DMA descriptors, guest memory and incoming
frames, run through QEMU's qtest protocol against the ASan/UBSan QEMU
(build/qemu-asan, qemu-device/build-qemu.sh --asan).

Out of process, after QEMU's generic-fuzz: one QEMU runs many sequences
(a system_reset between them) and is restarted every RESTART sequences,
so a crash's reproducer is the sequences that QEMU ran (at most RESTART).
Coverage is what the device says it did: the distinct trace points it hit
(lanai_* trace events, the firmware's typed lanai_fw_* events and its state
transitions, event types, error paths), read from QEMU's trace log.  A sequence that hits a point
no earlier one hit joins the in-memory corpus and is mutated further.

  devfuzz.py --qemu PATH [--seconds N] [--seed S] [--corpus DIR]
             [--work DIR] [--replay FILE]

Sequences are text, one operation a line (tests/devfuzz/corpus/*.seq):
  w OFF VAL        write register OFF (BAR0)
  r OFF            read register OFF
  s OFF VAL        write the SRAM dword at OFF (BAR2)
  d OFF VAL        doorbell write at OFF (BAR4)
  b OFF            doorbell read at OFF (BAR4: a page's yield word, else an error)
  m ADDR HEX       write bytes to guest memory
  f HEX            a frame from the peer (the link's far end)
  c NS             advance the virtual clock
  x VEC ADDR DATA  program MSI-X vector VEC
  stop | cont      QMP stop / cont
Numbers are hex (0x...) or decimal.  Exit status: 0 no crash, 1 a crash
or hang (reproducer written to WORK/crash-N.seq), 2 usage or set-up error.
"""
import argparse
import os
import random
import re
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

# PCI placement and BAR addresses the fuzzer assigns (pc machine, no BIOS)
DEVFN = 4 << 3
BAR_REGS, BAR_MSIX, BAR_SRAM, BAR_DB = 0xe1000000, 0xe1001000, 0xe0000000, 0xe1040000
SRAM_SIZE = 8 * 1024 * 1024      # NetVM needs 8 MiB (docs/hardware.md)
REGS_SIZE, DB_SIZE = 4096, 256 * 1024
GUEST_BUF = 0x100000            # guest RAM the sequences use for DMA
GUEST_SPAN = 0x40000
RESTART = 32                    # sequences per QEMU process
OP_TIMEOUT = 30                 # seconds: an answer later than this is a hang

# registers (include/netvm/lanai_regs.h)
REGS = {
    "ISR": 0x050, "EIMR": 0x058, "IT0": 0x060, "RTC": 0x068, "CPUC": 0x078,
    "IT1": 0x0c0, "IT2": 0x0c8, "MYRINET": 0x130, "LED": 0x140,
    "ID": 0x200, "VERSION": 0x204, "FW_VERSION": 0x208, "NODE_ID": 0x20c,
    "SRAM_SIZE": 0x210, "LAYOUT_OFF": 0x214, "LINK": 0x218, "FW_STATE": 0x21c,
    "EVQ_BASE_LO": 0x220, "EVQ_BASE_HI": 0x224, "EVQ_LEN": 0x228,
    "EVQ_CONS": 0x22c, "EVQ_PROD": 0x230, "DB_STATUS": 0x234,
    "DB_OVERFLOWS": 0x238, "ST_ADDR_LO": 0x240, "ST_ADDR_HI": 0x244,
    "ST_LEN": 0x248, "ST_SEED": 0x24c, "ST_CMD": 0x250, "ST_STATUS": 0x254,
    "ST_IRQ": 0x258, "SCRATCH": 0x25c, "EVQ_LOST": 0x260, "ERRORS": 0x264,
    "DB_YIELDS": 0x268,
    "HDMA_DESC": 0x300, "HDMA_STATUS": 0x304, "SEND_OFF": 0x310,
    "SEND_LEN": 0x314, "SEND_CTRL": 0x318, "SEND_COUNT": 0x31c,
    "RECV_RING": 0x320, "RECV_SLOTS": 0x324, "RECV_SLOT_SIZE": 0x328,
    "RECV_CTRL": 0x32c, "RECV_COUNT": 0x330, "RECV_DROPS": 0x334,
}
DB_RAW_TX, DB_RAW_RX = 0x52415754, 0x52415752
DB_YIELD = 0xffc                # a page's yield word (LANAI_DB_YIELD)
ID_MAGIC = 0x4e564d4c


# The firmware's layout (raw rings etc.), read once from a booted firmware
# by probe_layout(); the generator aims descriptors at it.
LAYOUT = {"raw_tx_ring": 0x1000, "raw_tx_len": 16, "raw_rx_ring": 0x2000, "raw_rx_len": 16,
          "ep_base": 0x100000, "ep_count": 0, "ep_stride": 0x8000, "staging": 0x4000}
LAYOUT_FIELDS = ["magic", "version", "sram_size", "fw_version", "raw_tx_ring", "raw_tx_len",
                 "raw_rx_ring", "raw_rx_len", "raw_max_payload", "wire_rx_ring", "wire_rx_slots",
                 "wire_rx_slot_size", "staging", "staging_size", "counters", "counters_len",
                 "ep_base", "ep_count", "ep_stride"]


def num(s):
    return int(s, 0)


class Crash(Exception):
    """QEMU died or stopped answering."""


class Qemu:
    """One QEMU under qtest, its QMP monitor and its link's far end."""

    def __init__(self, binary, work):
        self.work = work
        self.dir = tempfile.mkdtemp(prefix="q", dir=work)
        self.log = os.path.join(self.dir, "trace.log")
        self.err = os.path.join(self.dir, "stderr")
        qsock, msock = os.path.join(self.dir, "qtest"), os.path.join(self.dir, "qmp")
        lq, lm = socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)
        lq.bind(qsock)
        lm.bind(msock)
        lq.listen(1)
        lm.listen(1)
        self.peer, theirs = socket.socketpair()
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=66",
                   UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=67")
        argv = [binary, "-machine", "pc", "-accel", "qtest", "-nodefaults", "-display", "none",
                "-m", "64", "-qtest", "unix:" + qsock, "-qtest-log", "/dev/null", "-qmp", "unix:" + msock,
                "-netdev", "stream,id=l0,addr.type=fd,addr.str=%d" % theirs.fileno(),
                "-device", "lanai,netdev=l0,node-id=1,addr=04.0,sram-size=%d" % SRAM_SIZE,
                "-trace", "lanai_*", "-D", self.log]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(self.err, "wb"), env=env,
                                     pass_fds=(theirs.fileno(),))
        theirs.close()
        lq.settimeout(OP_TIMEOUT)
        lm.settimeout(OP_TIMEOUT)
        try:
            self.q, _ = lq.accept()
            self.m, _ = lm.accept()
        except socket.timeout:
            raise Crash("QEMU did not connect")
        finally:
            lq.close()
            lm.close()
        self.qbuf = b""
        self.mbuf = b""
        self.batch = []
        self.log_pos = 0
        self.qmp_read()                                  # greeting
        self.qmp("qmp_capabilities")
        self.pci_setup()
        # the stream netdev attaches its peer from the main loop, shortly
        # after start: sequences begin with the link up
        for _ in range(500):
            if self.readl(BAR_REGS + REGS["LINK"]) & 1:
                break
            time.sleep(0.01)
        else:
            raise Crash("the link never came up")

    # ---- transport ----
    def _line(self, sock, attr):
        while b"\n" not in getattr(self, attr):
            r, _, _ = select.select([sock], [], [], OP_TIMEOUT)
            if not r:
                raise Crash("hang: no answer in %d s" % OP_TIMEOUT)
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                raise Crash("QEMU closed its socket")
            setattr(self, attr, getattr(self, attr) + data)
        buf = getattr(self, attr)
        line, rest = buf.split(b"\n", 1)
        setattr(self, attr, rest)
        return line.decode(errors="replace")

    def cmd(self, line):
        self.flush()
        try:
            self.q.sendall((line + "\n").encode())
        except OSError:
            raise Crash("QEMU closed its socket")
        while True:
            ans = self._line(self.q, "qbuf")
            if ans.startswith("IRQ"):
                continue
            if not ans.startswith("OK"):
                raise Crash("qtest answered %r to %r" % (ans, line))
            return ans

    def send(self, line):
        """Queue a qtest command; flush() sends the queue in one write and
        reads the answers (a batch is processed in one read by QEMU, so
        bottom halves run between batches, not between its commands)."""
        self.batch.append(line)
        if len(self.batch) >= 64:
            self.flush()

    def flush(self):
        if not self.batch:
            return
        lines, self.batch = self.batch, []
        try:
            self.q.sendall(("\n".join(lines) + "\n").encode())
        except OSError:
            raise Crash("QEMU closed its socket")
        for line in lines:
            while True:
                ans = self._line(self.q, "qbuf")
                if not ans.startswith("IRQ"):
                    break
            if not ans.startswith("OK"):
                raise Crash("qtest answered %r to %r" % (ans, line))

    def qmp_read(self):
        while True:
            line = self._line(self.m, "mbuf")
            if '"event"' not in line:
                return line

    def qmp(self, name):
        self.flush()
        try:
            self.m.sendall(('{"execute": "%s"}\n' % name).encode())
        except OSError:
            raise Crash("QEMU closed its monitor")
        ans = self.qmp_read()
        if '"return"' not in ans:
            raise Crash("QMP %s: %s" % (name, ans))

    def readl(self, addr):
        self.flush()
        return int(self.cmd("readl 0x%x" % addr).split()[1], 16)

    def writel(self, addr, val):
        self.send("writel 0x%x 0x%x" % (addr, val & 0xffffffff))

    # ---- PCI: place the BARs, enable memory and bus mastering, MSI-X ----
    def cfg_read(self, reg):
        self.flush()
        self.cmd("outl 0xcf8 0x%x" % (0x80000000 | DEVFN << 8 | reg))
        return int(self.cmd("inl 0xcfc").split()[1], 16)

    def cfg_write(self, reg, val):
        self.send("outl 0xcf8 0x%x" % (0x80000000 | DEVFN << 8 | reg))
        self.send("outl 0xcfc 0x%x" % val)

    def pci_setup(self):
        if self.cfg_read(0) != 0x4e5614c1:
            raise Crash("no lanai at 00:04.0")
        for reg, addr in ((0x10, BAR_REGS), (0x14, BAR_MSIX), (0x18, BAR_SRAM), (0x20, BAR_DB)):
            self.cfg_write(reg, addr)
        self.cfg_write(0x04, 0x6)
        cap = self.cfg_read(0x34) & 0xff
        while cap:
            hdr = self.cfg_read(cap)
            if hdr & 0xff == 0x11:
                self.cfg_write(cap, hdr | 0x8000 << 16)        # MSI-X enable
                break
            cap = (hdr >> 8) & 0xff
        if self.readl(BAR_REGS + REGS["ID"]) != ID_MAGIC:
            raise Crash("device registers not where they were put")

    def reset(self):
        self.qmp("system_reset")
        self.pci_setup()

    # ---- coverage: trace points hit since the last call ----
    def trace_points(self):
        pts = set()
        try:
            with open(self.log, "rb") as f:
                f.seek(self.log_pos)
                data = f.read()
                self.log_pos += len(data)
        except OSError:
            return pts
        for line in data.decode(errors="replace").splitlines():
            m = re.match(r"(?:\d+@[\d.]+:)?(lanai_\w+) ?(.*)", line)
            if not m:
                continue
            name, rest = m.group(1), m.group(2)
            if name in ("lanai_fw_state", "lanai_fw_op_state", "lanai_fw_pend_state"):
                # a state machine's transition ("raw_tx: fetch -> send";
                # a request id first for ops and pending entries)
                what = rest if name == "lanai_fw_state" else \
                    name[len("lanai_fw_"):] + ": " + rest.split(": ", 1)[-1]
                pts.add("fw:" + what)
            elif name.startswith("lanai_fw_"):
                # the firmware's typed trace points (fw_trace_events.h)
                pts.add("fw:" + name[len("lanai_fw_"):])
            elif name == "lanai_event":
                pts.add("event:type" + rest.split(" ")[1])
            elif name in ("lanai_reg_write", "lanai_reg_read"):
                pts.add(name + ":" + rest.split(" ")[1])
            elif name == "lanai_recv_drop":
                pts.add("drop:" + rest.split(" ")[0])
            else:
                pts.add(name)
        return pts

    def close(self):
        try:
            self.m.sendall(b'{"execute": "quit"}\n')
        except OSError:
            pass
        for s in (self.q, self.m, self.peer):
            try:
                s.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def death(self):
        """QEMU's exit and the sanitizer report, after a Crash."""
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        with open(self.err, errors="replace") as f:
            err = f.read()
        return self.proc.returncode, err


def run_op(q, op):
    w = op.split()
    k = w[0]
    if k == "w":
        q.writel(BAR_REGS + (num(w[1]) & (REGS_SIZE - 4)), num(w[2]))
    elif k == "r":
        q.send("readl 0x%x" % (BAR_REGS + (num(w[1]) & (REGS_SIZE - 4))))
    elif k == "s":
        q.writel(BAR_SRAM + (num(w[1]) & (SRAM_SIZE - 4)), num(w[2]))
    elif k == "d":
        q.writel(BAR_DB + (num(w[1]) & (DB_SIZE - 4)), num(w[2]))
    elif k == "b":
        q.send("readl 0x%x" % (BAR_DB + (num(w[1]) & (DB_SIZE - 4))))
    elif k == "m":
        data = bytes.fromhex(w[2]) if len(w) > 2 else b""
        if data:
            q.send("write 0x%x 0x%x 0x%s" % (num(w[1]), len(data), data.hex()))
    elif k == "f":
        data = bytes.fromhex(w[1]) if len(w) > 1 else b""
        q.flush()
        try:
            q.peer.sendall(struct.pack(">I", len(data)) + data)
        except OSError:
            raise Crash("link closed")
    elif k == "c":
        q.send("clock_step %d" % num(w[1]))
    elif k == "x":
        vec, addr, data = num(w[1]) & 1, num(w[2]), num(w[3])
        base = BAR_MSIX + vec * 16
        q.writel(base, addr)
        q.writel(base + 4, addr >> 32)
        q.writel(base + 8, data)
        q.writel(base + 12, 0)
    elif k in ("stop", "cont"):
        q.qmp(k)
    else:
        raise ValueError("unknown operation %r" % op)


# ---- generating and mutating sequences ----

def rand_value(r):
    c = r.random()
    if c < 0.25:
        return r.choice([0, 1, 2, 3, 4, 7, 8, 16, 64, 255, 256, 4096, 4352,
                         0x7fffffff, 0x80000000, 0xfffffff0, 0xffffffff,
                         SRAM_SIZE, SRAM_SIZE - 4, SRAM_SIZE - 8, SRAM_SIZE - 16])
    if c < 0.45:
        return r.choice([BAR_REGS, BAR_SRAM, BAR_DB, BAR_MSIX]) + r.randrange(0, 4096, 4)
    if c < 0.65:
        return GUEST_BUF + r.randrange(0, GUEST_SPAN, 16)
    if c < 0.8:
        return r.randrange(0, 0x10000)
    return r.getrandbits(32)


def rand_frame(r):
    """A link frame: route bytes sometimes, a header of any type, a payload,
    the CRC over header and payload (usually right)."""
    route = bytes(0x80 | r.randrange(128) for _ in range(r.choice([0, 0, 0, 1, 3])))
    ptype = r.choice([1, 2, 3, r.randrange(256)])
    plen = r.choice([0, 1, 8, 64, 72, 100, 1024, 4096, 4224, r.randrange(5000)])
    body = bytes(r.getrandbits(8) for _ in range(min(plen, 256))) + bytes(max(0, plen - 256))
    hlen = plen if r.random() < 0.8 else r.randrange(0x10000)
    hdr = struct.pack(">BBHHH", ptype, r.choice([1, 1, 1, 0, 2]), r.randrange(4),
                      r.choice([1, 1, 1, 0, 2, 0xffff]), hlen)
    if ptype == 2 and r.random() < 0.7 and plen >= 72:
        net = struct.pack(">BBHHHIIIIII", r.randrange(1, 9), r.randrange(256), r.randrange(4),
                          r.randrange(4), r.randrange(8), r.getrandbits(32), r.getrandbits(32),
                          r.randrange(1, 64), r.randrange(64), r.getrandbits(32), r.getrandbits(32))
        body = net + body[len(net):]
    crc = zlib.crc32(hdr + body)
    if r.random() < 0.1:
        crc ^= 1
    return route + hdr + body + struct.pack(">I", crc)


def raw_desc_ops(r, tx, gen=None):
    """A raw descriptor in the firmware's tx or rx ring, OWN set last, and
    its doorbell: the host side of the raw-frame path.  gen: the
    generator's next index per ring (the firmware takes them in order)."""
    ring = LAYOUT["raw_tx_ring" if tx else "raw_rx_ring"]
    n = max(1, LAYOUT["raw_tx_len" if tx else "raw_rx_len"])
    if gen is not None and r.random() < 0.9:
        idx = gen["tx" if tx else "rx"] % n
        gen["tx" if tx else "rx"] += 1
    else:
        idx = r.randrange(n + (1 if r.random() < 0.05 else 0))
    d = ring + idx * 32
    host = GUEST_BUF + r.randrange(0, GUEST_SPAN, 64) if r.random() < 0.85 else rand_value(r)
    ln = r.choice([1, 8, 64, 1000, 4096, 4096, 4096, 4097, 0, rand_value(r)]) if tx else \
        r.choice([4096, 4096, 4096, 16, 0, rand_value(r)])
    route_len = r.choice([0, 0, 0, 0, 0, 1, 2, 9])
    ops = ["s 0x%x 0x%x" % (d, host & 0xffffffff), "s 0x%x 0x%x" % (d + 4, host >> 32),
           "s 0x%x 0x%x" % (d + 8, ln),
           "s 0x%x 0x%x" % (d + 16, r.choice([0x80808080, 0x01020304, r.getrandbits(32)])),
           "s 0x%x 0x%x" % (d + 12, 1 | route_len << 16)]
    ops.append("d 0x0 0x%x" % (DB_RAW_TX if tx else DB_RAW_RX))
    return ops


def rand_op(r, gen=None):
    """One operation, or a few that belong together (a list)."""
    c = r.random()
    if c < 0.12:
        return raw_desc_ops(r, r.random() < 0.5, gen)
    c = r.random()
    if c < 0.30:
        off = r.choice(list(REGS.values())) if r.random() < 0.95 else r.randrange(0, REGS_SIZE, 4)
        val = rand_value(r)
        if off == REGS["CPUC"]:
            val = r.choice([0, 1, 1, 1, 2, 3, val])
        return "w 0x%x 0x%x" % (off, val)
    if c < 0.35:
        return "r 0x%x" % r.choice(list(REGS.values()))
    if c < 0.55:
        off = r.choice([r.randrange(0, 0x400, 4), r.randrange(0, 0x20000, 4),
                        r.randrange(0, SRAM_SIZE, 4), 0x10000 + r.randrange(0, 0x100, 4)])
        return "s 0x%x 0x%x" % (off, rand_value(r))
    if c < 0.70:
        page = r.randrange(0, 64) if r.random() < 0.3 else r.randrange(0, 4)
        val = r.choice([DB_RAW_TX, DB_RAW_RX, r.randrange(0, 64), rand_value(r)])
        return "d 0x%x 0x%x" % (page * 4096 + r.randrange(0, 64, 4), val)
    if c < 0.72:
        page = r.randrange(0, 64)
        return "b 0x%x" % (page * 4096 + (DB_YIELD if r.random() < 0.8 else r.randrange(0, 4096, 4)))
    if c < 0.78:
        addr = GUEST_BUF + r.randrange(0, GUEST_SPAN, 8)
        n = r.choice([4, 8, 16, 32, 64])
        return "m 0x%x %s" % (addr, bytes(r.getrandbits(8) for _ in range(n)).hex())
    if c < 0.88:
        return "f " + rand_frame(r).hex()
    if c < 0.95:
        return "c %d" % r.choice([1000, 100000, 1000000, 20000000, 100000000])
    if c < 0.98:
        return "x %d 0x%x 0x%x" % (r.randrange(2), rand_value(r), r.getrandbits(32))
    return r.choice(["stop", "cont"])


def firmware_prologue(r):
    """Event ring in guest memory and the firmware started: most of the
    device is behind a running firmware."""
    ops = ["w 0x220 0x%x" % (GUEST_BUF + GUEST_SPAN), "w 0x224 0", "w 0x228 0x40",
           "w 0x58 0xffffffff", "x 0 0x%x 0x100" % (GUEST_BUF + GUEST_SPAN + 0x1000)]
    if r.random() < 0.7:
        ops.append("w 0x78 1")
    return ops


def generate(r):
    ops = firmware_prologue(r) if r.random() < 0.8 else []
    gen = {"tx": 0, "rx": 0}
    for _ in range(r.randrange(5, 120)):
        op = rand_op(r, gen)
        ops += op if isinstance(op, list) else [op]
    return ops


def mutate(r, seq, corpus):
    ops = list(seq)
    for _ in range(r.randrange(1, 8)):
        c = r.random()
        if c < 0.3 or not ops:
            op = rand_op(r)
            i = r.randrange(len(ops) + 1)
            ops[i:i] = op if isinstance(op, list) else [op]
        elif c < 0.5:
            del ops[r.randrange(len(ops))]
        elif c < 0.75:
            i = r.randrange(len(ops))
            w = ops[i].split()
            if w[0] in ("w", "s", "d") and len(w) == 3:
                w[2] = "0x%x" % rand_value(r)
                ops[i] = " ".join(w)
            else:
                op = rand_op(r)
                ops[i:i + 1] = op if isinstance(op, list) else [op]
        elif corpus:
            other = r.choice(corpus)
            if other:
                a = r.randrange(len(other))
                ops[r.randrange(len(ops) + 1):0] = other[a:a + r.randrange(1, 20)]
    return ops[:400]


def load_seq(path):
    with open(path) as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]


def write_crash(work, n, history, why, rc, err):
    path = os.path.join(work, "crash-%d.seq" % n)
    with open(path, "w") as f:
        f.write("# devfuzz reproducer: %s, QEMU exit %s\n" % (why, rc))
        f.write("# replay: tests/devfuzz/devfuzz.py --qemu QEMU --replay %s\n" % path)
        for i, seq in enumerate(history):
            f.write("# --- sequence %d (a system_reset before it)\n" % i if i else "")
            for op in seq:
                f.write(op + "\n")
            if i + 1 < len(history):
                f.write("reset\n")
    with open(path + ".stderr", "w") as f:
        f.write(err[-20000:])
    return path


def run_sequences(q, seqs):
    """Run sequences with a reset between them (the 'reset' op in a
    reproducer)."""
    for seq in seqs:
        for op in seq:
            if op == "reset":
                q.reset()
            else:
                run_op(q, op)
        q.flush()


def probe_layout(a):
    """Boot the firmware once and read its layout, so that generated
    descriptors land in its rings."""
    q = Qemu(a.qemu, a.work)
    try:
        q.writel(BAR_REGS + REGS["CPUC"], 1)
        for _ in range(100):
            if q.readl(BAR_REGS + REGS["FW_STATE"]) == 2:
                break
            q.cmd("clock_step 1000000")
        off = q.readl(BAR_REGS + REGS["LAYOUT_OFF"])
        for i, name in enumerate(LAYOUT_FIELDS):
            LAYOUT[name] = q.readl(BAR_SRAM + off + 4 * i)
    finally:
        q.close()
        shutil.rmtree(q.dir, ignore_errors=True)
    print("devfuzz: firmware layout: raw tx ring 0x%x x%d, rx ring 0x%x x%d, %d endpoints" %
          (LAYOUT["raw_tx_ring"], LAYOUT["raw_tx_len"], LAYOUT["raw_rx_ring"],
           LAYOUT["raw_rx_len"], LAYOUT["ep_count"]))


def fuzz(a):
    r = random.Random(a.seed)
    probe_layout(a)
    corpus = []
    if a.corpus:
        for name in sorted(os.listdir(a.corpus)):
            if name.endswith(".seq"):
                corpus.append(load_seq(os.path.join(a.corpus, name)))
    seen = set()
    execs = crashes = 0
    start = time.monotonic()
    deadline = start + a.seconds
    q, history = None, []
    pending = list(corpus)          # the seeds run first, as they are
    while time.monotonic() < deadline:
        if q is None:
            q = Qemu(a.qemu, a.work)
            history = []
        if pending:
            seq = pending.pop(0)
        elif corpus and r.random() < 0.6:
            seq = mutate(r, r.choice(corpus), corpus)
        else:
            seq = generate(r)
        history.append(seq)
        try:
            if len(history) > 1:
                q.reset()
            run_sequences(q, [seq])
            q.readl(BAR_REGS + REGS["ID"])      # alive and answering
        except Crash as e:
            rc, err = q.death()
            crashes += 1
            path = write_crash(a.work, crashes, history, str(e), rc, err)
            report = [ln for ln in err.splitlines() if "ERROR:" in ln or "runtime error" in ln
                      or "SUMMARY" in ln][:5]
            print("devfuzz: CRASH after %d executions: %s, exit %s" % (execs, e, rc))
            for ln in report:
                print("devfuzz:   " + ln)
            print("devfuzz:   reproducer: %s" % path)
            q = None
            if not a.keep_going:
                break
            continue
        execs += 1
        new = q.trace_points() - seen
        if new:
            seen |= new
            corpus.append(seq)
        if len(history) >= RESTART:
            q.close()
            shutil.rmtree(q.dir, ignore_errors=True)
            q = None
    if q is not None:
        q.close()
        shutil.rmtree(q.dir, ignore_errors=True)
    secs = time.monotonic() - start
    fw = sorted(p for p in seen if p.startswith("fw:"))
    ev = sorted(p for p in seen if p.startswith("event:"))
    regs = sorted(p for p in seen if p.startswith("lanai_reg_write:"))
    errs = sorted(p for p in seen if p.startswith("lanai_err_") or p.startswith("drop:"))
    other = sorted(p for p in seen if p not in fw + ev + regs + errs and not p.startswith("lanai_reg_read:"))
    print("devfuzz: %d executions in %.0f s (%.1f/s), %d crashes, seed %d" %
          (execs, secs, execs / secs if secs else 0, crashes, a.seed))
    print("devfuzz: coverage: %d trace points: %d registers written, %d firmware trace names, "
          "%d event types, %d error/drop paths, %d other device paths; corpus %d sequences" %
          (len(seen), len(regs), len(fw), len(ev), len(errs), len(other), len(corpus)))
    print("devfuzz:   error/drop paths: " + " ".join(errs))
    print("devfuzz:   device paths: " + " ".join(other))
    print("devfuzz:   firmware: " + " ".join(p[3:] for p in fw))
    return 1 if crashes else 0


def replay(a):
    seq = load_seq(a.replay)
    q = Qemu(a.qemu, a.work)
    try:
        run_sequences(q, [seq])
        q.readl(BAR_REGS + REGS["ID"])
    except Crash as e:
        rc, err = q.death()
        print("devfuzz: replay crashed: %s, exit %s" % (e, rc))
        print(err[-4000:])
        return 1
    q.close()
    shutil.rmtree(q.dir, ignore_errors=True)
    print("devfuzz: replay ran %d operations, no crash" % len(seq))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--qemu", required=True, help="the ASan/UBSan qemu-system-x86_64")
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--corpus", help="directory of seed sequences (*.seq)")
    p.add_argument("--work", default=None, help="scratch and crash reproducers (default: a temp dir)")
    p.add_argument("--replay", help="run one sequence file on a fresh QEMU")
    p.add_argument("--keep-going", action="store_true", help="go on after a crash")
    a = p.parse_args()
    if not os.access(a.qemu, os.X_OK):
        print("devfuzz: %s not built: run ./netvm build" % a.qemu, file=sys.stderr)
        return 2
    a.work = a.work or tempfile.mkdtemp(prefix="devfuzz-")
    os.makedirs(a.work, exist_ok=True)
    try:
        return replay(a) if a.replay else fuzz(a)
    except Crash as e:
        print("devfuzz: set-up failed: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
