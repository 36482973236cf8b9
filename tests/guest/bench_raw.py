#!/usr/bin/python3
"""Raw-frame benchmark between two guests (the hardware model, no NetVM):
round trip of 8-byte and 4 KiB frames (netvm-raw ping against echo),
streaming throughput of 4 KiB frames, and the host CPU time both QEMU
processes spend per 4 KiB moved.  Timing only: run by `meson test
--benchmark`, never as a pass/fail test.  Boots cluster 'bench-raw'.
"""
import json
import os
import re
import sys
import time

from guestlib import REPO, bench_cluster, netvm_shell

CLUSTER = "bench-raw"
RAW = "/netvm/build/meson/guest-lib/netvm-raw"
TICK = os.sysconf("SC_CLK_TCK")


nv, sh = netvm_shell(CLUSTER)


def qemu_cpu():
    """CPU seconds (user + system) used so far by the cluster's QEMUs."""
    with open(os.path.join(REPO, "build", "cluster", CLUSTER, "cluster.json")) as f:
        nodes = json.load(f)["nodes"]
    total = 0.0
    for nd in nodes:
        with open("/proc/%d/stat" % nd["pid"]) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / TICK
    return total


def ping(size, n):
    sh(1, "setsid %s echo %d 20000 > /tmp/echo.out 2>&1 < /dev/null &" % (RAW, n))
    time.sleep(1)
    rc, out, err = sh(0, "%s ping %d %d" % (RAW, n, size))
    m = re.search(r"min ([\d.]+) us.*median ([\d.]+) us", out + err, re.S)
    return (float(m.group(1)), float(m.group(2))) if m else (None, None), out + err


def stream(size, n):
    sh(1, "setsid %s recv %d 20000 > /tmp/recv.out 2>&1 < /dev/null &" % (RAW, n))
    time.sleep(1)
    cpu0 = qemu_cpu()
    t0 = time.monotonic()
    rc, out, err = sh(0, "%s send %d %d" % (RAW, n, size))
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        res = sh(1, "cat /tmp/recv.out")[1]
        if "received" in res:
            break
        time.sleep(0.2)
    t = time.monotonic() - t0
    cpu = qemu_cpu() - cpu0
    return n * size / t / 1e6, cpu / n * 1e6, res


def main():
    with bench_cluster(CLUSTER) as up:
        if not up:
            return 1
        (mn8, med8), o8 = ping(8, 2000)
        (mn4k, med4k), o4k = ping(4096, 1000)
        mbps, cpu_us, res = stream(4096, 50000)
        print("raw frames between two guests (TCG, %d cores)" % os.cpu_count())
        print("  round trip   8 B: min %s us, median %s us" % (mn8, med8))
        print("  round trip 4 KiB: min %s us, median %s us" % (mn4k, med4k))
        print("  streaming  4 KiB: %.1f MB/s (%s)" % (mbps, res.strip()))
        print("  host CPU per 4 KiB moved (both QEMUs): %.1f us" % cpu_us)
        ok = med8 is not None and med4k is not None and "0 bad" in res
        if not ok:
            print(o8, o4k, res)
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
