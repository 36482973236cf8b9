"""Clusters of QEMU VMs: up, down, status, run, console, logs, reload-driver.

State of cluster NAME lives in build/cluster/NAME/ (docs/cluster.md):
  cluster.json        nodes, pids, agent ports, accel, memory
  nodeI.pid           QEMU's pidfile
  nodeI.serial.log    everything the guest wrote on its serial console
  nodeI.qemu.log      QEMU's own log (-D: guest errors, trace events)
  nodeI.console       unix socket of the serial console (./netvm console)
  nodeI.qmp           unix socket of the QMP monitor
  link0.sock          the NIC link between node 0 (server) and node 1
Every node also has a data NIC (virtio-net, 10.77.0.I+1/24) on a private L2
shared by the cluster's QEMUs: a UDP multicast group on the host's loopback,
port picked per cluster (cluster.json "data_net"); the TCP baseline of
./netvm bench runs over it.
With a switch (-n 3 or more, or --topology; tools/netvm_cli/fabric.py):
  fabric.topo, routes.json, switch.log, control.sock, nodeI.sock
QEMU runs with the state dir as its working directory, so most socket paths
are short relative names whatever the checkout's path; the NIC link's are
absolute (abs_socket: QEMU opens it after it has left that directory).
"""
import fcntl
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import termios
import threading
import time
import tty

from . import agent
from . import fabric
from .common import (CLUSTERS, DRIVER_KO, INITRAMFS, REPO, VMLINUZ, NetvmError, Timer,
                     lazy_import, proc_running, qemu_binary, rel, say)

# what booting, pinning and routing need, loaded when they run
build = lazy_import("build")
cpugroups = lazy_import("cpugroups")
fastboot = lazy_import("fastboot")
mapper = lazy_import("mapper")
pkgdisk = lazy_import("pkgdisk")
snapshot = lazy_import("snapshot")
vmsched = lazy_import("vmsched")

AGENT_GUEST_PORT = 7777
# 16 single-vCPU TCG guests are what 2 host cores carry idle (docs/cluster.md);
# past that each node's share of the CPU makes boots and tests crawl.
MAX_NODES = 16
# struct sockaddr_un's sun_path holds 108 bytes, its terminating NUL included
SUN_PATH_MAX = 107
BACK_TO_BACK_MAX = 2
# The data network (TCP baseline): one multicast group on 127.0.0.1, a UDP
# port per cluster so that clusters side by side do not hear each other.
DATA_GROUP = "239.77.0.1"
DATA_MAC = "52:54:00:77:00:%02x"    # images/init finds the data NIC by it
DATA_IP = "10.77.0.%d"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


def uses_switch(n, topology):
    """Whether an n-node cluster goes through netvm-switch: with a topology
    file, or with more nodes than a back-to-back link joins."""
    return bool(topology) or n > BACK_TO_BACK_MAX


def link_thread():
    """Whether each node's NIC opens its link socket itself (lanai's
    link-socket) and reads it in a thread of its own, off QEMU's main loop,
    on a back-to-back pair the inject FIFO too: the default (docs/bench.md,
    "The link read by a thread of its own": it takes a fifth off a NetVM
    round trip and its tail).  NETVM_LINK_THREAD=0 keeps the stream netdev
    of before.  libvirt's nodes and links across hosts (TCP) keep the
    netdev."""
    v = os.environ.get("NETVM_LINK_THREAD", "1")
    if v not in ("0", "1"):
        raise NetvmError("NETVM_LINK_THREAD=%s: 1 (the default: the NIC reads its link in a "
                         "thread of its own) or 0 (a -netdev stream)" % v)
    return v == "1"


def cluster_name(args_name):
    name = args_name or os.environ.get("NETVM_CLUSTER") or "default"
    if not NAME_RE.match(name):
        raise NetvmError("bad cluster name %r: use letters, digits, '.', '_', '-'" % name)
    return name



def yield_wait():
    """NETVM_YIELD_WAIT_US (experimental, docs/cluster.md): the NIC's
    yield-wait-us, which QEMU checks against its limit."""
    v = os.environ.get("NETVM_YIELD_WAIT_US", "")
    if not v:
        return ""
    if not v.isdigit():
        raise NetvmError("NETVM_YIELD_WAIT_US must be a number of microseconds, not %r" % v)
    return ",yield-wait-us=%d" % int(v)

