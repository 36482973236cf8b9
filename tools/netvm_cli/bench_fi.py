"""./netvm bench --fi: libfabric between two VMs, in one run (docs/libfabric.md,
"Figures"): Debian's unmodified fi_pingpong and NetPIPE under Open MPI
(./netvm mpirun --fi: pml cm, mtl ofi) on

  - netvm       the netvm provider's own FI_EP_RDM (when it has one)
  - netvm-rxd   libfabric's ofi_rxd on the netvm provider's datagrams
  - verbs       libfabric's verbs provider (with ofi_rxm) over soft RoCE,
                rxe0 on nvm0 (the Ethernet interface over the NIC)
  - tcp         libfabric's tcp provider over the virtio-net data network

and, as the yardstick of issue 18's targets, netvm-bench's NetVM write
round trip and write bandwidth between the same nodes.

Every round is reported, none dropped: fi_pingpong gives one mean per size
and run (its usec/xfer is half a round trip: a round trip is two
transfers), NetPIPE one per size (its time is half a round trip too);
netvm-bench gives each round's median and p99 of its own round trips.
Across the rounds the summary takes the median, and the p99 (with a few
rounds, the slowest).  Results under build/bench/: fi.json, fi.csv
(every round's rows), fi_latency.png, fi_bandwidth.png.
"""
import json
import os
import re
import statistics
import threading
import time

from . import agent
from .bench_eth import must, sh  # a node's shell through its agent
from .common import NetvmError, Timer, rel, say

SERVER, CLIENT = 1, 0
NVM_NET = "10.16.0.%d"
OOB_PORT = 47592            # fi_pingpong's control port
# (path, libfabric provider, extra environment); the native one only when
# fi_info lists it
PATHS = [("netvm", "netvm"), ("netvm-rxd", "netvm;ofi_rxd"), ("verbs", "verbs;ofi_rxm"),
         ("tcp", "tcp")]
PP_SIZES = (64, 4096, 65536, 1 << 20)
NP_UPPER = 1 << 20
NP_REPEATS = 50             # NetPIPE's round trips per size (-n)
NETVM_SIZES = "8,64,4096,65536,1048576"
RTT_SIZE, BW_SIZE = 64, 1 << 20   # what the targets compare


def setup(c):
    """The package disk, nvm0 addressed and rxe0 on it on both nodes;
    returns {path: environment for that path's programs} of the paths this
    cluster has (the native netvm RDM only when fi_info offers it)."""
    data = None
    for n in (0, 1):
        data = must(c, n, "netvm-pkgs && cat /run/netvm-pkgs.done", "netvm-pkgs").strip()
        must(c, n, "echo 1 > /proc/sys/net/ipv6/conf/nvm0/disable_ipv6; "
                   "ip addr add %s/24 dev nvm0 && ip link set nvm0 up && modprobe rdma_rxe && "
                   "rdma link add rxe0 type rxe netdev nvm0" % (NVM_NET % (n + 1)),
             "nvm0 and soft RoCE")
    must(c, CLIENT, "for i in $(seq 100); do ping -c 1 -W 2 %s >/dev/null && exit 0; sleep 0.1; "
                    "done; exit 1" % (NVM_NET % (SERVER + 1)), "ping over nvm0", timeout=120)
    env = {"netvm": {}, "netvm-rxd": {}, "verbs": {}, "tcp": {"FI_TCP_IFACE": data}}
    code, out, _ = sh(c, CLIENT, "fi_info -p netvm -t FI_EP_RDM")
    if code != 0 or "provider: netvm\n" not in out:
        del env["netvm"]
    return env


def wait_listening(c, node, port):
    cond = "grep -qi ':%04X [0-9A-F:]* 0A ' /proc/net/tcp /proc/net/tcp6" % port
    return sh(c, node, "for i in $(seq 1200); do (%s) && exit 0; sleep 0.1; done; exit 1"
              % cond, 180)[0] == 0


def envs(env):
    return " ".join("%s=%s" % kv for kv in sorted(env.items()))


