#!/usr/bin/python3
"""Guest test group eth-rdma: Debian's unmodified RDMA stack and MPI over
nvm0, the Ethernet interface over the NIC (docs/ethernet.md, "Soft-RoCE and
MPI over nvm0"), on 2 VMs back to back.

  - nvm0 up as 10.16.0.N+1 on both nodes (IPv6 off: a quiet interface);
    netvm-pkgs (docs/packages.md)
  - soft RoCE on nvm0: modprobe rdma_rxe, rdma link add rxe0 type rxe
    netdev nvm0; `rdma link show` says so exactly, ibv_devinfo lists rxe0
    with its port active; the RoCE v2 GID of nvm0's IPv4 address found in
    /sys/class/infiniband/rxe0/ports/1/gids and gid_attrs/types
  - between the nodes over rxe0: ibv_rc_pingpong --chk, rping -V (every
    buffer verified), perftest's ib_write_lat, ib_write_bw, ib_read_lat,
    ib_send_lat: both sides exit 0 (their figures are printed as TAP
    comments, not judged)
  - libfabric's verbs provider under ofi_rxm over rxe0: rxe0's max_cqe
    too small for ofi_rxm's default completion queue (fi_pingpong's
    fi_enable fails with -FI_EINVAL, exit 22) and large enough for
    FI_UNIVERSE_SIZE=64, with which fi_pingpong -e rdm -c (every buffer
    filled and checked) moves 50 x 64 KiB each way, both sides exit 0
  - ./netvm mpirun --net nvm0: an mpi4py ring, every message checked by its
    receiver; nvm0's packet and byte counters grew by at least the
    messages, the data NIC's bytes by less than them
  - eth_apps.py: ssh (Debian's dropbear and dbclient, keys made in the
    guests) copies 4 MiB each way, sha256 checked, a stranger's key and an
    unknown host key refused; ping to the broadcast address answered;
    iperf3 TCP and UDP both ways (exactly 10 MiB sent; UDP's received and
    lost datagrams add up); Debian's ethtool -i / -S of nvm0

TAP output; the cluster 't-guest-eth-rdma' is always torn down.
Environment: NETVM, NETVM_TEST_BOOT_TIMEOUT.
"""
import re
import sys
import types

import eth_apps
from guestlib import Tap, diag, run_netvm, run_parallel, tap_cluster_main, tcp_listening, wait_guest

T = Tap()
CLUSTER = "t-guest-eth-rdma"
NET = "10.16.0."


def ip(n):
    return "%s%d" % (NET, n + 1)


def nv(*args, timeout=300):
    return run_netvm(CLUSTER, args, timeout)


def sh(node, script, timeout=300):
    return nv("run", node, "--", "sh", "-c", script, timeout=timeout)


def both(fn):
    return run_parallel(fn, {0: (0,), 1: (1,)})


def setup():
    res = both(lambda n: sh(n, "netvm-pkgs && echo 1 > /proc/sys/net/ipv6/conf/nvm0/disable_ipv6 && "
                               "ip addr add %s/24 dev nvm0 && ip link set nvm0 up" % ip(n)))
    for n in (0, 1):
        T.ok(res[n][0] == 0, "node %d: netvm-pkgs, nvm0 up as %s" % (n, ip(n)), diag(*res[n]))
    for n in (0, 1):
        T.ok(wait_guest(sh, n, "grep -qx 1 /sys/class/net/nvm0/carrier"), "node %d: nvm0 carrier on" % n)
    rc, out, err = sh(0, "ping -c 2 -W 5 %s" % ip(1), timeout=60)
    T.ok(rc == 0 and "2 packets received" in out, "ping node 0 -> node 1 over nvm0",
         diag(rc, out, err))


# The index of rxe0's RoCE v2 GID for the address $1 (an IPv4-mapped GID).
GID_INDEX = r"""
want=$(printf '0000:0000:0000:0000:0000:ffff:%%02x%%02x:%%02x%%02x' $(echo %s | tr . ' '))
for f in /sys/class/infiniband/rxe0/ports/1/gids/*; do
	i=${f##*/}
	[ "$(cat $f)" = "$want" ] || continue
	[ "$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$i)" = "RoCE v2" ] &&
		[ "$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/$i)" = nvm0 ] &&
		{ echo $i; exit 0; }
done
exit 1
"""


