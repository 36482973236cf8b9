#!/usr/bin/python3
"""Guest test group libvirt: a 2-node cluster as libvirt domains
(./netvm up --libvirt, docs/cluster.md "libvirt and several hosts").

  - up --libvirt qemu:///system,qemu:///session: node 0 on the first URI,
    node 1 on the second (as root both reach the one system daemon)
  - virsh list shows both domains running; ./netvm status names them
  - NetVM between the domains: writeP and readP of several sizes both
    ways (netvm-ktest, as guest-netvm-phys), every byte verified
  - ./netvm reload-driver in both domains, then writeP verified again
  - ./netvm console 0 is virsh console: a command typed there runs in node 0
  - ./netvm logs 0: the serial log libvirt keeps has node 0's boot
  - down: no domain left defined, no QEMU, no state dir

Needs libvirt from Debian (libvirt-daemon-system, libvirt-clients).  With no
libvirtd answering on qemu:///system (no service manager runs it here) the
test starts virtlogd and libvirtd itself, as root, and stops them after.
TAP output.  Environment: NETVM, NETVM_TEST_BOOT_TIMEOUT.
"""
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time

from guestlib import BOOT_TIMEOUT, NETVM, REPO, Tap, cluster_processes, diag, run, run_netvm

T = Tap()
CLUSTER = "t-guest-libvirt"
URIS = ("qemu:///system", "qemu:///session")
DOMAINS = ["netvm-%s-node%d" % (CLUSTER, i) for i in (0, 1)]
# what a daemon started here writes (libvirtd -d and virtlogd -d, as root)
PIDFILES = {"virtlogd": "/run/virtlogd.pid", "libvirtd": "/run/libvirtd.pid"}
W = 1 << 20            # netvm-ktest's test window


def nv(*args, timeout=300):
    return run_netvm(CLUSTER, args, timeout)


def virsh(*args, uri=URIS[0]):
    return run(["virsh", "-q", "-c", uri] + list(args), timeout=60)


def daemon_answers():
    return virsh("uri")[0] == 0


def wait_for(cond, secs):
    deadline = time.monotonic() + secs
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def pid_of(name):
    try:
        with open(PIDFILES[name]) as f:
            pid = int(f.read().strip())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def start_daemons():
    """virtlogd (the serial logs and QEMU's output go through it) and
    libvirtd, if none runs; -> {name: pid} of those started here."""
    started = {}
    if pid_of("virtlogd") is None:
        subprocess.run(["virtlogd", "-d"], check=True)
        if wait_for(lambda: pid_of("virtlogd") is not None, 30):
            started["virtlogd"] = pid_of("virtlogd")
    subprocess.run(["libvirtd", "-d"], check=True)
    if wait_for(daemon_answers, 60):
        started["libvirtd"] = pid_of("libvirtd")
    return started


def stop_daemons(started):
    for name in ("libvirtd", "virtlogd"):
        pid = started.get(name)
        if pid:
            os.kill(pid, signal.SIGTERM)
            gone = wait_for(lambda: not os.path.exists("/proc/%d" % pid), 30)
            T.ok(gone, "%s (pid %d, started by this test) stopped" % (name, pid))


def ktest(node, *args):
    return nv("run", node, "--", "netvm-ktest", *[str(a) for a in args], timeout=120)


def check_domains():
    for uri in URIS:
        rc, out, err = virsh("list", "--name", uri=uri)
        names = out.split()
        T.ok(rc == 0 and all(d in names for d in DOMAINS),
             "virsh -c %s list: both domains running" % uri, diag(rc, out, err))
    rc, out, err = nv("status")
    lines = [l for l in out.splitlines() if l.startswith("  node ")]
    T.ok(rc == 0 and lines == ["  node %d: %s on %s: running" % (i, DOMAINS[i], URIS[i]) for i in (0, 1)],
         "./netvm status: node 0 on %s, node 1 on %s, both running and ready" % URIS, diag(rc, out, err))


