#!/usr/bin/python3
"""Guest test group pkgs: Debian's software from the package disk
(docs/packages.md) on 2 VMs, unmodified, over the virtio data network.

  - netvm-pkgs makes the disk usable on both nodes (and again: idempotent)
  - iperf3 --version is Debian's /usr/bin/iperf3; fi_info lists libfabric's
    tcp provider
  - netvm-rsh: a command on the other node through its agent, with stdin,
    stdout and the exit status carried back
  - soft RoCE: modprobe rdma_rxe, rdma link add rxe0 on the data NIC,
    ibv_devinfo -l lists it; ibv_rc_pingpong between the nodes with its
    buffers checked (--chk), both sides exit 0
  - iperf3 client and server: both exit 0, exactly 10 MiB sent
  - ./netvm mpirun: an allreduce with mpi4py on Open MPI (one rank a node,
    each rank's sum checked), MPICH's hydra starting a rank on each node,
    and NetPIPE on both MPIs in integrity mode (every message checked)

TAP output; the cluster 't-guest-pkgs' is always torn down.
Environment: NETVM, NETVM_TEST_BOOT_TIMEOUT.
"""
import json
import re
import sys

from guestlib import Tap, diag, run_netvm, run_parallel, tap_cluster_main, tcp_listening, wait_guest

T = Tap()
CLUSTER = "t-guest-pkgs"
PEER_IP = "10.77.0.2"       # node 1 on the data network (cluster.py DATA_IP)


def nv(*args, timeout=300):
    return run_netvm(CLUSTER, args, timeout)


def sh(node, script, timeout=300):
    return nv("run", node, "--", "sh", "-c", script, timeout=timeout)


def check_pkgs():
    res = run_parallel(lambda node: nv("run", node, "--", "netvm-pkgs"), {0: (0,), 1: (1,)})
    for node in (0, 1):
        T.ok(res[node][0] == 0, "node %d: netvm-pkgs mounts the package disk" % node, diag(*res[node]))
    rc, out, err = nv("run", 0, "--", "netvm-pkgs")
    T.ok(rc == 0, "netvm-pkgs a second time: exit 0", diag(rc, out, err))
    rc, out, err = sh(0, "command -v iperf3; iperf3 --version")
    lines = out.splitlines()
    T.ok(rc == 0 and lines[:1] == ["/usr/bin/iperf3"] and len(lines) > 1 and
         lines[1].startswith("iperf 3."), "iperf3 --version: Debian's /usr/bin/iperf3 runs",
         diag(rc, out, err))
    rc, out, err = nv("run", 0, "--", "fi_info", "-l")
    T.ok(rc == 0 and "tcp:" in out, "fi_info -l lists libfabric's tcp provider", diag(rc, out, err))


def check_rsh():
    rc, out, err = sh(0, "/netvm/build/meson/images/netvm-rsh node1 'hostname; exit 3'")
    T.ok(rc == 3 and out == "node1\n", "netvm-rsh node1: runs there, exit status 3 carried back",
         diag(rc, out, err))
    rc, out, err = sh(0, "printf 'abc\\n123' | /netvm/build/meson/images/netvm-rsh %s cat" % PEER_IP)
    T.ok(rc == 0 and out == "abc\n123", "netvm-rsh: stdin to the remote command, its stdout back",
         diag(rc, out, err))
    rc, out, err = sh(0, "/netvm/build/meson/images/netvm-rsh -n node1 cat")
    T.ok(rc == 0 and out == "", "netvm-rsh -n: the remote command's stdin is empty",
         diag(rc, out, err))


# The index of rxe0's RoCE v2 GID for the node's IPv4 address (the data
# NIC has no IPv6: images/init turns it off there).
GID_INDEX = r"""
for f in /sys/class/infiniband/rxe0/ports/1/gids/*; do
	i=${f##*/}
	case "$(cat $f)" in 0000:0000:0000:0000:0000:ffff:*) ;; *) continue ;; esac
	[ "$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$i 2>/dev/null)" = "RoCE v2" ] &&
		{ echo $i; exit 0; }
done
exit 1
"""


def check_rxe():
    setup = ("modprobe rdma_rxe && rdma link add rxe0 type rxe netdev \"$(cat /run/netvm-pkgs.done)\" "
             "&& ibv_devinfo -l && rdma link show")
    res = run_parallel(lambda node: sh(node, setup), {0: (0,), 1: (1,)})
    for node in (0, 1):
        rc, out, err = res[node]
        T.ok(rc == 0 and "rxe0" in out.split() and "state ACTIVE" in out,
             "node %d: modprobe rdma_rxe, rdma link add rxe0 on the data NIC, ibv_devinfo -l lists it"
             % node, diag(rc, out, err))
    gids = {}
    for node in (0, 1):
        rc, out, err = sh(node, GID_INDEX)
        gids[node] = out.strip()
        T.ok(rc == 0 and gids[node].isdigit(), "node %d: rxe0 has a RoCE v2 GID for its IPv4 address"
             % node, diag(rc, out, err))
    if not all(g.isdigit() for g in gids.values()):
        return
    args = ["ibv_rc_pingpong", "-d", "rxe0", "-i", "1", "-n", "200", "-s", "4096", "-c"]
    res = {}

    def server():
        res["s"] = nv("run", 1, "--", *(args + ["-g", gids[1]]), timeout=300)

    def client():
        if wait_guest(sh, 1, tcp_listening(18515)):
            res["c"] = nv("run", 0, "--", *(args + ["-g", gids[0], PEER_IP]), timeout=300)
        else:
            res["c"] = (-1, "", "the server never listened on port 18515")
    run_parallel(lambda f: f(), {"s": (server,), "c": (client,)})
    for k, who in (("s", "server (node 1)"), ("c", "client (node 0)")):
        rc, out, err = res[k]
        # ibv_rc_pingpong counts both directions: 2 x 200 x 4096 bytes
        T.ok(rc == 0 and "1638400 bytes in" in out and "200 iters in" in out,
             "ibv_rc_pingpong over rxe, 200 x 4096 B checked: %s exits 0" % who, diag(rc, out, err))


