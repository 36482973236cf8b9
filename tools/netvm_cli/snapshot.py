"""./netvm save / restore: save every node of a running cluster to files
and restore them into new QEMU processes, with the NIC's state (device
registers, engines, firmware, SRAM) carried by QEMU's migration.

Saving stops the nodes one at a time in the order given, waiting between
them so the link drains: frames already in a stopped node's socket would
otherwise be lost with its process.  Put senders before receivers.

The 9p share blocks migration while it is mounted, so save unmounts
/netvm in every guest first (programs that must survive should run from
a copy, e.g. in /tmp) and restore mounts it again.
"""
import json
import os
import socket
import time

from . import agent
from . import fabric
from .command import Command
from .common import DEFAULT_TIMEOUT, NetvmError, Timer, rel, say


class Qmp:
    """A minimal QMP client on a unix socket."""

    def __init__(self, path, timeout=30.0):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        try:
            self.s.connect(path)
        except OSError as e:
            raise NetvmError("cannot reach QMP at %s: %s" % (path, e))
        self.f = self.s.makefile("rwb")
        self._read()                       # greeting
        self.cmd("qmp_capabilities")

    def _read(self):
        while True:
            line = self.f.readline()
            if not line:
                raise NetvmError("QMP connection closed")
            msg = json.loads(line)
            if "event" not in msg:
                return msg

    def cmd(self, name, **args):
        req = {"execute": name}
        if args:
            req["arguments"] = args
        self.f.write(json.dumps(req).encode() + b"\n")
        self.f.flush()
        r = self._read()
        if "error" in r:
            raise NetvmError("QMP %s: %s" % (name, r["error"].get("desc", r["error"])))
        return r.get("return")

    def close(self):
        self.s.close()


