"""Per-CPU cpu cgroups for a cluster's QEMU threads (vmsched's
"cross-cgroup"; docs/bench.md, "Crossed CPUs in per-CPU cgroups").

A cluster gets one cgroup per host CPU it uses, holding exactly the
threads pinned to that CPU (with crossed CPUs: one node's vCPU and the
next node's main loop).  A group's weight on a CPU is its full weight
when all of its load is on that CPU, so the group competes with the
rest of the host like the node's own QEMU would, however little its
SCHED_IDLE vCPU weighs inside it; an autogroup spans both CPUs, and
there a lone SCHED_IDLE vCPU gets almost none of its CPU.  Inside the
group a waking main loop still preempts the idle-policy vCPU at once.

Where: under this process's own cpu cgroup (the QEMUs are its
children), in the cgroup v1 "cpu" hierarchy or a cgroup v2 hierarchy
whose cgroup.controllers lists cpu (there the cluster's group is a
threaded root: the process in it, its threads in threaded children).
Named netvm-K-CLUSTER, K from this checkout's build directory, so that
clusters of one name in two checkouts do not share a group.  Removed
by ./netvm down; ./netvm up removes this checkout's empty ones that a
killed cluster left (an rmdir of a group that still holds a thread fails,
so a live cluster's group is never removed).
"""
import errno
import os
import zlib

from .common import BUILD

MOUNTS = "/proc/self/mounts"
WEIGHT_V1 = 1024        # cpu.shares of one node (a process's weight)
WEIGHT_V2 = 100         # cpu.weight of one node
ALL = "all"             # the group of a cluster's threads on any CPU (pin-group)


class Unavailable(Exception):
    """No writable cpu controller; the message says why, in one line."""


def _write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def _attach(path, tid):
    with open(path, "a") as f:   # a cgroup file takes one id per write
        f.write(str(tid))


def _read(path):
    with open(path) as f:
        return f.read()


def _rmdir(path):
    os.rmdir(path)   # tests replace this: a fake root's control files are plain files


def hierarchy(mounts=None):
    """(version, mount point) of the cpu controller: v1's "cpu" hierarchy,
    else a v2 mount whose root lists cpu in cgroup.controllers; None if
    neither."""
    v2 = []
    try:
        lines = _read(mounts or MOUNTS).splitlines()
    except OSError:
        return None
    for line in lines:
        f = line.split()
        if len(f) < 4:
            continue
        if f[2] == "cgroup" and "cpu" in f[3].split(","):
            return 1, f[1]
        if f[2] == "cgroup2":
            v2.append(f[1])
    for m in v2:
        try:
            if "cpu" in _read(os.path.join(m, "cgroup.controllers")).split():
                return 2, m
        except OSError:
            pass
    return None


def own_path(version, pid="self"):
    """This process's cgroup path in that hierarchy ("/" at the root)."""
    for line in _read("/proc/%s/cgroup" % pid).splitlines():
        hid, ctrls, path = line.split(":", 2)
        if (version == 1 and "cpu" in ctrls.split(",")) or (version == 2 and hid == "0"):
            return path
    return "/"


def prefix():
    return "netvm-%08x-" % zlib.crc32(os.path.realpath(BUILD).encode())


class Groups:
    """The cpu cgroups of one cluster."""

    def __init__(self, cluster, found=None):
        found = found or hierarchy()
        if not found:
            raise Unavailable("no cpu cgroup controller mounted")
        self.found = found
        self.version, mount = found
        self.parent = os.path.join(mount, own_path(self.version).lstrip("/"))
        self.dir = os.path.join(self.parent, prefix() + cluster)

    @property
    def threads_file(self):
        return "tasks" if self.version == 1 else "cgroup.threads"

    def members(self, cpu):
        """The thread ids in a CPU's group."""
        try:
            return [int(t) for t in _read(os.path.join(self.cpu_dir(cpu), self.threads_file)).split()]
        except OSError:
            return []

    def cpu_dir(self, cpu):
        """The group of one CPU's threads, or (cpu None) of all the
        cluster's threads wherever they run (pin-group)."""
        return os.path.join(self.dir, ALL if cpu is None else "cpu%d" % cpu)

    def place(self, pid, tids_by_cpu, is_vcpu):
        """Moves each thread of process pid into its CPU's group
        (tids_by_cpu: {cpu: [tid]}) and gives each of those groups the
        weight of the vCPU threads now in it (is_vcpu(tid)).  Raises
        Unavailable if the groups cannot be made or filled."""
        try:
            self._make(tids_by_cpu)
            if self.version == 2:
                _attach(os.path.join(self.dir, "cgroup.procs"), pid)
            for cpu, tids in sorted(tids_by_cpu.items()):   # CPUs, or only None (pin-group)
                d = self.cpu_dir(cpu)
                for tid in tids:
                    try:
                        _attach(os.path.join(d, self.threads_file), tid)
                    except ProcessLookupError:
                        pass    # the thread is gone
                self.set_weight(cpu, sum(1 for t in self.members(cpu) if is_vcpu(t)))
        except OSError as e:
            raise Unavailable("%s: %s" % (e.filename or self.dir, os.strerror(e.errno)))

    def _make(self, cpus):
        if self.version == 2:
            if "cpu" not in _read(os.path.join(self.parent, "cgroup.subtree_control")).split():
                _write(os.path.join(self.parent, "cgroup.subtree_control"), "+cpu")
        os.makedirs(self.dir, exist_ok=True)
        if self.version == 2:
            _write(os.path.join(self.dir, "cgroup.subtree_control"), "+cpu")
        for cpu in cpus:
            d = self.cpu_dir(cpu)
            if not os.path.isdir(d):
                os.mkdir(d)
                if self.version == 2:
                    _write(os.path.join(d, "cgroup.type"), "threaded")

    def set_weight(self, cpu, nodes):
        """A CPU's group weighs as much as the nodes whose vCPU is there
        (one node's at least: the main loops), as their own processes would."""
        add = max(1, nodes)
        d = self.cpu_dir(cpu)
        if self.version == 1:
            key, one, top = "cpu.shares", WEIGHT_V1, 1 << 18
        else:
            key, one, top = "cpu.weight", WEIGHT_V2, 10000
        _write(os.path.join(d, key), min(top, one * add))

    def remove(self):
        """Removes the cluster's groups; those still holding a thread stay.
        True if none is left."""
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        left = False
        for n in names:
            if n == ALL or n.startswith("cpu") and n[3:].isdigit():
                left |= not _try_rmdir(os.path.join(self.dir, n))
        return _try_rmdir(self.dir) and not left


def _try_rmdir(path):
    try:
        _rmdir(path)
        return True
    except FileNotFoundError:
        return True
    except OSError as e:
        if e.errno in (errno.EBUSY, errno.ENOTEMPTY, errno.EACCES, errno.EPERM, errno.EROFS):
            return False
        raise


def remove_stale(found=None):
    """Removes the groups of this checkout's clusters that hold no
    thread (clusters killed without ./netvm down).  Call with the
    clusters' lock held, so that no up of this checkout is between making
    its groups and filling them.  Returns the names removed."""
    try:
        g = Groups("", found)
        names = os.listdir(g.parent)
    except (Unavailable, OSError):
        return []
    gone = []
    for n in sorted(names):
        if n.startswith(prefix()) and os.path.isdir(os.path.join(g.parent, n)):
            if Groups(n[len(prefix()):], g.found).remove():
                gone.append(n[len(prefix()):])
    return gone