def rxe():
    res = both(lambda n: sh(n, "modprobe rdma_rxe && rdma link add rxe0 type rxe netdev nvm0 && "
                               "rdma link show && ibv_devinfo -d rxe0"))
    for n in (0, 1):
        rc, out, err = res[n]
        lines = out.splitlines()
        T.ok(rc == 0 and "link rxe0/1 state ACTIVE physical_state LINK_UP netdev nvm0" in
             [l.strip() for l in lines],
             "node %d: rdma link add rxe0 type rxe netdev nvm0; rdma link show: rxe0/1 ACTIVE on nvm0"
             % n, diag(rc, out, err))
        T.ok(rc == 0 and re.search(r"^hca_id:\s+rxe0$", out, re.M) and
             re.search(r"^\s+state:\s+PORT_ACTIVE \(4\)$", out, re.M) and
             re.search(r"^\s+link_layer:\s+Ethernet$", out, re.M),
             "node %d: ibv_devinfo -d rxe0: port 1 PORT_ACTIVE, link layer Ethernet" % n,
             diag(rc, out, err))
        m = re.search(r"active_mtu:\s+(\S+)", out)
        T.note("node %d: rxe0 active_mtu %s" % (n, m.group(1) if m else "?"))
    gids = {}
    for n in (0, 1):
        rc, out, err = sh(n, GID_INDEX % ip(n))
        gids[n] = out.strip()
        T.ok(rc == 0 and gids[n].isdigit(), "node %d: rxe0's RoCE v2 GID for %s on nvm0 is index %s"
             % (n, ip(n), gids[n]), diag(rc, out, err))
    return gids if all(g.isdigit() for g in gids.values()) else None


def both_sides(server, client, ready, timeout=300):
    """SERVER (argv, perhaps behind `env NAME=VALUE`) on node 1 and, once
    READY (a shell condition) holds there, CLIENT (argv) on node 0 ->
    {"s": server's (exit, out, err), "c": client's}."""
    res = {}

    def srv():
        res["s"] = nv("run", 1, "--", *server, timeout=timeout)

    def cli():
        if wait_guest(sh, 1, ready):
            res["c"] = nv("run", 0, "--", *client, timeout=timeout)
        else:
            res["c"] = (-1, "", "the server never got ready (%s)" % ready)
            nv("run", 1, "--", "killall", next(a for a in server if a != "env" and "=" not in a))
    run_parallel(lambda f: f(), {"s": (srv,), "c": (cli,)})
    return res


def pair(server, client, ready, what, timeout=300):
    """both_sides(); both must exit 0.  Returns their outputs (or None)."""
    res = both_sides(server, client, ready, timeout)
    ok = res["s"][0] == 0 and res["c"][0] == 0
    T.ok(ok, what, "server: " + diag(*res["s"], tail=3000) + "\nclient: " + diag(*res["c"], tail=3000))
    return res if ok else None


def verbs(gids):
    pp = ["ibv_rc_pingpong", "-d", "rxe0", "-i", "1", "-n", "200", "-s", "4096", "-c"]
    res = pair(pp + ["-g", gids[1]], pp + ["-g", gids[0], ip(1)], tcp_listening(18515),
               "ibv_rc_pingpong -d rxe0 --chk over nvm0, 200 x 4096 B: both exit 0")
    if res:
        # both directions: 2 x 200 x 4096 bytes
        T.ok(all("1638400 bytes in" in res[k][1] and "200 iters in" in res[k][1] for k in "sc"),
             "ibv_rc_pingpong: 200 iterations, 1638400 bytes on both sides", diag(*res["c"]))

    # rping's server is an RDMA CM listener, not a TCP socket: rdma's
    # resource view shows it
    rp = ["-a", ip(1), "-C", "20", "-S", "4096", "-V", "-v"]
    res = pair(["rping", "-s"] + rp, ["rping", "-c"] + rp,
               "rdma resource show cm_id | grep -q LISTEN",
               "rping -C 20 -S 4096 -V over rxe0 (every buffer verified): both exit 0")
    if res:
        pings = [l for l in res["c"][1].splitlines() if l.startswith("ping data: ")]
        T.ok(len(pings) == 20, "rping: the client saw 20 verified pings", diag(*res["c"]))

    for prog in ("ib_write_lat", "ib_write_bw", "ib_read_lat", "ib_send_lat"):
        args = ["-d", "rxe0", "-n", "200", "-F"]
        res = pair([prog] + args + ["-x", gids[1]], [prog] + args + ["-x", gids[0], ip(1)],
                   tcp_listening(18515), "%s -d rxe0 -n 200 over nvm0: both exit 0" % prog)
        if res:
            table = [l for l in res["c"][1].splitlines()
                     if re.match(r"^\s*#bytes|^\s*\d+\s+\d+\s+\d", l)]
            T.note("%s (client, node 0):\n%s" % (prog, "\n".join(table)))


