#!/usr/bin/python3
"""Guest tests of libnetvm on N VMs at once: every call, the sync library,
channels, handlers, error paths, and the examples.

    tests/guest/test_lib.py 2    2 VMs back to back
    tests/guest/test_lib.py 4    4 VMs through netvm-switch

netvm-sync-test runs on every node at once (rank = node); its "ok - ..." /
"not ok - ..." lines become TAP results.  Then the examples: ping-pong,
producer/consumer over a channel (nodes 0 and 1), and the MCS-protected
counter on every node.  TAP output (meson protocol 'tap'); the cluster
't-lib-N' is always torn down.  Environment: NETVM, NETVM_TEST_BOOT_TIMEOUT.
"""
import sys
import time

from guestlib import ClusterShell, Tap, diag, run_parallel, tap_cluster_main

T = Tap()
CLUSTER = None


G = ClusterShell()   # named by main()
nv = G.nv


def parallel(jobs, timeout=600):
    """Runs {key: (node, argv)} at once; returns {key: (rc, out, err, seconds)}."""
    def one(node, argv):
        t0 = time.monotonic()
        rc, out, err = nv("run", node, "--", *argv, timeout=timeout)
        return rc, out, err, time.monotonic() - t0
    return run_parallel(one, jobs)


def run_sync_test(n):
    nodes = [str(i) for i in range(n)]
    res = parallel({i: (i, ["netvm-sync-test", str(i)] + nodes) for i in range(n)})
    for i in range(n):
        rc, out, err, secs = res[i]
        for line in out.splitlines():
            if line.startswith("ok - "):
                T.ok(True, "node %d: %s" % (i, line[5:]))
            elif line.startswith("not ok - "):
                T.ok(False, "node %d: %s" % (i, line[9:]), "stderr: %s" % err.strip())
            elif line.startswith("# "):
                T.note("node %d: %s" % (i, line[2:]))
        T.ok(rc == 0, "node %d: netvm-sync-test exits 0 (%.1f s)" % (i, secs), diag(rc, out, err))


def run_examples(n):
    # ping-pong: 1000 B and 9000 B (three pages) round trips, verified
    for size in (1000, 9000):
        res = parallel({"pong": (1, ["netvm-pingpong", "pong", "0", "20", str(size)]),
                        "ping": (0, ["netvm-pingpong", "ping", "1", "20", str(size)])})
        rc, out, err, _ = res["ping"]
        prc, pout, perr, _ = res["pong"]
        T.ok(rc == 0 and prc == 0 and "20 rounds of %d bytes verified" % size in out,
             "example ping-pong, %d B: %s" % (size, out.strip()),
             diag(rc, out, err) + "\n" + diag(prc, pout, perr))
    # producer/consumer over a channel
    res = parallel({"c": (1, ["netvm-prodcons", "consume", "0", "300"]),
                    "p": (0, ["netvm-prodcons", "produce", "1", "300"])})
    rc, out, err, _ = res["c"]
    prc, pout, perr, _ = res["p"]
    T.ok(rc == 0 and prc == 0 and "consumed 300 messages" in out and " 0 bad" in out,
         "example producer/consumer: %s" % out.strip(),
         diag(rc, out, err) + "\n" + diag(prc, pout, perr))
    # the MCS-protected counter on every node
    nodes = [str(i) for i in range(n)]
    res = parallel({i: (i, ["netvm-counter", str(i), "25"] + nodes) for i in range(n)})
    want = "counter %d, expected %d" % (25 * n, 25 * n)
    good = all(res[i][0] == 0 and want in res[i][1] for i in range(n))
    extra = ""
    if not good:
        # what each NIC and driver saw, for a failure that does not repeat
        for i in range(n):
            rc, out, err = nv("run", i, "--", "sh", "-c",
                              "cat /sys/class/netvm/netvm0/fw_counters; "
                              "cat /sys/kernel/debug/netvm/netvm0/endpoints 2>/dev/null; "
                              "dmesg | grep -i netvm | tail -n 10", timeout=60)
            extra += "\nnode %d:\n%s" % (i, out)
    T.ok(good, "example counter: %d nodes x 25 locked increments = %d on every node"
         % (n, 25 * n), "\n".join(diag(*res[i][:3]) for i in range(n)) + extra)


def run_sync_bench():
    """netvm-sync-bench (the benchmark sync-bench) for correctness only: a
    few iterations of each mode, every byte checked, both sides exit 0."""
    for args in (["chan", "10", "8,9000,65536"], ["lock", "20"], ["notf", "10"]):
        res = parallel({"b": (1, ["netvm-sync-bench", args[0], "0"] + args[1:]),
                        "a": (0, ["netvm-sync-bench", args[0], "1"] + args[1:])})
        rc, out, err, _ = res["a"]
        brc, bout, berr, _ = res["b"]
        T.ok(rc == 0 and brc == 0 and ("median_us" in out or "handoff_us" in out),
             "netvm-sync-bench %s: runs and verifies on both nodes" % args[0],
             diag(rc, out, err) + "\n" + diag(brc, bout, berr))


def main():
    global CLUSTER
    if len(sys.argv) != 2 or sys.argv[1] not in ("2", "4"):
        print("usage: test_lib.py 2|4", file=sys.stderr)
        return 2
    n = int(sys.argv[1])
    CLUSTER = G.name = "t-lib-%d" % n

    def body():
        run_sync_test(n)
        run_examples(n)
        if n == 2:
            run_sync_bench()
    return tap_cluster_main(T, CLUSTER, n, body)

if __name__ == "__main__":
    sys.exit(main())
