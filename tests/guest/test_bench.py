#!/usr/bin/python3
"""netvm-bench and ./netvm bench, pass/fail (no timing is checked).

On the host (the tool runs there too, same glibc): argument errors exit 2,
NetVM without a device exits 1 with its error, and a TCP-only run on
127.0.0.1 gives a verified CSV.  Then ./netvm bench (cluster t-guest-bench)
with a tiny sweep: every test runs over the NetVM NIC (NetVM and U-Net,
the U-Net tests at the sizes up to 4096 B) and over TCP on the data NIC
(10.77.0.x), every row is verified, and results.csv, results.json and both
PNG plots (latency, bandwidth, ratios) are written to a temporary --out: every round, none kept over another.  Last, unet_stop (FUGU under
a stopped receiver) on the same cluster name: a receiver stopped for 3 s
while the whole rest of a short stream arrives must see part of it
diverted, and every message direct or diverted, none dropped, in order.
Output: TAP.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import guestlib
from guestlib import NETVM, REPO, Tap, cluster_processes, sysfs_number

sys.path.insert(0, os.path.join(REPO, "tools"))
from netvm_cli import bench  # noqa: E402  (parse_csv, TESTS: one source of truth)

T = Tap()
CLUSTER = "t-guest-bench"
TOOL = os.path.join(REPO, "build", "meson", "guest-lib", "netvm-bench")
SIZES = [4, 8, 4096, 4100, 1 << 20]  # U-Net: inline (4, 8) and buffered (4096)


def run(argv, timeout=120):
    return guestlib.run(argv, timeout)


def diag(rc, out, err):
    return guestlib.diag(rc, out, err, tail=3000)


def free_tcp_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rows_ok(rows, tests, sizes):
    """Problems with a table: a missing (test, size), an unverified row."""
    probs = []
    for t in tests:
        want = bench.sizes_of(t, sizes)
        got = sorted(r["size"] for r in rows if r["test"] == t)
        if got != sorted(want):
            probs.append("%s: sizes %s, want %s" % (t, got, want))
    probs += ["%s %d B not verified" % (r["test"], r["size"]) for r in rows if r["verified"] != "yes"]
    probs += ["%s %d B: no figure" % (r["test"], r["size"]) for r in rows
              if (r["median_us"] if r["test"].endswith(("_lat", "_wait")) else r["mbps"]) is None]
    return probs


def host_checks():
    if not T.ok(os.access(TOOL, os.X_OK), "netvm-bench is built (%s)" % TOOL):
        return
    for argv, what in ((["client", "-s", "3", "x"], "a size below 4"),
                       (["client", "-s", "2000000", "x"], "a size above 1 MiB"),
                       (["client", "-T", "nope", "x"], "an unknown test"),
                       (["client", "-S", "60001", "x"], "a unet_stop pause above 60 s"),
                       (["client", "-P", "ib", "x"], "an unknown path"),
                       (["client"], "no address"), (["bogus"], "an unknown mode")):
        rc, out, err = run([TOOL] + argv)
        T.ok(rc == 2 and "usage:" in err and not out, "netvm-bench %s: exit 2 with usage (%s)"
             % (" ".join(argv), what), diag(rc, out, err))
    if not os.path.exists("/dev/netvm0"):
        rc, out, err = run([TOOL, "client", "-P", "netvm", "127.0.0.1"])
        T.ok(rc == 1 and "no such netvm device" in err and not out,
             "netvm-bench -P netvm without a device: exit 1, the library's error", diag(rc, out, err))
    port = str(free_tcp_port())
    srv = subprocess.Popen([TOOL, "server", "-p", port, "-t", "60"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rc, out, err = run([TOOL, "client", "-p", port, "-P", "tcp", "-n", "20", "-s", "4,4100,65536",
                        "127.0.0.1"])
    try:
        sout, serr = srv.communicate(timeout=30)
        src = srv.returncode
    except subprocess.TimeoutExpired:
        srv.kill()
        sout, serr = srv.communicate()
        src = "timeout"
    try:
        rows = bench.parse_csv(out)
        probs = rows_ok(rows, ["tcp_lat", "tcp_bw"], [4, 4100, 65536])
    except Exception as e:  # a malformed table is a failure, shown
        rows, probs = [], [str(e)]
    T.ok(rc == 0 and src == 0 and len(rows) == 6 and not probs,
         "TCP on the host (127.0.0.1): 6 rows, each verified; server and client exit 0",
         "%s\n%s\nserver exit %s: %s" % (probs, diag(rc, out, err), src,
                                         serr.decode(errors="replace")))


def host_corrupt_check():
    """-x flips a byte of every message the client sends: the server's
    byte-for-byte check must turn every TCP row into verified=no."""
    port = str(free_tcp_port())
    srv = subprocess.Popen([TOOL, "server", "-p", port, "-t", "60"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rc, out, err = run([TOOL, "client", "-p", port, "-P", "tcp", "-n", "5", "-s", "4,4100", "-x",
                        "127.0.0.1"])
    try:
        srv.wait(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.wait()
    try:
        rows = bench.parse_csv(out)
    except Exception as e:
        rows = []
        err += "\n" + str(e)
    T.ok(rc == 1 and len(rows) == 4 and all(r["verified"] == "no" for r in rows) and
         "byte 2 of 4 is" in err and "byte 2050 of 4100 is" in err,
         "netvm-bench -x (a byte flipped in every message): the server finds it, every row "
         "verified=no, exit 1", diag(rc, out, err))


def guest_checks():
    out_dir = tempfile.mkdtemp(prefix="netvm-bench-test.")
    try:
        t0 = time.monotonic()
        rc, out, err = run([NETVM, "--cluster", CLUSTER, "bench", "--no-build", "--iterations", "20",
                            "--rounds", "2", "--sizes", ",".join(map(str, SIZES)), "--out", out_dir],
                           timeout=840)
        T.ok(rc == 0, "./netvm bench --iterations 20 --rounds 2 --sizes %s exits 0 (%.0f s)"
             % (",".join(map(str, SIZES)), time.monotonic() - t0), diag(rc, out, err))
        try:
            with open(os.path.join(out_dir, "results.csv")) as f:
                lines = f.read().splitlines()
            per_round = [bench.parse_csv("\n".join([",".join(bench.FIELDS)] + [
                l.split(",", 1)[1] for l in lines[1:] if l.startswith("%d," % i)])) for i in (1, 2)]
            probs = [] if lines[0] == "round," + ",".join(bench.FIELDS) else [
                "header %r" % lines[0]]
            probs += ["round %d: %s" % (i, p) for i, rows in enumerate(per_round, 1)
                      for p in rows_ok(rows, bench.TESTS, SIZES)]
            probs += ["%d rows not of round 1 or 2" % (len(lines) - 1 - sum(map(len, per_round)))
                      ] if len(lines) - 1 != sum(map(len, per_round)) else []
        except (OSError, Exception) as e:
            per_round, probs = [[], []], [str(e)]
        T.ok(all(per_round) and not probs, "results.csv: both rounds (none kept over the other), "
             "each with every test over NetVM, U-Net and TCP at every size, verified byte for byte "
             "(%s rows)" % "+".join(str(len(r)) for r in per_round), "\n".join(probs))
        try:
            with open(os.path.join(out_dir, "results.json")) as f:
                js = json.load(f)
        except (OSError, ValueError) as e:
            js = {"error": str(e)}
        rds = js.get("rounds") or []
        T.ok(len(rds) == 2 and [rd.get("rows") for rd in rds] == per_round and all(
            isinstance(rd["summary"].get(k), float) and rd["summary"][k] > 0 for rd in rds for k in (
                "rtt_8B_tcp_over_netvm", "bw_1MiB_netvm_over_tcp", "rtt_8B_tcp_over_unet",
                "bw_4KiB_unet_over_tcp", "p99_8B_tcp_over_write_lat", "p99_8B_tcp_over_unet_lat"))
             and all(isinstance(rd["summary"].get("p99_at_most_tcp"), bool) for rd in rds),
             "results.json: every round's rows and ratios (8 B round trip and p99, 1 MiB bandwidth; "
             "U-Net's 8 B round trip and 4 KiB streaming against TCP; p99 against TCP's)",
             json.dumps(js)[:2000])
        T.ok(out.count("8-byte round trip: NetVM write") == 2 and out.count("8-byte p99") == 2
             and out.count("p99, us") == 2 and "1 MiB bandwidth" in out and "U-Net: 8-byte" in out
             and "TCP/U-Net" in out and "met in" in out,
             "every round printed: medians and p99s with TCP's ratios, the targets per round and "
             "how many rounds met them", out[-3000:])
        for png in ("latency.png", "bandwidth.png", "ratios.png"):
            p = os.path.join(out_dir, png)
            try:
                with open(p, "rb") as f:
                    head = f.read(8)
                size = os.path.getsize(p)
            except OSError:
                head, size = b"", 0
            T.ok(head == b"\x89PNG\r\n\x1a\n" and size > 5000, "%s is a PNG plot (%d bytes)"
                 % (png, size))
            series = {"latency.png": [t for t, _ in bench.LAT_SERIES],
                      "bandwidth.png": [t for t, _ in bench.BW_SERIES],
                      "ratios.png": ["ratio_" + t for t, _ in bench.LAT_SERIES[:4]]}[png]
            dats = [t for t in series if os.path.exists(os.path.join(out_dir, t + ".dat"))]
            want = len(series)
            T.ok(len(dats) == want, "%s: NetVM, U-Net and TCP plotted (%s)" % (png, ", ".join(dats)))
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
        rc, out, err = run([NETVM, "--cluster", CLUSTER, "down"])
        T.ok(rc == 0 and not cluster_processes(CLUSTER) and
             not os.path.exists(os.path.join(REPO, "build", "cluster", CLUSTER)),
             "no QEMU process and no state dir left", diag(rc, out, err))


def fugu_checks():
    """netvm-bench -T unet_stop: 410 messages of 64 B and of 1 KiB, one per
    ms; the receiver stops for 3 s after a quarter of them, so the other
    ~300 arrive while it is stopped (however slow the host: that takes
    10 times the nominal 0.3 s), more than its 96 buffers hold for 1 KiB."""
    nv = [NETVM, "--cluster", CLUSTER]
    try:
        rc, out, err = run(nv + ["up", "-n", "2"], timeout=600)
        if not T.ok(rc == 0, "cluster %s up again for unet_stop" % CLUSTER, diag(rc, out, err)):
            return
        rc, out, err, src = client_server(nv, ["-P", "netvm", "-T", "unet_stop", "-n", "400",
                                               "-S", "3000", "-s", "64,1024"])
        try:
            rows = bench.parse_csv(out)
        except Exception as e:
            rows, err = [], err + "\n" + str(e)
        T.ok(rc == 0 and src[0] == 0 and [r["size"] for r in rows] == [64, 1024] and
             all(r["verified"] == "yes" and r["test"] == "unet_stop" for r in rows),
             "netvm-bench -T unet_stop -S 3000 at 64 B and 1 KiB: both rows verified (every "
             "message's number in order, the last byte for byte)",
             diag(rc, out, err) + "\nserver: " + diag(*src))
        got = dict((int(m.group(1)), [int(x) for x in m.groups()[1:]]) for m in re.finditer(
            r"unet_stop (\d+) B receiver: messages (\d+) direct (\d+) diverted (\d+) "
            r"ring_full (\d+) no_buf (\d+) order (\d+) dropped (\d+)", err))
        for z in (64, 1024):
            n, direct, div, full, nobuf, order, dropped = got.get(z, [0] * 7)
            T.ok(n == 410 and direct + div == n and full + nobuf + order == div and not dropped,
                 "unet_stop %d B: %d direct + %d diverted (%d queue full, %d no buffer, %d for "
                 "order) = %d sent, none dropped" % (z, direct, div, full, nobuf, order, n),
                 err[-2000:])
        n, direct, div, full, nobuf, order, dropped = got.get(1024, [0] * 7)
        T.ok(div > 0 and nobuf >= 1 and direct >= 96,
             "unet_stop 1 KiB: the receiver's 96 buffers filled while it was stopped, the rest "
             "diverted to the driver (%d, %d for no buffer)" % (div, nobuf), err[-2000:])
        corrupt_pingpongs(nv)
    finally:
        rc, out, err = run(nv + ["down"])
        T.ok(rc == 0 and not cluster_processes(CLUSTER), "cluster down again, no QEMU left",
             diag(rc, out, err))


def client_server(nv, client_args):
    """netvm-bench server on node 1, the client with client_args on node 0
    against it: the client's (exit, stdout, stderr) and the server's."""
    res = {}
    th = threading.Thread(target=lambda: res.update(srv=run(
        nv + ["run", "1", "--", "netvm-bench", "server", "-t", "120"], timeout=300)),
        daemon=True)
    th.start()
    rc, out, err = run(nv + ["run", "0", "--", "netvm-bench", "client"] + client_args +
                       ["10.77.0.2"], timeout=300)
    th.join(150)
    return rc, out, err, res.get("srv", (None, "", "no result"))


def db_yields(nv):
    """[node 0's, node 1's] NIC DB_YIELDS (sysfs db_yields), None unread."""
    def sh(n, script):
        return run(nv + ["run", str(n), "--", "sh", "-c", script])
    return [sysfs_number(sh, n, "db_yields") for n in (0, 1)]


def corrupt_pingpongs(nv):
    """-x on the NetVM ping-pongs between the two VMs: the server's
    byte-for-byte check must catch the byte the client flips, in the
    stamped write_lat (which polls only the last byte) as in the notifying
    ones, and fail every row.  write_lat's spinners read their doorbell
    page's yield word as they poll (netvm_yield): both NICs count some."""
    before = db_yields(nv)
    rc, out, err, src = client_server(nv, ["-P", "netvm", "-T", "write_lat,notf_spin,notf_handler",
                                           "-n", "20", "-s", "8,5000", "-x"])
    after = db_yields(nv)
    T.ok(None not in before + after and all(a > b for a, b in zip(after, before)),
         "write_lat's spinners yielded through their NetVM endpoints: DB_YIELDS %s -> %s"
         % (before, after))
    try:
        rows = bench.parse_csv(out)
    except Exception as e:
        rows, err = [], err + "\n" + str(e)
    got = sorted((r["test"], r["size"]) for r in rows)
    want = sorted([("write_lat", 8), ("write_lat", 5000), ("notf_spin", 8),
                   ("notf_spin", 5000), ("notf_handler", 8)])
    T.ok(rc == 1 and got == want and all(r["verified"] == "no" for r in rows) and
         err.count("byte 4 of 8 is") == 3 and err.count("byte 2500 of 5000 is") == 2,
         "netvm-bench -x between the VMs: write_lat, notf_spin (8 B, 5000 B) and notf_handler "
         "(8 B) each fail at the flipped byte, exit 1", diag(rc, out, err) + "\nserver: " +
         diag(*src))


def main():
    run([NETVM, "--cluster", CLUSTER, "down"])  # leftovers of an interrupted run
    try:
        host_checks()
        if os.access(TOOL, os.X_OK):
            host_corrupt_check()
        guest_checks()
        fugu_checks()
    finally:
        T.plan()
    return 1 if T.failed else 0


if __name__ == "__main__":
    sys.exit(main())
