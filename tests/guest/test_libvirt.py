#!/usr/bin/python3
"""Guest test group libvirt: a 3-node cluster as libvirt domains through
netvm-switch (./netvm up --libvirt, docs/cluster.md "libvirt and several
hosts").

  - up -n 3 --libvirt qemu:///system,qemu:///session: nodes 0 and 2 on the
    first URI, node 1 on the second (as root both reach the one system
    daemon), each started from the libvirt boot template (built first if
    missing); the front door starts the switch beside the domains
  - virsh list shows the domains running; ./netvm status names them and
    the switch
  - NetVM between every ordered pair of domains (the mapper's routes
    through the switch): writeP and readP of two sizes (netvm-ktest, as
    guest-netvm-phys), every byte verified
  - ./netvm save and restore through libvirt (virsh save, virsh restore):
    the windows' bytes kept, writeP verified after
  - ./netvm reload-driver in every domain, then writeP verified again
  - ./netvm console 0 is virsh console: a command typed there runs in node 0
  - ./netvm logs 0: the serial log libvirt keeps has node 0's boot
  - down: no domain left defined, no QEMU, no switch, no state dir

Needs libvirt from Debian (libvirt-daemon-system, libvirt-clients).  With no
libvirtd answering on qemu:///system (no service manager runs it here) the
test starts virtlogd and libvirtd itself, as root, and stops them after.
TAP output.  Environment: NETVM, NETVM_TEST_BOOT_TIMEOUT.
"""
import os
import re
import shutil
import signal
import sys
import tempfile
import time

import libvirt_testlib as lvd
from guestlib import BOOT_TIMEOUT, REPO, Tap, cluster_processes, diag, run_netvm

T = Tap()
CLUSTER = "t-guest-libvirt"
URIS = ("qemu:///system", "qemu:///session")
N = 3
NODES = range(N)
DOMAINS = ["netvm-%s-node%d" % (CLUSTER, i) for i in NODES]
PAIRS = [(a, b) for a in NODES for b in NODES if a != b]
W = 1 << 20            # netvm-ktest's test window


def nv(*args, timeout=300):
    return run_netvm(CLUSTER, args, timeout)


def virsh(*args, uri=URIS[0]):
    return lvd.virsh(uri, *args)


def daemon_answers():
    return virsh("uri")[0] == 0


def ktest(node, *args):
    return nv("run", node, "--", "netvm-ktest", *[str(a) for a in args], timeout=120)


def uri_of(i):
    return URIS[i % len(URIS)]


def check_domains():
    for uri in URIS:
        rc, out, err = virsh("list", "--name", uri=uri)
        names = out.split()
        T.ok(rc == 0 and all(d in names for d in DOMAINS),
             "virsh -c %s list: every domain running" % uri, diag(rc, out, err))
    rc, out, err = nv("status")
    lines = [l for l in out.splitlines() if l.startswith("  node ")]
    T.ok(rc == 0 and lines == ["  node %d: %s on %s: running" % (i, DOMAINS[i], uri_of(i)) for i in NODES],
         "./netvm status: nodes 0 and 2 on %s, node 1 on %s, all running" % URIS, diag(rc, out, err))
    T.ok(rc == 0 and re.search(r"^switch: pid \d+, running, topology single:%d" % N, out, re.M),
         "./netvm status: the switch the front door started is running", diag(rc, out, err))


def windows(what):
    """Each node's test window (netvm.ko loaded): {node: pa}, or None."""
    pa = {}
    for n in NODES:
        rc, out, err = nv("run", n, "--", "cat", "/sys/class/netvm/netvm0/ktest_pa")
        ok = rc == 0 and out.strip().startswith("0x")
        T.ok(ok, "node %d: %s, test window at %s" % (n, what, out.strip()), diag(rc, out, err))
        if not ok:
            return None
        pa[n] = int(out.strip(), 16)
    return pa


