"""Clusters as libvirt domains (docs/cluster.md, "libvirt and several hosts").

    ./netvm libvirt-xml [-n N] [--accel A] [--mem MB] [--out DIR]
    ./netvm up --libvirt URI[,URI...]     (then run, status, console, logs,
                                           reload-driver, save, restore, down)

Each node is a persistent libvirt domain named netvm-CLUSTER-nodeI that runs
our QEMU build (<emulator>) with the very devices ./netvm up gives its own
QEMU processes (Cluster.qemu_cmd): what libvirt's domain XML expresses is
said in it (kernel, initramfs and command line, memory, the serial console
and its log, the 9p share, the package disk); what it cannot say is passed
through libvirt's <qemu:commandline>: the lanai device and its link, the
host's injection FIFO, the control NIC (a user-mode netdev restricted to a
host port forward) and the data NIC (a dgram netdev on a loopback multicast
group), our QEMU's firmware paths, QEMU's own log and a second QMP monitor
for ./netvm status and the boot template.

libvirt is driven through virsh (Debian's libvirt-clients).  Nodes are
spread over the URIs round robin, node 0 started first (back to back it
listens for node 1); beyond two nodes they go through netvm-switch, a
process of ours started before the domains and stopped after them.  Nodes
start from a boot template of their own (libvirt_boot.py) unless
NETVM_COLD_BOOT is set; save and restore go through libvirt
(libvirt_save.py).  A qemu+ssh:// URI puts its nodes on another host
(libvirt_remote.py: its own switch, linked to this host's over TCP, and
an ssh tunnel to its nodes' agents); those nodes boot cold.
"""
import os
import subprocess
import time
import urllib.parse
import uuid
import xml.etree.ElementTree as ET

from . import fabric, libvirt_remote, mapper, pkgdisk, vmsched
from .build import require_built
from .cluster import (AGENT_GUEST_PORT, BACK_TO_BACK_MAX, DATA_GROUP, MAX_NODES, check_memory,
                      free_port, free_udp_port, uses_switch)
from .command import Command
from .common import (BUILD, DEFAULT_MEM, INITRAMFS, REPO, VMLINUZ, NetvmError, Timer,
                     qemu_binary, rel, say)

QEMU_NS = "http://libvirt.org/schemas/domain/qemu/1.0"
ET.register_namespace("qemu", QEMU_NS)
VIRSH = "virsh"
# PCI slots of the devices passed through <qemu:commandline>: QEMU would
# give them the first free slots before it creates libvirt's own devices,
# which libvirt has placed there (slots 2, 3, ...).
PCI_SLOTS = {"ctl": 0x10, "data": 0x11, "nic": 0x12}


def parse_uris(text):
    """--libvirt's URI[,URI...] -> list; each a libvirt QEMU URI of this
    host (qemu:///system, qemu:///session) or of another one reached over
    ssh (qemu+ssh://[USER@]HOST[:PORT]/system[?keyfile=...])."""
    uris = [u.strip() for u in (text or "").split(",")]
    if not text or not all(uris):
        raise NetvmError("--libvirt wants URI[,URI...], e.g. qemu:///system or "
                         "qemu:///system,qemu+ssh://root@host2/system")
    for u in uris:
        p = urllib.parse.urlsplit(u)
        if not p.scheme.startswith("qemu"):
            raise NetvmError("--libvirt %s: not a libvirt QEMU URI (qemu:///system, qemu:///session, "
                             "qemu+ssh://[USER@]HOST[:PORT]/system)" % u)
        if p.netloc:
            libvirt_remote.Host(u)   # refuses what the front door cannot reach
    return uris


def spread(n, uris):
    """The URI of each of n nodes: round robin, node 0 on the first."""
    return [uris[i % len(uris)] for i in range(n)]


