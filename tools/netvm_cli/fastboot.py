"""Fast boot: every node of a cluster starts from one saved boot template
(docs/cluster.md, "Fast boot"), QEMU's "VM templating".

The template is one VM booted once with netvm.template=1: /init sets up
everything a node shares (kernel, modules, control NIC) and waits on the
serial console for its identity.  Its RAM lives in a file
(build/template/tmpl-ACCEL-MEM-KEY.ram, memory-backend-file share=on); the
rest of its state is saved there with QEMU's migration, capability
x-ignore-shared (the RAM file is not copied), to tmpl-...vmstate.  Each
node is then a new, independent QEMU process with its own command line
(NIC node id, link, agent port, data NIC) that maps the RAM file
copy-on-write, is started with -incoming from the vmstate file, and is
told its identity on its serial console ("netvm-identity NODE DATA_IP
DATA_MAC EPOCH"); /init goes on from there (data NIC, share, netvm.ko,
agent).  Nothing node-specific is in the saved state: the NIC's node id
is a device property (not migrated), netvm.ko is loaded after the restore
and the 9p share (which blocks migration while mounted) is mounted after.

KEY hashes what the saved state depends on: the kernel, the initramfs
(init, agent, modules) and the QEMU binary (size and mtime of each), the
memory size, the NIC's SRAM size and TEMPLATE_VERSION (the device set of
Cluster.qemu_cmd).  netvm.ko is not in it: the driver is loaded from the
share after the restore, so a rebuilt driver needs no new template.
"""
import fcntl
import glob
import hashlib
import json
import os
import shutil
import socket
import threading
import time

from .common import BUILD, INITRAMFS, VMLINUZ, NetvmError, Timer, qemu_binary, rel, say
from . import pkgdisk
from .snapshot import Qmp, _wait_migration

TEMPLATE_DIR = os.path.join(BUILD, "template")
# Bump when Cluster.qemu_cmd's device set or /init's template protocol changes.
TEMPLATE_VERSION = 5
WAITING = b"netvm-init: template waiting"


def template_path(accel, mem):
    """The template's files, without their extension (.vmstate, .ram)."""
    parts = [TEMPLATE_VERSION, accel, mem]
    for f in (VMLINUZ, INITRAMFS, qemu_binary()):
        try:
            st = os.stat(f)
        except OSError:
            raise NetvmError("%s missing: run ./netvm build" % rel(f))
        parts.append([f, st.st_size, st.st_mtime_ns])
    parts.append(pkgdisk.signature())  # the nodes' read-only package disk
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]
    return os.path.join(TEMPLATE_DIR, "tmpl-%s-%d-%s" % (accel, mem, key))


