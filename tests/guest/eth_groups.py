"""Guest groups for the Ethernet interface nvm0 (docs/ethernet.md), run by
run-guest-tests.py (which passes its helpers in `g`).  Only what the image
has: busybox's ip, ping, ping6, arping, httpd, wget and sha256sum.

  eth   2 VMs back to back:
        - nvm0 on both: MAC 02:4e:56:4d:00:0N from the node id, MTU 4210,
          bound to netvm; carrier on once up;
        - IPv4: ping both ways (ARP's broadcast request answered), arping
          with broadcast requests only;
        - ethtool -i / -S (netvm-ethtool, the same requests): driver netvm,
          the firmware's version, the firmware's eth_tx/eth_rx counters;
        - ip -s link counters exact: with permanent neighbours and IPv6
          off nothing else moves, so 20 pings of 1000 B are 20 packets and
          20 x 1042 bytes on each side's tx and the other's rx;
        - TCP: 8 MiB of random data each way (httpd + wget), sha256 equal,
          again at MTU 1500 (settable lower);
        - IPv6: all-nodes multicast ping answered by the peer, and its
          link-local address (neighbour discovery);
        - sharing the link: node 0 sends NetVM writes to node 1 without
          pause (netvm-bench write_bw, over and over) and 4 MiB over TCP on
          nvm0 at the same time: the transfer completes intact while the
          NetVM writes still run, and NetVM's bytes grew while it ran
          (neither starves the other; the shares are printed);
        - both VMs saved and restored (./netvm save, restore) in the middle
          of a 64 MiB TCP transfer: it completes, sha256 equal;
        - ./netvm reload-driver: nvm0 back with the same MAC, ping works.

  eth4  4 VMs through netvm-switch, routes from the mapper:
        - ping from node 0 to every other node along its route;
        - all-nodes multicast (ff02::1) answered by all three others;
        - node 3 leaves (switch port down, re-map): node 0's frames to it
          are refused (tx_no_route); nodes 1 and 2 leave too: node 0 has
          no route and its carrier goes off; all back and re-mapped:
          carrier on, node 3 answers;
        - faults on every switch port (drop, dup, reorder, corrupt 2 %):
          8 MiB over TCP arrive intact (sha256), nvm0's rx_errors count
          no corrupt frame (the NIC's CRC drops them first);
        - Debian's software over nvm0 (eth_apps.py): ssh (dropbear) copies
          from node 0 to each other node and back from node 3, sha256
          checked; ping to the broadcast address answered by all three;
          iperf3 TCP and UDP both ways between nodes 0 and 3; an MPI ring
          and allreduce (mpi_check.py) on the 4 nodes with Open MPI and
          with MPICH through ./netvm mpirun --net nvm0, every rank's result
          and transport settings exact, nvm0's counters carrying it: that
          part is the group eth4-mpi, on a cluster of its own (its ranks
          spin on every vCPU, so it runs alone while eth4 shares the
          machine).
"""
import json
import re

import eth_apps
from guestlib import run_parallel

NET = "10.16.0."
MTU_MAX = 4210


def mac(n):
    return "02:4e:56:4d:%02x:%02x" % (n >> 8, n & 0xff)


def ll6(n):
    """The link-local address the kernel derives from mac(n) (EUI-64)."""
    return "fe80::4e:56ff:fe4d:%x" % n


def stats(g, n):
    rc, out, err = g.sh(n, "cd /sys/class/net/nvm0/statistics && "
                           "for f in *; do echo $f $(cat $f); done")
    return dict((l.split()[0], int(l.split()[1])) for l in out.splitlines()
                if len(l.split()) == 2 and l.split()[1].isdigit())