def virsh(uri, *args, check=True, timeout=120):
    """virsh -c URI ARGS -> (rc, output); a failure raises NetvmError with
    virsh's own message unless check is False."""
    cmd = [VIRSH, "-q", "-c", uri] + list(args)
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except FileNotFoundError:
        raise NetvmError("virsh not found: install libvirt-clients (sh ci/install-deps.sh)")
    except subprocess.TimeoutExpired:
        raise NetvmError("virsh -c %s %s: no answer within %d s" % (uri, " ".join(args), timeout))
    out = r.stdout.strip()
    if check and r.returncode != 0:
        raise NetvmError("virsh -c %s %s: %s" % (uri, args[0], out.replace("\n", " ")))
    return r.returncode, out


def passthrough_args(c, i, n, port, template=False, incoming=False):
    """What libvirt's XML cannot say, as QEMU arguments (<qemu:commandline>):
    the same options as Cluster.qemu_cmd gives node i of n (back to back,
    or through the switch beyond BACK_TO_BACK_MAX nodes), with absolute
    paths.  template: the boot template's (libvirt_boot.py; the template's
    data NIC, no peer); incoming: the node waits for the template's state
    (-incoming defer)."""
    args = ["-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
            "-qmp", "unix:%s,server=on,wait=off" % c.abs_socket("node%d.qmp" % i),
            # control plane: the guest agent, reached through a host port
            "-netdev", "user,id=ctl,restrict=on,hostfwd=tcp:127.0.0.1:%d-:%d" % (port, AGENT_GUEST_PORT),
            "-device", "virtio-net-pci,netdev=ctl,romfile=,addr=%#x" % PCI_SLOTS["ctl"]]
    data, _ = c.data_nic(-1 if template else i)
    if data:
        data[-1] += ",addr=%#x" % PCI_SLOTS["data"]
    auth, inject = "", []
    switched = through_switch(c, n)
    remote_link = libvirt_remote.link_netdev(c, i)
    # the link as ./netvm up's nodes have it; one to another host is TCP,
    # which only a netdev speaks
    if remote_link:
        link, netdev = "netdev=link0", ["-netdev", remote_link]
    else:
        link, netdev = c.nic_link(i, switched)
    threaded = not netdev
    if not switched and n == BACK_TO_BACK_MAX and not template:   # Cluster.link_auth's, with the FIFO's absolute path (up makes it)
        auth = ",peer-node=%d" % (1 - i)
        fifo = c.path("node%d.inject" % i)
        if threaded:
            auth += ",link-inject=%s" % fifo
        else:
            inject = ["-chardev", "pipe,id=inject,path=%s" % fifo,
                      "-object", "filter-redirector,id=injf,netdev=link0,queue=tx,indev=inject"]
    return args + data + [
        "-device", "lanai,id=nic,%s,node-id=%d,sram-size=8388608%s,addr=%#x"
        % (link, i, auth, PCI_SLOTS["nic"])] + netdev + inject + [
        "-d", "guest_errors", "-D", c.path("node%d.qemu.log" % i)] + (
        ["-incoming", "defer"] if incoming else [])


def through_switch(c, n):
    """Beyond two nodes, or with nodes on other hosts: netvm-switch."""
    return uses_switch(n, None) or bool((c.state or {}).get("libvirt", {}).get("remote"))


def sub(parent, tag, text=None, **attrs):
    e = ET.SubElement(parent, tag, {k.rstrip("_"): str(v) for k, v in attrs.items()})
    if text is not None:
        e.text = str(text)
    return e


