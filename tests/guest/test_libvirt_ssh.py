#!/usr/bin/python3
"""Guest test group libvirt-ssh: one cluster over two "hosts" through
libvirt's remote URIs, without a second machine (./netvm up --libvirt
qemu:///system,qemu+ssh://..., docs/cluster.md "libvirt and several
hosts").

"Here" is this host (its libvirtd on qemu:///system, started by the test
when none answers, as guest-libvirt does).  The "remote host" is a network
namespace made by the test, on a veth pair with this one, in which the test
runs, in a mount namespace of their own (tmpfs over /run and libvirt's
state dirs, so nothing of this host's daemon is seen or touched): virtlogd,
a second libvirtd (QEMU as root, its qemu.conf bound over the file) and
Debian's sshd on the namespace's address, and, started over ssh,, with a host key and a client key
the test generates in a temp dir (root's ~/.ssh untouched: the client runs
through a small wrapper given to libvirt as the URI's command=, with
ssh -F and a known_hosts holding the test's host key, so the host key is
verified; keyfile= names the client key).  The remote libvirtd is a
separate daemon, reached only through ssh, and its QEMUs run in the remote
namespace: their agent ports are on its loopback, reached through the
front door's ssh tunnel.  Both daemons see the same file system, so the
checkout is "at the same path" there without a copy.

  - up before the remote libvirtd runs: refused after the ssh check,
    saying libvirtd does not answer there, and no domain defined
  - up -n 2 --libvirt qemu:///system,qemu+ssh://root@ADDR:PORT/system?...:
    node 0 here, node 1 "there"; switch s0 here, switch h1 there started
    over ssh, linked over TCP across the veth; mapper routes both
  - virsh on each URI sees its own domain and not the other's; node 1's
    QEMU runs in the remote namespace
  - NetVM writeP and readP both ways between the hosts, every byte
    verified; status, logs 1 (over ssh), reload-driver, console 1
    (virsh console through the ssh URI), save and restore (node 1's file
    on the remote host), NetVM verified again after each
  - down: no domain on either URI, no QEMU, no switch, no tunnel, no
    state dir; then the test's sshd and daemons stopped, the namespace gone

Root only.  TAP output.  Environment: NETVM, NETVM_TEST_BOOT_TIMEOUT.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import libvirt_testlib as lvd
from guestlib import BOOT_TIMEOUT, REPO, Tap, cluster_processes, diag, run, run_netvm

T = Tap()
CLUSTER = "t-guest-lvssh"
TAG = "%d" % os.getpid()
NS = "nvls-" + TAG
NET = "10.97.%d" % (os.getpid() % 250)
HERE, THERE = NET + ".1", NET + ".2"
SSH_PORT = 2222
LOCAL = "qemu:///system"
DOMAINS = ["netvm-%s-node%d" % (CLUSTER, i) for i in range(2)]
W = 1 << 20
# the remote host's daemons: their own /run and libvirt state, this
# host's file system otherwise (the checkout)
REMOTE_SETUP = r"""set -e
mount -t tmpfs tmpfs /run
for d in /var/lib/libvirt /var/cache/libvirt /var/log/libvirt /etc/libvirt/qemu; do
    mount -t tmpfs tmpfs "$d"
