#!/usr/bin/python3
"""Boot to all-ready time of a cluster for N = 2, 4, 8 (meson benchmark
'boot-bench'): ./netvm up -n N (N = 2 back to back, more through
netvm-switch, routes programmed), timed from the command's start to its
return, then ./netvm down.  Prints a table; fails only if a boot fails.

    tests/guest/bench_boot.py [N...]        (default: 2 4 8)
Environment: NETVM (path of ./netvm), NETVM_BENCH_ACCEL (default tcg).
"""
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NETVM = os.environ.get("NETVM", os.path.join(REPO, "netvm"))
ACCEL = os.environ.get("NETVM_BENCH_ACCEL", "tcg")
CLUSTER = "bench-boot"


def nv(*args):
    return subprocess.run([NETVM, "--cluster", CLUSTER] + [str(a) for a in args],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [2, 4, 8]
    nv("down")
    rows = []
    for n in sizes:
        t0 = time.monotonic()
        r = nv("up", "-n", n, "--accel", ACCEL)
        dt = time.monotonic() - t0
        last = [l for l in r.stdout.splitlines() if "ready after" in l]
        nv("down")
        if r.returncode != 0:
            print(r.stdout, file=sys.stderr)
            print("boot-bench: up -n %d failed" % n, file=sys.stderr)
            return 1
        rows.append((n, dt, last[-1].split("ready after ")[1].split(" ")[0] if last else "-"))
        print("N=%d: all ready in %.1f s" % (n, dt), flush=True)
    print("\nboot to all-ready (./netvm up, %s, %d host cores)" % (ACCEL, os.cpu_count()))
    print("%-4s %-18s %s" % ("N", "up returned (s)", "last node ready (s, since QEMU start)"))
    for n, dt, last in rows:
        print("%-4d %-18.1f %s" % (n, dt, last))
    return 0


if __name__ == "__main__":
    sys.exit(main())
