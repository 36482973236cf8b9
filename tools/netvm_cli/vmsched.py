"""How the host schedules a node's QEMU threads (docs/bench.md, "The
tail" and "Crossed CPUs").  A frame for a node must get a host CPU at once,
even when every host CPU is held by a vCPU spinning on a poll: traced on
a 2-CPU host, the thread that takes it waited up to 8 ms (a host tick and
more) behind the spinning vCPU threads, and that wait was the millisecond
tail of every spinning round trip.

"pin-idle" (the default; no privilege needed) pins every thread of node
i's QEMU to c(i) = (i + k) modulo the CPUs this process may use (k from
the cluster's name, so that the nodes of small clusters side by side do
not all land on one CPU): a frame for node i wakes its link thread on
the CPU of node i's own vCPU, which is SCHED_IDLE where the QEMU is a
group of its own (an autogroup: QEMU's -daemonize starts a session, and
Linux gives each session one, with no cpu cgroup controller over it; or,
under libvirt, the vCPU's own cgroup made idle).  Elsewhere a SCHED_IDLE
vCPU would lose to every other process of its group (a build beside the
tests would starve the guests), so there the vCPU keeps its policy and
only the slice and the pinning apply.  The main loop gets the kernel's
least time slice (0.1 ms, EEVDF's per-task slice, Linux 6.12 and later).

"pin-group" (opt-in; docs/bench.md, "One group per cluster, the link
thread free"):
- all of a cluster's QEMU threads go into one cpu cgroup of the
  cluster's own (cpugroups.py), weighing as many processes as it has
  nodes, so the cluster keeps its share of the host beside other work;
- node i's vCPU thread ("CPU 0/TCG", -name debug-threads=on) and its
  main loop (virtio, the agent, the disk) are pinned to c(i);
- the vCPU is SCHED_IDLE: inside the group anything else that wakes
  preempts it at once;
- the NIC's link thread ("lanai-link", the one that takes the frames)
  may run on any CPU: where every CPU runs only idle-policy vCPUs, the
  kernel's wake-up placement counts them all as idle, so a frame's
  wake-up runs it at once, on the CPU of its waker (the sender's vCPU,
  no inter-processor wake-up) or on its own.  On a host where a
  same-CPU switch cost about as much as a cross-CPU wake-up (22 against
  26 us a unix-socket round trip), pin-idle gave 200-280 us write round
  trips and this 82-165 us, with 4 KiB streams slower;
- the main loop's slice as with pin-idle.
Where no cpu cgroup can be made (no writable controller), pin-idle, with
one note; libvirt's nodes (own_cgroups False) get pin-idle: their
cgroups are libvirt's.
"cross-cgroup" (opt-in): node i's vCPU on c(i), its other threads on
c(i + 1), in one cgroup per CPU; it takes a third off a two-node
cluster's spinning round trip on a host where cross-CPU wake-ups are
dear, but the guest's own I/O crosses CPUs too (docs/bench.md, "Why
crossing is not the default").  "cross-idle" pins as cross-cgroup
without the cgroups: the vCPU, SCHED_IDLE and its autogroup's only task
on its CPU, then gets almost none of that CPU beside any other process.

NETVM_VM_SCHED: "pin-idle" (default), "pin-group", "cross-cgroup",
"cross-idle", "short-main" (the main loop's slice only) or "none" (the
threads left alone).
"""
import ctypes
import errno
import os
import zlib

from . import cpugroups
from .common import NetvmError, warn

SYS_SCHED_SETATTR = 314          # x86_64
SYS_SCHED_GETATTR = 315
MAIN_SLICE_NS = 100 * 1000       # the kernel's least slice (0.1 ms)
POLICIES = ("pin-idle", "pin-group", "cross-cgroup", "cross-idle", "short-main", "none")
CROSSED = ("cross-cgroup", "cross-idle")
LINK_THREAD = "lanai-link"       # the NIC's link thread (qemu-device/lanai-linksock.c)
_noted = set()


class SchedAttr(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("sched_policy", ctypes.c_uint32),
                ("sched_flags", ctypes.c_uint64), ("sched_nice", ctypes.c_int32),
                ("sched_priority", ctypes.c_uint32), ("sched_runtime", ctypes.c_uint64),
                ("sched_deadline", ctypes.c_uint64), ("sched_period", ctypes.c_uint64),
                ("sched_util_min", ctypes.c_uint32), ("sched_util_max", ctypes.c_uint32)]