def domain_xml(c, i, n, port, accel, mem, template=False, incoming=False, uuid=None):
    """libvirt's domain XML for node i of n (c.state set as by up);
    template, incoming: passthrough_args'; uuid: the domain's (else
    libvirt picks one)."""
    _, data_arg = c.data_nic(-1 if template else i)
    ident = "netvm.template=1" if template else "netvm.node=%d%s" % (i, data_arg)
    dom = ET.Element("domain", {"type": "kvm" if accel == "kvm" else "qemu"})
    sub(dom, "name", c.vm_name(i))
    if uuid:
        sub(dom, "uuid", uuid)
    sub(dom, "memory", mem, unit="MiB")
    sub(dom, "vcpu", 1)
    os_ = sub(dom, "os")
    sub(os_, "type", "hvm", arch="x86_64", machine="pc")
    sub(os_, "kernel", VMLINUZ)
    sub(os_, "initrd", INITRAMFS)
    sub(os_, "cmdline", "console=ttyS0 quiet panic=-1 " + ident)
    sub(sub(dom, "features"), "acpi")
    # no HPET, as ./netvm up's nodes (Cluster.qemu_cmd): it costs an idle node CPU
    sub(sub(dom, "clock", offset="utc"), "timer", name="hpet", present="no")
    # -no-reboot: a guest that panics or reboots stops, as with ./netvm up
    for ev in ("on_poweroff", "on_reboot", "on_crash"):
        sub(dom, ev, "destroy")
    dev = sub(dom, "devices")
    sub(dev, "emulator", qemu_binary())
    # the repository, read-only, at /netvm in the guest (squash:
    # security_model=none, as ./netvm up's)
    fs = sub(dev, "filesystem", type="mount", accessmode="squash")
    sub(fs, "driver", type="path")
    sub(fs, "source", dir=REPO)
    sub(fs, "target", dir="netvm")
    sub(fs, "readonly")
    if os.path.exists(pkgdisk.PKGDISK):   # the Debian packages (docs/packages.md)
        disk = sub(dev, "disk", type="file", device="disk")
        sub(disk, "driver", name="qemu", type="raw")
        sub(disk, "source", file=pkgdisk.PKGDISK)
        sub(disk, "target", dev="vda", bus="virtio")
        sub(disk, "readonly")
        sub(disk, "serial", pkgdisk.SERIAL)
    # the serial console: virsh console, and its log for ./netvm logs,
    # appended to: a restored node's QEMU is a new one (the log keeps its boot)
    ser = sub(dev, "serial", type="pty")
    sub(ser, "log", file=c.path("node%d.serial.log" % i), append="on")
    sub(ser, "target", port=0)
    sub(sub(dev, "console", type="pty"), "target", type="serial", port=0)
    sub(dev, "controller", type="usb", model="none")
    sub(dev, "memballoon", model="none")
    # QEMU runs as the user who runs ./netvm, and nothing is relabelled:
    # libvirt's DAC driver would otherwise run it as libvirt-qemu (which
    # cannot write its sockets and logs in our state dir) and chown our
    # kernel, initramfs and package disk (docs/cluster.md, "libvirt and
    # several hosts")
    sec = sub(dom, "seclabel", type="static", model="dac", relabel="no")
    sub(sec, "label", "+%d:+%d" % (os.getuid(), os.getgid()))
    cl = sub(dom, "{%s}commandline" % QEMU_NS)
    for a in passthrough_args(c, i, n, port, template, incoming):
        sub(cl, "{%s}arg" % QEMU_NS, value=a)
    ET.indent(dom)
    return ET.tostring(dom, encoding="unicode") + "\n"


def new_state(c, n, accel, mem, uris):
    return {"name": c.name, "n": n, "accel": accel, "mem": mem, "started": time.time(),
            "nodes": [], "routes_mode": "map",
            "data_net": {"group": DATA_GROUP, "port": free_udp_port()},
            "libvirt": {"uris": uris}}


def check_args(n, accel, mem):
    if not 1 <= n <= MAX_NODES:
        raise NetvmError("--libvirt: 1 to %d nodes (-n %d)" % (MAX_NODES, n))
    check_memory(n, mem)


def find_pid(c, i):
    """The pid of node i's QEMU, which libvirt started: the process whose
    command line names the domain (-name guest=netvm-CLUSTER-nodeI,...)
    and carries this checkout's state dir; None if there is none."""
    tag = ("guest=%s," % c.vm_name(i)).encode()
    mine = c.dir.encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if tag in cmd and mine in cmd:
            return int(pid)
    return None


