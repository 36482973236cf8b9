#!/usr/bin/python3
"""Guest test group multihost: one cluster over two "hosts" without a
second machine (docs/cluster.md, "libvirt and several hosts").

Two network namespaces made here, A (10.99.0.1) and B (10.99.0.2) on a
veth pair, each run one netvm-switch process (--only) of a two-switch
topology whose inter-switch link is TCP from B to A's address, and nodes
on their own switch's TCP ports: nodes 0 and 1 in A, node 2 in B.  The
nodes are ./netvm's own QEMU command lines (Cluster.qemu_cmd) with the
link over TCP, started in their namespace; the test reaches each node's
agent there (ip netns exec ... ./netvm run).

  - the mapper in node 0 finds all 3 nodes across both switches
  - NetVM writeP and readP between every ordered pair, every byte verified
  - B's veth taken down during a transfer from node 0 to node 2 and put
    up again: the transfer completes, its bytes verified (nothing lost)
  - afterwards no QEMU, switch or namespace of the test is left

Root only (namespaces).  TAP output.  Environment: NETVM,
NETVM_TEST_BOOT_TIMEOUT.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

from guestlib import BOOT_TIMEOUT, NETVM, REPO, Tap, cluster_processes, diag, run

sys.path.insert(0, os.path.join(REPO, "tools"))
sys.dont_write_bytecode = True
from netvm_cli import cluster as clustermod  # noqa: E402

T = Tap()
CLUSTER = "t-guest-multihost"
TAG = "%d" % os.getpid()
NS = {"A": "nvmh-a-" + TAG, "B": "nvmh-b-" + TAG}
ADDR = {"A": "10.99.0.1", "B": "10.99.0.2"}
HOST_OF = {0: "A", 1: "A", 2: "B"}
NODE_BASE = 7000          # node N's switch port: 127.0.0.1:7000+N in its namespace
LINK_PORT = 7100          # the inter-switch link: B connects to A's address
TOPOLOGY = """switch a 3
switch b 3
link a:2 b:2 tcp:%s:%d
node 0 a:0
node 1 a:1
node 2 b:0
""" % (ADDR["A"], LINK_PORT)
SWITCH_OF = {"A": "a", "B": "b"}
W = 1 << 20
MEM = 384


def ip(*args):
    r = subprocess.run(["ip"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError("ip %s: %s" % (" ".join(args), r.stdout.strip()))


def in_ns(host, argv):
    return ["ip", "netns", "exec", NS[host]] + [str(a) for a in argv]


def nv(node, *args, timeout=180):
    """./netvm --cluster CLUSTER ARGS in node's namespace (its agent's port
    forward is on that namespace's loopback)."""
    return run(in_ns(HOST_OF[node], [NETVM, "--cluster", CLUSTER] + list(args)), timeout=timeout)


def ktest(node, *args):
    return nv(node, "run", node, "--", "netvm-ktest", *args, timeout=180)


