"""./netvm bench --eth: the same software over nvm0 (the Ethernet interface
over the NIC, docs/ethernet.md) and over the virtio-net data network
between the same two VMs, in one run (docs/bench.md, "Ethernet").

  - TCP request/response round trips and TCP streaming per message size:
    netvm-bench's tcp_lat and tcp_bw (-P tcp), pointed once at node 1's
    nvm0 address and once at its data address (median and p99 per size)
  - the floor: the same tcp_lat between two processes of node 1 over its
    loopback (8 B and 4 KiB), the guest's TCP stack with no NIC at all
  - iperf3 bulk TCP, 5 s, per-second rates: median and the 1st
    percentile (the rate 99 % of the seconds beat; the lowest of five)
  - perftest over soft RoCE: rxe0 on nvm0 against rxe1 on the data NIC,
    ib_write_lat (typical = median, and its 99 % percentile) and
    ib_write_bw (average) per size

Results under build/bench/: eth.json, eth.csv, and per round R
eth_latency_rR.png and eth_bandwidth_rR.png.  Boots nothing: runs on the
up cluster c (2 nodes).  Each round measures nvm0, then virtio-net, and
every round is reported as it is (median and p99, the ratios of that
round): no round is picked over another.
"""
import json
import os
import re
import statistics
import threading
import time

from . import agent
from .common import NetvmError, Timer, rel, say

NVM_NET = "10.16.0.%d"
SERVER, CLIENT = 1, 0
PATHS = ("nvm0", "virtio")
TCP_SIZES = "8,64,1024,4096,65536"
LOOP_SIZES = "8,4096"
RDMA_LAT_SIZES = (8, 1024, 4096)
RDMA_BW_SIZES = (4096, 65536)
# the GID index of the RoCE v2 GID of address $1 on rxe device $2
GID = r"""
want=$(printf '0000:0000:0000:0000:0000:ffff:%%02x%%02x:%%02x%%02x' $(echo %s | tr . ' '))
for f in /sys/class/infiniband/%s/ports/1/gids/*; do
	i=${f##*/}
	[ "$(cat $f)" = "$want" ] && [ "$(cat ${f%%/gids/*}/gid_attrs/types/$i)" = "RoCE v2" ] &&
		{ echo $i; exit 0; }
done
exit 1
"""


def sh(c, node, script, timeout=300):
    try:
        code, out, err = agent.capture(c.node(node)["port"], ["sh", "-c", script], timeout=timeout)
    except agent.AgentError as e:
        raise NetvmError("node %d: %s: %s" % (node, script.split()[0], e))
    return code, out.decode(errors="replace"), err.decode(errors="replace")


def must(c, node, script, what, timeout=300):
    code, out, err = sh(c, node, script, timeout)
    if code != 0:
        raise NetvmError("node %d: %s failed (%d): %s" % (node, what, code, (out + err).strip()[-800:]))
    return out


def setup(c):
    """nvm0 addressed on both nodes, rxe0 on nvm0 and rxe1 on the data NIC;
    returns {path: (server address, rxe device, {node: gid index})}."""
    data = {}
    for n in (0, 1):
        data[n] = must(c, n, "netvm-pkgs && cat /run/netvm-pkgs.done", "netvm-pkgs").strip()
        must(c, n, "echo 1 > /proc/sys/net/ipv6/conf/nvm0/disable_ipv6; "
                   "ip addr add %s/24 dev nvm0 && ip link set nvm0 up && modprobe rdma_rxe && "
                   "rdma link add rxe0 type rxe netdev nvm0 && rdma link add rxe1 type rxe netdev %s"
             % (NVM_NET % (n + 1), data[n]), "nvm0 and soft RoCE")
    must(c, CLIENT, "for i in $(seq 100); do ping -c 1 -W 2 %s >/dev/null && exit 0; sleep 0.1; "
                    "done; exit 1" % (NVM_NET % (SERVER + 1)), "ping over nvm0", timeout=120)
    out = {}
    for path, dev in (("nvm0", "rxe0"), ("virtio", "rxe1")):
        gids = {}
        for n in (0, 1):
            addr = NVM_NET % (n + 1) if path == "nvm0" else must(
                c, n, "ip -4 -o addr show %s | sed 's/.*inet \\([0-9.]*\\).*/\\1/'" % data[n],
                "data address").strip()
            gids[n] = must(c, n, GID % (addr, dev), "GID of %s on %s" % (addr, dev)).strip()
            if n == SERVER:
                server = addr
        out[path] = (server, dev, gids)
    return out