def check_netvm():
    pa = windows("netvm.ko loaded")
    if not pa:
        return
    for k, (src, dst) in enumerate(PAIRS):
        for i, size in enumerate((4097, W - 13)):
            loff = (3 + 1237 * (i + k)) % (W - size + 1)
            roff = (5 + 3571 * (i + k)) % (W - size + 1)
            seed = 100 * src + 10 * dst + i
            r1 = ktest(src, "write", dst, hex(pa[dst] + roff), loff, size, seed)
            # the write's check and the read's fill at dst, then the read
            # and its check at src
            r2, r0 = lvd.ktests(nv, dst, ("check", roff, size, seed), ("fill", roff, size, seed + 50))
            T.ok(r1[0] == 0 and r2[0] == 0, "writeP %d B node %d -> node %d: every byte verified"
                 % (size, src, dst), "write: " + diag(*r1) + "\ncheck: " + diag(*r2))
            r1, r2 = lvd.ktests(nv, src, ("read", dst, hex(pa[dst] + roff), loff, size),
                                ("check", loff, size, seed + 50))
            T.ok(r0[0] == 0 and r1[0] == 0 and r2[0] == 0,
                 "readP %d B node %d <- node %d: every byte verified" % (size, src, dst),
                 "fill: " + diag(*r0) + "\nread: " + diag(*r1) + "\ncheck: " + diag(*r2))


def check_save_restore():
    """./netvm save has libvirt save every domain (virsh save: each stays
    defined, shut off), ./netvm restore has libvirt restore them: the test
    windows keep their bytes, and NetVM works between the restored nodes."""
    size = 65536
    for n in NODES:
        r = ktest(n, "fill", 0, size, 70 + n)
        T.ok(r[0] == 0, "node %d: window filled before save" % n, diag(*r))
    rc, out, err = nv("save", timeout=600)
    T.ok(rc == 0 and all("node %d saved by libvirt" % n in out for n in NODES),
         "./netvm save: every domain saved by libvirt", diag(rc, out, err))
    rc, out, err = virsh("list", "--all", "--state-shutoff", "--name")
    T.ok(rc == 0 and all(d in out.split() for d in DOMAINS),
         "after save: every domain still defined, shut off", diag(rc, out, err))
    rc, out, err = nv("restore", timeout=600)
    T.ok(rc == 0, "./netvm restore: libvirt restores every domain, agents answer", diag(rc, out, err))
    for n in NODES:
        r = ktest(n, "check", 0, size, 70 + n)
        T.ok(r[0] == 0, "node %d: window's %d B as before save, every byte" % (n, size), diag(*r))
    pa = windows("NetVM on after restore")
    if not pa:
        return
    for src in NODES:
        dst = (src + 2) % N
        r1 = ktest(src, "write", dst, hex(pa[dst] + 8191), 333, 30000, 60 + src)
        r2 = ktest(dst, "check", 8191, 30000, 60 + src)
        T.ok(r1[0] == 0 and r2[0] == 0, "after restore: writeP 30000 B node %d -> node %d verified"
             % (src, dst), "write: " + diag(*r1) + "\ncheck: " + diag(*r2))


def check_reload_driver():
    """./netvm reload-driver reaches the domains' agents like any node's;
    NetVM works again after it (new windows, writeP verified round the
    ring)."""
    rc, out, err = nv("reload-driver", timeout=300)
    T.ok(rc == 0, "reload-driver succeeds on every domain", diag(rc, out, err))
    pa = windows("NetVM on after the reload")
    if not pa:
        return
    for src in NODES:
        dst = (src + 1) % N
        r1 = ktest(src, "write", dst, hex(pa[dst] + 4001), 77, 9000, 31 + src)
        r2 = ktest(dst, "check", 4001, 9000, 31 + src)
        T.ok(r1[0] == 0 and r2[0] == 0, "after the reload: writeP 9000 B node %d -> node %d verified"
             % (src, dst), "write: " + diag(*r1) + "\ncheck: " + diag(*r2))


