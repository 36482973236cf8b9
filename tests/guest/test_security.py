#!/usr/bin/python3
"""Hostile peers on a real cluster (docs/security.md): frames put on the
wire with ./netvm inject, as if a node had sent them.

    tests/guest/test_security.py b2b      2 VMs back to back: forged sources
                                          dropped by the receiving NIC
                                          (peer-node, rx-bad-src), garbage
                                          from the true peer, a raw flood at
                                          a node with no raw reader while
                                          NetVM traffic to it goes on
    tests/guest/test_security.py switch4  4 VMs through netvm-switch: forged
                                          sources dropped at the attacker's
                                          port (drop_bad_src); node 2 sends
                                          forged and garbage frames at node 1
                                          while node 0's transfers to node 1
                                          finish byte-verified

After each attack the victim's window (a seeded region) is checked byte
for byte and every QEMU must still be alive.  TAP output; the cluster is
't-sec-GROUP' and is always torn down.
"""
import json
import os
import socket
import struct
import sys
import threading
import time

from guestlib import ClusterShell, Tap, diag, run_parallel, sysfs_counters, tap_cluster_main

KiB = 1024
RAW, NETVM = 1, 2               # include/netvm/packet.h
SWITCH_NODE = 0xfffe            # include/netvm/mapper.h
NVM_NET_WRITE, NVM_CF_PHYS = 1, 0x08
SEEDED = (0, 256 * KiB, 41)     # the victim's seeded region: offset, length, seed


class TodoTap(Tap):
    def todo(self, cond, desc, why, diag_=""):
        """A check of a known defect (TAP TODO): reported, not failed."""
        self.n += 1
        print("%s %d - %s # TODO %s" % ("ok" if cond else "not ok", self.n, desc, why), flush=True)
        if not cond:
            for line in str(diag_).splitlines():
                print("# " + line, flush=True)
        return cond


T = TodoTap()
CLUSTER = None


G = ClusterShell(sh_timeout=300)    # named by main()
nv, sh, state_dir = G.nv, G.sh, G.state_dir


def pattern(k, size):
    """netvm_pattern_fill (guest-lib/netvm_pattern.c): what netvm-raw recv checks."""
    b = bytearray((k * 131 + i * 7) & 0xff for i in range(size))
    if size >= 4:
        b[0:4] = struct.pack("<I", k)
    return bytes(b)


def pkt(ptype, src, dst, payload, version=1, hlen=None):
    """nvm_pkt_hdr + payload (the CRC is added by inject --crc)."""
    return struct.pack(">BBHHH", ptype, version, src, dst,
                       len(payload) if hlen is None else hlen) + payload


def phys_write(src, dst, pa, data):
    """A NetVM WRITE with NVM_CF_PHYS at physical address pa (struct
    nvm_net_hdr, 72 bytes): what a kernel endpoint sends."""
    net = struct.pack(">BBHHHIIIIIIQQIIIIII", NVM_NET_WRITE, NVM_CF_PHYS, 0, 0, 0,
                      1, 0, 1, 0, 1, 0, pa, 0, 0, 0, 0, 0, 0, len(data))
    assert len(net) == 72
    return pkt(NETVM, src, dst, net + data)


def inject(frm, to, data, count=1, crc=True):
    args = ["inject", "--from", frm, "--to", to, "--hex", data.hex(), "--count", count]
    return nv(*(args + (["--crc"] if crc else [])), timeout=600)


def fw_counters(node):
    return sysfs_counters(sh, node)


def counter(node, name):
    """One of the driver's counters in sysfs (-1 if unreadable)."""
    rc, out, err = sh(node, "cat /sys/class/netvm/netvm0/" + name)
    return int(out) if rc == 0 and out.strip().isdigit() else -1


