#!/usr/bin/python3
"""Where a command's CPU time goes, by cluster and by test (docs/testing.md,
"The harness"): runs COMMAND, reads every process's CPU time from /proc
once per interval while it runs, and counts each process's share under

  cluster:NAME  a QEMU of cluster NAME (-name netvm-NAME-nodeI), a switch
                working in build/cluster/NAME/, or ./netvm --cluster NAME
  test:PATH     a process under a test script or program (tests/...)
  other:COMM    anything else, by its command name

then prints the table, largest first, with the host's whole CPU time over
the run (/proc/stat) and what no sample saw: processes that started and
ended between two samples (compiles, short commands).

    ci/cpu-profile.py [-o FILE] [--interval S] -- COMMAND [ARG...]

Exits with COMMAND's status.  Linux only; sees every process it may read.
"""
import argparse
import os
import re
import subprocess
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")
CLUSTER_RES = (re.compile(rb"netvm-([A-Za-z0-9._-]+?)-node\d+"),
               re.compile(rb"/build/cluster/([A-Za-z0-9._-]+)/"),
               re.compile(rb"--cluster\x00([A-Za-z0-9._-]+)"))
# a test script and its first argument unless an option (a group's name)
TEST_RE = re.compile(rb"(tests/[A-Za-z0-9_./-]+)(?:\x00([A-Za-z0-9_][A-Za-z0-9_-]*))?")


def host_cpu():
    """CPU ticks the host spent busy, all CPUs (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4]     # all but idle and iowait


class Proc:
    __slots__ = ("ppid", "cmd", "comm", "ticks")


def read_proc(pid, known):
    """Proc of pid (its command line read once), or None if it is gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read()
        r = stat.rindex(b")")
        fields = stat[r + 2:].split()
        p = known.get(pid) or Proc()
        if pid not in known:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                p.cmd = f.read()
            p.comm = stat[stat.index(b"(") + 1:r].decode(errors="replace")
        p.ppid = int(fields[1])
        p.ticks = int(fields[11]) + int(fields[12])
        return p
    except (OSError, ValueError, IndexError):
        return None


def label(pid, procs):
    """The label of pid: its own or its nearest ancestor's cluster or test."""
    seen = 0
    p = procs.get(pid)
    first = p
    while p is not None and seen < 32:
        for r in CLUSTER_RES:
            m = r.search(p.cmd)
            if m:
                return "cluster:" + m.group(1).decode()
        m = TEST_RE.search(p.cmd)
        if m:
            return "test:" + b" ".join(g for g in m.groups() if g).decode()
        p = procs.get(p.ppid)
        seen += 1
    return "other:" + (first.comm if first else "?")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", metavar="FILE", help="write the table here (default: stdout)")
    ap.add_argument("--interval", type=float, default=1.0, metavar="S", help="seconds between samples (default 1)")
    ap.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG...]")
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no command given")
    if a.interval <= 0:
        ap.error("--interval must be positive")
    procs, totals = {}, {}
    me = os.getpid()
    start_host, t0 = host_cpu(), time.monotonic()
    # what already runs is counted from now on, not from its start
    for d in os.listdir("/proc"):
        if d.isdigit():
            p = read_proc(int(d), procs)
            if p:
                procs[int(d)] = p
    child = subprocess.Popen(cmd)
    while True:
        done = child.poll() is not None
        before = dict((pid, p.ticks) for pid, p in procs.items())
        alive = {}
        for d in os.listdir("/proc"):
            if d.isdigit() and int(d) != me:
                p = read_proc(int(d), procs)
                if p is not None:
                    alive[int(d)] = p
        family = {**procs, **alive}     # parents that just ended still name their children
        for pid, p in alive.items():
            if p.ticks > before.get(pid, 0):
                lab = label(pid, family)
                totals[lab] = totals.get(lab, 0) + p.ticks - before.get(pid, 0)
        procs = alive
        if done:
            break
        time.sleep(a.interval)
    wall, host = time.monotonic() - t0, host_cpu() - start_host
    seen = sum(totals.values())
    lines = ["%.0f s wall; host CPU %.1f s; seen in samples %.1f s; too short-lived to be seen %.1f s"
             % (wall, host / HZ, seen / HZ, max(0, host - seen) / HZ)]
    lines += ["%9.1f  %s" % (v / HZ, k) for k, v in sorted(totals.items(), key=lambda kv: -kv[1])]
    text = "\n".join(lines) + "\n"
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return child.returncode


if __name__ == "__main__":
    sys.exit(main())