class Hosts:
    def __init__(self):
        self.c = clustermod.Cluster(CLUSTER)
        self.switches = []

    def make_namespaces(self):
        for h in "AB":
            ip("netns", "add", NS[h])
            ip("-n", NS[h], "link", "set", "lo", "up")
        ip("link", "add", "vmh" + TAG[-6:], "type", "veth", "peer", "name", "vmhb" + TAG[-6:])
        for h, dev in (("A", "vmh" + TAG[-6:]), ("B", "vmhb" + TAG[-6:])):
            ip("link", "set", dev, "netns", NS[h])
            ip("-n", NS[h], "addr", "add", ADDR[h] + "/24", "dev", dev)
            ip("-n", NS[h], "link", "set", dev, "up")
        self.dev_b = "vmhb" + TAG[-6:]

    def start_switches(self):
        topo = self.c.path("fabric.topo")
        with open(topo, "w") as f:
            f.write(TOPOLOGY)
        binary = os.path.join(REPO, "build", "meson", "fabric", "netvm-switch")
        for h in "AB":
            d = self.c.path("switch-" + h)
            os.makedirs(d)
            log = open(self.c.path("switch-%s.log" % h), "w")
            p = subprocess.Popen(in_ns(h, [binary, "--topology", topo, "--only", SWITCH_OF[h],
                                           "--tcp", "127.0.0.1:%d" % NODE_BASE, "--sock-dir", d,
                                           "--mapper", "0"]),
                                 cwd=d, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
            self.switches.append(p)
        for h in "AB":
            ok = wait_for(lambda: "netvm-switch ready" in read(self.c.path("switch-%s.log" % h)), 60)
            T.ok(ok, "host %s: netvm-switch --only %s ready" % (h, SWITCH_OF[h]),
                 read(self.c.path("switch-%s.log" % h)))
            if not ok:
                return False
        return True

    def start_nodes(self):
        c = self.c
        c.state = {"name": CLUSTER, "n": 3, "accel": "tcg", "mem": MEM, "nodes": [],
                   "fabric": {"pid": 0}}
        # a link across hosts is a TCP stream netdev (lanai's link-socket
        # speaks unix sockets only): up's netdev form, rewritten to TCP
        os.environ["NETVM_LINK_THREAD"] = "0"
        for i in range(3):
            port = clustermod.free_port()
            cmd = c.qemu_cmd(i, 3, port, "tcg", MEM, [])
            k = cmd.index("stream,id=link0,server=off,addr.type=unix,addr.path=%s,"
                          "reconnect-ms=500" % c.path("node%d.sock" % i))
            cmd[k] = ("stream,id=link0,server=off,addr.type=inet,addr.host=127.0.0.1,addr.port=%d,"
                      "reconnect-ms=500" % (NODE_BASE + i))
            r = subprocess.run(in_ns(HOST_OF[i], cmd), cwd=c.dir, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
            T.ok(r.returncode == 0, "node %d: QEMU started in host %s's namespace" % (i, HOST_OF[i]),
                 r.stdout + read(c.path("node%d.qemu.log" % i)))
            if r.returncode != 0:
                return False
            with open(c.path("node%d.pid" % i)) as f:
                c.state["nodes"].append({"id": i, "pid": int(f.read()), "port": port})
            saved = c.state.pop("fabric")   # the switches are this test's, not the front door's
            c.save()
            c.state["fabric"] = saved
        del c.state["fabric"]
        for i in range(3):
            t0 = time.monotonic()
            ok = wait_for(lambda: nv(i, "run", i, "--", "true", timeout=30)[0] == 0, int(BOOT_TIMEOUT))
            T.ok(ok, "node %d: its agent answers (%.1f s)" % (i, time.monotonic() - t0),
                 read(c.path("node%d.serial.log" % i))[-600:])
            if not ok:
                return False
        return True

    def teardown(self):
        st = self.c.load()
        if st:
            self.c.kill_all(st["nodes"])
        for p in self.switches:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for h in "AB":
            subprocess.run(["ip", "netns", "del", NS[h]], stderr=subprocess.DEVNULL)
        shutil.rmtree(self.c.dir, ignore_errors=True)


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def wait_for(cond, secs):
    deadline = time.monotonic() + secs
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def check_map():
    r = nv(0, "run", 0, "--", "netvm-mapper", "-j", timeout=120)
    try:
        m = json.loads(r[1])
    except ValueError:
        m = {}
    T.ok(r[0] == 0 and sorted(m.get("nodes", [])) == [0, 1, 2] and m.get("acked") == 3,
         "the mapper in node 0 finds nodes 0, 1, 2 across both hosts, all acknowledge", diag(*r))
    return r[0] == 0


def window(node):
    r = nv(node, "run", node, "--", "cat", "/sys/class/netvm/netvm0/ktest_pa")
    return int(r[1].strip(), 16) if r[0] == 0 and r[1].strip().startswith("0x") else None


def check_all_to_all(pa):
    size = 65536 + 7
    for src in range(3):
        for dst in range(3):
            if src == dst:
                continue
            off = 4096 * (src * 3 + dst) + 5
            seed = 10 * src + dst
            r1 = ktest(src, "write", dst, hex(pa[dst] + off), off, size, seed)
            r2 = ktest(dst, "check", off, size, seed)
            T.ok(r1[0] == 0 and r2[0] == 0, "writeP %d B node %d (host %s) -> node %d (host %s): verified"
                 % (size, src, HOST_OF[src], dst, HOST_OF[dst]), "write: " + diag(*r1) + "\ncheck: " + diag(*r2))
            r0 = ktest(dst, "fill", off, size, seed + 500)
            r1 = ktest(src, "read", dst, hex(pa[dst] + off), off, size)
            r2 = ktest(src, "check", off, size, seed + 500)
            T.ok(r0[0] == 0 and r1[0] == 0 and r2[0] == 0,
                 "readP %d B node %d <- node %d: verified" % (size, src, dst),
                 "fill: " + diag(*r0) + "\nread: " + diag(*r1) + "\ncheck: " + diag(*r2))


def check_link_cut(hosts, pa):
    """B's veth down while node 0 writes 1 MiB - 13 into node 2, then up."""
    size = W - 13
    res = {}
    ip("-n", NS["B"], "link", "set", hosts.dev_b, "down")
    th = threading.Thread(target=lambda: res.setdefault("w", ktest(0, "write", 2, hex(pa[2] + 3), 3, size, 777)))
    th.start()
    th.join(3)
    still = th.is_alive()
    ip("-n", NS["B"], "link", "set", hosts.dev_b, "up")
    th.join(240)
    r1 = res.get("w", (-1, "", "(still running)"))
    r2 = ktest(2, "check", 3, size, 777)
    T.ok(still and r1[0] == 0 and r2[0] == 0,
         "host B's link cut during a 1 MiB writeP node 0 -> node 2 and restored: it waited, then "
         "completed, every byte verified", "waited while down: %s\nwrite: %s\ncheck: %s"
         % (still, diag(*r1), diag(*r2)))


def main():
    if os.getuid() != 0:
        print("Bail out! root is needed for network namespaces", flush=True)
        return 1
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    hosts = Hosts()
    run([NETVM, "--cluster", CLUSTER, "down"], timeout=120)
    os.makedirs(hosts.c.dir)
    try:
        hosts.make_namespaces()
        if hosts.start_switches() and hosts.start_nodes() and check_map():
            pa = {i: window(i) for i in range(3)}
            T.ok(None not in pa.values(), "every node's NetVM test window: %s" % pa)
            if None not in pa.values():
                check_all_to_all(pa)
                check_link_cut(hosts, pa)
    finally:
        hosts.teardown()
        left = cluster_processes(CLUSTER, switch_dir=hosts.c.dir)
        ns = run(["ip", "netns", "list"])[1]
        left += [n for n in NS.values() if n in ns]
        T.ok(not left and not os.path.exists(hosts.c.dir), "no QEMU, switch, namespace or state dir left",
             "left: %s" % left)
    T.plan()
    return 1 if T.failed else 0


if __name__ == "__main__":
    sys.exit(main())