def ensure_template(cluster_cls, accel, mem, timeout):
    """The template's files for (accel, mem) without their extension, built
    first if missing or stale.
    Builders are serialised by a lock, so clusters coming up side by side
    build it once."""
    path = template_path(accel, mem)
    if os.path.exists(path + ".vmstate"):
        return path
    os.makedirs(TEMPLATE_DIR, exist_ok=True)
    fd = os.open(os.path.join(TEMPLATE_DIR, "lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if not os.path.exists(path + ".vmstate"):
            build_template(cluster_cls, accel, mem, timeout, path)
    finally:
        os.close(fd)
    return path


def build_template(cluster_cls, accel, mem, timeout, path):
    say("building the boot template (one node boots once and is saved; kernel, "
        "image or QEMU changed, or first use) ...")
    t = Timer()
    c = cluster_cls("template")
    c.dir = os.path.join(TEMPLATE_DIR, "boot-%d" % os.getpid())
    shutil.rmtree(c.dir, ignore_errors=True)
    os.makedirs(c.dir)
    # a data NIC like every node's (its port is never used: no address yet)
    c.state = {"nodes": [], "data_net": {"group": "239.77.0.1", "port": 9},
               "template_ram": path + ".ram.tmp"}
    node = None
    try:
        node = c.start_node(0, 1, accel, mem, (), template=True)
        c.state["nodes"].append(node)
        log = c.path("node0.serial.log")
        deadline = time.monotonic() + timeout
        while not _log_has(log, WAITING):
            if not c.pid_alive(node):
                raise NetvmError("boot template: QEMU exited during boot (serial log: %s)"
                                 % rel(_keep_log(log)))
            if time.monotonic() > deadline:
                raise NetvmError("boot template: not ready within %d s (serial log: %s)"
                                 % (timeout, rel(_keep_log(log))))
            time.sleep(0.2)
        time.sleep(0.5)  # let /init settle in its read
        q = Qmp(c.path("node0.qmp"))
        try:
            q.cmd("stop")
            set_ignore_shared(q)
            tmp = path + ".vmstate.tmp"
            q.cmd("migrate", uri="file:" + tmp)
            _wait_migration(q, "boot template")
        finally:
            q.close()
        c.kill_all([node])   # its RAM file is complete once QEMU is gone
        node = None
        os.replace(path + ".ram.tmp", path + ".ram")
        os.replace(tmp, path + ".vmstate")
        remove_stale(accel, mem, path)
    finally:
        if node:
            c.kill_all([node])
        shutil.rmtree(c.dir, ignore_errors=True)
    used = os.stat(path + ".ram").st_blocks * 512
    say("boot template saved: %s.{vmstate,ram} (%d MiB of RAM, %s)" % (rel(path), used >> 20, t))


def set_ignore_shared(q, on=True):
    """The RAM file is not part of the migration stream (both ends).  Off
    again once a node is loaded: a later ./netvm save writes a plain
    stream, RAM included, whatever the template."""
    q.cmd("migrate-set-capabilities",
          capabilities=[{"capability": "x-ignore-shared", "state": on}])


def remove_stale(accel, mem, path):
    """Removes the older templates of this accel and memory size, unless a
    cluster still maps its RAM file (a running or saved one)."""
    used = set()
    for f in glob.glob(os.path.join(BUILD, "cluster", "*", "cluster.json")):
        try:
            with open(f) as fh:
                used.add(json.load(fh).get("template_ram"))
        except (OSError, ValueError):
            pass
    for old in glob.glob(os.path.join(TEMPLATE_DIR, "tmpl-%s-%d-*.vmstate" % (accel, mem))):
        base = old[:-len(".vmstate")]
        if base != path and base + ".ram" not in used:
            for f in (old, base + ".ram"):
                try:
                    os.unlink(f)
                except OSError:
                    pass


def _log_has(path, marker):
    try:
        with open(path, "rb") as f:
            return marker in f.read()
    except OSError:
        return False


def _keep_log(log):
    """Copies the template's serial log out of its doomed boot dir."""
    dst = os.path.join(TEMPLATE_DIR, "last-failed.serial.log")
    try:
        shutil.copyfile(log, dst)
    except OSError:
        return log
    return dst


def start_nodes(c, n, accel, mem, template):
    """Starts nodes 0..n-1 of cluster c from the template: each its own QEMU
    with -incoming, loaded, resumed and told its identity.  Node 0 first
    (back to back it listens for node 1), the others at once, one thread
    each: a node's start is mostly waiting for its QEMU.  Returns the
    console sockets, to be closed once the nodes are ready (closing one
    early could drop the line before the guest has read it)."""
    t = Timer()
    nodes, consoles, errors = {}, {}, []

    def one(i):
        try:
            nodes[i] = c.start_node(i, n, accel, mem, ["-incoming", "defer"])
            q = Qmp(c.path("node%d.qmp" % i))
            try:
                set_ignore_shared(q)
                q.cmd("migrate-incoming", uri="file:" + template + ".vmstate")
                _wait_migration(q, "node %d (from the boot template)" % i)
                set_ignore_shared(q, False)
                q.cmd("cont")
            finally:
                q.close()
            ip, mac = identity(i)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            consoles[i] = s
            s.connect(c.path("node%d.console" % i))
            s.sendall(b"\nnetvm-identity %d %s %s %d\n" % (i, ip.encode(), mac.encode(),
                                                         int(time.time())))
        except (NetvmError, OSError) as e:
            errors.append((i, e))

    one(0)
    threads = [threading.Thread(target=one, args=(i,)) for i in range(1, n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    c.state["nodes"].extend(nodes[i] for i in sorted(nodes))
    c.save()
    if errors:
        for s in consoles.values():
            s.close()
        i, e = min(errors, key=lambda x: x[0])
        raise e if isinstance(e, NetvmError) else NetvmError("node %d: %s" % (i, e))
    say("%d node%s started from the boot template in %s" % (n, "s" if n > 1 else "", t))
    return list(consoles.values())


def identity(i):
    """Node i's data address and MAC (cluster.py's DATA_IP, DATA_MAC)."""
    from .cluster import DATA_IP, DATA_MAC
    return DATA_IP % (i + 1), DATA_MAC % (i + 1)
