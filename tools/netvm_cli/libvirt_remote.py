"""Nodes on other hosts through libvirt's qemu+ssh:// URIs (docs/cluster.md,
"libvirt and several hosts").

libvirt reaches a remote host's daemon over ssh; the front door needs
that host too, for what libvirt does not carry: a remote host runs one
netvm-switch of the cluster's fabric (its nodes on its own loopback TCP
ports, one TCP link to this host's switch), and its nodes' agents listen
on its own 127.0.0.1, reached here through one `ssh -N -L` tunnel per host
(each node's agent port the same on both ends).  Every ssh call takes the
options the URI gives libvirt: user, port, keyfile=, no_verify=1 and
command= (the ssh program), in batch mode (no password prompt).

The remote host needs this checkout at the same path, built (the domain
XML names our QEMU, the kernel, the image, the share and the package disk
by absolute path, and netvm-switch runs from it), and libvirtd answering
on the URI; check() looks at both before anything is defined.  The
cluster's state dir there (the same path) holds the remote nodes' serial
and QEMU logs, QMP sockets, libvirt's save files and, in host-K/, the
switch's topology, log and control socket.
"""
import hashlib
import os
import random
import shlex
import signal
import subprocess
import time
import urllib.parse

from . import fabric, pkgdisk
from .common import DRIVER_KO, INITRAMFS, REPO, VMLINUZ, NetvmError, proc_running, qemu_binary, rel, say

SSH_TIMEOUT = 60
READY = "netvm-switch ready:"


def is_remote(uri):
    return bool(urllib.parse.urlsplit(uri).netloc)


class Host:
    """One remote URI's host, and ssh to it with the URI's options."""

    def __init__(self, uri):
        p = urllib.parse.urlsplit(uri)
        if p.scheme != "qemu+ssh":
            raise NetvmError("--libvirt %s: a remote host is reached through qemu+ssh://[USER@]HOST[:PORT]/system "
                             "only (the front door needs ssh to it as well)" % uri)
        if p.path != "/system":
            raise NetvmError("--libvirt %s: a remote host's system daemon (/system), as root there" % uri)
        try:
            self.port = p.port
        except ValueError:
            raise NetvmError("--libvirt %s: bad port" % uri)
        self.uri, self.host, self.user = uri, p.hostname, p.username
        if not self.host:
            raise NetvmError("--libvirt %s: no host" % uri)
        q = dict(urllib.parse.parse_qsl(p.query))
        self.keyfile = q.get("keyfile")
        self.no_verify = q.get("no_verify") == "1"
        self.command = q.get("command") or "ssh"

    def name(self):
        return ("%s@" % self.user if self.user else "") + self.host

    def argv(self, *opts):
        a = [self.command, "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20"]
        if self.port:
            a += ["-p", str(self.port)]
        if self.keyfile:
            a += ["-i", self.keyfile]
        if self.no_verify:
            a += ["-o", "StrictHostKeyChecking=no"]
        return a + list(opts) + [self.name()]

    def sh(self, script, *args, stdin=None, timeout=SSH_TIMEOUT):
        """`sh -c SCRIPT sh ARGS...` on the host -> (rc, output); rc 255 is
        ssh's own failure."""
        remote = " ".join(shlex.quote(str(a)) for a in ["sh", "-c", script, "sh"] + list(args))
        try:
            r = subprocess.run(self.argv() + [remote], input=stdin, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout,
                               stdin=None if stdin is not None else subprocess.DEVNULL)
        except FileNotFoundError:
            raise NetvmError("%s not found: install openssh-client (sh ci/install-deps.sh)" % self.command)
        except subprocess.TimeoutExpired:
            raise NetvmError("ssh %s: no answer within %d s" % (self.name(), timeout))
        out = r.stdout.decode(errors="replace").strip()
        if r.returncode == 255:
            raise NetvmError("cannot reach %s over ssh (%s): %s" % (
                self.name(), self.uri, out.replace("\n", " ") or "ssh failed"))
        return r.returncode, out

    def must(self, what, script, *args, **kw):
        rc, out = self.sh(script, *args, **kw)
        if rc != 0:
            raise NetvmError("%s: %s on %s failed: %s" % (self.uri, what, self.name(), out.replace("\n", " ")))
        return out


def needed_files():
    """What a remote node's domain and switch use from the checkout."""
    files = [qemu_binary(), VMLINUZ, INITRAMFS, os.environ.get("NETVM_SWITCH") or fabric.SWITCH_BIN, DRIVER_KO]
    if os.path.exists(pkgdisk.PKGDISK):
        files.append(pkgdisk.PKGDISK)
    return files


