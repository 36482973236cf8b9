"""libvirt domains started from a boot template of their own (docs/cluster.md,
"libvirt and several hosts"), as ./netvm up's nodes start from fastboot.py's.

The template is one libvirt domain (transient, `virsh create`) with the
very XML a node gets but netvm.template=1 and the template's data NIC
(libvirt.domain_xml(template=True)): /init boots it, says "template
waiting" on the serial console and waits for its identity.  It is then
stopped and migrated to a file through our own QMP monitor (nodeI.qmp,
beside libvirt's), RAM included: libvirt owns the guest RAM's backend
(-machine memory-backend=pc.ram), so the RAM file and x-ignore-shared of
fastboot.py cannot be used, and every node loads its own copy of the RAM
(zero pages cost nothing in the stream).  The file is
build/template/lvtmpl-ACCEL-MEM-KEY.vmstate, KEY hashing fastboot's
template name, LIBVIRT_TEMPLATE_VERSION and the daemon's version (libvirt
lays out the devices); older ones of the same ACCEL and MEM are removed.

A node is then started as a domain whose QEMU waits for a migration
(-incoming defer through <qemu:commandline>): libvirt's own `cont` only
marks it to run once loaded (QEMU's autostart); we load the template
through nodeI.qmp, and write the node its identity line on the serial
console's pty (`virsh ttyconsole`), held open until the node is ready.
"""
import fcntl
import glob
import hashlib
import json
import os
import shutil
import subprocess
import time
import tty

from .cluster import Cluster, DATA_GROUP, free_port, link_thread
from .common import NetvmError, Timer, rel, say
from .fastboot import TEMPLATE_DIR, WAITING, _log_has, identity, template_path
from .libvirt import domain_xml, virsh
from .snapshot import Qmp, _wait_migration

# Bump when libvirt.domain_xml's device set changes.  3: the NIC opens its
# link socket itself (link-socket=), unless NETVM_LINK_THREAD=0 (in the key).
LIBVIRT_TEMPLATE_VERSION = 3


def lv_template_path(accel, mem):
    """fastboot's key (kernel, image, QEMU, memory, package disk), this
    module's version and the daemon's: libvirt lays out the devices (this
    host's libvirtd: only this host's URIs are taken; `virsh version
    --daemon` fails where libvirt finds no QEMU of its own to name)."""
    try:
        daemon = subprocess.run(["libvirtd", "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True).stdout.strip()
    except OSError as e:
        raise NetvmError("libvirtd --version: %s" % e.strerror)
    key = hashlib.sha256(json.dumps([os.path.basename(template_path(accel, mem)),
                                     LIBVIRT_TEMPLATE_VERSION, link_thread(), daemon]).encode()).hexdigest()[:16]
    return os.path.join(TEMPLATE_DIR, "lvtmpl-%s-%d-%s.vmstate" % (accel, mem, key))


def ensure_template(uri, accel, mem, timeout):
    """The template's file for (accel, mem) on this daemon, built first if
    missing (under fastboot's lock: one builder at a time)."""
    path = lv_template_path(accel, mem)
    if os.path.exists(path):
        return path
    os.makedirs(TEMPLATE_DIR, exist_ok=True)
    fd = os.open(os.path.join(TEMPLATE_DIR, "lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if not os.path.exists(path):
            build(uri, accel, mem, timeout, path)
    finally:
        os.close(fd)
    return path


def build(uri, accel, mem, timeout, path):
    say("building the libvirt boot template (one domain boots once and is saved) ...")
    t = Timer()
    c = Cluster("lvtemplate%d" % os.getpid())
    c.dir = os.path.join(TEMPLATE_DIR, "lvboot-%d" % os.getpid())
    shutil.rmtree(c.dir, ignore_errors=True)
    os.makedirs(c.dir)
    c.state = {"nodes": [], "data_net": {"group": DATA_GROUP, "port": 9}}
    xml = c.path("template.xml")
    with open(xml, "w") as f:
        f.write(domain_xml(c, 0, 1, free_port(), accel, mem, template=True))
    name = c.vm_name(0)
    tmp = path + ".tmp"
    try:
        virsh(uri, "create", xml)
        log = c.path("node0.serial.log")
        deadline = time.monotonic() + timeout
        while not _log_has(log, WAITING):
            if virsh(uri, "domstate", name, check=False)[1] != "running":
                raise NetvmError("libvirt boot template: its domain stopped during boot")
            if time.monotonic() > deadline:
                raise NetvmError("libvirt boot template: not ready within %d s" % timeout)
            time.sleep(0.2)
        time.sleep(0.5)  # let /init settle in its read (as fastboot.build_template)
        q = Qmp(c.path("node0.qmp"))
        try:
            q.cmd("stop")
            q.cmd("migrate", uri="file:" + tmp)
            _wait_migration(q, "libvirt boot template")
        finally:
            q.close()
        os.replace(tmp, path)
    finally:
        virsh(uri, "destroy", name, check=False)
        shutil.rmtree(c.dir, ignore_errors=True)
        if os.path.exists(tmp):
            os.unlink(tmp)
    for old in glob.glob(os.path.join(TEMPLATE_DIR, "lvtmpl-%s-%d-*.vmstate" % (accel, mem))):
        if old != path:
            os.unlink(old)
    say("libvirt boot template saved: %s (%d MiB, %s)" % (rel(path), os.path.getsize(path) >> 20, t))


def load(c, node, path):
    """Node's QEMU (started with -incoming defer) loads the template and
    runs; its identity goes to its serial console.  -> the pty's fd, to be
    closed once the node is ready (closing it early could drop the line
    before the guest has read it)."""
    i = node["id"]
    q = Qmp(c.path("node%d.qmp" % i))
    try:
        q.cmd("migrate-incoming", uri="file:" + path)
        _wait_migration(q, "node %d (from the libvirt boot template)" % i)
        if q.cmd("query-status").get("status") != "running":
            q.cmd("cont")   # libvirt's cont came before the load ended
    finally:
        q.close()
    _, pty = virsh(node["uri"], "ttyconsole", node["domain"])
    fd = os.open(pty, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)   # the line as written: no \r added
    ip, mac = identity(i)
    os.write(fd, b"\nnetvm-identity %d %s %s %d\n" % (i, ip.encode(), mac.encode(), int(time.time())))
    return fd