def started_here(c, i):
    """Node i's QEMU on this host, just started by libvirt: its pid (None
    if there is none), its threads scheduled as ./netvm up's nodes
    (vmsched: pinned, the vCPU ranked below the main loop and the link
    thread; libvirt's cgroups are kept, its vcpuN group made idle)."""
    pid = find_pid(c, i)
    if pid:
        vmsched.apply(pid, c.name, i, own_cgroups=False)
    return pid


def is_libvirt(c):
    return bool((c.load() or {}).get("libvirt"))


def up(c, n, accel, mem, timeout, uris):
    """./netvm up --libvirt: define and start every node as a domain (from
    the libvirt boot template unless NETVM_COLD_BOOT is set or the node is
    on another host), the switches beside them beyond two nodes or with
    other hosts; wait for their agents and links, then the routes."""
    check_args(n, accel, mem)
    uris = parse_uris(uris)
    require_built()
    where = spread(n, uris)
    remotes = {}   # uri: this host's address as that host sees it
    for u in dict.fromkeys(where):
        if libvirt_remote.is_remote(u):
            remotes[u] = libvirt_remote.check(libvirt_remote.Host(u))
    use_switch = uses_switch(n, None) or bool(remotes)
    if use_switch:
        fabric.switch_binary()
    for u in dict.fromkeys(uris):
        virsh(u, "uri")   # the daemon answers
    for i in range(n):
        rc, _ = virsh(where[i], "domstate", c.vm_name(i), check=False)
        if rc == 0:
            raise NetvmError("libvirt domain %s already exists on %s (another checkout's cluster "
                             "'%s'?): ./netvm down, or virsh -c %s undefine %s"
                             % (c.vm_name(i), where[i], c.name, where[i], c.vm_name(i)))
    template = None
    local = [u for u in where if u not in remotes]
    if local and not os.environ.get("NETVM_COLD_BOOT"):
        from . import libvirt_boot
        template = libvirt_boot.ensure_template(local[0], accel, mem, timeout)
    c.lock()
    try:
        if c.clean_stale():
            raise NetvmError("cluster '%s' is already up (%d nodes): ./netvm down first, or "
                             "pick another --cluster" % (c.name, len(c.state["nodes"])))
        os.makedirs(c.dir)
        c.state = new_state(c, n, accel, mem, uris)
        c.save()
        t = Timer()
        ptys = []
        say("starting %d node%s as libvirt domains (cluster '%s', %s, %d MiB each, %s, on %s, %s)"
            % (n, "s" if n > 1 else "", c.name, accel, mem,
               "through the switch" if use_switch else "back to back" if n == 2 else "no link",
               ", ".join(dict.fromkeys(uris)), "from the boot template" if template else "cold boot"))
        try:
            if use_switch:   # processes of ours, beside the domains (down stops them)
                start_switches(c, n, where, remotes)
            try:
                for i in range(n):
                    ptys.extend(start_domain(c, i, n, where[i], accel, mem,
                                             None if where[i] in remotes else template))
                for k, (h, e) in enumerate(libvirt_remote.hosts(c).values(), 1):
                    e["tunnel"] = libvirt_remote.start_tunnel(
                        c, h, k, [c.state["nodes"][i]["port"] for i in e["nodes"]])
                    c.save()
                c.wait_ready(timeout, progress=True)
            finally:
                for fd in ptys:
                    os.close(fd)
            if n > 1:
                c.wait_links(timeout)
            if use_switch:
                mapper.install_routes(c)
        except BaseException:
            remove_domains(c)
            libvirt_remote.teardown(c)
            fabric.stop_switch(c, c.state.get("fabric"))
            c.remove_dir(keep_logs=True)
            raise
        say("cluster '%s' up as libvirt domains: %d node%s ready in %s" % (
            c.name, n, "s" if n > 1 else "", t))
    finally:
        c.unlock()