def pair(c, server_argv, client_argv, ready, timeout=600, client=CLIENT):
    """SERVER_ARGV on SERVER, CLIENT_ARGV on node CLIENT once the shell
    condition READY holds on SERVER; returns the client's output."""
    res = {}

    def srv():
        res["s"] = sh(c, SERVER, " ".join(server_argv), timeout)
    th = threading.Thread(target=srv, daemon=True)
    th.start()
    if sh(c, SERVER, "for i in $(seq 600); do (%s) && exit 0; sleep 0.1; done; exit 1"
          % ready, 180)[0] != 0:
        raise NetvmError("%s: the server never got ready on node %d" % (server_argv[0], SERVER))
    code, out, err = sh(c, client, " ".join(client_argv), timeout)
    th.join(timeout)
    s = res.get("s", (-1, "", "no answer"))
    if code != 0 or s[0] != 0:
        raise NetvmError("%s: client exit %d, server exit %s: %s %s" % (
            client_argv[0], code, s[0], (out + err)[-600:], (s[1] + s[2])[-600:]))
    return out


def tcp_listening(port):
    return "grep -qi ':%04X [0-9A-F:]* 0A ' /proc/net/tcp /proc/net/tcp6" % port


def tcp_rows(c, path, addr, iters, sizes=TCP_SIZES, tests="tcp_lat,tcp_bw", client=CLIENT):
    from .bench import parse_csv
    text = pair(c, ["netvm-bench", "server", "-t", "120"],
                ["netvm-bench", "client", "-P", "tcp", "-n", str(iters), "-s", sizes,
                 "-T", tests, addr], tcp_listening(18515), client=client)
    rows = parse_csv(text)
    for r in rows:
        if r["verified"] != "yes":
            raise NetvmError("netvm-bench %s %d B over %s did not verify" % (r["test"], r["size"], path))
        r["path"] = path
    return rows


