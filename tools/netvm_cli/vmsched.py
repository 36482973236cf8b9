"""How the host schedules a node's QEMU threads (docs/bench.md, "The
tail" and "Crossed CPUs").  A node's main loop takes its frames off the
link and runs its firmware; when a frame arrives it must get a host CPU at
once, even when every host CPU is held by a vCPU spinning on a poll.
Traced on a 2-CPU host, it waited up to 8 ms (a host tick and more) behind
the spinning vCPU threads, and that wait was the millisecond tail of every
spinning round trip.

Default: "pin-idle" (below).  "cross-cgroup" is opt-in: it takes a
third off a two-node cluster's spinning round trip, but it makes the
guest's own I/O (virtio-net, the agent, the disk) cross CPUs, and
everything else slower: TCP over virtio-net 8-15 % slower, the guest
test groups 1-3 % in pairs (docs/bench.md, "Why crossing is not the
default").
"cross-cgroup":
- node i's vCPU thread ("CPU 0/TCG", -name debug-threads=on) is pinned
  to one host CPU, c(i) = (i + k) modulo the CPUs this process may use (k
  from the cluster's name, so that the nodes of small clusters side by
  side do not all land on one CPU), and its other threads (the main
  loop) to c(i + 1), the next node's vCPU's CPU.  With two nodes a frame
  then wakes the receiver's main loop on the sender's own CPU, with no
  inter-processor interrupt, and the receiver's vCPU keeps spinning
  meanwhile: the 8-byte write round trip fell from 87-109 to 57-71 us;
- the vCPU is SCHED_IDLE, so that a waking main loop preempts it at once;
- the cluster's threads go into one cpu cgroup per host CPU
  (cpugroups.py), each holding exactly the threads pinned to that CPU.
  A group whose load is all on one CPU has its full weight there, so a
  guest keeps a process's share of its CPU beside other work (a guest
  loop took 2 times as long beside a host busy loop on its CPU, as with
  pin-idle);
- the main loop gets the kernel's least time slice (0.1 ms, EEVDF's
  per-task slice, Linux 6.12 and later), which lets it preempt other
  threads sooner.
"pin-idle" (the default; no privilege needed) pins every thread of node
i's QEMU to c(i): a frame for node i wakes its main loop on the CPU of
node i's own vCPU, which is SCHED_IDLE where the QEMU is a group of its
own (below); the main loop gets the least slice.
"cross-idle" pins as cross-cgroup without the cgroups.  It is not the
default because the vCPU, SCHED_IDLE and its autogroup's only task on its
CPU, then gets almost none of that CPU beside any other process: a guest
loop took 8-9 times as long beside a host busy loop on that CPU.
SCHED_IDLE ranks the vCPU below its own QEMU's other threads only where
each QEMU is a scheduling group of its own: an autogroup (QEMU's
-daemonize starts a session, and Linux gives each session one), with no
cpu cgroup controller over it.  Elsewhere a SCHED_IDLE vCPU would lose to
every other process of its group (a build beside the tests would starve
the guests), so there the vCPU keeps its policy and only the main loop's
slice and the pinning apply.

NETVM_VM_SCHED: "pin-idle" (default), "cross-cgroup", "cross-idle",
"short-main" (the main loop's slice only) or "none" (the threads left
alone).
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
POLICIES = ("pin-idle", "cross-cgroup", "cross-idle", "short-main", "none")
CROSSED = ("cross-cgroup", "cross-idle")
_noted = set()


class SchedAttr(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("sched_policy", ctypes.c_uint32),
                ("sched_flags", ctypes.c_uint64), ("sched_nice", ctypes.c_int32),
                ("sched_priority", ctypes.c_uint32), ("sched_runtime", ctypes.c_uint64),
                ("sched_deadline", ctypes.c_uint64), ("sched_period", ctypes.c_uint64),
                ("sched_util_min", ctypes.c_uint32), ("sched_util_max", ctypes.c_uint32)]


_libc = ctypes.CDLL(None, use_errno=True)


def policy():
    """NETVM_VM_SCHED, or the default: pin-idle, for clusters of any size
    (crossing CPUs slows the guests' own I/O: docs/bench.md, "Why
    crossing is not the default")."""
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


def group(pid, cluster, placement, found=None):
    """cross-cgroup: each thread of pid into its cluster's group of its
    CPU (placement: [(tid, cpu)]).  False, with a note the first time,
    where that cannot be done."""
    by_cpu = {}
    for tid, cpu in placement:
        by_cpu.setdefault(cpu, []).append(tid)
    try:
        cpugroups.Groups(cluster, found).place(pid, by_cpu, lambda t: is_vcpu(_comm(t)))
        return True
    except (cpugroups.Unavailable, OSError) as e:
        if "cgroup" not in _noted:
            _noted.add("cgroup")
            warn("no cpu cgroup for the cross-cgroup scheduling (%s): pin-idle instead" % e)
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


def apply(pid, cluster="", index=0, found=None, own_cgroups=True):
    """Node QEMU pid's threads (node INDEX of its cluster) as policy() says
    (found: the cpu cgroup hierarchy, for tests; own_cgroups False: a
    QEMU whose cgroups are another's, libvirt's, where cross-cgroup pins
    as pin-idle).  Returns what was done: a subset of {"pin", "cgroup",
    "idle-vcpu", "idle-group", "short-main"}."""
    p = policy()
    done = set()
    if p == "none":
        return done
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
        for tid, name in ts:
            vcpu = is_vcpu(name)
            try:
                os.sched_setaffinity(tid, {vcpu_cpu if vcpu else other_cpu})
                done.add("pin")
                if idle and vcpu:
                    os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
                    done.add("idle-vcpu")
            except OSError:
                pass  # the thread is gone, or a policy we may not change
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
