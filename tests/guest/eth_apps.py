"""Debian's software over nvm0 (docs/ethernet.md), the checks that
guest-eth-rdma (2 VMs back to back) and guest-eth4 (4 VMs through
netvm-switch) share.  Every function takes `g`: T (Tap), sh(node, script)
and nv(*args) (-> rc, out, err; nv's output may be bytes) and diag.  nvm0
must be up as NET + (node + 1) and netvm-pkgs done on every node.

  - ssh: every node's host key (made by netvm-pkgs in the guest) in the
    others' known_hosts, every root key in the others' authorized_keys;
    a file of random data pushed with Debian's dbclient to dropbear on the
    other node, sha256 checked on the receiver; a key not authorized is
    refused
  - ping to the broadcast address answered by every other node
  - iperf3 TCP and UDP, client and server exit 0, what was asked sent
    (iperf3 may send up to one block more); the server received some and
    no more; UDP: the server's received bytes are its datagrams less the
    lost ones; where UDP datagrams go missing: the sender's nvm0 drops
    none (its queue stops instead: tx_dropped and the socket's
    SndbufErrors unchanged) and every datagram lost was dropped by the
    receiving socket, its buffer full (RcvbufErrors), or, through
    netvm-switch, by the switch's full output queue towards the receiver
    (its qfull counters, ./netvm status): together at least the lost
    count.  The receiver is slower than the sender; back to back no frame
    is lost on the way
  - ethtool -i / -S (Debian's ethtool)
  - ./netvm mpirun --net nvm0 of mpi_check.py on Open MPI and MPICH: every
    rank's line exact (ring, allreduce, the transport settings), nvm0's
    counters grew by at least the ring's bytes on every node, the data
    NIC's by less
"""
import json
import re

import mpi_check
from guestlib import run_parallel, tcp_listening, wait_guest

NET = "10.16.0."


def ip(n):
    return "%s%d" % (NET, n + 1)


def text(x):
    return x.decode(errors="replace") if isinstance(x, bytes) else x


def listening(port, udp=False):
    if udp:   # an unconnected UDP socket: state 07
        return "grep -qi ':%04X 00000000:0000 07 ' /proc/net/udp" % port
    return tcp_listening(port)


def ssh_keys(g, nodes):
    """Hands out the keys: known_hosts and authorized_keys on every node."""
    host, root = {}, {}
    for n in nodes:
        rc, out, err = g.sh(n, "cat /run/netvm-ssh/host.pub /run/netvm-ssh/root.pub")
        lines = out.splitlines()
        ok = rc == 0 and len(lines) == 2 and all(l.startswith("ssh-ed25519 ") for l in lines)
        g.T.ok(ok, "node %d: its own ed25519 host key and root key (made in the guest)" % n,
               g.diag(rc, out, err))
        if ok:
            host[n], root[n] = lines
    g.T.ok(len(set(host.values())) == len(nodes), "every node's host key differs", "%s" % host)
    for n in nodes:
        others = [m for m in nodes if m != n and m in host]
        known = "".join("%s %s\n" % (ip(m), " ".join(host[m].split()[:2])) for m in others)
        auth = "".join(root[m] + "\n" for m in others)
        rc, out, err = g.sh(n, "printf '%%s' '%s' > /root/.ssh/known_hosts && "
                               "printf '%%s' '%s' > /root/.ssh/authorized_keys && "
                               "chmod 600 /root/.ssh/authorized_keys" % (known, auth))
        g.T.ok(rc == 0, "node %d: known_hosts and authorized_keys of the others" % n,
               g.diag(rc, out, err))


def ssh_copy(g, src, dst, mib=4):
    """SRC pushes MIB MiB of random data to DST with dbclient (the host key
    checked against known_hosts: no -y); DST checks the sha256."""
    rc, out, err = g.sh(src, "dd if=/dev/urandom of=/tmp/ssh.src bs=1M count=%d 2>/dev/null && "
                             "sha256sum /tmp/ssh.src" % mib)
    want = out.split()[0] if rc == 0 and out.split() else "none"
    rc2, out2, err2 = g.sh(src, "dbclient -i /root/.ssh/id_dropbear root@%s 'cat > /tmp/ssh.got' "
                                "< /tmp/ssh.src" % ip(dst), timeout=300)
    rc3, out3, err3 = g.sh(dst, "sha256sum /tmp/ssh.got && rm /tmp/ssh.got")
    got = out3.split()[0] if rc3 == 0 and out3.split() else "none"
    g.T.ok(rc == 0 and rc2 == 0 and got == want,
           "ssh (dbclient -> dropbear) node %d -> node %d over nvm0: %d MiB, sha256 equal on node %d"
           % (src, dst, mib, dst), "want %s\n" % want + g.diag(rc2, out2, err2) + "\n" +
           g.diag(rc3, out3, err3))