CHECK = """cd "$1" 2>/dev/null || { echo "no checkout at $1"; exit 3; }
shift; m=
for f; do [ -e "$f" ] || m="$m $f"; done
[ -z "$m" ] || { echo "missing:$m"; exit 4; }
command -v virsh >/dev/null || { echo "no virsh (libvirt-clients)"; exit 5; }
echo "from $SSH_CONNECTION"
"""


def check(h):
    """Before anything is defined: ssh reaches the host, this checkout is
    there at the same path and built, and libvirtd answers on the URI.
    -> this host's address as the remote host sees it (its switch dials
    ours there)."""
    from .libvirt import virsh
    rc, out = h.sh(CHECK, REPO, *needed_files())
    if rc != 0:
        raise NetvmError("%s: %s: a remote host needs this checkout at the same path (%s), built "
                         "(./netvm build there), and libvirt: docs/cluster.md, \"Several hosts\""
                         % (h.uri, out.splitlines()[-1] if out else "exit %d" % rc, REPO))
    words = out.splitlines()[-1].split()
    if len(words) < 3 or words[0] != "from":
        raise NetvmError("%s: ssh gave no SSH_CONNECTION (%r)" % (h.uri, out))
    try:
        virsh(h.uri, "uri")
    except NetvmError as e:
        raise NetvmError("%s; is libvirtd running on %s? (as root there: virtlogd -d; libvirtd -d)"
                         % (e, h.name()))
    return words[1]


def host_dir(c, k):
    return c.path("host-%d" % k)


def topology(where, remotes):
    """The fabric of a cluster spread over hosts: switch s0 here with this
    host's nodes and one uplink per remote host; switch hK on remote host K
    with its nodes and its uplink, over TCP (s0 named first: it listens on
    its address, hK dials).  -> (text, {uri: (switch, link port)});
    remotes: {uri: this host's address as that host sees it}."""
    local = [i for i, u in enumerate(where) if u not in remotes]
    lines = ["# written by ./netvm up --libvirt: one switch per host, TCP links to s0",
             "switch s0 %d" % max(2, len(local) + len(remotes))]
    lines += ["node %d s0:%d" % (i, p) for p, i in enumerate(local)]
    info = {}
    for k, (uri, addr) in enumerate(remotes.items(), 1):
        mine = [i for i, u in enumerate(where) if u == uri]
        sw = "h%d" % k
        lines.append("switch %s %d" % (sw, max(2, len(mine) + 1)))
        lines += ["node %d %s:%d" % (i, sw, p) for p, i in enumerate(mine)]
        lport = fabric_port()
        lines.append("link s0:%d %s:%d tcp:%s:%d" % (len(local) + k - 1, sw, len(mine), addr, lport))
        info[uri] = (sw, lport)
    return "\n".join(lines) + "\n", info


def fabric_port():
    """A TCP port for s0 to listen on for a remote switch's link: one the
    kernel hands out here (free at this moment)."""
    from .cluster import free_port
    return free_port()


def node_base():
    """The base of a remote switch's node ports (node I on BASE+I, on the
    remote host's 127.0.0.1)."""
    return random.randrange(20000, 40000, 100)


START_SWITCH = """cd "$1" && mkdir -p "$2" && cd "$2" && cat > fabric.topo || exit 1
setsid "$3" --topology fabric.topo --only "$4" --tcp "127.0.0.1:$5" --sock-dir . --mapper 0 \
    </dev/null >switch.log 2>&1 &
pid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "netvm-switch ready:" switch.log && { echo "$pid"; exit 0; }
    kill -0 $pid 2>/dev/null || break
    sleep 0.1; i=$((i+1))
done
kill $pid 2>/dev/null; tail -n 3 switch.log; exit 1
"""


def start_switch(c, h, k, topo_text, sw, base):
    """netvm-switch --only SW on host h, in the state dir's host-K/ there,
    its node ports on that host's 127.0.0.1:BASE+I.  -> its pid there."""
    out = h.must("starting netvm-switch", START_SWITCH, c.dir, "host-%d" % k, fabric.switch_binary(), sw, base,
                 stdin=topo_text.encode())
    return int(out.splitlines()[-1])


STOP_SWITCH = """p=$1
alive() { grep -q fabric.topo /proc/$p/cmdline 2>/dev/null; }
alive || exit 0
kill -TERM $p; i=0
while alive && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
alive && kill -KILL $p; i=0
while alive && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
alive && exit 1; exit 0
"""


def stop_switch(h, pid):
    if pid:
        h.must("stopping netvm-switch (pid %d)" % pid, STOP_SWITCH, pid)