def _wait_migration(q, what, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = q.cmd("query-migrate").get("status", "none")
        if st == "completed":
            return
        if st in ("failed", "cancelled"):
            raise NetvmError("%s: migration %s" % (what, st))
        time.sleep(0.1)
    raise NetvmError("%s: migration did not finish within %d s" % (what, timeout))


def _guest_sh(node, script, timeout=60):
    code, out, err = agent.capture(node["port"], ["sh", "-c", script], timeout=timeout)
    return code, (out + err).decode(errors="replace").strip()


def check_order(nodes, order):
    """--order (empty: 0,1,...) checked against the nodes {id: node}."""
    order = order or sorted(nodes)
    if sorted(order) != sorted(nodes):
        raise NetvmError("save: --order must name every node once (nodes: %s)"
                         % ",".join(map(str, sorted(nodes))))
    return order


def unmount_shares(nodes, order):
    """The 9p share blocks migration while mounted: /netvm off in every node."""
    for i in order:
        code, msg = _guest_sh(nodes[i], "cd / && umount /netvm 2>&1 || "
                                        "{ grep -q ' /netvm ' /proc/mounts && exit 1; exit 0; }")
        if code != 0:
            raise NetvmError("node %d: cannot unmount /netvm (%s): a process runs from it; "
                             "run what must survive from a copy (e.g. /tmp)" % (i, msg))


def mount_shares(nodes):
    for nd in nodes:
        code, msg = _guest_sh(nd, "grep -q ' /netvm ' /proc/mounts || "
                                  "mount -t 9p -o trans=virtio,version=9p2000.L,ro netvm /netvm")
        if code != 0:
            say("node %d: could not mount /netvm again: %s" % (nd["id"], msg))


def save(c, order, drain):
    st = c.require_up()
    if st.get("libvirt"):
        from . import libvirt_save   # libvirt's save, not our QEMU's migration
        return libvirt_save.save(c, order, drain)
    nodes = {nd["id"]: nd for nd in st["nodes"]}
    order = check_order(nodes, order)
    snap = c.path("snapshot")
    os.makedirs(snap, exist_ok=True)
    t = Timer()
    unmount_shares(nodes, order)
    for k, i in enumerate(order):
        q = Qmp(c.path("node%d.qmp" % i))
        q.cmd("stop")
        q.close()
        say("node %d stopped" % i)
        if k + 1 < len(order) and drain > 0:
            time.sleep(drain)          # let the still-running nodes drain the link
    for i in order:
        q = Qmp(c.path("node%d.qmp" % i))
        q.cmd("migrate", uri="file:%s" % os.path.join(snap, "node%d.vmstate" % i))
        _wait_migration(q, "node %d" % i)
        q.close()
        say("node %d saved (%d MiB)" % (
            i, os.path.getsize(os.path.join(snap, "node%d.vmstate" % i)) >> 20))
    left = c.kill_all(st["nodes"])
    if left:
        raise NetvmError("could not stop node(s) %s after saving" % left)
    st["saved"] = True
    c.save()
    say("cluster '%s' saved in %s (%s): ./netvm restore" % (c.name, snap, t))


def _load(c, nd, path):
    """Load node nd's saved state from path into its new QEMU (started with
    -incoming defer).  A state the device refuses (lanai post_load: a bad
    index, a cut file) fails the migration; QEMU stays up to say why
    (exit-on-error off) instead of exiting, and so a QEMU that died while
    loading is told apart from a refused file."""
    what = "node %d" % nd["id"]
    try:
        q = Qmp(c.path("node%d.qmp" % nd["id"]))
        q.cmd("migrate-incoming", uri="file:%s" % path, **{"exit-on-error": False})
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            r = q.cmd("query-migrate")
            st = r.get("status", "none")
            if st == "completed":
                q.close()
                return
            if st in ("failed", "cancelled"):
                q.close()
                raise NetvmError("%s: its saved state %s was refused: %s (QEMU alive)" % (
                    what, rel(path), r.get("error-desc", st)))
            time.sleep(0.1)
    except NetvmError as e:
        if not c.pid_alive(nd):
            raise NetvmError("%s: QEMU died loading its saved state %s (%s)" % (
                what, rel(path), e))
        raise
    raise NetvmError("%s: loading %s did not finish within 120 s" % (what, rel(path)))


def restore(c, timeout):
    st = c.load()
    if not st or not st.get("saved"):
        raise NetvmError("cluster '%s' has no saved state: ./netvm save first" % c.name)
    if st.get("libvirt"):
        from . import libvirt_save
        return libvirt_save.restore(c, timeout)
    snap = c.path("snapshot")
    t = Timer()
    for sock in ("link0.sock",):
        if os.path.exists(c.path(sock)):
            os.unlink(c.path(sock))
    n = len(st["nodes"])
    fab = st.get("fabric")
    if fab and not fabric.switch_alive(c, fab):
        topo_name = fab["topology"]
        st["fabric"] = fabric.start_switch(c, n, "@reuse")
        st["fabric"]["topology"] = topo_name
        c.save()
        say("netvm-switch started again")
    new = []
    for i in range(n):
        new.append(c.start_node(i, n, st["accel"], st["mem"], ["-incoming", "defer"]))
        st["nodes"] = new + st["nodes"][len(new):]
        c.save()
    for nd in new:
        try:
            _load(c, nd, os.path.join(snap, "node%d.vmstate" % nd["id"]))
        except NetvmError:
            # the saved files stay: ./netvm restore again, or ./netvm down
            c.kill_all(new)
            raise
    for nd in new:
        q = Qmp(c.path("node%d.qmp" % nd["id"]))
        q.cmd("cont")
        q.close()
    st["nodes"] = new
    st.pop("saved", None)
    c.save()
    c.wait_ready(timeout)
    mount_shares(new)
    say("cluster '%s' restored (%d nodes, %s)" % (c.name, n, t))


def parse_order(text):
    """--order N[,N] as a list of node ids (empty: the default order)."""
    order = []
    for x in text.split(","):
        if not x.strip():
            continue
        if not x.strip().isdigit():
            raise NetvmError("save: --order: %r is not a node id" % x.strip())
        order.append(int(x))
    return order


def add_save_args(sp):
    sp.add_argument("--order", metavar="N[,N]", default="",
                    help="stop nodes in this order, senders first (default 0,1,...)")
    sp.add_argument("--drain", type=float, default=1.0, metavar="S",
                    help="seconds between stopping two nodes, so the link drains (default 1)")
    sp.set_defaults(func=lambda a, c: save(c, parse_order(a.order), a.drain))


def add_restore_args(sp):
    sp.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT, metavar="S",
                    help="seconds to wait for all nodes (default %d)" % DEFAULT_TIMEOUT)
    sp.set_defaults(func=lambda a, c: restore(c, a.timeout))


COMMANDS = [
    Command("save", "save every node (QEMU migration to files) and stop the cluster", add_save_args),
    Command("restore", "start a saved cluster again from its files", add_restore_args),
]
