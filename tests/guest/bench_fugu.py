#!/usr/bin/python3
"""FUGU's two-case delivery under a stopped receiver (meson benchmark
'fugu-bench', docs/bench.md): boots cluster 'bench-fugu' (2 nodes); node 0
streams MESSAGES U-Net messages one per millisecond to node 1
(netvm-bench client -T unet_stop -S STOP), whose receiver stops itself
(SIGSTOP) for STOP ms after a quarter of them and then takes the rest.  Per
pause (0: never stopped, the baseline) and message size it reports how
many went direct to the receive queue and how many the NI diverted to the
driver's pageable buffer, by cause (the endpoint's status and node 1's
firmware counters).  A pause written "1000w" has the receiver watched by
the driver (netvm_unet_sched, netvm-bench -W): the NI diverts as soon as
it is stopped (FUGU's "not running"), not only once its queue is full.  Every message is checked for its number
(arrival order) and the last one byte for byte by netvm-bench.  Not a
pass/fail test: it fails only if a message is lost, out of order or wrong,
or the counts do not add up.

    tests/guest/bench_fugu.py [MESSAGES] [SIZES] [STOPS]
        (default 2000, 64,1024,4096, 0,250,1000,250w,1000w)
Environment: NETVM (path of ./netvm).
"""
import os
import re
import sys
import threading

from guestlib import bench_cluster, netvm_runner

CLUSTER = "bench-fugu"
SERVER_ADDR = "10.77.0.2"  # node 1's data NIC (tools/netvm_cli/cluster.py DATA_IP)
COUNTERS = ("unet_rx", "unet_diverted", "unet_ring_full", "unet_no_buf", "unet_div_order",
            "unet_not_running", "unet_dropped")
LINE = re.compile(r"unet_stop (\d+) B receiver: messages (\d+) direct (\d+) diverted (\d+) "
                  r"ring_full (\d+) no_buf (\d+) order (\d+) dropped (\d+) not_running (\d+)")


nv = netvm_runner(CLUSTER, default_timeout=900)


def fw_counters(node):
    r = nv("run", node, "--", "cat", "/sys/class/netvm/netvm0/fw_counters", timeout=60)
    out = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 2 and f[1].isdigit():
            out[f[0]] = int(f[1])
    return out


def one(messages, sizes, stop):
    """One netvm-bench server/client pair; returns (rows, problems)."""
    res = {}
    srv = threading.Thread(target=lambda: res.update(
        srv=nv("run", 1, "--", "netvm-bench", "server", "-t", "120")), daemon=True)
    srv.start()
    watch = stop.endswith("w")
    cli = nv("run", 0, "--", "netvm-bench", "client", "-P", "netvm", "-T", "unet_stop",
             "-n", messages, "-s", sizes, "-S", stop.rstrip("w"), *(["-W"] if watch else []),
             SERVER_ADDR)
    srv.join(150)
    s = res.get("srv")
    rows = [tuple(int(x) for x in m.groups()) for m in LINE.finditer(cli.stderr)]
    bad = []
    for z, n, direct, div, full, nobuf, order, dropped, notrun in rows:
        if direct + div != n or dropped or full + nobuf + order + notrun != div:
            bad.append("%s ms, %d B: counts do not add up" % (stop, z))
        if notrun and not watch:
            bad.append("%s ms, %d B: 'not running' without the watch" % (stop, z))
    if cli.returncode != 0 or s is None or s.returncode != 0 or \
            len(rows) != len(sizes.split(",")):
        bad.append("%s ms: client exit %d: %s\nserver: %s" % (
            stop, cli.returncode, cli.stderr.strip()[-3000:],
            s and (s.returncode, s.stderr.strip()[-2000:])))
    return rows, bad


def main():
    messages = sys.argv[1] if len(sys.argv) > 1 else "2000"
    sizes = sys.argv[2] if len(sys.argv) > 2 else "64,1024,4096"
    stops = sys.argv[3] if len(sys.argv) > 3 else "0,250,1000,250w,1000w"
    with bench_cluster(CLUSTER) as up:
        if not up:
            return 1
        print("FUGU under a stopped receiver: %s U-Net messages per size, one per ms, node 0 -> "
              "node 1;\nthe receiver stops (SIGSTOP) for STOP ms after a quarter of them "
              "(2 TCG guests, %d host CPUs)" % (messages, os.cpu_count()))
        print("(w: the receiver watched by the driver, netvm_unet_sched)")
        print("%8s %8s %9s %9s %9s %10s | %10s %9s %11s %9s %8s" % (
            "stop ms", "size (B)", "messages", "direct", "diverted", "diverted %", "queue full",
            "no buffer", "not running", "for order", "dropped"))
        before = fw_counters(1)
        bad = []
        for stop in stops.split(","):
            rows, probs = one(messages, sizes, stop)
            bad += probs
            for z, n, direct, div, full, nobuf, order, dropped, notrun in rows:
                print("%8s %8d %9d %9d %9d %9.1f%% | %10d %9d %11d %9d %8d" % (
                    stop, z, n, direct, div, 100.0 * div / n if n else 0, full, nobuf, notrun,
                    order, dropped))
        after = fw_counters(1)
        d = dict((k, after.get(k, 0) - before.get(k, 0)) for k in COUNTERS)
        print("node 1 firmware counters over the runs: " +
              ", ".join("%s +%d" % (k, d[k]) for k in COUNTERS))
        if bad:
            print("FAILED")
            print("fugu-bench: " + "\n".join(bad), file=sys.stderr)
            return 1
        print("every message arrived once, in order (numbers checked), the last of each run "
              "byte for byte; direct + diverted = sent, none dropped")
        return 0


if __name__ == "__main__":
    sys.exit(main())