def check_iperf3():
    res = {}

    def server():
        res["s"] = nv("run", 1, "--", "iperf3", "-s", "-1", "-J", timeout=300)

    def client():
        if wait_guest(sh, 1, tcp_listening(5201)):
            res["c"] = nv("run", 0, "--", "iperf3", "-c", PEER_IP, "-n", "10M", "-J", timeout=300)
        else:
            res["c"] = (-1, "", "iperf3 -s never listened on port 5201")
    run_parallel(lambda f: f(), {"s": (server,), "c": (client,)})
    rc, out, err = res["c"]
    src, sout, serr = res["s"]
    try:
        end = json.loads(out)["end"]
        sent, received = end["sum_sent"]["bytes"], end["sum_received"]["bytes"]
    except (ValueError, KeyError, TypeError):
        sent = received = None
    # The client stops writing once -n bytes are out, within its last
    # write (up to one 128 KiB block more: seen 10555920 B); the server
    # counts until the client's end message, which can overtake data still
    # in flight, so its count is at most that.
    T.ok(rc == 0 and src == 0 and isinstance(sent, int) and
         10 << 20 <= sent <= (10 << 20) + (128 << 10) and isinstance(received, int) and
         0 < received <= sent,
         "iperf3 over the data network: client and server exit 0, 10 MiB sent (sent %s, "
         "received %s)" % (sent, received), diag(rc, out[-2000:], err) + "\n" + diag(src, sout[-2000:], serr))


ALLREDUCE = ("from mpi4py import MPI; c = MPI.COMM_WORLD; "
             "print('rank %d of %d on %s sum %d' % (c.rank, c.size, MPI.Get_processor_name(), "
             "c.allreduce(c.rank + 1)))")


def check_mpi():
    rc, out, err = nv("mpirun", "--timeout", "600", "--", "python3", "-c", ALLREDUCE, timeout=700)
    got = sorted(l for l in out.splitlines() if l.startswith("rank "))
    want = ["rank 0 of 2 on node0 sum 3", "rank 1 of 2 on node1 sum 3"]
    T.ok(rc == 0 and got == want, "./netvm mpirun (Open MPI): mpi4py allreduce, a rank on each node",
         diag(rc, out, err))
    rc, out, err = nv("mpirun", "--mpi", "mpich", "--timeout", "600", "--",
                      "sh", "-c", "echo rank $PMI_RANK of $PMI_SIZE on $(hostname)", timeout=700)
    got = sorted(l for l in out.splitlines() if l.startswith("rank "))
    want = ["rank 0 of 2 on node0", "rank 1 of 2 on node1"]
    T.ok(rc == 0 and got == want, "./netvm mpirun --mpi mpich: hydra starts a rank on each node",
         diag(rc, out, err))
    for mpi, prog in (("openmpi", "NPopenmpi"), ("mpich", "NPmpich2")):
        check_netpipe(mpi, prog)
    rc, out, err = nv("mpirun", "-x", "bad", "--", "true")
    T.ok(rc == 1 and "-x wants NAME=VALUE" in err, "./netvm mpirun -x bad: refused", diag(rc, out, err))


def check_netpipe(mpi, prog):
    """NetPIPE's integrity mode: every message, 1 B to 48 KiB, checked by
    the receiving rank, on a rank on each node."""
    rc, out, err = nv("mpirun", "--mpi", mpi, "--timeout", "600", "--", prog, "-i", "-u", "65536",
                      timeout=700)
    # the ranks' names go to stdout, the per-size lines to stderr
    sizes = [(int(m.group(1)), "Integrity check passed" in l) for l in err.splitlines()
             for m in [re.match(r"^\s*\d+:\s+(\d+) bytes", l)] if m]
    T.ok(rc == 0 and "0: node0" in out.splitlines() and "1: node1" in out.splitlines() and
         len(sizes) >= 20 and all(ok for _, ok in sizes) and max(n for n, _ in sizes) > 32768 and
         "Integrity check failed" not in out + err,
         "./netvm mpirun --mpi %s -- %s -i: %d message sizes up to %s B checked, ranks on node0 "
         "and node1" % (mpi, prog, len(sizes), max([n for n, _ in sizes] or [0])),
         diag(rc, out, err))


def main():
    def body():
        check_pkgs()
        check_rsh()
        check_rxe()
        check_iperf3()
        check_mpi()
    return tap_cluster_main(T, CLUSTER, 2, body)


if __name__ == "__main__":
    sys.exit(main())