def iperf3(c, path, addr):
    text = pair(c, ["iperf3", "-s", "-1"], ["iperf3", "-c", addr, "-t", "5", "-J"],
                tcp_listening(5201))
    rates = [i["sum"]["bits_per_second"] / 8e6 for i in json.loads(text)["intervals"]]
    rates.sort()
    return {"path": path, "test": "iperf3", "size": 131072, "iters": len(rates),
            "median_mbps": statistics.median(rates), "p1_mbps": rates[0] if len(rates) < 100
            else rates[len(rates) // 100], "mbps": statistics.median(rates)}


def perftest(c, path, addr, dev, gids, prog, size, iters):
    srv = [prog, "-d", dev, "-x", gids[SERVER], "-s", str(size), "-n", str(iters), "-F"]
    cli = [prog, "-d", dev, "-x", gids[CLIENT], "-s", str(size), "-n", str(iters), "-F",
           addr]
    text = pair(c, srv, cli, tcp_listening(18515))
    rows = [l.split() for l in text.splitlines() if re.match(r"^\s*%d\s+\d+\s+\d" % size, l)]
    if not rows:
        raise NetvmError("%s over %s printed no result row" % (prog, path))
    f = [float(x) for x in rows[-1]]
    if prog.endswith("_lat"):
        # #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
        return {"path": path, "test": prog, "size": size, "iters": int(f[1]), "median_us": f[4],
                "p99_us": f[7], "min_us": f[2], "mean_us": f[5]}
    # #bytes #iterations BW_peak BW_average MsgRate (MB/sec = 2^20 B/s)
    return {"path": path, "test": prog, "size": size, "iters": int(f[1]),
            "mbps": f[3] * 1.048576}


def one_round(c, paths, iterations):
    # The floor: the same round trip between two processes of one guest
    # over its loopback, no NIC at all.  Both messages of a round trip
    # cross the same TCP stack (send, receive, wake-up) as between two
    # VMs, so no NIC's round trip can beat it (docs/ethernet.md).
    rows = tcp_rows(c, "loopback", "127.0.0.1", iterations, sizes=LOOP_SIZES, tests="tcp_lat",
                    client=SERVER)
    for path in PATHS:
        addr, dev, gids = paths[path]
        rows += tcp_rows(c, path, addr, iterations)
        rows.append(iperf3(c, path, addr))
        for z in RDMA_LAT_SIZES:
            rows.append(perftest(c, path, addr, dev, gids, "ib_write_lat", z, iterations))
        for z in RDMA_BW_SIZES:
            rows.append(perftest(c, path, addr, dev, gids, "ib_write_bw", z, max(100, iterations // 5)))
    return rows


def run(c, iterations, out_dir, plots=True, rounds=3):
    from .bench import loadavg, fmt
    os.makedirs(out_dir, exist_ok=True)
    t = Timer()
    load0 = loadavg()
    paths = setup(c)
    all_rounds = []
    for i in range(rounds):
        say("--- round %d/%d: nvm0, then virtio-net: netvm-bench TCP (tcp_lat, tcp_bw), iperf3, "
            "perftest (rxe0 on nvm0, rxe1 on the data NIC)" % (i + 1, rounds))
        rows = one_round(c, paths, iterations)
        for r in rows:
            r["round"] = i + 1
        all_rounds.append(rows)
    sums = [summary(rows) for rows in all_rounds]
    host = {"cpus": os.cpu_count(), "loadavg_before": load0, "loadavg_after": loadavg()}
    with open(os.path.join(out_dir, "eth.json"), "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "iterations": iterations, "rounds": rounds, "host": host,
                   "summary_per_round": sums, "rows": [r for rows in all_rounds for r in rows]},
                  f, indent=1)
    cols = ["round", "path", "test", "size", "iters", "median_us", "p99_us", "mbps", "p1_mbps"]
    with open(os.path.join(out_dir, "eth.csv"), "w") as f:
        f.write(",".join(cols) + "\n")
        for rows in all_rounds:
            for r in rows:
                f.write(",".join("" if r.get(k) is None else str(r[k]) for k in cols) + "\n")
    made = []
    for i, rows in enumerate(all_rounds, 1):
        print("round %d of %d:" % (i, rounds))
        print_table(rows, sums[i - 1], fmt)
        if plots:
            made += plot(rows, out_dir, i)
    print_ratios(sums, fmt)
    print("host: %d CPUs, load average %s before, %s after (shared: other VMs skew the figures)"
          % (host["cpus"], fmt(load0, "%.2f"), fmt(host["loadavg_after"], "%.2f")))
    say("results: %s%s (%s)" % (", ".join(rel(os.path.join(out_dir, f)) for f in ("eth.csv", "eth.json")),
                                "".join(", " + rel(p) for p in made), t))
    return 0


def print_ratios(sums, fmt):
    """The target ratios of every round side by side, and how many rounds
    met each target."""
    keys = (("tcp_rr_8B_virtio_over_nvm0", "TCP 8-byte round trip, virtio-net / nvm0", 2),
            ("tcp_rr_8B_virtio_over_loopback", "(bound) 8 B, virtio-net / one guest's loopback", None),
            ("tcp_rr_4096B_virtio_over_nvm0", "TCP 4 KiB round trip, virtio-net / nvm0", None),
            ("tcp_rr_4096B_virtio_over_loopback", "(bound) 4 KiB, virtio-net / loopback", None),
            ("iperf3_nvm0_over_virtio", "bulk TCP (iperf3), nvm0 / virtio-net", 2),
            ("tcp_bw_64KiB_nvm0_over_virtio", "TCP stream 64 KiB, nvm0 / virtio-net", None),
            ("ib_write_lat_8B_virtio_over_nvm0", "ib_write_lat 8 B, virtio-net / nvm0", None),
            ("ib_write_bw_64KiB_nvm0_over_virtio", "ib_write_bw 64 KiB, nvm0 / virtio-net", None))
    print("ratios per round (above 1: nvm0 faster):")
    for k, label, target in keys:
        vals = [s.get(k) for s in sums]
        line = "  %-42s %s" % (label, "  ".join(fmt(v, "%.2fx") for v in vals))
        if target:
            line += "   target >= %dx met in %d of %d rounds" % (
                target, sum(1 for v in vals if v and v >= target), len(vals))
        print(line)


def get(rows, path, test, size, field):
    for r in rows:
        if r["path"] == path and r["test"] == test and r["size"] == size:
            return r.get(field)
    return None


def ratio(a, b):
    return a / b if a and b else None


def summary(rows):
    """virtio / nvm0 for round trips (above 1: nvm0 faster), nvm0 / virtio
    for bandwidth (above 1: nvm0 faster)."""
    s = {}
    for z in (8, 4096):
        s["tcp_rr_%dB_virtio_over_nvm0" % z] = ratio(get(rows, "virtio", "tcp_lat", z, "median_us"),
                                                      get(rows, "nvm0", "tcp_lat", z, "median_us"))
        # what a NIC that cost nothing would reach: virtio-net over the floor
        s["tcp_rr_%dB_virtio_over_loopback" % z] = ratio(
            get(rows, "virtio", "tcp_lat", z, "median_us"),
            get(rows, "loopback", "tcp_lat", z, "median_us"))
    s["iperf3_nvm0_over_virtio"] = ratio(get(rows, "nvm0", "iperf3", 131072, "mbps"),
                                         get(rows, "virtio", "iperf3", 131072, "mbps"))
    s["tcp_bw_64KiB_nvm0_over_virtio"] = ratio(get(rows, "nvm0", "tcp_bw", 65536, "mbps"),
                                               get(rows, "virtio", "tcp_bw", 65536, "mbps"))
    s["ib_write_lat_8B_virtio_over_nvm0"] = ratio(get(rows, "virtio", "ib_write_lat", 8, "median_us"),
                                                  get(rows, "nvm0", "ib_write_lat", 8, "median_us"))
    s["ib_write_bw_64KiB_nvm0_over_virtio"] = ratio(get(rows, "nvm0", "ib_write_bw", 65536, "mbps"),
                                                    get(rows, "virtio", "ib_write_bw", 65536, "mbps"))
    return s


def print_table(rows, s, fmt):
    print("%-13s %8s | %10s %10s | %10s %10s | %s" % ("test", "size (B)", "nvm0 med", "p99",
                                                       "virtio med", "p99", "virtio/nvm0"))
    for test in ("tcp_lat", "ib_write_lat"):
        for z in sorted({r["size"] for r in rows if r["test"] == test}):
            a = [get(rows, p, test, z, k) for p in PATHS for k in ("median_us", "p99_us")]
            print("%-13s %8d | %8s us %8s us | %8s us %8s us | %s" % (
                test, z, fmt(a[0]), fmt(a[1]), fmt(a[2]), fmt(a[3]), fmt(ratio(a[2], a[0]), "%.2fx")))
    for z in sorted({r["size"] for r in rows if r["path"] == "loopback"}):
        print("%-13s %8d | loopback of one guest, no NIC: %s us median, %s us p99" % (
            "tcp_lat", z, fmt(get(rows, "loopback", "tcp_lat", z, "median_us")),
            fmt(get(rows, "loopback", "tcp_lat", z, "p99_us"))))
    print("%-13s %8s | %13s | %13s | %s" % ("test", "size (B)", "nvm0 MB/s", "virtio MB/s",
                                            "nvm0/virtio"))
    for test in ("tcp_bw", "iperf3", "ib_write_bw"):
        for z in sorted({r["size"] for r in rows if r["test"] == test}):
            a, b = get(rows, "nvm0", test, z, "mbps"), get(rows, "virtio", test, z, "mbps")
            extra = ""
            if test == "iperf3":
                extra = "  (1st percentile of 1 s rates: nvm0 %s, virtio %s)" % (
                    fmt(get(rows, "nvm0", test, z, "p1_mbps")), fmt(get(rows, "virtio", test, z, "p1_mbps")))
            print("%-13s %8d | %13s | %13s | %s%s" % (test, z, fmt(a), fmt(b), fmt(ratio(a, b), "%.2fx"),
                                                     extra))


def plot(rows, out_dir, rnd):
    """eth_latency_rRND.png and eth_bandwidth_rRND.png, one round's rows
    (bench.plot with the Ethernet series)."""
    from . import bench
    tagged = [dict(r, test="%s_%s_r%d" % (r["test"], r["path"], rnd)) for r in rows
              if r["test"] != "iperf3"]
    for r in tagged:
        for k in ("median_us", "p99_us", "mbps"):
            r.setdefault(k, None)
    lat = [("tcp_lat_nvm0", "TCP round trip, nvm0"), ("tcp_lat_virtio", "TCP round trip, virtio-net"),
           ("tcp_lat_loopback", "TCP round trip, one guest's loopback (no NIC)"),
           ("ib_write_lat_nvm0", "ib_write_lat, rxe on nvm0"),
           ("ib_write_lat_virtio", "ib_write_lat, rxe on virtio-net")]
    bw = [("tcp_bw_nvm0", "TCP stream, nvm0"), ("tcp_bw_virtio", "TCP stream, virtio-net"),
          ("ib_write_bw_nvm0", "ib_write_bw, rxe on nvm0"),
          ("ib_write_bw_virtio", "ib_write_bw, rxe on virtio-net")]
    tag = "_r%d" % rnd
    return bench.plot(tagged, out_dir, charts=(
        ("eth_latency" + tag, [(t + tag, "%s, round %d" % (l, rnd)) for t, l in lat]),
        ("eth_bandwidth" + tag, [(t + tag, "%s, round %d" % (l, rnd)) for t, l in bw])))
