#!/usr/bin/python3
"""NetVM's Tables 24 and 25 in the guest (meson benchmark 'driver-bench'):
boots cluster 'bench-driver' (2 nodes), starts netvm-vm-test serve on node
1 and runs netvm-vm-test bench on node 0, which prints per page the cost
of installing and removing a translation (NETVM_IOC_PTBENCH), of looking
the pages up, of pin_user_pages/unpin_user_pages and of mlock/munlock,
and the cost of a page-miss restart on a 4 KiB write.  Then ./netvm down.
Not a test: it fails only if the cluster or the program fails.

    tests/guest/bench_driver.py
Environment: NETVM (path of ./netvm).
"""
import os
import sys
import threading

from guestlib import bench_cluster, netvm_runner

CLUSTER = "bench-driver"
nv = netvm_runner(CLUSTER)


def main():
    with bench_cluster(CLUSTER) as up:
        if not up:
            return 1
        srv = threading.Thread(target=nv, args=("run", "1", "--", "netvm-vm-test", "serve"), daemon=True)
        srv.start()
        r = nv("run", "1", "--", "sh", "-c", "for i in $(seq 150); do test -f /tmp/nvvm.info && break; "
               "sleep 0.2; done; cat /tmp/nvvm.info")
        port = r.stdout.split()[1] if r.returncode == 0 and r.stdout.startswith("port ") else None
        if not port:
            print("driver-bench: the server did not start: " + r.stdout + r.stderr, file=sys.stderr)
            return 1
        r = nv("run", "0", "--", "netvm-vm-test", "bench", "1", port)
        print(r.stdout, end="")
        nv("run", "1", "--", "sh", "-c", "echo quit > /tmp/nvvm.ctl; cat /tmp/nvvm.resp")
        if r.returncode != 0:
            print("driver-bench: bench failed: " + r.stderr, file=sys.stderr)
            return 1
        print("(./netvm up -n 2, TCG, %d host cores; command: meson test -C build/meson --benchmark driver-bench)"
              % os.cpu_count())
        return 0


if __name__ == "__main__":
    sys.exit(main())