def ssh_refused(g, src, dst):
    """A key DST does not know is refused, and so is an unknown host key."""
    # dbclient offers ~/.ssh/id_dropbear too: out of the way meanwhile
    rc, out, err = g.sh(src, "rm -f /tmp/stranger && dropbearkey -t ed25519 -f /tmp/stranger "
                             ">/dev/null 2>&1 && mv /root/.ssh/id_dropbear /tmp/idk && "
                             "dbclient -i /tmp/stranger root@%s true </dev/null; rc=$?; "
                             "mv /tmp/idk /root/.ssh/id_dropbear; exit $rc" % ip(dst), timeout=120)
    g.T.ok(rc != 0 and "No auth methods could be used" in err,
           "ssh node %d -> node %d with a key not in authorized_keys: refused" % (src, dst),
           g.diag(rc, out, err))
    # dbclient asks whether to go on; it is told "n".  (With stdin at
    # /dev/null it never returned: dropbear 2022.83 reads the answer, then
    # loops until a newline, which EOF never is; this check passed only
    # when its 120 s timeout killed it, a guest CPU spinning meanwhile.)
    rc, out, err = g.sh(src, "mv /root/.ssh/known_hosts /tmp/kh && "
                             "echo n | dbclient -i /root/.ssh/id_dropbear root@%s true; "
                             "rc=$?; mv /tmp/kh /root/.ssh/known_hosts; exit $rc" % ip(dst),
                        timeout=120)
    g.T.ok(rc == 1 and "Didn't validate host key" in err,
           "ssh node %d -> node %d without its host key in known_hosts (no -y), told "
           "not to go on: refused (exit 1, \"Didn't validate host key\")" % (src, dst),
           g.diag(rc, out, err))


def ping_broadcast(g, src, others):
    """Ping NET.255 from SRC; every other node answers (they are told to
    answer broadcasts).  Asks up to 10 times and gathers who answered."""
    for n in others:
        g.sh(n, "echo 0 > /proc/sys/net/ipv4/icmp_echo_ignore_broadcasts")
    want = set(ip(n) for n in others)
    seen, out, rc, err = set(), "", 0, ""
    for _ in range(10):
        rc, o, err = g.sh(src, "ping -c 3 -W 3 %s255" % NET, timeout=120)
        out += o
        seen |= set(re.findall(r"from (%s\d+):" % re.escape(NET), o))
        if want <= seen:
            break
    g.T.ok(want <= seen, "node %d: ping %s255 (broadcast) answered by node%s %s"
           % (src, NET, "s" if len(others) > 1 else "", ",".join(map(str, others))),
           "want %s\n" % sorted(want) + g.diag(rc, out, err))


def udp_drops(g, n):
    """Node n's UDP SndbufErrors and RcvbufErrors (/proc/net/snmp) and
    nvm0's tx_dropped (and, for the diagnosis, rx_dropped), or None."""
    rc, out, err = g.sh(n, "grep '^Udp:' /proc/net/snmp; cd /sys/class/net/nvm0/statistics && "
                           "cat tx_dropped rx_dropped")
    lines = out.splitlines()
    try:
        udp = dict(zip(lines[0].split()[1:], map(int, lines[1].split()[1:])))
        return {"snd": udp["SndbufErrors"], "rcv": udp["RcvbufErrors"], "tx_dropped": int(lines[2]),
                "rx_dropped": int(lines[3])}
    except (IndexError, KeyError, ValueError):
        return None


def switch_qfull(g):
    """Frames netvm-switch dropped for a full output queue, over all its
    ports (./netvm status: qfull, the next to last column); 0 back to back."""
    rc, out, err = g.nv("status")
    lines = text(out).splitlines()
    heads = [i for i, l in enumerate(lines) if l.split()[:2] == ["port", "label"]]
    if rc != 0 or not heads:
        return 0 if rc == 0 else None
    rows = [l.split() for l in lines[heads[0] + 1:] if len(l.split()) >= 16]
    return sum(int(r[-2]) for r in rows if r[-2].isdigit())