def pingpong(c, path, prov, env, size, iters):
    """fi_pingpong -e rdm -c -S SIZE -I ITERS, server on SERVER, client on
    CLIENT (to the server's data address) -> a row."""
    cmd = "%s fi_pingpong -p '%s' -e rdm -c -S %d -I %d" % (envs(env), prov, size, iters)
    res = {}

    def srv():
        res["s"] = sh(c, SERVER, cmd, 900)
    th = threading.Thread(target=srv, daemon=True)
    th.start()
    if not wait_listening(c, SERVER, OOB_PORT):
        raise NetvmError("fi_pingpong (%s): the server never listened" % path)
    code, out, err = sh(c, CLIENT, cmd + " 10.77.0.%d" % (SERVER + 1), 900)
    th.join(900)
    s = res.get("s", (-1, "", "no answer"))
    # bytes  #sent  #ack  total  time  MB/sec  usec/xfer  Mxfers/sec
    m = re.search(r"^(\S+)\s+(\d+)\s+=(\d+)\s+(\S+)\s+(\S+)s\s+(\S+)\s+(\S+)\s+(\S+)\s*$", out, re.M)
    if code != 0 or s[0] != 0 or not m or m.group(2) != m.group(3) or int(m.group(2)) != iters:
        raise NetvmError("fi_pingpong over %s, %d B: client exit %d, server exit %s: %s %s" % (
            path, size, code, s[0], (out + err)[-600:], (s[1] + s[2])[-600:]))
    usec = float(m.group(7))
    return {"path": path, "test": "fi_pingpong", "size": size, "iters": iters,
            "rtt_us": 2 * usec, "mbps": float(m.group(6))}


def netpipe(c, path, prov, env):
    """NPopenmpi (2 ranks, node 0 and node 1) on PROV -> rows per size."""
    from .mpirun import RSH, DATA_NET, fi_mca
    cmd = ["mpirun.openmpi", "--allow-run-as-root", "-n", "2", "--host",
           "10.77.0.1:1,10.77.0.2:1", "--mca", "plm_rsh_agent", RSH,
           "--mca", "oob_tcp_if_include", DATA_NET] + fi_mca(prov)
    for kv in sorted(env.items()):
        cmd += ["-x", "%s=%s" % kv]
    cmd += ["NPopenmpi", "-u", str(NP_UPPER), "-p", "0", "-n", str(NP_REPEATS)]
    code, out, err = agent.capture(c.node(CLIENT)["port"], cmd, timeout=900)
    if code != 0:
        raise NetvmError("NetPIPE over %s: mpirun exit %d: %s" % (
            path, code, (out + err).decode(errors="replace")[-800:]))
    rows = []
    # "  3:      16 bytes     50 times -->      1.21 Mbps in     105.52 usec": the time is
    # one way, half the round trip
    for m in re.finditer(r"^\s*\d+:\s+(\d+) bytes\s+(\d+) times -->\s+([\d.]+) Mbps in\s+([\d.]+) usec",
                         (out + err).decode(errors="replace"), re.M):
        rows.append({"path": path, "test": "netpipe", "size": int(m.group(1)),
                     "iters": int(m.group(2)), "rtt_us": 2 * float(m.group(4)),
                     "mbps": float(m.group(3)) / 8})
    if not rows:
        raise NetvmError("NetPIPE over %s wrote no rows" % path)
    return rows


def netvm_rows(c, iterations):
    """netvm-bench's write round trip and write bandwidth, this round."""
    from . import bench
    argv = ["netvm-bench", "client", "-n", str(iterations), "-s", NETVM_SIZES,
            "-T", "write_lat,write_bw", "10.77.0.%d" % (SERVER + 1)]
    rc, src, sout, text = bench.one_round(c, argv, True)
    rows = bench.parse_csv(text) if rc == 0 else []
    if rc != 0 or src != 0 or not rows or any(r["verified"] != "yes" for r in rows):
        raise NetvmError("netvm-bench failed (client %d, server %s): %s" % (rc, src, sout[-400:]))
    return [{"path": "netvm-bench", "test": r["test"], "size": r["size"], "iters": r["iters"],
             "rtt_us": r["median_us"], "p99_us": r["p99_us"], "mbps": r["mbps"]} for r in rows]