_libc = ctypes.CDLL(None, use_errno=True)


def policy():
    """NETVM_VM_SCHED, or the default: pin-idle, for clusters of any
    size."""
    p = os.environ.get("NETVM_VM_SCHED", POLICIES[0])
    if p not in POLICIES:
        raise NetvmError("NETVM_VM_SCHED=%s: one of %s" % (p, ", ".join(POLICIES)))
    return p


def get_slice(tid):
    """The thread's slice in ns (sched_runtime), or None if unreadable."""
    a = SchedAttr()
    if _libc.syscall(SYS_SCHED_GETATTR, tid, ctypes.byref(a), ctypes.sizeof(a), 0) != 0:
        return None
    return a.sched_runtime


def set_slice(tid, ns):
    """SCHED_OTHER with a slice of ns for thread tid, its nice kept.
    False where the kernel has no per-task slice or the thread is gone."""
    a = SchedAttr()
    if _libc.syscall(SYS_SCHED_GETATTR, tid, ctypes.byref(a), ctypes.sizeof(a), 0) != 0:
        return False
    if a.sched_policy != os.SCHED_OTHER:
        return False  # someone chose another policy for it: theirs
    a.size = ctypes.sizeof(a)
    a.sched_flags = 0
    a.sched_runtime = ns
    if _libc.syscall(SYS_SCHED_SETATTR, tid, ctypes.byref(a), 0) != 0:
        e = ctypes.get_errno()
        if e in (errno.EINVAL, errno.ESRCH, errno.E2BIG, errno.EPERM):
            return False
        raise NetvmError("sched_setattr(%d): %s" % (tid, os.strerror(e)))
    # a kernel without per-task slices takes the call and ignores the slice
    return get_slice(tid) == ns


def threads(pid):
    """(tid, name) of each thread of process pid."""
    out = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for t in tids:
        try:
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                out.append((int(t), f.read().strip()))
        except OSError:
            pass
    return out


def own_group(pid):
    """True if process pid is a scheduling group of its own: autogroups on,
    and no cpu cgroup controller over it (v1: its cpu cgroup is the root;
    v2: its cgroup has no cpu controller)."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            if f.read().strip() != "1":
                return False
        with open("/proc/%d/autogroup" % pid) as f:
            f.read()
        with open("/proc/%d/cgroup" % pid) as f:
            lines = [l.rstrip("\n").split(":", 2) for l in f]
    except OSError:
        return False
    for _, ctrls, path in lines:
        if "cpu" in ctrls.split(","):
            return path == "/"
    for hid, _, path in lines:
        if hid == "0":
            try:
                with open(os.path.join("/sys/fs/cgroup", path.lstrip("/"),
                                       "cgroup.controllers")) as f:
                    return "cpu" not in f.read().split() or path == "/"
            except OSError:
                return False
    return True


def node_cpu(cluster, index):
    """The host CPU for node index's vCPU (and, with pin-idle, for all of
    its QEMU's threads)."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[(index + zlib.crc32(cluster.encode())) % len(cpus)]


def main_cpu(cluster, index):
    """The host CPU for node index's main loop and other non-vCPU threads
    with cross-idle: the next node's vCPU's."""
    return node_cpu(cluster, index + 1)


def is_vcpu(name):
    return name.endswith("/TCG")


def _comm(tid):
    try:
        with open("/proc/%d/comm" % tid) as f:
            return f.read().strip()
    except OSError:
        return ""


def group(pid, cluster, placement, found=None, name="cross-cgroup"):
    """Each thread of pid into its cluster's group of its CPU (placement:
    [(tid, cpu)]; cpu None: the cluster's one group, pin-group).  False,
    with a note the first time, where that cannot be done."""
    by_cpu = {}
    for tid, cpu in placement:
        by_cpu.setdefault(cpu, []).append(tid)
    try:
        cpugroups.Groups(cluster, found).place(pid, by_cpu, lambda t: is_vcpu(_comm(t)))
        return True
    except (cpugroups.Unavailable, OSError) as e:
        if "cgroup" not in _noted:
            _noted.add("cgroup")
            warn("no cpu cgroup for the %s scheduling (%s): pin-idle instead" % (name, e))
        return False