def udp_loss_check(g, srv, cli, before, lost):
    """Where the LOST datagrams of a UDP run went (docs/ethernet.md)."""
    after = [udp_drops(g, cli), udp_drops(g, srv), switch_qfull(g)]
    ok = None not in before + after
    qfull = after[2] - before[2] if ok else None
    d = [dict((k, a[k] - b[k]) for k in a) for a, b in zip(after[:2], before[:2])] if ok else []
    g.T.ok(ok and d[0]["tx_dropped"] == 0 and d[0]["snd"] == 0,
           "UDP node %d -> node %d: the sender dropped nothing (nvm0 tx_dropped, SndbufErrors "
           "unchanged: its queue stopped instead)" % (cli, srv), "deltas %s" % d)
    g.T.ok(ok and d[1]["rcv"] + qfull >= lost,
           "UDP node %d -> node %d: the %d datagrams lost were dropped by the receiving socket, "
           "its buffer full (RcvbufErrors +%s), or by the switch's full output queue (qfull +%s)"
           % (cli, srv, lost, d[1]["rcv"] if ok else "?", qfull), "deltas %s" % d)


def iperf3(g, srv, cli, udp=False, mib=10):
    """iperf3 client on CLI to the server on SRV over nvm0.  Returns the
    client's rate (bit/s) or None."""
    res = {}
    length = 1024   # UDP datagrams: MIB MiB is a whole number of them

    def server():
        res["s"] = g.sh(srv, "iperf3 -s -1 -J", timeout=300)

    def client():
        if wait_guest(g.sh, srv, listening(5201), tries=600):
            opt = "-u -b 100M -l %d" % length if udp else ""
            res["c"] = g.sh(cli, "iperf3 -c %s -n %dM %s -J" % (ip(srv), mib, opt), timeout=300)
        else:
            res["c"] = (-1, "", "iperf3 -s never listened on port 5201")
    before = [udp_drops(g, cli), udp_drops(g, srv), switch_qfull(g)] if udp else None
    run_parallel(lambda f: f(), {"s": (server,), "c": (client,)})
    rc, out, err = res["c"]
    src, ssrc, lost = None, None, None
    try:
        c = json.loads(out)["end"]
        s = json.loads(res["s"][1])["end"]
        # iperf3 -n stops within the write that reaches the count: up to
        # one block more (TCP: 128 KiB, not always whole: seen 10555920 B
        # for 10 MiB; UDP: whole datagrams)
        block = length if udp else 128 << 10
        sent = c["sum_sent"]["bytes"]
        rate = c["sum_sent" if udp else "sum_received"]["bits_per_second"]
        ok = mib << 20 <= sent <= (mib << 20) + block and (not udp or sent % length == 0)
        got = s["sum_received"]["bytes"]
        if udp:
            # the server counts datagrams up to the highest number it saw
            # (the last ones may be lost or late), less those missing
            total, lost = s["sum_received"]["packets"], s["sum_received"]["lost_packets"]
            ok = ok and 0 < total <= sent // length and got == (total - lost) * length and got > 0
            src = "sent %d B; received %d B, %d of %d datagrams lost" % (sent, got, lost, total)
        else:
            ok = ok and 0 < got <= sent
            src = "sent %d B, received %d B" % (sent, got)
    except (ValueError, KeyError, TypeError) as e:
        ok, rate, ssrc = False, None, "unreadable JSON: %s" % e
    ok = ok and rc == 0 and res["s"][0] == 0
    g.T.ok(ok, "iperf3 %s over nvm0, node %d -> node %d: both exit 0, %d MiB sent (at most one "
           "block more; %s)"
           % ("UDP" if udp else "TCP", cli, srv, mib, src or ssrc),
           g.diag(rc, out[-2000:], err) + "\nserver: " + g.diag(*res["s"], tail=2000))
    if udp:
        udp_loss_check(g, srv, cli, before, lost if lost is not None else 1 << 30)
    if rate:
        g.T.note("iperf3 %s node %d -> node %d over nvm0: %.1f Mbit/s"
                 % ("UDP" if udp else "TCP", cli, srv, rate / 1e6))
    return rate if ok else None