class Cluster:
    def __init__(self, name):
        self.name = name
        self.dir = os.path.join(CLUSTERS, name)
        self.state_file = os.path.join(self.dir, "cluster.json")
        self._lock_fd = None
        self.state = None

    # --- state ---------------------------------------------------------
    def path(self, fn):
        return os.path.join(self.dir, fn)

    def load(self):
        try:
            with open(self.state_file) as f:
                self.state = json.load(f)
        except FileNotFoundError:
            self.state = None
        except (OSError, ValueError):
            self.state = {"nodes": []}  # corrupt: treated as stale
        return self.state

    def save(self):
        tmp = self.state_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.state, f, indent=1)
        os.replace(tmp, self.state_file)

    def lock(self):
        """Serialises up/down/reload on one cluster (flock on the parent)."""
        os.makedirs(CLUSTERS, exist_ok=True)
        self._lock_fd = os.open(CLUSTERS, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)

    def unlock(self):
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def require_up(self):
        if not self.load():
            raise NetvmError("cluster '%s' is not up: run ./netvm up%s" % (
                self.name, "" if self.name == "default" else " (with --cluster %s)" % self.name))
        return self.state

    def node(self, n):
        st = self.require_up()
        nodes = st["nodes"]
        try:
            i = int(n)
        except (TypeError, ValueError):
            i = -1
        if not 0 <= i < len(nodes):
            raise NetvmError("no node %s in cluster '%s' (nodes: 0..%d)" % (n, self.name, len(nodes) - 1))
        return nodes[i]

    # --- processes -----------------------------------------------------
    def vm_name(self, i):
        return "netvm-%s-node%d" % (self.name, i)

    def pid_alive(self, node):
        """True if node's QEMU runs (the pid is ours, not recycled, not a zombie);
        a libvirt domain on another host: if libvirt says it runs."""
        if "+ssh://" in node.get("uri", ""):
            from . import libvirt_remote
            return libvirt_remote.domain_running(self, node)
        info = proc_running(node["pid"]) if node.get("pid") else None
        name = self.vm_name(node["id"]).encode()
        # libvirt names its QEMU with -name guest=NAME,debug-threads=on
        return bool(info) and any(a == name or a.startswith(b"guest=" + name + b",") for a in info[1])

    def kill_all(self, nodes, grace=5.0):
        alive = [n for n in nodes if self.pid_alive(n)]
        for n in alive:
            try:
                os.kill(n["pid"], signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(self.pid_alive(n) for n in alive):
            time.sleep(0.05)
        for n in alive:
            if self.pid_alive(n):
                try:
                    os.kill(n["pid"], signal.SIGKILL)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(self.pid_alive(n) for n in alive):
            time.sleep(0.05)
        # QEMU daemonized, so init is its parent and reaps it.  A zombie is
        # not alive (pid_alive) and holds nothing; down used to wait for the
        # reaping, 1.5-2 s a cluster where init reaps only now and then.
        return [n["id"] for n in alive if self.pid_alive(n)]

    def remove_dir(self, keep_logs=False):
        if not os.path.isdir(self.dir):
            return
        if keep_logs:
            for fn in os.listdir(self.dir):
                if not fn.endswith(".log"):
                    p = self.path(fn)
                    if os.path.isdir(p) and not os.path.islink(p):
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        try:
                            os.unlink(p)
                        except OSError:
                            pass
            return
        shutil.rmtree(self.dir, ignore_errors=True)
        try:
            os.rmdir(CLUSTERS)  # only if empty
        except OSError:
            pass

    def clean_stale(self):
        """Removes the state of a cluster whose VMs are all dead.  Returns
        the number of live nodes (0 if it cleaned)."""
        st = self.load()
        if st is None:
            if os.path.isdir(self.dir):  # leftovers of a failed up
                self.remove_dir()
            return 0
        live = [n for n in st.get("nodes", []) if self.pid_alive(n)]
        if live:
            return len(live)
        say("removing stale cluster '%s' (its VMs are gone)" % self.name)
        fabric.stop_switch(self, st.get("fabric"))
        self.remove_dir()
        return 0

    # --- up ------------------------------------------------------------
    def qemu_cmd(self, i, n, port, accel, mem, extra, template=False):
        """QEMU's command line for node i of n.  template: the boot template
        (fastboot.py), booted with no identity; a node started from it runs
        the very same device set, so that its saved state loads."""
        nic_link, link_args = self.nic_link(i)
        data, data_arg = self.data_nic(-1 if template else i)
        ident = "netvm.template=1" if template else "netvm.node=%d%s" % (i, data_arg)
        auth, inject = self.link_auth(i, n)
        # debug-threads: the vCPU thread is "CPU 0/TCG" in ps and perf.
        # hpet=off: the guest keeps time with the TSC and the local APIC,
        # but an HPET it enabled has QEMU re-arm its timers some 400
        # times a second in every idle node (docs/cluster.md, "Idle nodes")
        cmd = [qemu_binary(), "-name", "guest=%s,debug-threads=on" % self.vm_name(i),
               "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
               "-nodefaults", "-no-user-config", "-display", "none",
               "-M", "pc,hpet=off", "-m", str(mem), "-accel", accel, "-smp", "1"] + \
            self.ram_backend(mem, template) + [
               "-kernel", VMLINUZ, "-initrd", INITRAMFS,
               "-append", "console=ttyS0 quiet panic=-1 " + ident,
               "-no-reboot",
               "-chardev", "socket,id=con,path=node%d.console,server=on,wait=off,"
                           "logfile=node%d.serial.log" % (i, i),
               "-serial", "chardev:con",
               "-qmp", "unix:node%d.qmp,server=on,wait=off" % i,
               # control plane: the guest agent, reached through a host port
               "-netdev", "user,id=ctl,restrict=on,hostfwd=tcp:127.0.0.1:%d-:%d"
                          % (port, AGENT_GUEST_PORT),
               "-device", "virtio-net-pci,netdev=ctl,romfile=",
               # the repository, read-only, at /netvm in the guest
               "-fsdev", "local,id=share,path=%s,security_model=none,readonly=on" % REPO,
               "-device", "virtio-9p-pci,fsdev=share,mount_tag=netvm",
               # our NIC and its link to the other node
               "-device", "lanai,id=nic,%s,node-id=%d,sram-size=8388608%s%s"
                          % (nic_link, i, auth, yield_wait())] + \
            link_args + inject + [
               "-d", "guest_errors", "-D", "node%d.qemu.log" % i,
               "-pidfile", "node%d.pid" % i, "-daemonize"]
        # the Debian packages, read-only (docs/packages.md)
        return cmd + data + pkgdisk.drive_args() + list(extra)

    def nic_link(self, i, through_switch=None):
        """Node i's NIC link: the lanai device's link option and QEMU's
        arguments for it.  With link_thread() the device opens the socket
        itself and reads it in a thread, off the main loop; else a
        -netdev stream.  through_switch: whether the node's link goes to
        its switch port (default: whether the cluster has a fabric)."""
        if through_switch is None:
            through_switch = bool((self.state or {}).get("fabric"))
        if link_thread():
            if through_switch:
                return "link-socket=%s" % self.abs_socket("node%d.sock" % i), []
            return "link-socket=%s%s" % (self.abs_socket("link0.sock"),
                                         ",link-listen=on" if i == 0 else ""), []
        return "netdev=link0", ["-netdev", self.link_netdev(i, through_switch)]

    def link_netdev(self, i, through_switch):
        """The -netdev of node i's NIC link: to its switch port (the switch
        listens; QEMU reconnects if it restarts), or back to back (node 0
        listens, node 1 connects)."""
        if through_switch:
            return "stream,id=link0,server=off,addr.type=unix,addr.path=%s,reconnect-ms=500" % \
                self.abs_socket("node%d.sock" % i)
        return "stream,id=link0,server=%s,addr.type=unix,addr.path=%s" % (
            "on" if i == 0 else "off", self.abs_socket("link0.sock"))

    def abs_socket(self, name):
        """The absolute path of a unix socket in the state dir, for a QEMU
        that does not run there (libvirt's) or may have left it by the time
        it opens the socket: the NIC link's.  -daemonize makes QEMU
        chdir("/") at the end of its start, and the stream netdev connects
        (or listens) from a thread of its own that may not have run by
        then.  A relative path was then
        looked up in /: the connect failed, and so did every reconnect, and
        the node's link stayed down for good (docs/cluster.md, "Fast boot":
        nodes started at once lost that race)."""
        path = self.path(name)
        if len(path.encode()) > SUN_PATH_MAX:
            raise NetvmError("socket path %s is %d bytes, more than a unix socket's %d: "
                             "use a shorter --cluster name or checkout path"
                             % (path, len(path.encode()), SUN_PATH_MAX))
        return path

    def ram_backend(self, mem, template):
        """Guest RAM in the boot template's RAM file (fastboot.py, QEMU's
        "VM templating"): the template writes it (share=on); a node maps it
        copy-on-write (readonly=on: the file is never written, rom=off: the
        guest may write its private copy), so every node shares the pages it
        has not changed.  vmgenid: each QEMU start gives the guest a new VM
        generation id, on which Linux reseeds its random state, so that the
        nodes do not share the template's.  Clusters not started from a
        template: none."""
        ram = (self.state or {}).get("template_ram")
        if not ram:
            return []
        mode = "share=on" if template else "share=off,readonly=on,rom=off"
        return ["-object", "memory-backend-file,id=ram,size=%dM,mem-path=%s,%s" % (mem, ram, mode),
                "-machine", "memory-backend=ram", "-device", "vmgenid"]

    def link_auth(self, i, n):
        """Device options and QEMU arguments for node i's link on a
        back-to-back pair (docs/security.md): the NIC drops frames that do
        not come from the other node (peer-node), and nodeI.inject, a
        filter-redirector on the link, lets the host put frames on the wire
        towards node i as if the other node had sent them (./netvm inject).
        Through the switch, the switch checks and injects.

        nodeI.inject is a FIFO that QEMU holds open read-write, so writers
        may come and go: the redirector stops reading a socket chardev for
        good once its first client leaves."""
        if (self.state or {}).get("fabric") or n != 2:
            return "", []
        fifo = self.path("node%d.inject" % i)
        if not os.path.exists(fifo):
            os.mkfifo(fifo, 0o600)
        if link_thread():   # the device reads the FIFO itself
            return ",peer-node=%d,link-inject=%s" % (1 - i, fifo), []
        return ",peer-node=%d" % (1 - i), [
            "-chardev", "pipe,id=inject,path=node%d.inject" % i,
            "-object", "filter-redirector,id=injf,netdev=link0,queue=tx,indev=inject"]

    def data_nic(self, i):
        """QEMU arguments and kernel parameter of node i's data NIC (none for
        a cluster started before it existed, e.g. a restored old one).
        i = -1: the boot template's (MAC 52:54:00:77:00:00, no address)."""
        dn = (self.state or {}).get("data_net")
        if not dn:
            return [], ""
        return (["-netdev", "dgram,id=data,remote.type=inet,remote.host=%s,remote.port=%d,"
                 "local.type=inet,local.host=127.0.0.1,local.port=0" % (dn["group"], dn["port"]),
                 "-device", "virtio-net-pci,netdev=data,mac=%s,romfile=" % (DATA_MAC % (i + 1))],
                " netvm.data=%s" % (DATA_IP % (i + 1)))

    def start_node(self, i, n, accel, mem, extra, template=False):
        for attempt in range(3):
            port = free_port()
            cmd = self.qemu_cmd(i, n, port, accel, mem, extra, template)
            r = subprocess.run(cmd, cwd=self.dir, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            msg = r.stdout.strip()
            if r.returncode != 0:
                # daemonized QEMU reports start-up errors in its -D log
                try:
                    with open(self.path("node%d.qemu.log" % i), errors="replace") as f:
                        msg = (msg + "\n" + f.read()).strip()
                except OSError:
                    pass
            if r.returncode == 0:
                with open(self.path("node%d.pid" % i)) as f:
                    pid = int(f.read().strip())
                # every node, however started (up, the template, restore)
                vmsched.apply(pid, self.name, i)
                return {"id": i, "pid": pid, "port": port}
            if "host forwarding" in msg and attempt < 2:
                continue  # someone took the port meanwhile
            with open(self.path("node%d.qemu.log" % i), "a") as f:
                f.write(" ".join(cmd) + "\n" + msg + "\n")
            errs = [l for l in msg.splitlines() if "qemu-system-x86_64:" in l or "qemu:" in l]
            first = errs[-1] if errs else msg.splitlines()[-1] if msg else "exit status %d" % r.returncode
            first = re.sub(r"^.*?(qemu-system-x86_64|qemu): ", "", first)
            if "invalid accelerator" in first:
                first += " (this QEMU lacks it: use --accel tcg)"
            if "Address already in use" in msg:
                raise NetvmError("node %d: a socket path is in use (%s): another QEMU? try ./netvm down"
                                 % (i, first))
            raise NetvmError("node %d: QEMU failed to start: %s" % (i, first))
        raise AssertionError

    def up(self, n, accel, mem, timeout, extra=(), topology=None, routes="map"):
        if n < 1:
            raise NetvmError("-n must be at least 1")
        if n > MAX_NODES:
            raise NetvmError("at most %d nodes (-n %d): each node is a QEMU with one emulated "
                             "CPU, and %d is what 2 host cores carry" % (MAX_NODES, n, MAX_NODES))
        check_memory(n, mem)
        if topology and not os.path.isfile(topology):
            raise NetvmError("--topology %s: no such file" % topology)
        use_switch = uses_switch(n, topology)
        build.require_built()
        if use_switch:
            fabric.switch_binary()
        if accel == "kvm" and not os.access("/dev/kvm", os.R_OK | os.W_OK):
            raise NetvmError("--accel kvm: /dev/kvm is not usable here; use --accel tcg")
        # extra QEMU arguments may change the device set: boot those cold
        template = None
        if not extra and not os.environ.get("NETVM_COLD_BOOT"):
            template = fastboot.ensure_template(Cluster, accel, mem, timeout)
        self.lock()
        try:
            if self.clean_stale():
                raise NetvmError("cluster '%s' is already up (%d nodes): ./netvm down first, or "
                                 "pick another --cluster" % (self.name, len(self.state["nodes"])))
            # groups that clusters of this checkout killed without down left
            cpugroups.remove_stale()
            os.makedirs(self.dir)
            link = self.path("link0.sock")
            if os.path.exists(link):
                raise NetvmError("socket path in use: %s" % rel(link))
            self.state = {"name": self.name, "n": n, "accel": accel, "mem": mem,
                          "started": time.time(), "nodes": [], "routes_mode": routes,
                          "data_net": {"group": DATA_GROUP, "port": free_udp_port()}}
            if template:
                self.state["template_ram"] = template + ".ram"
            self.save()
            t = Timer()
            try:
                if use_switch:
                    self.state["fabric"] = fabric.start_switch(self, n, topology)
                    self.save()
                    say("netvm-switch up (%s, switches %s; control: %s)" % (
                        self.state["fabric"]["topology"], ",".join(self.state["fabric"]["switches"]),
                        rel(self.path("control.sock"))))
                say("starting %d node%s (cluster '%s', %s, %d MiB each, %s, %s)"
                    % (n, "s" if n > 1 else "", self.name, accel, mem,
                       "through the switch" if use_switch else "back to back" if n == 2 else "no link",
                       "from the boot template" if template else "cold boot"))
                consoles = []
                try:
                    if template:
                        consoles = fastboot.start_nodes(self, n, accel, mem, template)
                    else:
                        for i in range(n):
                            self.state["nodes"].append(self.start_node(i, n, accel, mem, extra))
                            self.save()
                    self.wait_ready(timeout, progress=True)
                finally:
                    for s in consoles:
                        s.close()
                if n > 1:
                    self.wait_links(timeout)
                if use_switch:
                    mapper.install_routes(self)
            except BaseException:
                self.kill_all(self.state["nodes"])
                vmsched.release(self.name)
                fabric.stop_switch(self, self.state.get("fabric"))
                self.remove_dir(keep_logs=True)
                raise
            say("cluster '%s' up: %d node%s ready in %s" % (self.name, n, "s" if n > 1 else "", t))
        finally:
            self.unlock()

    def wait_ready(self, timeout, progress=False):
        deadline = time.monotonic() + timeout
        pending = list(self.state["nodes"])
        t0 = time.monotonic()
        total = len(pending)
        while pending:
            for node in pending:
                if not self.pid_alive(node):
                    raise NetvmError("node %d: QEMU exited during boot (serial log: %s, QEMU log: %s)"
                                     % (node["id"], rel(self.path("node%d.serial.log" % node["id"])),
                                        rel(self.path("node%d.qemu.log" % node["id"]))))
            # all at once: one slow guest must not hold up noticing the others
            greetings = {}
            pings = [threading.Thread(target=lambda nd: greetings.__setitem__(
                nd["id"], agent.ping(nd["port"], timeout=1.0)), args=(nd,)) for nd in pending]
            for th in pings:
                th.start()
            for th in pings:
                th.join()
            for node in list(pending):
                greeting = greetings.get(node["id"])
                if greeting:
                    if ("node=%d" % node["id"]) not in greeting.split():  # node=1 is not node=11
                        raise NetvmError("node %d: agent answered as %r" % (node["id"], greeting))
                    node["ready"] = True
                    self.save()
                    pending.remove(node)
                    if progress:
                        say("node %d ready after %.1f s (%d/%d)" % (
                            node["id"], time.monotonic() - t0, total - len(pending), total))
            if not pending:
                break
            if time.monotonic() > deadline:
                ids = ", ".join(str(nd["id"]) for nd in pending)
                raise NetvmError("node%s %s did not boot within %d s (serial log: %s)"
                                 % ("s" if len(pending) > 1 else "", ids, timeout, rel(self.path("node%d.serial.log" % pending[0]["id"]))))
            time.sleep(0.1)

    def wait_links(self, timeout):
        """Until every node's NIC sees its link up (so that the mapper finds
        every node).  A node whose agent answers is not yet one that NetVM
        can use: from the boot template a node answers within a second,
        and its link (to the switch, or node 1 connecting to node 0's
        socket) can come up after that.  A node without netvm.ko (no sysfs
        entry) is not waited for.  All nodes at once, as wait_ready."""
        deadline = time.monotonic() + timeout
        pending = list(self.state["nodes"])
        while pending:
            states = {}

            def link_state(nd):
                try:
                    _, out, _ = agent.capture(nd["port"], [
                        "sh", "-c", "cat /sys/class/netvm/netvm0/link_state 2>/dev/null || echo none"],
                        timeout=10)
                except agent.AgentError:
                    return
                states[nd["id"]] = out.decode().strip()
            reads = [threading.Thread(target=link_state, args=(nd,)) for nd in pending]
            for th in reads:
                th.start()
            for th in reads:
                th.join()
            pending = [nd for nd in pending if states.get(nd["id"]) not in ("up", "none")]
            if not pending:
                return
            if time.monotonic() > deadline:
                ids = ", ".join(str(nd["id"]) for nd in pending)
                raise NetvmError("node%s %s: the NIC's link did not come up within %d s (./netvm status; "
                                 "QEMU log: %s)" % ("s" if len(pending) > 1 else "", ids, timeout,
                                                   rel(self.path("node%d.qemu.log" % pending[0]["id"]))))
            time.sleep(0.1)

    def program_routes(self):
        """Writes every node's routes (netvm-switch --routes) into its
        driver: /sys/class/netvm/netvm0/routes, one "DST HEX" line each."""
        fab = self.state["fabric"]
        for node in self.state["nodes"]:
            lines = fabric.route_lines(fab, node["id"])
            try:
                code, out, err = agent.capture(node["port"], [
                    "sh", "-c", "printf '%s' \"$1\" > " + fabric.SYSFS + "/routes", "sh", lines],
                    timeout=60)
            except agent.AgentError as e:
                raise NetvmError("node %d: %s" % (node["id"], e))
            if code != 0:
                raise NetvmError("node %d: setting its routes failed: %s" % (
                    node["id"], (out + err).decode(errors="replace").strip()))
        say("routes programmed on %d node%s (%s)" % (
            len(self.state["nodes"]), "s" if len(self.state["nodes"]) > 1 else "",
            "%d routes each" % (len(self.state["nodes"]) - 1)))

    # --- down ----------------------------------------------------------
    def down(self):
        self.lock()
        try:
            st = self.load()
            if st is None:
                if os.path.isdir(self.dir):
                    self.remove_dir()
                    say("cluster '%s': removed leftovers" % self.name)
                else:
                    say("cluster '%s' is not up" % self.name)
                return
            t = Timer()
            left = self.kill_all(st.get("nodes", []))
            if left:
                raise NetvmError("could not stop node(s) %s" % left)
            vmsched.release(self.name)
            fabric.stop_switch(self, st.get("fabric"))
            self.remove_dir()
            say("cluster '%s' down (%d node%s stopped in %s)" % (
                self.name, len(st.get("nodes", [])), "" if len(st.get("nodes", [])) == 1 else "s", t))
        finally:
            self.unlock()

    # --- status --------------------------------------------------------
    def status(self):
        st = self.load()
        if st is None:
            say("cluster '%s' is not up" % self.name)
            return 1
        print("cluster '%s': %d node(s), %s, %d MiB, state in %s" % (
            self.name, len(st["nodes"]), st.get("accel"), st.get("mem", 0), rel(self.dir)))
        fab = st.get("fabric")
        if fab:
            print("switch: pid %d, %s, topology %s, switches %s" % (
                fab["pid"], "running" if fabric.switch_alive(self, fab) else "NOT RUNNING",
                fab["topology"], ",".join(fab["switches"])))
            print("routes: %s" % st.get("routes", "static (netvm-switch --routes)"))
        print("%-5s %-8s %-6s %-6s %-8s %-11s %s" % ("node", "pid", "alive", "ready", "link",
                                                    "agent port", "routes (dst:hex)"))
        rc = 0
        nic = {}
        for node in st["nodes"]:
            alive = self.pid_alive(node)
            ready = bool(alive and agent.ping(node["port"], timeout=2.0))
            link, routes = "-", "-"
            if ready:
                try:
                    code, out, _ = agent.capture(node["port"], [
                        "sh", "-c", "cat /sys/class/netvm/netvm0/link_state 2>/dev/null; echo =; "
                        "cat /sys/class/netvm/netvm0/routes 2>/dev/null; echo =; "
                        "cat /sys/class/netvm/netvm0/fw_counters 2>/dev/null"], timeout=10)
                    a, b, c = (out.decode().split("=", 2) + ["", ""])[:3]
                    link = a.strip() or "n/a"
                    routes = " ".join(l.replace(" ", ":") for l in b.split("\n") if l.strip())
                    routes = routes or ("none (back to back)" if not fab else "NONE")
                    nic[node["id"]] = dict(l.split() for l in c.splitlines() if len(l.split()) == 2)
                except agent.AgentError:
                    link = "?"
            if alive:
                bad = self.bad_src(node)
                if bad is not None:
                    nic.setdefault(node["id"], {})["bad_src"] = bad
            if not (alive and ready):
                rc = 1
            print("%-5d %-8d %-6s %-6s %-8s %-11d %s" % (node["id"], node["pid"], "yes" if alive else "NO",
                                                        "yes" if ready else "no", link, node["port"], routes))
        if nic:
            print()
            print_nic_counters(nic)
        if fab and fabric.switch_alive(self, fab):
            print()
            fabric.print_ports(self)
        elif fab:
            rc = 1
        return rc

    def bad_src(self, node):
        """The NIC's rx-bad-src (frames dropped by the device because their
        source was not its peer-node; docs/security.md), read over QMP so
        that the guest cannot hide it; None if it cannot be read."""
        try:
            q = snapshot.Qmp(self.path("node%d.qmp" % node["id"]), timeout=5)
            try:
                return q.cmd("qom-get", path="/machine/peripheral/nic", property="rx-bad-src")
            finally:
                q.close()
        except (NetvmError, OSError, ValueError):
            return None

    # --- run -----------------------------------------------------------
    def run(self, n, argv, env=(), cwd=None, stdin=False, timeout=None, out=None, err=None,
            deadline=None):
        """./netvm run; out, err and deadline: agent.run's (the guest tests'
        in-process run, guestlib.run_netvm)."""
        node = self.node(n)
        # a domain on another host is asked over ssh (a second or so): only
        # when its agent cannot be reached
        remote = "+ssh://" in node.get("uri", "")
        if not remote and not self.pid_alive(node):
            raise NetvmError("node %d is not running (./netvm status)" % node["id"])
        try:
            return agent.run(node["port"], argv, env=env, cwd=cwd,
                             stdin=sys.stdin.buffer if stdin else None, timeout=timeout,
                             out=out, err=err, deadline=deadline)
        except agent.AgentError as e:
            if remote and not self.pid_alive(node):
                raise NetvmError("node %d is not running (./netvm status)" % node["id"])
            raise NetvmError("node %d: %s" % (node["id"], e)) from e

    # --- reload-driver -------------------------------------------------
    def reload_driver(self):
        st = self.require_up()
        if not os.path.exists(DRIVER_KO):
            raise NetvmError("%s missing: run ./netvm build" % rel(DRIVER_KO))
        script = ("if grep -q '^netvm ' /proc/modules; then rmmod netvm || exit 1; fi; "
                  "insmod /netvm/guest-driver/netvm.ko || { dmesg | tail -n 5; exit 1; }")
        failed = []
        for node in st["nodes"]:
            t = Timer()
            try:
                code, out, err = agent.capture(node["port"], ["sh", "-c", script], timeout=60)
            except agent.AgentError as e:
                raise NetvmError("node %d: %s" % (node["id"], e))
            if code == 0:
                say("node %d: netvm.ko reloaded (%s)" % (node["id"], t))
            else:
                failed.append(node["id"])
                for line in (out + err).decode(errors="replace").splitlines():
                    print("  node %d | %s" % (node["id"], line), file=sys.stderr)
        if failed:
            raise NetvmError("reloading netvm.ko failed on node(s) %s (see above)"
                             % ", ".join(map(str, failed)))
        if st.get("fabric"):
            mapper.install_routes(self)  # the firmware restarted with an empty table

    # --- console, logs -------------------------------------------------
    def console(self, n):
        node = self.node(n)
        if not self.pid_alive(node):
            raise NetvmError("node %d is not running" % node["id"])
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self.path("node%d.console" % node["id"]))
        except OSError as e:
            raise NetvmError("cannot connect to node %d's console: %s (another console open?)"
                             % (node["id"], e.strerror))
        interactive = os.isatty(0)
        print("netvm: node %d console; press Ctrl-] to leave" % node["id"], file=sys.stderr)
        old = None
        if interactive:
            old = termios.tcgetattr(0)
            tty.setraw(0)
        try:
            s.sendall(b"\n")  # a fresh prompt
            if not interactive:
                time.sleep(0.5)  # let the shell settle before scripted input
            stdin_open = True
            while True:
                fds = [s] + ([0] if stdin_open else [])
                # scripted input: leave 1 s after the output went quiet
                r, _, _ = select.select(fds, [], [], None if stdin_open or interactive else 1.0)
                if not r:
                    break
                if s in r:
                    data = s.recv(65536)
                    if not data:
                        break
                    os.write(1, data)
                if 0 in r:
                    data = os.read(0, 4096)
                    if not data:
                        stdin_open = False
                        continue
                    if b"\x1d" in data:
                        data = data.split(b"\x1d")[0]
                        if data:
                            s.sendall(data)
                        break
                    s.sendall(data)
        finally:
            if old is not None:
                termios.tcsetattr(0, termios.TCSADRAIN, old)
            s.close()
        print("\nnetvm: left node %d console" % node["id"], file=sys.stderr)
        return 0

    def logs(self, n, follow=False):
        if self.load() is None and os.path.exists(self.path("node%s.serial.log" % n)):
            node = {"id": int(n)}  # the logs a failed `up` left for reading
        else:
            node = self.node(n)
        path = self.path("node%d.serial.log" % node["id"])
        try:
            f = open(path, "rb")
        except OSError:
            raise NetvmError("no serial log for node %d (%s)" % (node["id"], rel(path)))
        with f:
            while True:
                data = f.read()
                if data:
                    sys.stdout.buffer.write(data)
                    sys.stdout.buffer.flush()
                if not follow:
                    break
                if not self.pid_alive(node):
                    break
                time.sleep(0.3)
        return 0


# NIC counters that say whether a node's traffic is healthy (the whole set
# is in /sys/class/netvm/netvm0/fw_counters).
STATUS_COUNTERS = (("tx_bytes", "tx bytes"), ("rx_bytes", "rx bytes"), ("raw_tx", "raw tx"),
                   ("raw_rx", "raw rx"), ("retransmits", "retrans"), ("duplicates", "dups"),
                   ("rx_bad_frame", "bad frm"), ("rx_misrouted", "misrte"),
                   ("page_misses", "pg miss"), ("bounces", "bounces"),
                   ("bad_src", "bad src"))  # the device's, over QMP


def print_nic_counters(nic):
    print("%-5s" % "nic" + "".join("%10s" % h for _, h in STATUS_COUNTERS))
    for n in sorted(nic):
        print("%-5d" % n + "".join("%10s" % nic[n].get(k, "-") for k, _ in STATUS_COUNTERS))


def check_memory(n, mem):
    """Refuses a cluster whose guests' RAM would not fit in the host's
    available memory (QEMU allocates it lazily, so this is the worst case:
    every guest page touched)."""
    try:
        with open("/proc/meminfo") as f:
            avail = next(int(l.split()[1]) for l in f if l.startswith("MemAvailable:")) >> 10
    except (OSError, StopIteration, ValueError):
        return
    need = n * (mem + 64)   # + about 64 MiB of QEMU's own per node
    if need > avail:
        raise NetvmError("%d nodes x %d MiB need about %d MiB but the host has %d MiB available: "
                         "fewer nodes, or a smaller --mem" % (n, mem, need, avail))


def free_udp_port():
    """A UDP port nobody has bound on any address (0.0.0.0 conflicts with
    all), for a cluster's data multicast group."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
