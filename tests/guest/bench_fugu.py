#!/usr/bin/python3
"""FUGU's two-case delivery under a stopped receiver (meson benchmark
'fugu-bench', docs/bench.md): boots cluster 'bench-fugu' (2 nodes); node 0
streams MESSAGES U-Net messages one per millisecond to node 1
(netvm-bench client -T unet_stop), whose receiver stops itself (SIGSTOP)
for 1 s after a quarter of them and then takes the rest.  Per message size
it reports how many went direct to the receive queue and how many the NI
diverted to the driver's pageable buffer, by cause (the endpoint's status
and node 1's firmware counters).  Every message is checked for its number
(arrival order) and the last one byte for byte by netvm-bench.  Not a
pass/fail test: it fails only if a message is lost, out of order or wrong,
or the counts do not add up.

    tests/guest/bench_fugu.py [MESSAGES] [SIZES]     (default 2000, 64,1024,4096)
Environment: NETVM (path of ./netvm).
"""
import os
import re
import subprocess
import sys
import threading

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NETVM = os.environ.get("NETVM", os.path.join(REPO, "netvm"))
CLUSTER = "bench-fugu"
SERVER_ADDR = "10.77.0.2"  # node 1's data NIC (tools/netvm_cli/cluster.py DATA_IP)
COUNTERS = ("unet_rx", "unet_diverted", "unet_ring_full", "unet_no_buf", "unet_div_order",
            "unet_dropped")
LINE = re.compile(r"unet_stop (\d+) B receiver: messages (\d+) direct (\d+) diverted (\d+) "
                  r"ring_full (\d+) no_buf (\d+) order (\d+) dropped (\d+)")


def nv(*args, timeout=900):
    return subprocess.run([NETVM, "--cluster", CLUSTER] + [str(a) for a in args],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)


def fw_counters(node):
    r = nv("run", node, "--", "cat", "/sys/class/netvm/netvm0/fw_counters", timeout=60)
    out = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 2 and f[1].isdigit():
            out[f[0]] = int(f[1])
    return out


def main():
    messages = sys.argv[1] if len(sys.argv) > 1 else "2000"
    sizes = sys.argv[2] if len(sys.argv) > 2 else "64,1024,4096"
    nv("down")
    try:
        r = nv("up", "-n", "2")
        if r.returncode != 0:
            print("fugu-bench: up failed: " + r.stderr, file=sys.stderr)
            return 1
        before = fw_counters(1)
        res = {}
        srv = threading.Thread(target=lambda: res.update(
            srv=nv("run", 1, "--", "netvm-bench", "server", "-t", "120")), daemon=True)
        srv.start()
        cli = nv("run", 0, "--", "netvm-bench", "client", "-P", "netvm", "-T", "unet_stop",
                 "-n", messages, "-s", sizes, SERVER_ADDR)
        srv.join(150)
        after = fw_counters(1)
        s = res.get("srv")
        rows = [tuple(int(x) for x in m.groups()) for m in LINE.finditer(cli.stderr)]
        print("FUGU under a stopped receiver: %s U-Net messages per size, one per ms, node 0 -> "
              "node 1;\nthe receiver stops (SIGSTOP) for 1 s after a quarter of them "
              "(2 TCG guests, %d host CPUs)" % (messages, os.cpu_count()))
        print("%8s %9s %9s %9s %10s | %10s %9s %9s %8s" % (
            "size (B)", "messages", "direct", "diverted", "diverted %", "queue full",
            "no buffer", "for order", "dropped"))
        bad = []
        for z, n, direct, div, full, nobuf, order, dropped in rows:
            print("%8d %9d %9d %9d %9.1f%% | %10d %9d %9d %8d" % (
                z, n, direct, div, 100.0 * div / n if n else 0, full, nobuf, order, dropped))
            if direct + div != n or dropped or full + nobuf + order != div:
                bad.append("%d B: counts do not add up" % z)
        d = dict((k, after.get(k, 0) - before.get(k, 0)) for k in COUNTERS)
        print("node 1 firmware counters over the run: " +
              ", ".join("%s +%d" % (k, d[k]) for k in COUNTERS))
        print("every message arrived once, in order (numbers checked), the last of each size "
              "byte for byte" if cli.returncode == 0 and not bad else "FAILED")
        if cli.returncode != 0 or s is None or s.returncode != 0 or not rows or bad:
            print("fugu-bench: client exit %d: %s\nserver: %s\n%s" % (
                cli.returncode, cli.stderr.strip()[-3000:],
                s and (s.returncode, s.stderr.strip()[-2000:]), "\n".join(bad)), file=sys.stderr)
            return 1
        return 0
    finally:
        nv("down")


if __name__ == "__main__":
    sys.exit(main())
