#!/usr/bin/python3
"""The Tripwire paper's RPC experiment (meson benchmark 'trip-bench'):
boots cluster 'bench-trip' (2 nodes); node 1 serves requests it learns of
through a tripwire, node 0 calls (a 16-byte request, a 16-byte reply, each
announced by a tripwire) and reports the round trip: first with the server
idle (blocked in netvm_trip_wait: the hit interrupts and wakes it), then
busy (computing, testing for hits between slices without a system call).
Every reply is checked.  Not a test: it fails only if a call fails.

    tests/guest/bench_trip.py [CALLS]
Environment: NETVM (path of ./netvm).
"""
import os
import sys
import threading

from guestlib import bench_cluster, netvm_runner

CLUSTER = "bench-trip"
nv = netvm_runner(CLUSTER)


def one(mode, calls):
    res = {}
    srv = threading.Thread(target=lambda: res.update(srv=nv("run", "1", "--", "netvm-trip-rpc", "serve", mode)),
                           daemon=True)
    nv("run", "1", "--", "rm", "-f", "/tmp/nvrpc.info")
    srv.start()
    r = nv("run", "1", "--", "sh", "-c", "for i in $(seq 150); do test -f /tmp/nvrpc.info && break; "
           "sleep 0.2; done; cat /tmp/nvrpc.info")
    w = r.stdout.split()
    if r.returncode != 0 or len(w) < 4:
        print("trip-bench: the server did not start: " + r.stdout + r.stderr, file=sys.stderr)
        return None
    r = nv("run", "0", "--", "netvm-trip-rpc", "call", w[1], w[3], calls)
    srv.join(60)
    s = res.get("srv")
    if r.returncode != 0 or s is None or s.returncode != 0:
        print("trip-bench: %s: %s %s" % (mode, r.stdout + r.stderr, s and (s.stdout + s.stderr)),
              file=sys.stderr)
        return None
    f = r.stdout.split()
    return dict(zip(f[0::2], f[1::2])), s.stdout.strip()


def main():
    calls = sys.argv[1] if len(sys.argv) > 1 else "2000"
    with bench_cluster(CLUSTER) as up:
        if not up:
            return 1
        print("tripwire RPC round trip, %s calls, 16 B request and reply:" % calls)
        print("%-6s %10s %10s %10s" % ("server", "median us", "p99 us", "min us"))
        for mode in ("idle", "busy"):
            got = one(mode, calls)
            if not got:
                return 1
            d, note = got
            print("%-6s %10s %10s %10s   (%s)" % (mode, d["median_us"], d["p99_us"], d["min_us"], note))
        print("(./netvm up -n 2, TCG, %d host cores; command: meson test -C build/meson --benchmark trip-bench)"
              % os.cpu_count())
        return 0


if __name__ == "__main__":
    sys.exit(main())