def switch_alive(h, pid):
    return bool(pid) and h.sh('grep -q fabric.topo /proc/$1/cmdline 2>/dev/null', pid)[0] == 0


def start_tunnel(c, h, k, ports):
    """ssh -N with one -L per remote node: its agent port here is the same
    port on the remote host's 127.0.0.1 (the node's hostfwd).  -> pid."""
    fwd = []
    for p in ports:
        fwd += ["-L", "127.0.0.1:%d:127.0.0.1:%d" % (p, p)]
    log = open(c.path("tunnel-%d.log" % k), "wb")
    with log:
        p = subprocess.Popen(h.argv("-N", "-o", "ExitOnForwardFailure=yes", "-o", "ServerAliveInterval=15",
                                    *fwd),
                             stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
    return p.pid


def tunnel_alive(pid):
    info = proc_running(pid) if pid else None
    return bool(info) and b"ExitOnForwardFailure=yes" in info[1]


def stop_tunnel(pid):
    if not tunnel_alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:   # another ./netvm started it: init reaps it
            if not tunnel_alive(pid):
                return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


def hosts(c):
    """{uri: (Host, its state entry)} of the cluster's remote hosts."""
    rem = (c.state or {}).get("libvirt", {}).get("remote", {})
    return {u: (Host(u), e) for u, e in rem.items()}


def host_of(c, node):
    return hosts(c).get(node.get("uri"), (None, None))[0]


def link_netdev(c, i):
    """Node i's link if it runs on a remote host: its switch's port there."""
    for e in (c.state or {}).get("libvirt", {}).get("remote", {}).values():
        if i in e["nodes"]:
            return ("stream,id=link0,server=off,addr.type=inet,addr.host=127.0.0.1,addr.port=%d,"
                    "reconnect-ms=500" % (e["base"] + i))
    return None


def domain_running(c, node):
    """A remote node's liveness: its domain's state (its QEMU's pid is
    another host's)."""
    from .libvirt import virsh
    try:
        rc, state = virsh(node["uri"], "domstate", node["domain"], check=False, timeout=30)
    except NetvmError:
        return False
    return rc == 0 and state in ("running", "paused")


def prepare(c):
    """The state dir on every remote host."""
    for h, e in hosts(c).values():
        h.must("making the state dir", 'mkdir -p "$1"', c.dir)


CLEAN = """cd "$1" 2>/dev/null || exit 0
rm -rf "$2"; shift 2
for i; do rm -f node$i.serial.log node$i.qemu.log node$i.qmp snapshot/node$i.save; done
rmdir snapshot . 2>/dev/null; exit 0
"""


def teardown(c, keep_going=True):
    """Tunnels, remote switches and the remote state dirs' files (domains
    are gone by then).  -> what could not be stopped."""
    left = []
    for k, (uri, (h, e)) in enumerate(hosts(c).items(), 1):
        stop_tunnel(e.get("tunnel"))
        try:
            stop_switch(h, e.get("switch_pid"))
            h.sh(CLEAN, c.dir, "host-%d" % k, *e["nodes"])
        except NetvmError as err:
            if not keep_going:
                raise
            left.append(str(err))
    return left


def push_driver(c):
    """reload-driver: a remote host's nodes load netvm.ko from its checkout;
    this host's build is copied there first if it differs."""
    with open(DRIVER_KO, "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    for h, e in hosts(c).values():
        rc, out = h.sh('sha256sum < "$1"', DRIVER_KO)
        if rc == 0 and out.split()[:1] == [digest]:
            continue
        h.must("copying netvm.ko", 'cat > "$1.new" && mv "$1.new" "$1"', DRIVER_KO, stdin=data)
        say("netvm.ko copied to %s (%s)" % (h.name(), rel(DRIVER_KO)))


def print_status(c):
    for k, (uri, (h, e)) in enumerate(hosts(c).items(), 1):
        print("  host %s: switch %s pid %s there %s, node ports 127.0.0.1:%d+I; agent tunnel pid %d %s" % (
            h.name(), e["switch"], e.get("switch_pid"),
            "running" if switch_alive(h, e.get("switch_pid")) else "NOT RUNNING", e["base"],
            e.get("tunnel", 0), "running" if tunnel_alive(e.get("tunnel")) else "NOT RUNNING"))


def logs(c, node, follow):
    h = host_of(c, node)
    path = c.path("node%d.serial.log" % node["id"])
    argv = h.argv() + [" ".join(shlex.quote(a) for a in
                                (["tail", "-n", "+1", "-f", path] if follow else ["cat", path]))]
    return subprocess.call(argv, stdin=subprocess.DEVNULL)
