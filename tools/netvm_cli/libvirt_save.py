"""./netvm save / restore for a cluster of libvirt domains (docs/cluster.md,
"libvirt and several hosts"): libvirt's own managed save files, so that
libvirt, not ./netvm, starts the restored QEMUs and the domains stay its.

save: /netvm unmounted in every node (the 9p share blocks migration), every
domain paused in --order (virsh suspend, --drain seconds apart so the link
drains, as snapshot.save stops its nodes), then `virsh save --running` of
each into snapshot/nodeI.save (libvirt migrates the paused QEMU into the
file and stops it; the domain stays defined, shut off).  restore: `virsh
restore` of each file, node 0 first (back to back it listens for node 1),
through the switch the same switch process (the QEMUs reconnect to it;
started again if it died), then the agents awaited and /netvm mounted.
A node on another host is saved into the same path there (its switch
there stays up meanwhile).
"""
import os
import time

from . import fabric, libvirt_remote
from .common import NetvmError, Timer, say
from .libvirt import started_here, virsh
from .snapshot import check_order, mount_shares, unmount_shares


def save_file(c, i):
    return os.path.join(c.path("snapshot"), "node%d.save" % i)


def saved_size(c, node, path):
    h = libvirt_remote.host_of(c, node)
    if not h:
        return os.path.getsize(path)
    out = h.must("reading the saved file's size", 'stat -c %s "$1"', path)
    return int(out.split()[-1])


def save(c, order, drain):
    st = c.state
    nodes = {nd["id"]: nd for nd in st["nodes"]}
    order = check_order(nodes, order)
    os.makedirs(c.path("snapshot"), exist_ok=True)
    for h, _ in libvirt_remote.hosts(c).values():
        h.must("making the snapshot dir", 'mkdir -p "$1"', c.path("snapshot"))
    t = Timer()
    unmount_shares(nodes, order)
    for k, i in enumerate(order):
        virsh(nodes[i]["uri"], "suspend", nodes[i]["domain"])
        say("node %d paused (virsh suspend %s)" % (i, nodes[i]["domain"]))
        if k + 1 < len(order) and drain > 0:
            time.sleep(drain)
    for i in order:
        path = save_file(c, i)
        # --running: restore resumes it (it was saved paused)
        virsh(nodes[i]["uri"], "save", nodes[i]["domain"], path, "--running", timeout=600)
        nodes[i]["pid"] = 0
        say("node %d saved by libvirt (%d MiB)" % (i, saved_size(c, nodes[i], path) >> 20))
    st["saved"] = True
    c.save()
    say("cluster '%s' saved in %s (%s): ./netvm restore" % (c.name, c.path("snapshot"), t))


def restore(c, timeout):
    st = c.state
    t = Timer()
    if os.path.exists(c.path("link0.sock")):   # back to back: node 0 listens anew
        os.unlink(c.path("link0.sock"))
    fab = st.get("fabric")
    if fab and not fabric.switch_alive(c, fab):
        topo_name = fab["topology"]
        st["fabric"] = fabric.start_switch(c, len(st["nodes"]), "@reuse")
        st["fabric"]["topology"] = topo_name
        c.save()
        say("netvm-switch started again")
    for nd in sorted(st["nodes"], key=lambda nd: nd["id"]):
        path = save_file(c, nd["id"])
        h = libvirt_remote.host_of(c, nd)
        if not (h.sh('test -f "$1"', path)[0] == 0 if h else os.path.exists(path)):
            raise NetvmError("node %d: no saved file %s%s" % (nd["id"], path, " on " + h.name() if h else ""))
        virsh(nd["uri"], "restore", path, timeout=600)
        nd["pid"] = 0 if h else started_here(c, nd["id"]) or 0
        c.save()
        say("node %d: domain %s restored by libvirt" % (nd["id"], nd["domain"]))
    st.pop("saved", None)
    c.save()
    c.wait_ready(timeout)
    mount_shares(st["nodes"])
    for nd in st["nodes"]:
        h = libvirt_remote.host_of(c, nd)
        if h:
            h.must("removing the saved file", 'rm -f "$1"', save_file(c, nd["id"]))
        else:
            os.unlink(save_file(c, nd["id"]))
    say("cluster '%s' restored as libvirt domains (%d nodes, %s)" % (c.name, len(st["nodes"]), t))