# ofi_rxm on verbs opens one completion queue of (FI_OFI_RXM_MSG_TX_SIZE +
# FI_OFI_RXM_MSG_RX_SIZE) x FI_UNIVERSE_SIZE entries, by default (128 + 128)
# x 256 (fi_rxm(7)): more than rxe's max_cqe, so ibv_create_cq fails and
# with it fi_enable.  A universe of 64 (what ./netvm bench --fi sets) fits.
RXM_MSG_QUEUES, UNIVERSE_DEFAULT, UNIVERSE = 128 + 128, 256, 64
FI_PINGPONG_PORT = 47592    # its control connection's


def fabric():
    """libfabric's verbs provider under ofi_rxm (FI_EP_RDM) on rxe0:
    fi_pingpong -c fills every buffer before it goes and checks it after
    it came, on both sides."""
    rc, out, err = sh(0, "ibv_devinfo -v -d rxe0")
    m = re.search(r"^\s*max_cqe:\s+(\d+)$", out, re.M)
    cqe = int(m.group(1)) if rc == 0 and m else None
    T.ok(cqe is not None and RXM_MSG_QUEUES * UNIVERSE <= cqe < RXM_MSG_QUEUES * UNIVERSE_DEFAULT,
         "rxe0's max_cqe (%s) holds ofi_rxm's completion queue for %d peers (%d entries), not "
         "for its default %d (%d)" % (cqe, UNIVERSE, RXM_MSG_QUEUES * UNIVERSE, UNIVERSE_DEFAULT,
                                      RXM_MSG_QUEUES * UNIVERSE_DEFAULT), diag(rc, out, err, 2000))
    pp = ["fi_pingpong", "-p", "verbs;ofi_rxm", "-e", "rdm", "-c", "-S", "65536", "-I", "50"]
    res = both_sides(pp, pp + [ip(1)], tcp_listening(FI_PINGPONG_PORT))
    s_rc, s_out, s_err = res["s"]
    T.ok(s_rc == 22 and "fi_enable(): " in s_out + s_err and
         "ret=-22 (Invalid argument)" in s_out + s_err and res["c"][0] != 0,
         "fi_pingpong -p 'verbs;ofi_rxm' -e rdm with FI_UNIVERSE_SIZE unset: the server's "
         "fi_enable fails with -FI_EINVAL (exit 22), the client fails too",
         "server: " + diag(*res["s"], tail=2000) + "\nclient: " + diag(*res["c"], tail=2000))
    env = ["env", "FI_UNIVERSE_SIZE=%d" % UNIVERSE]
    res = pair(env + pp, env + pp + [ip(1)], tcp_listening(FI_PINGPONG_PORT),
               "FI_UNIVERSE_SIZE=%d fi_pingpong -p 'verbs;ofi_rxm' -e rdm -c -S 65536 -I 50 "
               "over rxe0: both exit 0" % UNIVERSE)
    if res:
        line = re.compile(r"^64k\s+50\s+=50\s", re.M)
        T.ok(all(line.search(res[k][1]) and "Error" not in res[k][1] + res[k][2] for k in "sc"),
             "fi_pingpong: 50 of 50 64 KiB messages each way, checked, on both sides",
             "server: " + diag(*res["s"]) + "\nclient: " + diag(*res["c"]))


