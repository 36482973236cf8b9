#!/usr/bin/python3
"""Boot to all-ready time of a cluster for N = 2, 4, 8, 16 (meson benchmark
'boot-bench'): ./netvm up -n N (N = 2 back to back, more through
netvm-switch, mapped and routed), timed from the command's start to its
return, then ./netvm down.  Nodes start from the boot template
(docs/cluster.md, "Fast boot"); a first `up -n 1` builds it if it is
missing and its time is reported apart.  Prints a table with the cost per
node (the least-squares slope of time over N), the host's load average
before each run and how the nodes were routed (the mapper, its static
fallback, or back to back); fails only if a boot fails.  Every run is reported.

    tests/guest/bench_boot.py [--cold] [N...]     (default: 2 4 8 16)
--cold: boot every node from scratch (NETVM_COLD_BOOT=1), the old way.
Environment: NETVM (path of ./netvm), NETVM_BENCH_ACCEL (default tcg).
"""
import os
import re
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NETVM = os.environ.get("NETVM", os.path.join(REPO, "netvm"))
ACCEL = os.environ.get("NETVM_BENCH_ACCEL", "tcg")
CLUSTER = "bench-boot"


def nv(*args, env=None):
    return subprocess.run([NETVM, "--cluster", CLUSTER] + [str(a) for a in args],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=env)


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def routing(out):
    """How up left the nodes' routes: 'up returned' is the time to a
    cluster mapped and routed only when the mapper did it."""
    if "routes installed on every node" in out:
        return "mapper"
    if "installing static routes instead" in out:
        return "static (the mapper failed)"
    if "back to back" in out:
        return "back to back"
    return "unknown"


def slope(rows):
    """Least-squares seconds per node over the (N, seconds) rows."""
    if len(rows) < 2:
        return float("nan")
    mx = sum(r[0] for r in rows) / len(rows)
    my = sum(r[1] for r in rows) / len(rows)
    sxx = sum((r[0] - mx) ** 2 for r in rows)
    return sum((r[0] - mx) * (r[1] - my) for r in rows) / sxx if sxx else float("nan")


def main():
    argv = sys.argv[1:]
    cold = "--cold" in argv
    sizes = [int(a) for a in argv if a != "--cold"] or [2, 4, 8, 16]
    env = dict(os.environ)
    if cold:
        env["NETVM_COLD_BOOT"] = "1"
    nv("down")
    if not cold:
        t0 = time.monotonic()
        r = nv("up", "-n", 1, "--accel", ACCEL)
        dt = time.monotonic() - t0
        nv("down")
        if r.returncode != 0:
            print(r.stdout, file=sys.stderr)
            print("boot-bench: up -n 1 failed", file=sys.stderr)
            return 1
        m = re.search(r"boot template saved: .*\(\d+ MiB, ([0-9.]+ s)\)", r.stdout)
        print("boot template: %s; up -n 1 took %.1f s" % (
            "built in " + m.group(1) if m else "already built", dt), flush=True)
    rows = []
    for n in sizes:
        ld = load()
        t0 = time.monotonic()
        r = nv("up", "-n", n, "--accel", ACCEL, env=env)
        dt = time.monotonic() - t0
        last = [l for l in r.stdout.splitlines() if "ready after" in l]
        nv("down")
        if r.returncode != 0:
            print(r.stdout, file=sys.stderr)
            print("boot-bench: up -n %d failed" % n, file=sys.stderr)
            return 1
        rows.append((n, dt, last[-1].split("ready after ")[1].split(" ")[0] if last else "-", ld,
                     routing(r.stdout)))
        print("N=%d: all ready in %.1f s (load %s, %s)" % (n, dt, ld, rows[-1][4]), flush=True)
    print("\nboot to all-ready (./netvm up, %s, %s, %d host cores)" % (
        ACCEL, "cold boot" if cold else "from the boot template", os.cpu_count()))
    print("%-4s %-18s %-22s %-10s %-12s %s" % ("N", "up returned (s)", "last node ready (s)",
                                               "s/node", "load before", "routes"))
    for n, dt, last, ld, how in rows:
        print("%-4d %-18.1f %-22s %-10.2f %-12s %s" % (n, dt, last, dt / n, ld, how))
    print("cost per node (least-squares slope over N): %.2f s" % slope(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