def wait_guest(g, n, cond, what, tries=300):
    """Polls a shell condition in node n (0.1 s apart, bounded)."""
    rc, out, err = g.sh(n, "for i in $(seq %d); do (%s) >/dev/null 2>&1 && exit 0; "
                           "sleep 0.1; done; exit 1" % (tries, cond), timeout=tries // 10 + 60)
    return g.T.ok(rc == 0, "node %d: %s" % (n, what), g.diag(rc, out, err))


def identity(g, nodes):
    for n in nodes:
        rc, out, err = g.sh(n, "cat /sys/class/net/nvm0/address /sys/class/net/nvm0/mtu; "
                               "basename $(readlink /sys/class/net/nvm0/device/driver)")
        g.T.ok(rc == 0 and out.split() == [mac(n), str(MTU_MAX), "netvm"],
               "node %d: nvm0 has MAC %s, MTU %d, driver netvm" % (n, mac(n), MTU_MAX),
               g.diag(rc, out, err))


def bring_up(g, nodes, ipv6):
    for n in nodes:
        rc, out, err = g.sh(n, "echo %d > /proc/sys/net/ipv6/conf/nvm0/disable_ipv6 && "
                               "ip addr add %s%d/24 dev nvm0 && ip link set nvm0 up"
                            % (0 if ipv6 else 1, NET, n + 1))
        g.T.ok(rc == 0, "node %d: nvm0 up as %s%d" % (n, NET, n + 1), g.diag(rc, out, err))
    for n in nodes:
        wait_guest(g, n, "grep -qx 1 /sys/class/net/nvm0/carrier", "carrier on")


def ping(g, src, dst, count=3, what=None):
    rc, out, err = g.sh(src, "ping -c %d -W 5 %s%d" % (count, NET, dst + 1), timeout=120)
    return g.T.ok(rc == 0 and ("%d packets received" % count) in out,
                  what or "ping node %d -> node %d: %d of %d answered" % (src, dst, count, count),
                  g.diag(rc, out, err))


def transfer(g, src, dst, mib, what):
    """dst fetches MIB MiB of random data from src over TCP; sha256 equal."""
    rc, out, err = g.sh(src, "mkdir -p /tmp/www && dd if=/dev/urandom of=/tmp/www/f bs=1M count=%d "
                             "2>/dev/null && (pidof httpd >/dev/null || httpd -p 8080 -h /tmp/www) && "
                             "sha256sum /tmp/www/f" % mib)
    want = out.split()[0] if rc == 0 and out.split() else "none"
    rc2, out2, err2 = g.sh(dst, "rm -f /tmp/got && wget -q -O /tmp/got http://%s%d:8080/f && "
                                "sha256sum /tmp/got" % (NET, src + 1), timeout=600)
    got = out2.split()[0] if rc2 == 0 and out2.split() else "none"
    g.T.ok(rc == 0 and rc2 == 0 and got == want,
           "%s: %d MiB node %d -> node %d over TCP, sha256 equal" % (what, mib, src, dst),
           "server: " + g.diag(rc, out, err) + "\nclient: " + g.diag(rc2, out2, err2))


def exact_counters(g):
    for n, peer in ((0, 1), (1, 0)):
        rc, out, err = g.sh(n, "arp -i nvm0 -s %s%d %s && ip neigh show %s%d dev nvm0"
                            % (NET, peer + 1, mac(peer), NET, peer + 1))
        g.T.ok(rc == 0 and "PERMANENT" in out, "node %d: permanent neighbour for node %d" % (n, peer),
               g.diag(rc, out, err))
    before = [stats(g, 0), stats(g, 1)]
    count, size = 20, 1000
    rc, out, err = g.sh(0, "ping -A -q -c %d -s %d %s2" % (count, size, NET), timeout=120)
    g.T.ok(rc == 0 and ("%d packets received" % count) in out,
           "%d pings of %d bytes answered" % (count, size), g.diag(rc, out, err))
    after = [stats(g, 0), stats(g, 1)]
    frame = size + 8 + 20 + 14      # ICMP, IPv4, Ethernet headers
    d = [dict((k, after[i][k] - before[i].get(k, 0)) for k in after[i]) for i in (0, 1)]
    for n in (0, 1):
        peer = 1 - n
        g.T.ok(d[n]["tx_packets"] == count and d[n]["tx_bytes"] == count * frame and
               d[peer]["rx_packets"] == count and d[peer]["rx_bytes"] == count * frame,
               "counters exact: node %d tx = node %d rx = %d packets, %d bytes"
               % (n, peer, count, count * frame), "deltas: %s" % d)
    for n in (0, 1):
        bad = dict((k, after[n][k]) for k in ("rx_errors", "tx_errors", "rx_dropped",
                                              "tx_dropped", "rx_length_errors"))
        g.T.ok(not any(bad.values()), "node %d: no errors or drops counted" % n, "%s" % bad)


def ethtool(g, n):
    """ethtool -i and -S of nvm0 (netvm-ethtool: the same SIOCETHTOOL
    requests), with the interface's own counters read right after."""
    rc, out, err = g.sh(n, "netvm-ethtool nvm0 && cat /sys/class/netvm/netvm0/fw_version "
                           "/sys/class/net/nvm0/statistics/tx_packets "
                           "/sys/class/net/nvm0/statistics/rx_packets")
    lines = out.splitlines()
    kv = dict(l.strip().split(": ", 1) for l in lines if ": " in l)
    tail = [l.strip() for l in lines[-3:]] if len(lines) >= 3 else ["0", "0", "0"]
    ver = int(tail[0], 16) if tail[0].startswith("0x") else -1
    want_fw = "%d.%d.%d" % (ver >> 16, (ver >> 8) & 0xff, ver & 0xff)
    g.T.ok(rc == 0 and kv.get("driver") == "netvm" and kv.get("firmware-version") == want_fw and
           kv.get("bus-info", "").startswith("0000:"),
           "node %d: ethtool -i: driver netvm, firmware %s, a PCI bus address" % (n, want_fw),
           g.diag(rc, out, err))
    # quiet interface (IPv6 off, permanent neighbours), every frame one
    # descriptor back to back: the NIC's counts are the interface's
    g.T.ok(kv.get("fw_eth_tx") == tail[1] and kv.get("fw_eth_rx") == tail[2] and
           kv.get("tx_no_route") == "0" and kv.get("rx_no_skb") == "0",
           "node %d: ethtool -S: firmware eth_tx = tx_packets (%s), eth_rx = rx_packets (%s)"
           % (n, tail[1], tail[2]), g.diag(rc, out, err))


def multicast6(g, src, others):
    # ping stops at its count of replies, its own (loopback) first among
    # them, so a slow node's answer may come after it: ask up to 10 times
    # and gather who answered
    want = set(ll6(n) for n in others)
    seen, out, rc, err = set(), "", 0, ""
    for _ in range(10):
        rc, o, err = g.sh(src, "ping6 -c 3 -W 3 -I nvm0 ff02::1", timeout=120)
        out += o
        seen |= set(re.findall(r"from (fe80::[0-9a-f:]+):", o))
        if want <= seen:
            break
    g.T.ok(want <= seen, "node %d: ff02::1 (all nodes) answered by node%s %s"
           % (src, "s" if len(others) > 1 else "", ",".join(map(str, others))),
           "want %s\n" % sorted(want) + g.diag(rc, out, err))


def wait_dad(g, nodes):
    for n in nodes:
        wait_guest(g, n, "ip -6 addr show dev nvm0 | grep -q 'inet6 fe80' && "
                         "! ip -6 addr show dev nvm0 | grep -q tentative",
                   "IPv6 link-local address ready (DAD done)")


def fw_tx_bytes(g, n):
    """NetVM's and U-Net's bytes sent by node n's firmware (Ethernet has its
    own counters)."""
    rc, out, err = g.sh(n, "cat /sys/class/netvm/netvm0/fw_counters")
    m = re.search(r"^tx_bytes (\d+)$", out, re.M)
    return int(m.group(1)) if rc == 0 and m else -1


def share_link(g):
    """Heavy NetVM traffic and a TCP transfer over nvm0 from node 0 at once;
    each must get service (counts, not times)."""
    g.sh(1, "rm -f /tmp/nv.stop; setsid sh -c 'echo $$ > /tmp/nv.srv; while [ ! -f /tmp/nv.stop ]; do "
            "netvm-bench server -t 60 >/dev/null 2>&1; done' >/dev/null 2>&1 </dev/null &")
    g.sh(0, "rm -f /tmp/nv.stop /tmp/nv.csv /tmp/nv.runs; setsid sh -c 'n=0; "
            "while [ ! -f /tmp/nv.stop ]; do netvm-bench client -P netvm -T write_bw -s 65536 "
            "-b 4194304 %s2 >> /tmp/nv.csv 2>&1 && n=$((n + 1)) && echo $n > /tmp/nv.runs; "
            "sleep 0.1; done' >/dev/null 2>&1 </dev/null &" % NET)
    # NetVM flowing: a first run done (the loop keeps going)
    wait_guest(g, 0, "test -s /tmp/nv.runs", "NetVM writes flowing (a first write_bw run done)",
               tries=1200)
    nv0, eth0 = fw_tx_bytes(g, 0), stats(g, 0)["tx_bytes"]
    transfer(g, 0, 1, 4, "beside NetVM writes")
    nv1, eth1 = fw_tx_bytes(g, 0), stats(g, 0)["tx_bytes"]
    # the loop may be between two runs at this instant (its sleep, the
    # server restarting): wait for a run that ends after the transfer did
    rc, out, err = g.sh(0, "cat /tmp/nv.runs")
    runs = int(out.strip()) if rc == 0 and out.strip().isdigit() else -1
    rc, out, err = g.sh(0, "for i in $(seq 1200); do test $(cat /tmp/nv.runs) -gt %d && break; "
                           "sleep 0.1; done; cat /tmp/nv.runs" % runs, timeout=300)
    after = int(out.strip()) if rc == 0 and out.strip().isdigit() else -1
    g.T.ok(runs > 0 and after > runs,
           "the NetVM writes went on after the TCP transfer ended (run %d done, then run %d)"
           % (runs, after), g.diag(rc, out, err))
    eth, nv = eth1 - eth0, nv1 - nv0
    g.T.ok(nv0 >= 0 and nv > 0 and eth >= 4 << 20,
           "while the transfer ran both got service: NetVM sent %d B, nvm0 %d B "
           "(NetVM's share of node 0's bytes %.0f %%)" % (nv, eth, 100.0 * nv / max(1, nv + eth)),
           "fw tx_bytes %d -> %d, nvm0 tx_bytes %d -> %d" % (nv0, nv1, eth0, eth1))
    g.sh(0, "touch /tmp/nv.stop")
    wait_guest(g, 0, "! pidof netvm-bench", "NetVM writes stopped", tries=1200)
    g.sh(1, "touch /tmp/nv.stop; killall netvm-bench")
    wait_guest(g, 1, "! pidof netvm-bench && ! test -d /proc/$(cat /tmp/nv.srv)",
               "NetVM server loop ended")
    rc, out, err = g.sh(0, "cat /tmp/nv.csv")
    rows = [l.split(",") for l in out.splitlines() if l.startswith("netvm,write_bw,")]
    g.T.ok(rc == 0 and rows and all(r[-1] == "yes" for r in rows),
           "every NetVM write_bw run verified its data (%d runs)" % len(rows), g.diag(rc, out, err))


def save_restore(g):
    """8 .. 64 MiB over TCP with both VMs saved and restored mid-transfer."""
    mib = 64
    rc, out, err = g.sh(1, "killall httpd; mkdir -p /tmp/www && dd if=/dev/urandom of=/tmp/www/big "
                           "bs=1M count=%d 2>/dev/null && httpd -p 8080 -h /tmp/www && "
                           "sha256sum /tmp/www/big" % mib, timeout=300)
    want = out.split()[0] if rc == 0 and out.split() else "none"
    g.sh(0, "rm -f /tmp/big /tmp/big.done; setsid sh -c 'wget -q -O /tmp/big http://%s2:8080/big "
            "&& sha256sum /tmp/big > /tmp/big.sum; echo exit $? > /tmp/big.done' "
            ">/dev/null 2>&1 </dev/null &" % NET)
    rc, out, err = g.sh(0, "for i in $(seq 600); do s=$(stat -c %%s /tmp/big 2>/dev/null || echo 0); "
                           "[ $s -ge %d ] && break; sleep 0.1; done; stat -c %%s /tmp/big; "
                           "if test -f /tmp/big.done; then echo finished; fi" % (8 << 20), timeout=120)
    got = int(out.split()[0]) if rc == 0 and out.split() and out.split()[0].isdigit() else -1
    g.T.ok((8 << 20) <= got < (mib << 20) and "finished" not in out,
           "the save happens mid-transfer (%d of %d MiB received)" % (got >> 20, mib),
           g.diag(rc, out, err))
    rc, out, err = g.nv("save", "--order", "0,1", timeout=300)
    if not g.T.ok(rc == 0, "save both VMs mid-transfer", g.diag(rc, out, err)):
        return
    rc, out, err = g.nv("restore", timeout=300)
    if not g.T.ok(rc == 0, "restore both VMs into new QEMU processes", g.diag(rc, out, err)):
        return
    rc, out, err = g.sh(0, "for i in $(seq 1800); do test -f /tmp/big.done && break; sleep 0.1; done; "
                           "cat /tmp/big.done /tmp/big.sum", timeout=300)
    g.T.ok(rc == 0 and "exit 0" in out and want in out,
           "the TCP transfer saved mid-way completes: %d MiB, sha256 equal" % mib,
           "want %s\n" % want + g.diag(rc, out, err))
    for n in (0, 1):
        st = stats(g, n)
        g.T.ok(st.get("rx_errors") == 0 and st.get("rx_dropped") == 0,
               "node %d: no receive errors or drops across the save" % n, "%s" % st)


def group_eth(g):
    identity(g, (0, 1))
    bring_up(g, (0, 1), ipv6=False)
    ping(g, 0, 1)
    ping(g, 1, 0)
    rc, out, err = g.sh(0, "ip neigh show %s2 dev nvm0" % NET)
    g.T.ok(rc == 0 and mac(1) in out, "node 0: ARP resolved node 1 to %s" % mac(1),
           g.diag(rc, out, err))
    rc, out, err = g.sh(0, "arping -b -c 2 -w 10 -I nvm0 %s2" % NET, timeout=60)
    g.T.ok(rc == 0 and "Received 2 response" in out,
           "arping, broadcast requests only (-b): answered twice",
           g.diag(rc, out, err))
    exact_counters(g)
    for n in (0, 1):
        ethtool(g, n)
    transfer(g, 1, 0, 8, "MTU %d" % MTU_MAX)
    transfer(g, 0, 1, 8, "MTU %d" % MTU_MAX)
    for n in (0, 1):
        rc, out, err = g.sh(n, "ip link set nvm0 mtu 1500 && cat /sys/class/net/nvm0/mtu")
        g.T.ok(rc == 0 and out.strip() == "1500", "node %d: MTU set to 1500" % n,
               g.diag(rc, out, err))
    rc, out, err = g.sh(0, "ip link set nvm0 mtu %d" % (MTU_MAX + 1))
    g.T.ok(rc != 0, "MTU %d refused (above one frame)" % (MTU_MAX + 1), g.diag(rc, out, err))
    g.sh(1, "killall httpd")
    transfer(g, 1, 0, 4, "MTU 1500")
    share_link(g)

    for n in (0, 1):
        g.sh(n, "echo 0 > /proc/sys/net/ipv6/conf/nvm0/disable_ipv6")
    wait_dad(g, (0, 1))
    multicast6(g, 0, [1])
    rc, out, err = g.sh(0, "ping6 -c 2 -W 5 %s%%nvm0" % ll6(1), timeout=60)
    g.T.ok(rc == 0 and "2 packets received" in out,
           "ping6 node 1's link-local address (neighbour discovery)", g.diag(rc, out, err))

    save_restore(g)

    rc, out, err = g.nv("reload-driver", timeout=300)
    g.T.ok(rc == 0, "reload-driver succeeds on both nodes", g.diag(rc, out, err))
    identity(g, (0, 1))
    bring_up(g, (0, 1), ipv6=False)
    ping(g, 0, 1, what="ping node 0 -> node 1 after the reload")


def ethtool_stats(g, n):
    rc, out, err = g.sh(n, "netvm-ethtool nvm0")
    return dict((l.split(":")[0].strip(), int(l.split(":")[1])) for l in out.splitlines()
                if l.startswith("     ") and l.split(":")[-1].strip().isdigit())


def remap(g, want):
    rc, out, err = g.nv("map", "--json", timeout=120)
    try:
        m = json.loads(out)
    except ValueError:
        m = None
    g.T.ok(rc == 0 and m is not None and m.get("nodes") == want,
           "re-map finds nodes %s" % ",".join(map(str, want)), g.diag(rc, out, err))


def group_eth4(g):
    nodes = (0, 1, 2, 3)
    identity(g, nodes)
    bring_up(g, nodes, ipv6=True)
    for dst in (1, 2, 3):
        ping(g, 0, dst)
    wait_dad(g, nodes)
    multicast6(g, 0, [1, 2, 3])

    # node 3 leaves (its switch port down) and the re-map drops it: frames
    # to it have no route; then nodes 1 and 2 leave too and node 0, with
    # no route at all, loses its carrier; all come back with a re-map
    g.nv("link", "3", "down")
    remap(g, [0, 1, 2])
    before = ethtool_stats(g, 0)
    rc, out, err = g.sh(0, "ping -c 2 -W 2 %s4" % NET, timeout=60)
    after = ethtool_stats(g, 0)
    g.T.ok(rc != 0 and after.get("tx_no_route", 0) > before.get("tx_no_route", 0),
           "node 3 gone: node 0's frames to it are refused (tx_no_route %s -> %s)"
           % (before.get("tx_no_route"), after.get("tx_no_route")), g.diag(rc, out, err))
    ping(g, 0, 1, what="node 0 -> node 1 still answered")
    g.nv("link", "1", "down")
    g.nv("link", "2", "down")
    remap(g, [0])
    wait_guest(g, 0, "grep -qx 0 /sys/class/net/nvm0/carrier", "no route left: carrier off")
    for n in (1, 2, 3):
        g.nv("link", str(n), "up")
    remap(g, [0, 1, 2, 3])
    wait_guest(g, 0, "grep -qx 1 /sys/class/net/nvm0/carrier", "re-mapped: carrier on again")
    ping(g, 0, 3, what="ping node 0 -> node 3 after the re-map")

    before = stats(g, 0)
    rc, out, err = g.nv("fault", "all", "drop=0.02", "dup=0.02", "reorder=0.02", "corrupt=0.02")
    g.T.ok(rc == 0, "faults on every switch port: drop, dup, reorder, corrupt 2 %",
           g.diag(rc, out, err))
    transfer(g, 1, 0, 8, "with faults")
    rc, out, err = g.nv("fault", "all", "clear")
    g.T.ok(rc == 0, "faults cleared", g.diag(rc, out, err))
    after = stats(g, 0)
    g.T.ok(after["rx_errors"] == before["rx_errors"],
           "node 0: no corrupt frame reached the driver (rx_errors unchanged)",
           "before %s\nafter %s" % (before, after))

    # Debian's software over nvm0 through the switch (eth_apps.py)
    res = run_parallel(lambda n: g.sh(n, "netvm-pkgs", timeout=300), dict((n, (n,)) for n in nodes))
    for n in nodes:
        g.T.ok(res[n][0] == 0, "node %d: netvm-pkgs (the package disk, dropbear started)" % n,
               g.diag(*res[n]))
    eth_apps.ssh_keys(g, nodes)
    for dst in (1, 2, 3):
        eth_apps.ssh_copy(g, 0, dst)
    eth_apps.ssh_copy(g, 3, 0)
    eth_apps.ping_broadcast(g, 0, [1, 2, 3])
    for udp in (False, True):
        eth_apps.iperf3(g, 3, 0, udp)
        eth_apps.iperf3(g, 0, 3, udp)


def group_eth4_mpi(g):
    """eth4's MPI jobs on a cluster of their own: their ranks spin on every
    vCPU, so this group runs alone and eth4 shares the machine."""
    nodes = (0, 1, 2, 3)
    identity(g, nodes)
    bring_up(g, nodes, ipv6=False)
    for dst in (1, 2, 3):
        ping(g, 0, dst)
    res = run_parallel(lambda n: g.sh(n, "netvm-pkgs", timeout=300), dict((n, (n,)) for n in nodes))
    for n in nodes:
        g.T.ok(res[n][0] == 0, "node %d: netvm-pkgs (the package disk)" % n, g.diag(*res[n]))
    for impl in ("openmpi", "mpich"):
        eth_apps.mpi(g, nodes, impl)
