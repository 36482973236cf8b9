#!/usr/bin/python3
"""DSM extensions benchmark between two guests (docs/dsm.md): a 4 KiB page
request/reply round trip, node 0 asking node 1, with the reply buffer
registered in the NIC's reply table (zero copy) against the free-buffer
path (copied out).  Timing only: run by `meson test --benchmark
dsm-bench`, never as a pass/fail test.  Boots cluster 'bench-dsm'.
Environment: DSM_BENCH_ITER (default 2000).
"""
import os
import sys
import threading

from guestlib import await_file, bench_cluster, netvm_shell

CLUSTER = "bench-dsm"
ITER = os.environ.get("DSM_BENCH_ITER", "2000")


nv, sh = netvm_shell(CLUSTER)


def wait_for(node, name):
    rc, out, err = sh(node, await_file("/tmp/" + name))
    return out.split()


def main():
    with bench_cluster(CLUSTER) as up:
        if not up:
            return 1
        res = {}
        ths = []
        for n in (0, 1):
            sh(n, "rm -f /tmp/dsm.*")
            th = threading.Thread(target=lambda n=n: res.update({n: nv(
                "run", str(n), "--", "netvm-dsm-test", "bench", str(n), "2", ITER, timeout=900)}))
            th.start()
            ths.append(th)
        ports = [wait_for(n, "dsm.info")[1] for n in (0, 1)]
        for n in (0, 1):
            sh(n, "echo '%s' > /tmp/dsm.peers.tmp && mv /tmp/dsm.peers.tmp /tmp/dsm.peers" % " ".join(ports))
        for n in (0, 1):
            wait_for(n, "dsm.ready")
        for n in (0, 1):
            sh(n, "echo go > /tmp/dsm.go")
        for th in ths:
            th.join(900)
        rc, out, err = res.get(0, (1, "", "no result"))
        print("DSM page requests between two guests (TCG, %d cores), node 0 -> node 1, polling"
              % os.cpu_count())
        for line in out.splitlines():
            print("  " + line)
        if rc or res.get(1, (1,))[0]:
            print(err, res.get(1))
            return 1
        return 0


if __name__ == "__main__":
    sys.exit(main())