done
mkdir -p /run/lock /run/libvirt /run/sshd /var/lib/libvirt/qemu /var/cache/libvirt/qemu /var/log/libvirt/qemu
mount --bind "$1/qemu.conf" /etc/libvirt/qemu.conf
virtlogd -d -p "$1/virtlogd.pid"
/usr/sbin/sshd -f "$1/sshd_config" -E "$1/sshd.log"
"""


def nv(*args, timeout=300):
    return run_netvm(CLUSTER, args, timeout)


class RemoteHost:
    """The namespace, its sshd and daemons, the client's ssh setup."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.uri = ("qemu+ssh://root@%s:%d/system?keyfile=%s/id&command=%s/ssh"
                    % (THERE, SSH_PORT, tmp, tmp))
        self.pids = {}

    def f(self, name):
        return os.path.join(self.tmp, name)

    def make(self):
        ip("netns", "add", NS)
        ip("-n", NS, "link", "set", "lo", "up")
        here, there = "nvls" + TAG[-6:], "nvlt" + TAG[-6:]
        ip("link", "add", here, "type", "veth", "peer", "name", there)
        ip("link", "set", there, "netns", NS)
        ip("addr", "add", HERE + "/24", "dev", here)
        ip("link", "set", here, "up")
        ip("-n", NS, "addr", "add", THERE + "/24", "dev", there)
        ip("-n", NS, "link", "set", there, "up")
        for key in ("host_key", "id"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", self.f(key)], check=True)
        shutil.copy(self.f("id.pub"), self.f("authorized_keys"))
        with open(self.f("host_key.pub")) as src, open(self.f("known_hosts"), "w") as kh:
            kh.write("[%s]:%d %s" % (THERE, SSH_PORT, " ".join(src.read().split()[:2])) + "\n")
        with open(self.f("sshd_config"), "w") as cf:
            # StrictModes no: the keys are in a temp dir under /tmp, which sshd refuses
            cf.write("ListenAddress %s:%d\nHostKey %s\nPidFile %s\nAuthorizedKeysFile %s\n"
                     "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                     "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                     % (THERE, SSH_PORT, self.f("host_key"), self.f("sshd.pid"), self.f("authorized_keys")))
        with open(self.f("ssh_config"), "w") as cf:
            cf.write("UserKnownHostsFile %s\nGlobalKnownHostsFile /dev/null\nStrictHostKeyChecking yes\n"
                     "IdentitiesOnly yes\n" % self.f("known_hosts"))
        with open(self.f("ssh"), "w") as w:
            w.write('#!/bin/sh\nexec ssh -F %s "$@"\n' % self.f("ssh_config"))
        os.chmod(self.f("ssh"), 0o755)
        lvd.qemu_conf(self.tmp)

    def start_sshd(self):
        """virtlogd and sshd in the namespace, in a mount namespace of
        their own (REMOTE_SETUP)."""
        return run(["nsenter", "--net=/run/netns/" + NS, "unshare", "--mount", "--propagation", "private",
                    "sh", "-c", REMOTE_SETUP, "sh", self.tmp], timeout=60)

    def start_libvirtd(self):
        """As an administrator would: over ssh (so in sshd's namespaces)."""
        return self.ssh("libvirtd -d -p %s" % self.f("libvirtd.pid"))

    def pid(self, name):
        return lvd.pid_of(name, self.f(name + ".pid"))

    def ssh(self, *cmd):
        return run([self.f("ssh"), "-o", "BatchMode=yes", "-i", self.f("id"), "-p", str(SSH_PORT),
                    "root@" + THERE] + list(cmd), timeout=60)

    def stop(self):
        for name in ("libvirtd", "virtlogd", "sshd"):
            pid = self.pid(name)
            if pid:
                T.ok(lvd.stop_pid(pid), "remote host: %s (pid %d) stopped" % (name, pid))
        subprocess.run(["ip", "netns", "del", NS], stderr=subprocess.DEVNULL)


def ip(*args):
    r = subprocess.run(["ip"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError("ip %s: %s" % (" ".join(args), r.stdout.strip()))


def netns_of(pid):
    try:
        return os.readlink("/proc/%d/ns/net" % pid)
    except OSError:
        return None


def qemu_pid(domain):
    tag = ("guest=%s," % domain).encode()
    return next((int(p) for p in os.listdir("/proc") if p.isdigit() and tag in cmdline(p)), None)


def ktest(node, *args):
    return nv("run", node, "--", "netvm-ktest", *[str(a) for a in args], timeout=120)


def check_refused_without_libvirtd(rh):
    """The ssh check runs before anything is defined: with sshd up but no
    libvirtd there, up fails saying so, and leaves no domain here."""
    rc, out, err = nv("up", "-n", "2", "--libvirt", "%s,%s" % (LOCAL, rh.uri), timeout=120)
    T.ok(rc != 0 and "is libvirtd running on root@%s?" % THERE in err,
         "up with no libvirtd on the remote host: refused, saying so", diag(rc, out, err))
    r = lvd.virsh(LOCAL, "list", "--all", "--name")
    T.ok(r[0] == 0 and DOMAINS[0] not in r[1].split() and
         not os.path.exists(os.path.join(REPO, "build", "cluster", CLUSTER)),
         "... and nothing defined here, no state dir", diag(*r))


def check_placement(rh):
    for uri, mine, other in ((LOCAL, DOMAINS[0], DOMAINS[1]), (rh.uri, DOMAINS[1], DOMAINS[0])):
        rc, out, err = lvd.virsh(uri, "list", "--name")
        names = out.split()
        T.ok(rc == 0 and mine in names and other not in names,
             "virsh -c %s list: %s running, %s not (another daemon's)" % (uri.split("?")[0], mine, other),
             diag(rc, out, err))
    pid1, pid0 = qemu_pid(DOMAINS[1]), qemu_pid(DOMAINS[0])
    T.ok(pid1 and netns_of(pid1) == netns_of(rh.pid("libvirtd")) and netns_of(pid1) != netns_of(os.getpid())
         and pid0 and netns_of(pid0) == netns_of(os.getpid()),
         "node 1's QEMU runs in the remote host's namespace, node 0's here",
         "pids %s %s, netns %s %s" % (pid0, pid1, netns_of(pid0 or 0), netns_of(pid1 or 0)))
    rc, out, err = nv("status")
    T.ok(rc == 0 and re.search(r"^  node 1: %s on qemu\+ssh://root@%s:%d/system\S*: running$"
                               % (DOMAINS[1], re.escape(THERE), SSH_PORT), out, re.M)
         and re.search(r"^  host root@%s: switch h1 pid \d+ there running, .* agent tunnel pid \d+ running$"
                       % re.escape(THERE), out, re.M),
         "./netvm status: node 1 on the ssh URI, the remote switch and the tunnel running", diag(rc, out, err))


def windows():
    pa = {}
    for n in range(2):
        rc, out, err = nv("run", n, "--", "cat", "/sys/class/netvm/netvm0/ktest_pa")
        ok = rc == 0 and out.strip().startswith("0x")
        T.ok(ok, "node %d: netvm.ko loaded, test window at %s" % (n, out.strip()), diag(rc, out, err))
        if not ok:
            return None
        pa[n] = int(out.strip(), 16)
    return pa


def check_netvm(what, sizes=(4097, W - 13)):
    pa = windows()
    if not pa:
        return
    for k, (src, dst) in enumerate(((0, 1), (1, 0))):
        for i, size in enumerate(sizes):
            loff = (3 + 1237 * (i + k)) % (W - size + 1)
            roff = (5 + 3571 * (i + k)) % (W - size + 1)
            seed = 100 * src + 10 * dst + i + (50 if what else 0)
            r1 = ktest(src, "write", dst, hex(pa[dst] + roff), loff, size, seed)
            # the write's check and the read's fill at dst, then the read
            # and its check at src
            r2, r0 = lvd.ktests(nv, dst, ("check", roff, size, seed), ("fill", roff, size, seed + 7))
            T.ok(r1[0] == 0 and r2[0] == 0, "%swriteP %d B node %d -> node %d across the hosts: verified"
                 % (what, size, src, dst), "write: " + diag(*r1) + "\ncheck: " + diag(*r2))
            r1, r2 = lvd.ktests(nv, src, ("read", dst, hex(pa[dst] + roff), loff, size),
                                ("check", loff, size, seed + 7))
            T.ok(r0[0] == 0 and r1[0] == 0 and r2[0] == 0,
                 "%sreadP %d B node %d <- node %d across the hosts: verified" % (what, size, src, dst),
                 "fill: " + diag(*r0) + "\nread: " + diag(*r1) + "\ncheck: " + diag(*r2))


def check_front_door():
    rc, out, err = nv("logs", "1")
    T.ok(rc == 0 and "netvm-init: node 1 ready" in out,
         "./netvm logs 1 (over ssh): the remote serial log has node 1's boot", diag(rc, out[-400:], err))
    rc, out, err = nv("reload-driver", timeout=300)
    T.ok(rc == 0 and "node 1: netvm.ko reloaded" in out + err, "reload-driver reaches node 1 through the tunnel",
         diag(rc, out, err))
    check_netvm("after reload-driver: ", (4097,))
    found, status, seen = lvd.console_echo(CLUSTER, 1)
    T.ok(found and status is not None and os.WEXITSTATUS(status) == 0,
         "./netvm console 1 (virsh console through the ssh URI): echo runs in node 1, Ctrl-] leaves",
         "status %r, output: %r" % (status, seen[-500:]))


def check_save_restore(rh):
    """libvirt saves each domain where it runs (node 1's file on the remote
    host) and restores it; the windows keep their bytes and NetVM works
    across the hosts again."""
    size = 65536
    for n in range(2):
        r = ktest(n, "fill", 0, size, 70 + n)
        T.ok(r[0] == 0, "node %d: window filled before save" % n, diag(*r))
    rc, out, err = nv("save", timeout=600)
    T.ok(rc == 0 and all("node %d saved by libvirt" % n in out for n in range(2)),
         "./netvm save: each domain saved by its own libvirtd", diag(rc, out, err))
    for uri, dom in ((LOCAL, DOMAINS[0]), (rh.uri, DOMAINS[1])):
        r = lvd.virsh(uri, "list", "--all", "--state-shutoff", "--name")
        T.ok(r[0] == 0 and dom in r[1].split(), "after save: %s defined, shut off, on %s"
             % (dom, uri.split("?")[0]), diag(*r))
    rc, out, err = nv("restore", timeout=600)
    T.ok(rc == 0, "./netvm restore: both domains restored, agents answer (node 1 through the tunnel)",
         diag(rc, out, err))
    for n in range(2):
        r = ktest(n, "check", 0, size, 70 + n)
        T.ok(r[0] == 0, "node %d: window's %d B as before save, every byte" % (n, size), diag(*r))
    check_netvm("after restore: ", (4097,))


def cluster_frame(rh):
    nv("down")
    state = os.path.join(REPO, "build", "cluster", CLUSTER)
    try:
        t0 = time.monotonic()
        rc, out, err = nv("up", "-n", "2", "--libvirt", "%s,%s" % (LOCAL, rh.uri), "--timeout", BOOT_TIMEOUT,
                          timeout=int(BOOT_TIMEOUT) + 600)
        secs = time.monotonic() - t0
        T.ok(rc == 0 and "netvm-switch h1 up on root@%s" % THERE in out
             and re.search(r"node 1: domain %s on qemu\+ssh://\S+ defined in [0-9.]+ s, started in" % DOMAINS[1], out),
             "up -n 2 --libvirt %s,qemu+ssh://...: switch there started over ssh, nodes ready, routes set "
             "(%.1f s)" % (LOCAL, secs), diag(rc, out, err))
        if rc == 0:
            check_placement(rh)
            check_netvm("")
            check_front_door()
            check_save_restore(rh)
    finally:
        rc, out, err = nv("down")
        left = cluster_processes(CLUSTER, switch_dir=state)
        left += [p for p in os.listdir("/proc") if p.isdigit() and tunnel_of(p, rh)]
        if os.path.exists(state):
            left.append(state)
        T.ok(rc == 0 and not left, "down leaves no QEMU, no switch (here or there), no ssh tunnel, no state dir",
             diag(rc, out, err) + "\nleft: %s" % left)
        for uri in (LOCAL, rh.uri):
            r = lvd.virsh(uri, "list", "--all", "--name")
            T.ok(r[0] == 0 and not any(d in r[1].split() for d in DOMAINS),
                 "after down: virsh -c %s list --all has no domain of the cluster" % uri.split("?")[0], diag(*r))


def cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read()
    except OSError:
        return b""


def tunnel_of(pid, rh):
    cmd = cmdline(pid)
    return b"ExitOnForwardFailure=yes" in cmd and rh.tmp.encode() in cmd


def sshd_of(pid, tmp):
    """The test's sshd, or a session of it (sshd: root@notty)."""
    cmd = cmdline(pid)
    return b"sshd" in cmd and (tmp.encode() in cmd or b"root@" in cmd and b"notty" in cmd)


def main():
    if os.getuid() != 0:
        print("Bail out! root is needed (namespaces, libvirtd)", flush=True)
        return 1
    for prog in ("virsh", "libvirtd", "/usr/sbin/sshd", "ssh-keygen", "nsenter"):
        if not shutil.which(prog):
            print("Bail out! %s missing (libvirt-daemon-system, libvirt-clients, openssh-server: "
                  "sh ci/install-deps.sh)" % prog, flush=True)
            return 1
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    tmp = tempfile.mkdtemp(prefix="netvm-lvssh-")
    started = {}
    rh = RemoteHost(tmp)
    try:
        if lvd.virsh(LOCAL, "uri")[0] != 0:
            started = lvd.start_daemons(tmp)
            T.ok("libvirtd" in started, "libvirtd started here (none was running)")
        rh.make()
        r = rh.start_sshd()
        ok = r[0] == 0 and lvd.wait_for(lambda: rh.ssh("true")[0] == 0, 30, 0.2)
        T.ok(ok, "remote host: sshd answers on %s:%d with the test's keys" % (THERE, SSH_PORT), diag(*r))
        if ok:
            check_refused_without_libvirtd(rh)
            r = rh.start_libvirtd()
            ok = r[0] == 0 and lvd.wait_for(lambda: lvd.virsh(rh.uri, "uri")[0] == 0, 60, 0.5)
            T.ok(ok, "remote host: its own libvirtd answers through %s" % rh.uri.split("?")[0], diag(*r))
        if ok:
            cluster_frame(rh)
    finally:
        rh.stop()
        left = [p for p in os.listdir("/proc") if p.isdigit() and sshd_of(p, tmp)]
        T.ok(not left and NS not in run(["ip", "netns", "list"])[1],
             "no sshd of the test and no namespace left", "left: %s" % left)
        lvd.stop_daemons(started, T)
        shutil.rmtree(tmp, ignore_errors=True)
    T.plan()
    return 1 if T.failed else 0


if __name__ == "__main__":
    with lvd.daemons_held():
        rc = main()
    sys.exit(rc)