def check_netvm():
    pa = {}
    for n in (0, 1):
        rc, out, err = nv("run", n, "--", "cat", "/sys/class/netvm/netvm0/ktest_pa")
        ok = rc == 0 and out.strip().startswith("0x")
        T.ok(ok, "node %d: netvm.ko loaded, test window at %s" % (n, out.strip()), diag(rc, out, err))
        if not ok:
            return
        pa[n] = int(out.strip(), 16)
    for src, dst in ((0, 1), (1, 0)):
        for i, size in enumerate((1, 4097, 65536, W - 13)):
            loff = (3 + 1237 * i) % (W - size + 1)
            roff = (5 + 3571 * i) % (W - size + 1)
            seed = 100 * src + i
            r1 = ktest(src, "write", dst, hex(pa[dst] + roff), loff, size, seed)
            r2 = ktest(dst, "check", roff, size, seed)
            T.ok(r1[0] == 0 and r2[0] == 0, "writeP %d B node %d -> node %d: every byte verified"
                 % (size, src, dst), "write: " + diag(*r1) + "\ncheck: " + diag(*r2))
            seed += 50
            r0 = ktest(dst, "fill", roff, size, seed)
            r1 = ktest(src, "read", dst, hex(pa[dst] + roff), loff, size)
            r2 = ktest(src, "check", loff, size, seed)
            T.ok(r0[0] == 0 and r1[0] == 0 and r2[0] == 0,
                 "readP %d B node %d <- node %d: every byte verified" % (size, src, dst),
                 "fill: " + diag(*r0) + "\nread: " + diag(*r1) + "\ncheck: " + diag(*r2))


def check_reload_driver():
    """./netvm reload-driver reaches the domains' agents like any node's;
    NetVM works again after it (new window, writeP verified both ways)."""
    rc, out, err = nv("reload-driver", timeout=300)
    T.ok(rc == 0, "reload-driver succeeds on both domains", diag(rc, out, err))
    pa = {}
    for n in (0, 1):
        rc, out, err = nv("run", n, "--", "cat", "/sys/class/netvm/netvm0/ktest_pa")
        ok = rc == 0 and out.strip().startswith("0x")
        T.ok(ok, "node %d: NetVM on after the reload" % n, diag(rc, out, err))
        if not ok:
            return
        pa[n] = int(out.strip(), 16)
    for src, dst in ((0, 1), (1, 0)):
        r1 = ktest(src, "write", dst, hex(pa[dst] + 4001), 77, 9000, 31 + src)
        r2 = ktest(dst, "check", 4001, 9000, 31 + src)
        T.ok(r1[0] == 0 and r2[0] == 0, "after the reload: writeP 9000 B node %d -> node %d verified"
             % (src, dst), "write: " + diag(*r1) + "\ncheck: " + diag(*r2))


def check_console():
    """./netvm console 0 on a terminal (virsh console wants one): a line
    typed there runs in node 0's shell; Ctrl-] leaves."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(NETVM, [NETVM, "--cluster", CLUSTER, "console", "0"])
    seen = b""
    deadline = time.monotonic() + 60
    sent = False
    while time.monotonic() < deadline and b"console-" + b"42" not in seen:
        r, _, _ = select.select([fd], [], [], 1.0)
        if r:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
        if not sent and b"Escape character" in seen:
            os.write(fd, b"\recho console-$((6*7))\r")
            sent = True
    found = b"console-42" in seen
    os.write(fd, b"\x1d")
    end = time.monotonic() + 30
    status = None
    while time.monotonic() < end:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p:
            status = st
            break
        try:
            if select.select([fd], [], [], 0.5)[0]:
                os.read(fd, 4096)
        except OSError:
            pass
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    os.close(fd)
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
        rc, out, err = nv("up", "-n", 2, "--libvirt", ",".join(URIS), "--timeout", BOOT_TIMEOUT,
                          timeout=int(BOOT_TIMEOUT) + 600)
        T.ok(rc == 0, "up --libvirt %s: 2 nodes ready (%.1f s)" % (",".join(URIS), time.monotonic() - t0),
             diag(rc, out, err))
        if rc == 0:
            body()
    finally:
        rc, out, err = nv("down")
        left = cluster_processes(CLUSTER)
        state = os.path.join(REPO, "build", "cluster", CLUSTER)
        if os.path.exists(state):
            left.append(state)
        T.ok(rc == 0 and not left, "down leaves no QEMU and no state dir", diag(rc, out, err) +
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
    started = {}
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if not daemon_answers():
        if os.getuid() != 0:
            print("Bail out! no libvirtd answers on %s, and only root may start one" % URIS[0], flush=True)
            return 1
        started = start_daemons()
        T.ok("libvirtd" in started, "libvirtd started (none was running)", virsh("uri"))
        if "libvirtd" not in started:
            stop_daemons(started)
            T.plan()
            return 1
    try:
        cluster_frame()
    finally:
        stop_daemons(started)
    T.plan()
    return 1 if T.failed else 0


if __name__ == "__main__":
    sys.exit(main())