def start_switches(c, n, where, remotes):
    """This host's netvm-switch; with other hosts, one of a topology of one
    switch per host (libvirt_remote.topology), the others started there
    over ssh, after ours (they dial its TCP link ports)."""
    if not remotes:
        c.state["fabric"] = fabric.start_switch(c, n, None)
        c.save()
        say("netvm-switch up (pid %d, %s)" % (c.state["fabric"]["pid"], c.state["fabric"]["topology"]))
        return
    text, info = libvirt_remote.topology(where, remotes)
    with open(c.path("fabric.topo"), "w") as f:
        f.write(text)
    rem = c.state["libvirt"]["remote"] = {}
    for u, (sw, lport) in info.items():
        rem[u] = {"switch": sw, "base": libvirt_remote.node_base(), "link_port": lport,
                  "nodes": [i for i in range(n) if where[i] == u]}
    c.state["fabric"] = fabric.start_switch(c, n, "@reuse", only="s0")
    c.state["fabric"]["topology"] = "one switch per host (fabric.topo)"
    c.save()
    say("netvm-switch s0 up here (pid %d)" % c.state["fabric"]["pid"])
    libvirt_remote.prepare(c)
    for k, (h, e) in enumerate(libvirt_remote.hosts(c).values(), 1):
        e["switch_pid"] = libvirt_remote.start_switch(c, h, k, text, e["switch"], e["base"])
        c.save()
        say("netvm-switch %s up on %s (pid %d there, nodes %s on its 127.0.0.1:%d+I, linked to s0 over "
            "TCP port %d)" % (e["switch"], h.name(), e["switch_pid"], ",".join(map(str, e["nodes"])),
                             e["base"], e["link_port"]))


def start_domain(c, i, n, uri, accel, mem, template):
    """Defines and starts node i's domain on uri; from the template
    (libvirt_boot.py): defined and started waiting for it, loaded, then
    defined again as booting cold, so that a later virsh start of it
    boots.  A remote host's domain is defined from this host's file
    (virsh sends the XML) and boots cold.  -> the serial pty fds to close
    once the node is ready."""
    remote = libvirt_remote.is_remote(uri)
    port = free_port()
    xml_path = c.path("node%d.xml" % i)
    c.link_auth(i, n)      # makes nodeI.inject (back to back)
    uid = str(uuid.uuid4())   # both definitions are of one domain
    with open(xml_path, "w") as f:
        f.write(domain_xml(c, i, n, port, accel, mem, uuid=uid))
    first = xml_path
    if template:
        first = c.path("node%d.incoming.xml" % i)
        with open(first, "w") as f:
            f.write(domain_xml(c, i, n, port, accel, mem, incoming=True, uuid=uid))
    node = {"id": i, "pid": 0, "port": port, "uri": uri, "domain": c.vm_name(i)}
    c.state["nodes"].append(node)
    c.save()
    td = Timer()
    virsh(uri, "define", first)
    node["defined"] = True
    c.save()
    ts = Timer()
    virsh(uri, "start", c.vm_name(i))
    if not remote:
        node["pid"] = started_here(c, i) or 0
        if not node["pid"]:
            raise NetvmError("node %d: domain %s started but its QEMU is not on this host" % (i, c.vm_name(i)))
    c.save()
    ptys = []
    if template:
        from . import libvirt_boot
        ptys.append(libvirt_boot.load(c, node, template))
        virsh(uri, "define", xml_path)
    say("node %d: domain %s on %s defined in %s, started%s in %s"
        % (i, c.vm_name(i), uri, "%.1f s" % (td.secs - ts.secs),
           " from the boot template" if template else "", ts))
    return ptys