def idle_vcpu_groups(pid, ts, found=None):
    """Where each vCPU thread of QEMU pid is alone in a cpu cgroup of its
    own, apart from the main loop's (libvirt's vcpuN beside its emulator
    group), that group made an idle one (cpu.idle = 1: it then ranks below
    its siblings as SCHED_IDLE ranks a thread below the others of its
    group), so that a waking main loop or link thread preempts the vCPU at
    once, as with pin-idle in an autogroup.  ts: threads(pid).  -> True
    if every vCPU is in such a group now."""
    h = found or cpugroups.hierarchy()
    vcpus = [tid for tid, name in ts if is_vcpu(name)]
    if not h or not vcpus:
        return False
    version, mount = h
    try:
        main = cpugroups.own_path(version, pid)
        for tid in vcpus:
            path = cpugroups.own_path(version, "%d/task/%d" % (pid, tid))
            if path == main or path == "/":
                return False
            d = os.path.join(mount, path.lstrip("/"))
            with open(os.path.join(d, "tasks" if version == 1 else "cgroup.threads")) as f:
                members = [int(t) for t in f.read().split()]
            if any(not is_vcpu(_comm(t)) for t in members):
                return False
            with open(os.path.join(d, "cpu.idle"), "w") as f:
                f.write("1")
    except (OSError, ValueError):
        return False
    return True


def pin_threads(ts, cpus_of, idle, done):
    """Each thread (tid, name) of ts onto the CPUs cpus_of(name), a vCPU
    SCHED_IDLE if idle; what was done into done (as apply's)."""
    for tid, name in ts:
        try:
            os.sched_setaffinity(tid, cpus_of(name))
            done.add("pin")
            if idle and is_vcpu(name):
                os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
                done.add("idle-vcpu")
        except OSError:
            pass  # the thread is gone, or a policy we may not change


def pin_group(pid, cluster, index, found, done):
    """pin-group for node INDEX's QEMU pid; False (nothing changed) where
    the cluster's group cannot be made."""
    ts = threads(pid)
    if not ts or not group(pid, cluster, [(tid, None) for tid, _ in ts], found, "pin-group"):
        return False
    done.add("cgroup")
    cpu, anywhere = node_cpu(cluster, index), os.sched_getaffinity(0)
    pin_threads(ts, lambda name: anywhere if name == LINK_THREAD else {cpu}, True, done)
    return True


def apply(pid, cluster="", index=0, found=None, own_cgroups=True):
    """Node QEMU pid's threads (node INDEX of its cluster) as policy() says
    (found: the cpu cgroup hierarchy, for tests; own_cgroups False: a
    QEMU whose cgroups are another's, libvirt's, where pin-group and
    cross-cgroup pin as pin-idle).  Returns what was done: a subset of
    {"pin", "cgroup", "idle-vcpu", "idle-group", "short-main"}."""
    p = policy()
    done = set()
    if p == "none":
        return done
    if p == "pin-group":
        p = "pin-idle"     # unless the group is made
        if own_cgroups and pin_group(pid, cluster, index, found, done):
            p = "pin-group"
    if p in CROSSED or p == "pin-idle":
        vcpu_cpu = node_cpu(cluster, index)
        other_cpu = main_cpu(cluster, index) if p in CROSSED else vcpu_cpu
        ts = threads(pid)
        idle = False
        if p == "cross-cgroup" and not own_cgroups:
            other_cpu = vcpu_cpu
        elif p == "cross-cgroup":
            place = [(tid, vcpu_cpu if is_vcpu(name) else other_cpu) for tid, name in ts]
            if place and group(pid, cluster, place, found):
                done.add("cgroup")
                idle = True     # the vCPU's group holds only its CPU's threads of this cluster
            else:
                other_cpu = vcpu_cpu
        idle = idle or own_group(pid)
        if not idle and idle_vcpu_groups(pid, ts, found):
            done.add("idle-group")
            idle = True
        pin_threads(ts, lambda name: {vcpu_cpu if is_vcpu(name) else other_cpu}, idle, done)
    # the main loop is the process's first thread
    if set_slice(pid, MAIN_SLICE_NS):
        done.add("short-main")
    return done


def release(cluster, found=None):
    """Removes the cluster's cpu cgroups (cross-cgroup), if any."""
    try:
        cpugroups.Groups(cluster, found).remove()
    except cpugroups.Unavailable:
        pass
