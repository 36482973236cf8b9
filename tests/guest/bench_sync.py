#!/usr/bin/python3
"""What netvm-bench leaves out (meson benchmark 'sync-bench'): boots cluster
'bench-sync' (2 nodes) and runs netvm-sync-bench on both nodes at once:
channel ping-pong by message size, MCS lock hand-off between the two nodes,
and notification latency answered by a handler against answered by a
spinning loop.  Every byte is checked.  Not a test: it fails only if the
program fails.

    tests/guest/bench_sync.py [ITERS]
Environment: NETVM (path of ./netvm).
"""
import os
import sys
import threading

from guestlib import bench_cluster, netvm_runner

CLUSTER = "bench-sync"
nv = netvm_runner(CLUSTER)


def both(args):
    """netvm-sync-bench ARGS on node 1 (answering) and node 0 (measuring)."""
    res = {}
    t = threading.Thread(target=lambda: res.update(b=nv("run", "1", "--", "netvm-sync-bench",
                                                        args[0], "0", *args[1:])), daemon=True)
    t.start()
    a = nv("run", "0", "--", "netvm-sync-bench", args[0], "1", *args[1:])
    t.join(600)
    b = res.get("b")
    if a.returncode != 0 or b is None or b.returncode != 0:
        print("sync-bench: %s failed:\n%s%s\n%s" % (" ".join(args), a.stdout, a.stderr,
                                                   b and (b.stdout + b.stderr)), file=sys.stderr)
        return None
    return a.stdout


def main():
    iters = sys.argv[1] if len(sys.argv) > 1 else "500"
    with bench_cluster(CLUSTER) as up:
        if not up:
            return 1
        for args in (["chan", iters, "8,64,1024,8192,65536"], ["lock", iters], ["notf", iters]):
            out = both(args)
            if out is None:
                return 1
            print(out, end="")
        print("(./netvm up -n 2, TCG, %d host cores, %s iterations; command: "
              "meson test -C build/meson --benchmark sync-bench)" % (os.cpu_count(), iters))
        return 0


if __name__ == "__main__":
    sys.exit(main())