def one_round(c, env, iterations, errors):
    """netvm-bench, then every path; a path's program that fails is
    recorded in ERRORS (and printed), the others still run."""
    rows = netvm_rows(c, iterations)
    for path, prov in PATHS:
        if path not in env:
            continue
        for z in PP_SIZES:
            iters = iterations if z <= 4096 else max(5, iterations // (10 if z <= 65536 else 50))
            try:
                rows.append(pingpong(c, path, prov, env[path], z, iters))
            except NetvmError as e:
                errors.append(str(e))
                say("FAILED: %s" % e)
        try:
            rows += netpipe(c, path, prov, env[path])
        except NetvmError as e:
            errors.append(str(e))
            say("FAILED: %s" % e)
    return rows


def across(rounds, path, test, size, field):
    """[the figure of every round], in round order (None left out)."""
    out = []
    for rows in rounds:
        for r in rows:
            if r["path"] == path and r["test"] == test and r["size"] == size and r.get(field):
                out.append(r[field])
    return out


def p99(vals, high=True):
    """The 99th percentile of vals (nearest rank): for latency the slow
    end, for bandwidth (high=False) the low end."""
    v = sorted(vals, reverse=not high)
    return v[min(len(v) - 1, -(-99 * len(v) // 100) - 1)] if v else None


def summarise(rounds, paths):
    """Per path, test and size: every round's figure, their median and p99."""
    keys = []
    for rows in rounds:
        for r in rows:
            k = (r["path"], r["test"], r["size"])
            if k not in keys:
                keys.append(k)
    out = []
    for path, test, size in keys:
        lat = across(rounds, path, test, size, "rtt_us")
        bw = across(rounds, path, test, size, "mbps")
        out.append({"path": path, "test": test, "size": size,
                    "rtt_us_rounds": lat, "rtt_us_median": statistics.median(lat) if lat else None,
                    "rtt_us_p99": p99(lat), "mbps_rounds": bw,
                    "mbps_median": statistics.median(bw) if bw else None,
                    "mbps_p99": p99(bw, high=False)})
    s = {}
    w_rtt = get(out, "netvm-bench", "write_lat", RTT_SIZE, "rtt_us_median")
    w_bw = get(out, "netvm-bench", "write_bw", BW_SIZE, "mbps_median")
    s["netvm_write_rtt_%dB_us" % RTT_SIZE], s["netvm_write_bw_1MiB_MBps"] = w_rtt, w_bw
    for path, _ in PATHS:
        if path not in paths:
            continue
        rtt = get(out, path, "fi_pingpong", RTT_SIZE, "rtt_us_median")
        bw = get(out, path, "fi_pingpong", BW_SIZE, "mbps_median")
        s[path] = {"fi_pingpong_rtt_%dB_us" % RTT_SIZE: rtt,
                   "rtt_over_netvm_write": rtt / w_rtt if rtt and w_rtt else None,
                   "fi_pingpong_bw_1MiB_MBps": bw,
                   "bw_over_netvm_write": bw / w_bw if bw and w_bw else None,
                   "netpipe_rtt_%dB_us" % RTT_SIZE: near(out, path, RTT_SIZE, "rtt_us_median"),
                   "netpipe_bw_1MiB_MBps": near(out, path, BW_SIZE, "mbps_median")}
    return out, s


def get(rows, path, test, size, field):
    for r in rows:
        if r["path"] == path and r["test"] == test and r["size"] == size:
            return r.get(field)
    return None


def near(rows, path, size, field):
    """NetPIPE's figure at the size of its sweep nearest SIZE."""
    pts = [r for r in rows if r["path"] == path and r["test"] == "netpipe"]
    if not pts:
        return None
    return min(pts, key=lambda r: abs(r["size"] - size)).get(field)


def fmt(v, spec="%.1f"):
    return spec % v if v is not None else "-"


def print_rounds(out):
    print("%-11s %-11s %8s | %-28s %9s %9s | %-28s %9s %9s" % (
        "path", "test", "size (B)", "round trip per round (us)", "median", "p99",
        "MB/s per round", "median", "p99 (low)"))
    for r in out:
        if r["test"] == "netpipe" and r["size"] not in (1, 64, 4096, 65536, 1 << 20) and \
                not any(abs(r["size"] - z) <= 3 for z in (64, 4096, 65536)):
            continue
        print("%-11s %-11s %8d | %-28s %9s %9s | %-28s %9s %9s" % (
            r["path"], r["test"], r["size"], " ".join(fmt(v) for v in r["rtt_us_rounds"]),
            fmt(r["rtt_us_median"]), fmt(r["rtt_us_p99"]),
            " ".join(fmt(v, "%.2f") for v in r["mbps_rounds"]), fmt(r["mbps_median"], "%.2f"),
            fmt(r["mbps_p99"], "%.2f")))


def plot(out, out_dir):
    from . import bench
    rows = []
    for r in out:
        t = "%s_%s" % (r["test"], r["path"].replace("-", "_"))
        rows.append({"test": t, "size": r["size"], "median_us": r["rtt_us_median"],
                     "p99_us": r["rtt_us_p99"], "mbps": r["mbps_median"]})
    lat, bw = [], []
    for path, _ in [("netvm-bench", None)] + PATHS:
        p = path.replace("-", "_")
        if path == "netvm-bench":
            lat.append(("write_lat_netvm_bench", "NetVM write round trip (netvm-bench)"))
            bw.append(("write_bw_netvm_bench", "NetVM write (netvm-bench)"))
            continue
        lat += [("fi_pingpong_" + p, "fi_pingpong rdm, %s (round trip)" % path),
                ("netpipe_" + p, "NetPIPE/Open MPI mtl ofi, %s (round trip)" % path)]
        bw += [("fi_pingpong_" + p, "fi_pingpong rdm, %s" % path),
               ("netpipe_" + p, "NetPIPE/Open MPI mtl ofi, %s" % path)]
    return bench.plot(rows, out_dir, charts=(("fi_latency", lat), ("fi_bandwidth", bw)))


def run(c, iterations, out_dir, plots=True, rounds=3):
    from .bench import loadavg
    os.makedirs(out_dir, exist_ok=True)
    t = Timer()
    load0 = loadavg()
    env = setup(c)
    say("paths: %s (the netvm provider's own RDM %s)" % (", ".join(p for p, _ in PATHS if p in env),
                                                         "found" if "netvm" in env else "not offered"))
    all_rounds, errors = [], []
    for i in range(rounds):
        say("--- round %d/%d: netvm-bench write, then per path fi_pingpong and NetPIPE "
            "(Open MPI, mtl ofi)" % (i + 1, rounds))
        all_rounds.append(one_round(c, env, iterations, errors))
        print_rounds(summarise(all_rounds[-1:], env)[0])
    out, s = summarise(all_rounds, env)
    host = {"cpus": os.cpu_count(), "loadavg_before": load0, "loadavg_after": loadavg()}
    with open(os.path.join(out_dir, "fi.json"), "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "iterations": iterations, "rounds": rounds, "host": host, "env": env,
                   "summary": s, "rows": out, "all_rounds": all_rounds, "errors": errors},
                  f, indent=1)
    cols = ["round", "path", "test", "size", "iters", "rtt_us", "p99_us", "mbps"]
    with open(os.path.join(out_dir, "fi.csv"), "w") as f:
        f.write(",".join(cols) + "\n")
        for i, rows in enumerate(all_rounds, 1):
            for r in rows:
                r = dict(r, round=i)
                f.write(",".join("" if r.get(k) is None else str(r[k]) for k in cols) + "\n")
    made = plot(out, out_dir) if plots else []
    print("every round (%d), median and p99 across them:" % rounds)
    print_rounds(out)
    w_rtt, w_bw = s["netvm_write_rtt_%dB_us" % RTT_SIZE], s["netvm_write_bw_1MiB_MBps"]
    print("NetVM write (netvm-bench): %d B round trip %s us, 1 MiB %s MB/s (medians of the rounds' "
          "medians)" % (RTT_SIZE, fmt(w_rtt), fmt(w_bw)))
    for path, _ in PATHS:
        if path not in s:
            continue
        p = s[path]
        r, b = p["rtt_over_netvm_write"], p["bw_over_netvm_write"]
        print("%-9s fi_pingpong %d B round trip %s us = %s x NetVM write (target <= 1.3x: %s); "
              "1 MiB %s MB/s = %s of NetVM write (target >= 80%%: %s); NetPIPE %s us, %s MB/s" % (
                  path, RTT_SIZE, fmt(p["fi_pingpong_rtt_%dB_us" % RTT_SIZE]), fmt(r, "%.2f"),
                  "met" if r and r <= 1.3 else "NOT met", fmt(p["fi_pingpong_bw_1MiB_MBps"], "%.2f"),
                  fmt(b * 100 if b else None, "%.1f%%"), "met" if b and b >= 0.8 else "NOT met",
                  fmt(p["netpipe_rtt_%dB_us" % RTT_SIZE]), fmt(p["netpipe_bw_1MiB_MBps"], "%.2f")))
    print("host: %d CPUs, load average %s before, %s after (shared: other VMs skew the figures)"
          % (host["cpus"], fmt(load0, "%.2f"), fmt(host["loadavg_after"], "%.2f")))
    say("results: %s%s (%s)" % (", ".join(rel(os.path.join(out_dir, f)) for f in ("fi.csv", "fi.json")),
                                "".join(", " + rel(p) for p in made), t))
    if errors:
        raise NetvmError("%d run%s failed: %s" % (len(errors), "" if len(errors) == 1 else "s",
                                                  "; ".join(e[:200] for e in errors)))
    return 0