def bad_src_by_node():
    """The NICs' rx-bad-src column of ./netvm status (read over QMP)."""
    rc, out, err = nv("status")
    lines = out.splitlines()
    hdr = [i for i, l in enumerate(lines) if l.startswith("nic ")]
    if not hdr:
        return rc, {}, out + err
    res = {}
    for l in lines[hdr[0] + 1:]:
        if not l[:1].isdigit():
            break
        res[int(l.split()[0])] = l.split()[-1]     # "bad src" is the last column
    return rc, res, out + err


def switch_port(node):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(os.path.join(state_dir(), "control.sock"))
    s.sendall(b"stats node%d\n" % node)
    ans = json.loads(s.makefile("rb").readline())
    s.close()
    return ans["port"]


def window_pas(nodes):
    pa = {}
    for n in nodes:
        rc, out, err = nv("run", n, "--", "netvm-ktest", "pa")
        if not T.ok(rc == 0 and out.strip().startswith("0x"), "node %d: NetVM on, test window" % n,
                    diag(rc, out, err)):
            raise SystemExit(1)
        pa[n] = int(out.strip(), 16)
    return pa


def seed_victim(victim):
    rc, out, err = nv("run", victim, "--", "netvm-ktest", "fill", *SEEDED)
    T.ok(rc == 0, "node %d: seeded region %d KiB (seed %d) filled" % (victim, SEEDED[1] // KiB, SEEDED[2]),
         diag(rc, out, err))


def victim_intact(victim, what):
    rc, out, err = nv("run", victim, "--", "netvm-ktest", "check", *SEEDED)
    T.ok(rc == 0, "%s: node %d's seeded region is byte for byte what it was" % (what, victim),
         diag(rc, out, err))
    rc, out, err = nv("status")
    T.ok(rc == 0, "%s: every QEMU alive and every agent answers" % what, diag(rc, out, err))


def transfers(frm, to, pa, rounds=2, size=64 * KiB):
    """frm writeP's to to's window beyond the seeded region and readP's the
    seeded region back, both verified; rc 0 if all went through."""
    cmds = []
    for r in range(rounds):
        cmds.append("netvm-ktest write %d %#x %d %d %d" % (to, pa[to] + 512 * KiB, 0, size, 60 + r))
        cmds.append("netvm-ktest read %d %#x %d %d && netvm-ktest check %d %d %d" % (
            to, pa[to] + SEEDED[0], 256 * KiB, SEEDED[1], 256 * KiB, SEEDED[1], SEEDED[2]))
    res = run_parallel(sh, {"x": (frm, " && ".join(cmds))})["x"]
    check = nv("run", to, "--", "netvm-ktest", "check", 512 * KiB, size, 60 + rounds - 1)
    return res, check


def forged_raw(attacker, victim, forged_srcs, tag, cut_crc):
    """A raw reader on the victim; forged raw frames, a header cut short
    before its source, then two honest ones (pattern frames 0 and 1): the
    reader must get exactly the honest two, from the attacker.  cut_crc:
    give the cut header a CRC (a NIC checks the CRC first; the switch
    does not check CRCs)."""
    res = {}

    def reader():
        res["r"] = nv("run", victim, "--", "netvm-raw", "recv", 2, 20000, timeout=120)
    th = threading.Thread(target=reader)
    th.start()
    time.sleep(3)           # the reader has the device open (frames queue anyway)
    ok = True
    for s in forged_srcs:
        ok &= inject(attacker, victim, pkt(RAW, s, victim, pattern(0, 100)))[0] == 0
    ok &= inject(attacker, victim, bytes([RAW, 1, 0]), crc=cut_crc)[0] == 0   # names no source
    for k in (0, 1):
        ok &= inject(attacker, victim, pkt(RAW, attacker, victim, pattern(k, 100)))[0] == 0
    th.join()
    rc, out, err = res["r"]
    T.ok(ok, "%s: inject %d forged frames, a cut header and 2 honest raw frames at node %d" % (
        tag, len(forged_srcs), victim))
    T.ok(rc == 0 and "from node %d, 0 bad" % attacker in out,
         "%s: node %d's raw reader got exactly the 2 honest frames, from node %d" % (tag, victim, attacker),
         diag(rc, out, err))
    return len(forged_srcs) + 1


def group_b2b():
    pa = window_pas([0, 1])
    seed_victim(1)
    rc, bad, out = bad_src_by_node()
    T.ok(bad == {0: "0", 1: "0"}, "status: rx-bad-src 0 on both NICs", out)

    # forged sources on the link into node 1: dropped by its NIC
    n = forged_raw(0, 1, [5, 1, SWITCH_NODE], "forged sources", cut_crc=True)
    rc, bad, out = bad_src_by_node()
    T.ok(bad == {0: "0", 1: str(n)}, "status: node 1's NIC dropped and counted exactly %d" % n, out)

    # garbage from the true peer: refused by CRC or by the firmware, counted
    before = fw_counters(1)
    ok = inject(0, 1, pkt(RAW, 0, 1, b"crc?") + b"\0\0\0\0", count=20, crc=False)[0] == 0
    ok &= inject(0, 1, pkt(RAW, 0, 1, b"len lies", hlen=4000), count=20)[0] == 0
    ok &= inject(0, 1, pkt(0x55, 0, 1, b"no such type"), count=20)[0] == 0
    ok &= inject(0, 1, pkt(RAW, 0, 1, b"version 7", version=7), count=20)[0] == 0
    after = fw_counters(1)
    T.ok(ok and after.get("rx_bad_frame", 0) - before.get("rx_bad_frame", 0) == 60,
         "garbage from node 0 (20 bad CRC, 60 bad headers): node 1's firmware counts "
         "exactly 60 bad frames", "before %s\nafter %s" % (before.get("rx_bad_frame"),
                                                            after.get("rx_bad_frame")))
    res, check = transfers(0, 1, pa)
    T.ok(res[0] == 0 and check[0] == 0, "after the garbage: writeP/readP 0 -> 1 verified",
         diag(*res) + "\n" + diag(*check))
    victim_intact(1, "forged and garbage frames")

    # a raw flood at node 1, nobody reading raw frames there, while node 0's
    # NetVM traffic to node 1 goes on
    flood = {}

    def flooder():
        flood["r"] = nv("inject", "--from", 0, "--hex", pkt(RAW, 0, 1, pattern(7, 1000)).hex(),
                        "--crc", "--count", 300, timeout=300)
    rx0, dropped0 = counter(1, "raw_rx"), counter(1, "raw_rx_dropped")
    th = threading.Thread(target=flooder)
    th.start()
    res, check = transfers(0, 1, pa, rounds=1)
    th.join()
    T.ok(flood["r"][0] == 0, "a flood of 300 raw frames injected towards node 1", diag(*flood["r"]))
    T.ok(res[0] == 0 and check[0] == 0,
         "raw flood at a node with no raw reader: its NetVM traffic still completes, verified "
         "(the driver holds the link for raw_hold_ms at most)",
         diag(*res) + "\n" + diag(*check))
    rx, dropped = counter(1, "raw_rx") - rx0, counter(1, "raw_rx_dropped") - dropped0
    T.ok(dropped > 0 and rx + dropped == 300,
         "node 1's driver queued %d and dropped %d of the 300 frames: every one counted" % (rx, dropped))
    # whatever was held is released by a reader; then the node works again
    sh(1, "netvm-raw recv 400 1000 >/dev/null 2>&1; true", timeout=300)
    res, check = transfers(0, 1, pa, rounds=1)
    T.ok(res[0] == 0 and check[0] == 0, "after a reader drained the flood: writeP/readP 0 -> 1 verified",
         diag(*res) + "\n" + diag(*check))
    victim_intact(1, "raw flood")


def group_switch4():
    nodes = [0, 1, 2, 3]
    pa = window_pas(nodes)
    victim, attacker, third = 1, 2, 0
    seed_victim(victim)

    n = forged_raw(attacker, victim, [0, 3, victim, SWITCH_NODE, 0x1234], "forged sources",
                   cut_crc=False)
    p = switch_port(attacker)
    T.ok(p["drop_bad_src"] == n and p["injected"] == n + 2,
         "switch: node %d's port dropped and counted exactly %d forged frames (%d injected)" % (
             attacker, n, n + 2), json.dumps(p))
    T.ok(all(switch_port(x)["drop_bad_src"] == 0 for x in (0, 1, 3)),
         "switch: no frame of the honest nodes was taken for forged")

    # node 2 sends node 1 an empty route table as the mapper would: the
    # switch lets only the mapper's node (0) send SCOUT and ROUTES
    look = "cat /sys/class/netvm/netvm0/mapper /sys/class/netvm/netvm0/routes"
    rc0, before, err0 = sh(victim, look)
    routes = (b"NVMMAP\0\1" + struct.pack(">BBHIIHHQ16s8sHHI", 5, 0, 0, 7, 999, victim, 0, 0,
                                              b"", b"", 0, 0, 0))
    rc, out, err = inject(attacker, victim, pkt(RAW, attacker, victim, routes))
    rc1, after, err1 = sh(victim, look)
    p = switch_port(attacker)
    T.ok(rc == 0 and rc0 == rc1 == 0 and before == after and "generation 999" not in after and
         p["drop_not_mapper"] == 1,
         "a ROUTES table from node %d is dropped at its port; node %d's routes unchanged" % (
             attacker, victim), diag(rc, out, err) + "\nbefore:\n%s\nafter:\n%s\n%s" % (
             before, after, json.dumps(p)))

    # node 2 attacks node 1 while node 0's transfers to node 1 go on
    attack = [(pkt(NETVM, 0, victim, b"\xee" * 64), 50, True),                   # forged as node 0
              (phys_write(third, victim, pa[victim], b"\xee" * 256), 50, True),  # PHYS write as node 0
              (phys_write(3, victim, pa[victim] + 4096, b"\xee" * 256), 50, True),
              (pkt(RAW, attacker, victim, b"bad crc") + b"\1\2\3\4", 100, False),
              (pkt(NETVM, attacker, victim, os.urandom(600), hlen=3), 100, True),
              (pkt(0x66, attacker, victim, os.urandom(200)), 100, True)]
    forged = sum(c for d, c, _ in attack if struct.unpack(">H", d[2:4])[0] != attacker)
    done = {}

    def attacker_fn():
        done["r"] = [inject(attacker, victim, d, count=c, crc=crc) for d, c, crc in attack]
    before = switch_port(attacker)
    th = threading.Thread(target=attacker_fn)
    th.start()
    res, check = transfers(third, victim, pa, rounds=3)
    th.join()
    T.ok(all(r[0] == 0 for r in done["r"]), "node %d injected %d frames at node %d (%d forged)" % (
        attacker, sum(c for _, c, _ in attack), victim, forged),
        "\n".join(diag(*r) for r in done["r"]))
    T.ok(res[0] == 0 and check[0] == 0,
         "meanwhile node %d's writeP/readP to node %d finished, every byte verified" % (third, victim),
         diag(*res) + "\n" + diag(*check))
    after = switch_port(attacker)
    T.ok(after["drop_bad_src"] - before["drop_bad_src"] == forged and
         after["injected"] - before["injected"] == sum(c for _, c, _ in attack),
         "switch: exactly the %d forged frames dropped at node %d's port" % (forged, attacker),
         json.dumps(after))
    victim_intact(victim, "forged and garbage frames through the switch")


GROUPS = {"b2b": (group_b2b, 2), "switch4": (group_switch4, 4)}


def main():
    global CLUSTER
    if len(sys.argv) != 2 or sys.argv[1] not in GROUPS:
        print("usage: test_security.py %s" % "|".join(GROUPS), file=sys.stderr)
        return 2
    CLUSTER = G.name = "t-sec-" + sys.argv[1]
    fn, n = GROUPS[sys.argv[1]]
    return tap_cluster_main(T, CLUSTER, n, fn)


if __name__ == "__main__":
    sys.exit(main())