RING = r"""
from mpi4py import MPI
c = MPI.COMM_WORLD
r, s = c.rank, c.size
N, L = %d, %d
bad = 0
for i in range(N):
    got = c.sendrecv(bytes([(r * 7 + i) & 255]) * L, dest=(r + 1) %% s, source=(r - 1) %% s)
    bad += got != bytes([(((r - 1) %% s) * 7 + i) & 255]) * L
print('rank %%d on %%s: %%d of %%d messages of %%d B checked, %%d bad'
      %% (r, MPI.Get_processor_name(), N, N, L, bad))
"""


def counters(node, iface):
    rc, out, err = sh(node, "cat /sys/class/net/%s/statistics/tx_packets "
                            "/sys/class/net/%s/statistics/rx_packets "
                            "/sys/class/net/%s/statistics/tx_bytes "
                            "/sys/class/net/%s/statistics/rx_bytes" % ((iface,) * 4))
    v = [int(x) for x in out.split()] if rc == 0 else []
    return dict(zip(("tx_packets", "rx_packets", "tx_bytes", "rx_bytes"), v)) if len(v) == 4 else None


def mpi():
    count, size = 200, 65536
    rc, out, err = sh(0, "cat /run/netvm-pkgs.done")
    data = out.strip()
    before = dict((n, (counters(n, "nvm0"), counters(n, data))) for n in (0, 1))
    rc, out, err = nv("mpirun", "--net", "nvm0", "--timeout", "300", "--",
                      "python3", "-c", RING % (count, size), timeout=400)
    after = dict((n, (counters(n, "nvm0"), counters(n, data))) for n in (0, 1))
    got = sorted(l for l in out.splitlines() if l.startswith("rank "))
    want = ["rank %d on node%d: %d of %d messages of %d B checked, 0 bad" % (n, n, count, count, size)
            for n in (0, 1)]
    T.ok(rc == 0 and got == want, "./netvm mpirun --net nvm0: mpi4py ring, %d x %d B each way, "
         "every message checked" % (count, size), diag(rc, out, err))
    for n in (0, 1):
        try:
            d = [dict((k, after[n][i][k] - before[n][i][k]) for k in after[n][i]) for i in (0, 1)]
        except (TypeError, KeyError):
            d = None
        T.ok(d is not None and d[0]["tx_packets"] >= count and d[0]["rx_packets"] >= count and
             d[0]["tx_bytes"] >= count * size and d[0]["rx_bytes"] >= count * size and
             d[1]["tx_bytes"] < count * size and d[1]["rx_bytes"] < count * size,
             "node %d: the ring went over nvm0 (its tx/rx grew by >= %d packets, >= %d B), "
             "not the data NIC %s (< %d B each way)" % (n, count, count * size, data, count * size),
             "deltas nvm0, %s: %s" % (data, d))
        if d:
            T.note("node %d: nvm0 %s; %s %s" % (n, d[0], data, d[1]))


def apps():
    """ssh, broadcast ping, iperf3 TCP and UDP both ways, Debian's ethtool
    (eth_apps.py, shared with guest-eth4)."""
    g = types.SimpleNamespace(T=T, sh=sh, nv=nv, diag=diag)
    eth_apps.ssh_keys(g, (0, 1))
    eth_apps.ssh_copy(g, 0, 1)
    eth_apps.ssh_copy(g, 1, 0)
    eth_apps.ssh_refused(g, 0, 1)
    eth_apps.ping_broadcast(g, 0, [1])
    for udp in (False, True):
        eth_apps.iperf3(g, 1, 0, udp)
        eth_apps.iperf3(g, 0, 1, udp)
    for n in (0, 1):
        eth_apps.ethtool(g, n)


def main():
    def body():
        setup()
        gids = rxe()
        if gids:
            verbs(gids)
            fabric()
        mpi()
        apps()
    return tap_cluster_main(T, CLUSTER, 2, body)


if __name__ == "__main__":
    sys.exit(main())