def check_console():
    found, status, seen = lvd.console_echo(CLUSTER, 0)
    T.ok(found and status is not None and os.WEXITSTATUS(status) == 0,
         "./netvm console 0 (virsh console): echo runs in node 0, Ctrl-] leaves with status 0",
         "status %r, output: %r" % (status, seen[-500:]))


def check_logs():
    rc, out, err = nv("logs", "0")
    T.ok(rc == 0 and "netvm-init: node 0 ready" in out,
         "./netvm logs 0: libvirt's serial log has node 0's boot", diag(rc, out[-400:], err))


def body():
    check_domains()
    check_netvm()
    check_save_restore()
    check_reload_driver()
    check_console()
    check_logs()


def cluster_frame():
    """The cluster up as libvirt domains (what an interrupted run left
    taken down first), body(), then down: no QEMU, no state dir and no
    domain left on either URI."""
    nv("down")
    try:
        t0 = time.monotonic()
        rc, out, err = nv("up", "-n", N, "--libvirt", ",".join(URIS), "--timeout", BOOT_TIMEOUT,
                          timeout=int(BOOT_TIMEOUT) + 600)
        T.ok(rc == 0, "up -n %d --libvirt %s: switch up, nodes ready, routes set (%.1f s)"
             % (N, ",".join(URIS), time.monotonic() - t0), diag(rc, out, err))
        T.ok(all(re.search(r"node %d: domain %s on %s defined in [0-9.]+ s, started from the boot template"
                           % (i, DOMAINS[i], uri_of(i)), out) for i in NODES),
             "every domain started from the libvirt boot template", diag(rc, out, err))
        if rc == 0:
            body()
    finally:
        rc, out, err = nv("down")
        state = os.path.join(REPO, "build", "cluster", CLUSTER)
        left = cluster_processes(CLUSTER, switch_dir=state)
        if os.path.exists(state):
            left.append(state)
        T.ok(rc == 0 and not left, "down leaves no QEMU, no switch and no state dir", diag(rc, out, err) +
             "\nleft: %s" % left)
        for uri in URIS:
            r = virsh("list", "--all", "--name", uri=uri)
            T.ok(r[0] == 0 and not any(d in r[1].split() for d in DOMAINS),
                 "after down: virsh -c %s list --all has no domain of the cluster" % uri, diag(*r))


def main():
    if not shutil.which("virsh") or not shutil.which("libvirtd"):
        print("Bail out! libvirt is not installed (libvirt-daemon-system, libvirt-clients: "
              "sh ci/install-deps.sh)", flush=True)
        return 1
    started, tmp = {}, None
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if not daemon_answers():
        if os.getuid() != 0:
            print("Bail out! no libvirtd answers on %s, and only root may start one" % URIS[0], flush=True)
            return 1
        tmp = tempfile.mkdtemp(prefix="netvm-libvirt-")
        with open(lvd.QEMU_CONF, "rb") as f:
            host_conf = f.read()
        started = lvd.start_daemons(tmp)
        T.ok("libvirtd" in started, "libvirtd started (none was running)", virsh("uri"))
        with open(lvd.QEMU_CONF, "rb") as f:
            T.ok(f.read() == host_conf, "the host's %s is unchanged (the test's libvirtd has its "
                 "own, in its mount namespace)" % lvd.QEMU_CONF)
        if "libvirtd" not in started:
            lvd.stop_daemons(started, T)
            shutil.rmtree(tmp)
            T.plan()
            return 1
    try:
        cluster_frame()
    finally:
        lvd.stop_daemons(started, T)
        if tmp:
            shutil.rmtree(tmp)
    T.plan()
    return 1 if T.failed else 0


if __name__ == "__main__":
    with lvd.daemons_held():
        rc = main()
    sys.exit(rc)