def remove_domains(c):
    """Stops and undefines every domain of the cluster; -> the names of
    those still defined afterwards."""
    left = []
    for node in c.state.get("nodes", []):
        if not node.get("defined"):
            continue
        uri, dom = node["uri"], node["domain"]
        rc, state = virsh(uri, "domstate", dom, check=False)
        if rc != 0:
            continue                      # already gone
        if state != "shut off":
            virsh(uri, "destroy", dom, check=False)
        virsh(uri, "undefine", dom, check=False)
        if virsh(uri, "domstate", dom, check=False)[0] == 0:
            left.append("%s on %s" % (dom, uri))
    return left


def down(c):
    c.lock()
    try:
        st = c.load()
        t = Timer()
        left = remove_domains(c)
        if left:
            raise NetvmError("could not remove libvirt domain(s) %s" % ", ".join(left))
        left = libvirt_remote.teardown(c)
        if left:
            raise NetvmError("; ".join(left))
        fabric.stop_switch(c, st.get("fabric"))
        c.remove_dir()
        say("cluster '%s' down (%d libvirt domain%s stopped and undefined in %s)" % (
            c.name, len(st["nodes"]), "" if len(st["nodes"]) == 1 else "s", t))
    finally:
        c.unlock()


def status(c):
    st = c.load()
    print("libvirt domains:")
    for node in st["nodes"]:
        rc, state = virsh(node["uri"], "domstate", node["domain"], check=False)
        print("  node %d: %s on %s: %s" % (node["id"], node["domain"], node["uri"],
                                         state if rc == 0 else "NOT DEFINED"))
    libvirt_remote.print_status(c)
    return c.status()


def logs(c, n, follow):
    """./netvm logs: a remote node's serial log is read there over ssh."""
    node = c.node(n)
    if libvirt_remote.is_remote(node["uri"]):
        return libvirt_remote.logs(c, node, follow)
    return c.logs(n, follow)


def console(c, n):
    """virsh console of node n (Ctrl-] leaves, as with ./netvm console)."""
    node = c.node(n)
    print("netvm: node %d console (virsh console %s); press Ctrl-] to leave" % (
        node["id"], node["domain"]), flush=True)
    return subprocess.call([VIRSH, "-c", node["uri"], "console", "--force", node["domain"]])


def write_xml(c, n, accel, mem, out):
    """./netvm libvirt-xml: each node's domain XML into OUT (no cluster is
    started; the agent ports and data network port are picked now and are
    free at this moment only)."""
    check_args(n, accel, mem)
    out = out or os.path.join(BUILD, "libvirt-xml", c.name)
    os.makedirs(out, exist_ok=True)
    saved = c.state
    c.state = new_state(c, n, accel, mem, ["qemu:///system"])
    try:
        for i in range(n):
            p = os.path.join(out, "%s.xml" % c.vm_name(i))
            with open(p, "w") as f:
                f.write(domain_xml(c, i, n, free_port(), accel, mem))
            say("wrote %s" % rel(p))
    finally:
        c.state = saved


def add_xml_args(sp):
    sp.add_argument("-n", "--nodes", type=int, default=2,
                    help="number of nodes (default 2; more than 2 go through netvm-switch, which the "
                    "XML's tooling must start: docs/cluster.md)")
    sp.add_argument("--accel", choices=("tcg", "kvm"), default="tcg", help="QEMU accelerator (default tcg)")
    sp.add_argument("--mem", type=int, default=DEFAULT_MEM, metavar="MB",
                    help="guest RAM (default %d)" % DEFAULT_MEM)
    sp.add_argument("--out", metavar="DIR",
                    help="directory for netvm-CLUSTER-nodeI.xml (default build/libvirt-xml/CLUSTER)")
    sp.set_defaults(func=lambda a, c: write_xml(c, a.nodes, a.accel, a.mem, a.out))


COMMANDS = [
    Command("libvirt-xml", "write each node's libvirt domain XML (what up --libvirt defines)",
            add_xml_args),
]