def ethtool(g, n):
    """Debian's ethtool -i and -S of nvm0, the interface's own counters read
    right after (back to back, every frame is one descriptor)."""
    rc, out, err = g.sh(n, "ethtool -i nvm0 && ethtool -S nvm0 && "
                           "readlink -f $(command -v ethtool) && cat /sys/class/netvm/netvm0/fw_version "
                           "/sys/class/net/nvm0/statistics/tx_packets "
                           "/sys/class/net/nvm0/statistics/rx_packets")
    lines = out.splitlines()
    kv = dict((l.partition(":")[0].strip(), l.partition(":")[2].strip()) for l in lines if ":" in l)
    tail = [l.strip() for l in lines[-4:]] if len(lines) >= 4 else ["", "0", "0", "0"]
    ver = int(tail[1], 16) if tail[1].startswith("0x") else -1
    want_fw = "%d.%d.%d" % (ver >> 16, (ver >> 8) & 0xff, ver & 0xff)
    # Debian's (the disk has it in /usr/sbin; the guest's /usr is merged into /)
    g.T.ok(rc == 0 and tail[0] in ("/sbin/ethtool", "/usr/sbin/ethtool") and
           kv.get("driver") == "netvm" and kv.get("firmware-version") == want_fw and kv.get("bus-info", "").startswith("0000:"),
           "node %d: Debian's ethtool -i nvm0: driver netvm, firmware %s, a PCI bus address"
           % (n, want_fw), g.diag(rc, out, err))
    g.T.ok(kv.get("fw_eth_tx") == tail[2] and kv.get("fw_eth_rx") == tail[3] and
           kv.get("tx_no_route") == "0" and kv.get("rx_no_skb") == "0",
           "node %d: Debian's ethtool -S nvm0: firmware eth_tx = tx_packets (%s), eth_rx = "
           "rx_packets (%s)" % (n, tail[2], tail[3]), g.diag(rc, out, err))


def counters(g, node, iface):
    rc, out, err = g.sh(node, "cd /sys/class/net/%s/statistics && cat tx_packets rx_packets "
                              "tx_bytes rx_bytes" % iface)
    v = [int(x) for x in out.split()] if rc == 0 else []
    return dict(zip(("tx_packets", "rx_packets", "tx_bytes", "rx_bytes"), v)) if len(v) == 4 else None


def mpi(g, nodes, impl, n=100, length=65536, k=4096):
    """./netvm mpirun --mpi IMPL --net nvm0 of mpi_check's ring and allreduce."""
    rc, out, err = g.sh(0, "cat /run/netvm-pkgs.done")
    data = out.strip()

    def snap():
        return dict((m, (counters(g, m, "nvm0"), counters(g, m, data))) for m in nodes)
    before = snap()
    rc, out, err = g.nv("mpirun", "--mpi", impl, "--net", "nvm0", "--timeout", "400", "--",
                        "python3", "-c", mpi_check.PROGRAM, impl, str(n), str(length), str(k),
                        timeout=500)
    out, err = text(out), text(err)
    after = snap()
    got = sorted(l for l in out.splitlines() if l.startswith("rank "))
    want = [mpi_check.line(r, len(nodes), r, n, length, k, impl, "nvm0") for r in nodes]
    g.T.ok(rc == 0 and got == want,
           "./netvm mpirun --mpi %s --net nvm0 on %d nodes: ring (%d x %d B) and allreduce (%d "
           "longs) exact on every rank, transport %s" % (impl, len(nodes), n, length, k,
                                                          mpi_check.transport(impl, "nvm0")),
           g.diag(rc, out, err, tail=3000) + "\nwant %s" % want)
    for m in nodes:
        try:
            d = [dict((key, after[m][i][key] - before[m][i][key]) for key in after[m][i])
                 for i in (0, 1)]
        except (TypeError, KeyError):
            d = None
        T = n * length
        g.T.ok(d is not None and d[0]["tx_bytes"] >= T and d[0]["rx_bytes"] >= T and
               d[1]["tx_bytes"] < T and d[1]["rx_bytes"] < T,
               "%s, node %d: the traffic went over nvm0 (tx and rx grew by >= %d B), not the data "
               "NIC %s (< %d B each way)" % (impl, m, T, data, T),
               "deltas nvm0, %s: %s" % (data, d))
        if d:
            g.T.note("%s node %d: nvm0 %s; %s %s" % (impl, m, d[0], data, d[1]))
