#!/usr/bin/python3
"""U-Net benchmark between two guests: round trips by polling for 8 B ..
4 KiB messages and the echoed streaming rate (16 in flight), node 0
against node 1's echo (netvm-unet-test bench / serve).  Timing only: run
by `meson test --benchmark unet-bench`, never as a pass/fail test.  Boots
cluster 'bench-unet'.
"""
import os
import sys
import threading

from guestlib import await_file, bench_cluster, netvm_shell

CLUSTER = "bench-unet"


nv, sh = netvm_shell(CLUSTER)


def info(node):
    rc, out, err = sh(node, await_file("/tmp/unet.info"))
    return out.split()


def main():
    with bench_cluster(CLUSTER) as up:
        if not up:
            return 1
        res = {}
        srv = threading.Thread(target=lambda: res.update(srv=nv("run", "1", "--", "netvm-unet-test",
                                                              "serve", timeout=900)))
        srv.start()
        ps = info(1)[1]
        cli = threading.Thread(target=lambda: res.update(cli=nv("run", "0", "--", "netvm-unet-test",
                                                              "bench", "1", ps, timeout=900)))
        cli.start()
        pc = info(0)[0]
        sh(1, "echo '%s 0' > /tmp/unet.peer.tmp && mv /tmp/unet.peer.tmp /tmp/unet.peer; %s"
           % (pc, await_file("/tmp/unet.ready")))
        sh(0, "echo go > /tmp/unet.go")
        cli.join(900)
        srv.join(60)
        rc, out, err = res.get("cli", (1, "", "no result"))
        print("U-Net messages between two guests (TCG, %d cores), node 0 <-> echo on node 1"
              % os.cpu_count())
        for line in out.splitlines():
            print("  " + line)
        if rc:
            print(err)
        return rc


if __name__ == "__main__":
    sys.exit(main())
