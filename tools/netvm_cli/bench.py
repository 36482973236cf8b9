"""./netvm bench: netvm-bench (libnetvm: NetVM and U-Net) and its TCP
baseline between two nodes, results under build/bench/ (docs/bench.md).

  build/bench/results.csv    every round's rows: a round column, then netvm-bench's
  build/bench/results.json   every round's rows and ratios, the settings and the
                             host's load
  build/bench/latency.png    round trip / latency against message size (median and
                             p99, every round)
  build/bench/ratios.png     TCP's round trip over each NetVM / U-Net one (median
                             and p99, every round)
  build/bench/bandwidth.png  bandwidth against message size
  build/bench/*.dat, *.gp    the plots' data and gnuplot scripts
"""
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time

from . import agent
from . import build as buildmod
from .cluster import DATA_IP, Cluster, cluster_name
from .command import Command
from .common import BUILD, DEFAULT_MEM, DEFAULT_TIMEOUT, MESON_BUILD, NetvmError, Timer, rel, say

BENCH_DIR = os.path.join(BUILD, "bench")
SERVER_NODE, CLIENT_NODE = 1, 0
SERVER_ADDR = DATA_IP % (SERVER_NODE + 1)
FIELDS = ["path", "test", "size", "iters", "min_us", "median_us", "p99_us", "mean_us",
          "mbps", "verified"]

# (test, label) per plot; both paths on each
LAT_SERIES = [("write_lat", "NetVM write round trip (poll the data, as ib_write_lat)"),
              ("notf_spin", "NetVM writeN + notification round trip (spin)"),
              ("read_lat", "NetVM read (readF)"),
              ("unet_lat", "U-Net message round trip (poll)"),
              ("tcp_lat", "TCP round trip (virtio-net)")]
BW_SERIES = [("write_bw", "NetVM write"), ("read_bw", "NetVM read"),
             ("unet_bw", "U-Net messages (64 in flight)"),
             ("tcp_bw", "TCP stream (virtio-net)")]


XTICS = "set xtics (%s)" % ", ".join('"%s" %d' % (l, v) for l, v in (
    ("4", 4), ("64", 64), ("1K", 1024), ("16K", 16384), ("256K", 1 << 18), ("1M", 1 << 20)))


TESTS = ["write_lat", "notf_spin", "notf_wait", "notf_handler", "read_lat", "write_bw", "read_bw",
         "atomic_lat", "cswap_lat", "unet_lat", "unet_bw", "tcp_lat", "tcp_bw"]
# run only when named (--tests): FUGU's divert counts under a stopped receiver
EXPLICIT_TESTS = ["unet_stop"]
MIN_SIZE, MAX_SIZE = 4, 1 << 20
UNET_MAX = 4096  # the largest U-Net message (NETVM_UNET_MSG_MAX): no U-Net row above


def sizes_of(test, sizes):
    """The sizes netvm-bench gives test a row for, of a sweep's sizes."""
    if test in ("notf_wait", "notf_handler"):
        return [8]
    if test in ("atomic_lat", "cswap_lat"):
        return [4]
    return [z for z in sizes if z <= UNET_MAX] if test.startswith("unet_") else list(sizes)


def check_args(sizes, tests):
    """A clear error for what netvm-bench would refuse (before booting)."""
    for z in (sizes or "").split(",") if sizes else []:
        if not z.isdigit() or not MIN_SIZE <= int(z) <= MAX_SIZE:
            raise NetvmError("--sizes: %r is not a size in %d..%d" % (z, MIN_SIZE, MAX_SIZE))
    for t in (tests or "").split(",") if tests else []:
        if t not in TESTS + EXPLICIT_TESTS:
            raise NetvmError("--tests: no test %r (tests: %s)" % (t, " ".join(
                TESTS + EXPLICIT_TESTS)))


def parse_csv(text):
    """netvm-bench's CSV into a list of dicts (numbers as floats/ints;
    empty fields None).  Raises NetvmError on a malformed table."""
    lines = [l for l in text.splitlines() if l.strip()]
    if not lines or lines[0].split(",") != FIELDS:
        raise NetvmError("netvm-bench printed no CSV header (got %r)" % (lines[:1],))
    rows = []
    for l in lines[1:]:
        f = l.split(",")
        if len(f) != len(FIELDS):
            raise NetvmError("netvm-bench: malformed CSV row %r" % l)
        r = dict(zip(FIELDS, f))
        r["size"], r["iters"] = int(r["size"]), int(r["iters"])
        for k in FIELDS[4:9]:
            r[k] = float(r[k]) if r[k] else None
        rows.append(r)
    return rows


def pick(rows, test, size, field):
    for r in rows:
        if r["test"] == test and r["size"] == size:
            return r[field]
    return None


def ratio(a, b):
    return a / b if a and b else None


# every latency test whose p99 the issue-17 target compares with TCP's
P99_TESTS = ["write_lat", "notf_spin", "notf_wait", "notf_handler", "read_lat", "atomic_lat",
             "cswap_lat", "unet_lat"]
# the round-trip columns of the tables: (test, heading)
LAT_COLS = [("write_lat", "write"), ("notf_spin", "notf_spin"), ("read_lat", "readF"),
            ("unet_lat", "U-Net")]


def tcp_row_for(rows, r):
    """TCP's round trip to set against latency row r: TCP's at r's size,
    or at 8 B for the fixed-size tests (notf_wait, notf_handler: 8 B;
    the atomics: 4 B, with no TCP row unless 4 B was swept)."""
    for z in (r["size"], 8):
        for t in rows:
            if t["test"] == "tcp_lat" and t["size"] == z:
                return t
    return None


def p99_misses(rows):
    """The NetVM and U-Net latency rows whose p99 is above TCP's (issue
    17's target: none): (test, size, p99, TCP's p99) each."""
    out = []
    for r in rows:
        t = tcp_row_for(rows, r) if r["test"] in P99_TESTS else None
        if t and r["p99_us"] is not None and t["p99_us"] is not None and r["p99_us"] > t["p99_us"]:
            out.append((r["test"], r["size"], r["p99_us"], t["p99_us"]))
    return out


def summary(rows):
    """One round's ratios: the issue's two (8 B round trip, 1 MiB
    bandwidth), U-Net's 8 B round trip and 4 KiB streaming against TCP's
    and NetVM's, the 8 B p99s against TCP's, and whether every latency
    row's p99 is at most TCP's (None where a figure is missing)."""
    w8, t8 = pick(rows, "write_lat", 8, "median_us"), pick(rows, "tcp_lat", 8, "median_us")
    wbw, tbw = pick(rows, "write_bw", 1 << 20, "mbps"), pick(rows, "tcp_bw", 1 << 20, "mbps")
    u8 = pick(rows, "unet_lat", 8, "median_us")
    n8 = pick(rows, "notf_spin", 8, "median_us")
    ubw4, tbw4 = pick(rows, "unet_bw", 4096, "mbps"), pick(rows, "tcp_bw", 4096, "mbps")
    wbw4 = pick(rows, "write_bw", 4096, "mbps")
    tp = pick(rows, "tcp_lat", 8, "p99_us")
    s = {
        "write_rtt_8B_us": w8, "tcp_rtt_8B_us": t8,
        "rtt_8B_tcp_over_netvm": ratio(t8, w8),
        "notf_spin_rtt_8B_us": n8, "rtt_8B_tcp_over_notf_spin": ratio(t8, n8),
        "write_bw_1MiB_MBps": wbw, "tcp_bw_1MiB_MBps": tbw,
        "bw_1MiB_netvm_over_tcp": ratio(wbw, tbw),
        "unet_rtt_8B_us": u8, "rtt_8B_tcp_over_unet": ratio(t8, u8),
        "unet_bw_4KiB_MBps": ubw4, "write_bw_4KiB_MBps": wbw4, "tcp_bw_4KiB_MBps": tbw4,
        "bw_4KiB_unet_over_tcp": ratio(ubw4, tbw4),
        "tcp_p99_8B_us": tp,
    }
    for test, _ in LAT_COLS:
        p = pick(rows, test, 8, "p99_us")
        s["%s_p99_8B_us" % test] = p
        s["p99_8B_tcp_over_%s" % test] = ratio(tp, p)
    judged = [r for r in rows if r["test"] in P99_TESTS and tcp_row_for(rows, r)]
    s["p99_misses"] = [list(m) for m in p99_misses(rows)]
    s["p99_at_most_tcp"] = not s["p99_misses"] if judged else None
    return s


def fmt(v, spec="%.1f"):
    return spec % v if v is not None else "-"


def lat_table(rows, col, what):
    """One round's round trips (median or p99) per size, and TCP's over
    each (above 1: that path is faster than TCP)."""
    sizes = sorted({r["size"] for r in rows if r["test"] in [t for t, _ in LAT_COLS] + ["tcp_lat"]})
    if not sizes:
        return
    heads = [h for _, h in LAT_COLS]
    print("  %-11s %s %9s | %s" % (what + ", us", " ".join("%9s" % h for h in heads), "TCP",
                                     " ".join("%9s" % ("TCP/" + h.split("_")[0]) for h in heads)))
    for z in sizes:
        tcp = pick(rows, "tcp_lat", z, col)
        vals = [pick(rows, t, z, col) for t, _ in LAT_COLS]
        print("  %9d B %s %9s | %s" % (z, " ".join("%9s" % fmt(v) for v in vals), fmt(tcp),
                                        " ".join("%9s" % fmt(ratio(tcp, v), "%.2fx") for v in vals)))


def bw_table(rows):
    sizes = sorted({r["size"] for r in rows if r["test"] in ("write_bw", "read_bw", "unet_bw",
                                                               "tcp_bw")})
    if not sizes:
        return
    print("  %-11s %9s %9s %9s %9s | %9s %9s" % ("MB/s", "write", "read", "U-Net", "TCP",
                                                          "write/TCP", "U-Net/TCP"))
    for z in sizes:
        wb, rb = pick(rows, "write_bw", z, "mbps"), pick(rows, "read_bw", z, "mbps")
        ub, tb = pick(rows, "unet_bw", z, "mbps"), pick(rows, "tcp_bw", z, "mbps")
        print("  %9d B %9s %9s %9s %9s | %9s %9s" % (z, fmt(wb), fmt(rb), fmt(ub), fmt(tb),
                                                    fmt(ratio(wb, tb), "%.2fx"),
                                                    fmt(ratio(ub, tb), "%.2fx")))


def print_round(i, rounds, rows, s):
    """One round's tables and its targets (no round is kept over another:
    every one is printed)."""
    print("=== round %d of %d" % (i, rounds))
    lat_table(rows, "median_us", "median")
    lat_table(rows, "p99_us", "p99")
    bw_table(rows)
    # the fixed-size tests (notf_spin's 8 B row is in the tables)
    for r in rows:
        if r["test"] in ("notf_wait", "notf_handler", "atomic_lat", "cswap_lat"):
            print("  %-12s %3d B: median %s us, p99 %s us" % (r["test"], r["size"],
                                                              fmt(r["median_us"]), fmt(r["p99_us"])))
    r8, rb = s["rtt_8B_tcp_over_netvm"], s["bw_1MiB_netvm_over_tcp"]
    if r8 is not None:
        print("  8-byte round trip: NetVM write %s us, TCP %s us: NetVM %s faster (target >= 5x: %s)"
              % (fmt(s["write_rtt_8B_us"]), fmt(s["tcp_rtt_8B_us"]), fmt(r8, "%.2fx"),
                 "met" if r8 >= 5 else "NOT met"))
    if s["tcp_p99_8B_us"] is not None:
        print("  8-byte p99: TCP %s us; TCP / each: %s" % (fmt(s["tcp_p99_8B_us"]), ", ".join(
            "%s %s" % (h, fmt(s["p99_8B_tcp_over_%s" % t], "%.2fx")) for t, h in LAT_COLS
            if s["%s_p99_8B_us" % t] is not None)))
    if s["p99_at_most_tcp"] is not None:
        print("  p99 of every NetVM and U-Net latency row at most TCP's at its size (target): %s" % (
            "met" if s["p99_at_most_tcp"] else "NOT met (%s)" % ", ".join(
                "%s %d B %.0f > %.0f us" % tuple(m) for m in s["p99_misses"])))
    if rb is not None:
        print("  1 MiB bandwidth: NetVM write %s MB/s, TCP %s MB/s: ratio %s (target > 1: %s)" % (
            fmt(s["write_bw_1MiB_MBps"]), fmt(s["tcp_bw_1MiB_MBps"]), fmt(rb, "%.2fx"),
            "met" if rb > 1 else "NOT met"))
    if s["unet_bw_4KiB_MBps"] is not None:
        print("  U-Net: 8-byte round trip %s us (TCP / U-Net %s); 4 KiB messages streamed at %s "
              "MB/s (NetVM write %s, TCP %s: U-Net / TCP %s)" % (
                  fmt(s["unet_rtt_8B_us"]), fmt(s["rtt_8B_tcp_over_unet"], "%.2fx"),
                  fmt(s["unet_bw_4KiB_MBps"]), fmt(s["write_bw_4KiB_MBps"]),
                  fmt(s["tcp_bw_4KiB_MBps"]), fmt(s["bw_4KiB_unet_over_tcp"], "%.2fx")))


def print_targets(sums):
    """How many rounds met each target: every round counts."""
    n = len(sums)
    for key, what, ok in (
            ("rtt_8B_tcp_over_netvm", "8-byte write round trip >= 5x faster than TCP's",
             lambda s: s["rtt_8B_tcp_over_netvm"] >= 5),
            ("p99_at_most_tcp", "every NetVM / U-Net p99 <= TCP's", lambda s: s["p99_at_most_tcp"]),
            ("bw_1MiB_netvm_over_tcp", "1 MiB write bandwidth above TCP's",
             lambda s: s["bw_1MiB_netvm_over_tcp"] > 1)):
        have = [s for s in sums if s[key] is not None]
        if have:
            print("%s: met in %d of %d round%s" % (what, sum(1 for s in have if ok(s)), n,
                                                   "" if n == 1 else "s"))


def _rounds_of(rows):
    """rows grouped by their "round" (1 if they have none), in order."""
    out = {}
    for r in rows:
        out.setdefault(r.get("round", 1), []).append(r)
    return [out[k] for k in sorted(out)]


def _gp(text):
    """TEXT as the inside of a gnuplot single-quoted string (a quote doubled)."""
    return str(text).replace("'", "''")


def _gnuplot(gnuplot, out_dir, name, title, ylabel, plots, extra=""):
    png = os.path.join(out_dir, name + ".png")
    script = os.path.join(out_dir, name + ".gp")
    with open(script, "w") as f:
        f.write("set terminal pngcairo size 900,600\n" if _has_cairo(gnuplot) else
                "set terminal png size 900,600\n")
        # noenhanced: labels are text ("ib_write_lat"), not markup
        f.write("set termoption noenhanced\n")
        f.write("set output '%s'\nset title '%s'\nset logscale xy\nset grid\n"
                "set key top left\nset xlabel 'message size (bytes, log)'\n"
                "set ylabel '%s'\n%s\nset xrange [3:1500000]\n%s" % (_gp(png), _gp(title),
                                                                     _gp(ylabel), XTICS, extra))
        f.write("plot " + ", \\\n     ".join(plots) + "\n")
    r = subprocess.run([gnuplot, script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != 0:
        raise NetvmError("gnuplot %s failed: %s" % (rel(script), r.stdout.strip()))
    return png


def _write_blocks(path, head, blocks):
    """A gnuplot data file: one block (index) per round, two blank lines
    between blocks."""
    with open(path, "w") as f:
        f.write("# %s; one block per round\n" % head)
        for b in blocks:
            for p in b:
                f.write(" ".join("NaN" if v is None else "%g" % v for v in p) + "\n")
            f.write("\n\n")


def _series_plot(dat, nblocks, col, idx, title, style):
    """Every round's block of dat, the same colour, the title once."""
    return "for [i=0:%d] '%s' index i using 1:%d with %s lc %d title (i == 0 ? '%s' : '')" % (
        nblocks - 1, _gp(dat), col, style, idx, _gp(title))


def plot(rows, out_dir, charts=(("latency", LAT_SERIES), ("bandwidth", BW_SERIES))):
    """latency.png and bandwidth.png with gnuplot (or CHARTS: (name, series)
    pairs, a latency chart first); every round (rows' "round" key) drawn,
    none kept over another: median solid, p99 dashed.  Returns their paths."""
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        raise NetvmError("gnuplot is missing (Debian package gnuplot-nox: ./netvm deps)")
    rounds = _rounds_of(rows)
    made = []
    for (name, series), (col, ylabel, title) in zip(charts, (
            ("median_us", "latency (us, log)", "Round trip / latency vs message size (2 VMs, TCG; "
             "median solid, p99 dashed, every round)"),
            ("mbps", "bandwidth (MB/s, log)", "Bandwidth vs message size (2 VMs, TCG; every "
             "round)"))):
        plots = []
        for idx, (test, label) in enumerate(series, 1):
            blocks = [sorted((r["size"], r[col], r["p99_us"]) for r in rr
                             if r["test"] == test and r[col]) for rr in rounds]
            blocks = [b for b in blocks if b]
            if not blocks:
                continue
            dat = os.path.join(out_dir, "%s.dat" % test)
            _write_blocks(dat, "size %s p99_us" % col, blocks)
            plots.append(_series_plot(dat, len(blocks), 2, idx, label + (
                " (median)" if col == "median_us" else ""), "linespoints lw 2"))
            if col == "median_us":
                plots.append(_series_plot(dat, len(blocks), 3, idx, "p99", "lines dt 2"))
        if plots:
            made.append(_gnuplot(gnuplot, out_dir, name, title, ylabel, plots))
    return made


def plot_ratios(rows, out_dir):
    """ratios.png: TCP's round trip over each NetVM / U-Net one, median
    (solid) and p99 (dashed), every round, with the targets (5x for the
    median of write_lat, 1x for every p99) drawn.  Its path, or None."""
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        raise NetvmError("gnuplot is missing (Debian package gnuplot-nox: ./netvm deps)")
    rounds = _rounds_of(rows)
    plots = []
    for idx, (test, label) in enumerate(LAT_SERIES[:4], 1):
        blocks = []
        for rr in rounds:
            b = []
            for r in rr:
                t = pick(rr, "tcp_lat", r["size"], "median_us") if r["test"] == test else None
                if t:
                    b.append((r["size"], ratio(t, r["median_us"]),
                              ratio(pick(rr, "tcp_lat", r["size"], "p99_us"), r["p99_us"])))
            if b:
                blocks.append(sorted(b))
        if not blocks:
            continue
        dat = os.path.join(out_dir, "ratio_%s.dat" % test)
        _write_blocks(dat, "size tcp_median/median tcp_p99/p99", blocks)
        plots.append(_series_plot(dat, len(blocks), 2, idx, label + ": median", "linespoints lw 2"))
        plots.append(_series_plot(dat, len(blocks), 3, idx, "p99", "linespoints dt 2"))
    if not plots:
        return None
    plots += ["1 with lines lc 'black' dt 3 title 'parity (p99 target)'",
              "5 with lines lc 'gray' dt 3 title '5x (8-byte write median target)'"]
    return _gnuplot(gnuplot, out_dir, "ratios", "TCP round trip / NetVM or U-Net round trip "
                    "(above 1: faster than TCP; every round)", "TCP / path (log)", plots)


def _has_cairo(gnuplot):
    r = subprocess.run([gnuplot, "-e", "set terminal"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return "pngcairo" in r.stdout


def loadavg():
    """The host's 1-minute load average (the host is shared: it says how
    much else ran during the figures)."""
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


WAKEPROBE = os.path.join(MESON_BUILD, "fabric", "netvm-wakeprobe")
WAKEUP_KEYS = ("same_cpu_us", "cross_cpu_us", "cross_busy_us")


def wakeups(path=None, round_trips=3000):
    """What waking a thread costs on this host (fabric/netvm-wakeprobe):
    {"same_cpu_us": x, "cross_cpu_us": y, "cross_busy_us": z (y, z None
    with one CPU)}, the mean socketpair round trip between two processes
    on one CPU, on two, and on two with the second busy (as a spinning
    vCPU keeps it); it tells which scheduling of the nodes takes frames
    fastest here (docs/bench.md, "Another host").  None if the probe is
    missing or failed: the figures do not depend on it."""
    path = path or os.environ.get("NETVM_WAKEPROBE") or WAKEPROBE
    try:
        r = subprocess.run([path, str(round_trips)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = {}
    for line in r.stdout.splitlines() if r.returncode == 0 else []:
        key, _, value = line.partition(" ")
        try:
            out[key] = None if value == "-" else float(value)
        except ValueError:
            return None
    if set(out) != set(WAKEUP_KEYS) or out["same_cpu_us"] is None:
        return None
    return out


def describe_wakeups(w):
    """The probe's figures as bench prints them."""
    if not w:
        return "wake-ups not measured (netvm-wakeprobe missing or failed)"
    if w["cross_cpu_us"] is None or w["cross_busy_us"] is None:
        cross = "one CPU only"
    else:
        cross = "%.1f us across two, %.1f us across two to a busy CPU" % (w["cross_cpu_us"],
                                                                         w["cross_busy_us"])
    return "a wake-up round trip %.1f us on one CPU, %s (netvm-wakeprobe)" % (w["same_cpu_us"], cross)


def one_round(c, argv, quiet):
    """netvm-bench server on SERVER_NODE, client on CLIENT_NODE; returns
    (client exit, server exit, server output, CSV text)."""
    srv = {}

    def server():
        o, e = io.BytesIO(), io.BytesIO()
        try:
            srv["rc"] = agent.run(c.node(SERVER_NODE)["port"], ["netvm-bench", "server", "-t", "120"],
                                  out=o, err=e, timeout=3600)
        except agent.AgentError as ex:
            srv["rc"], srv["err"] = -1, str(ex)
        srv["out"] = (o.getvalue() + e.getvalue()).decode(errors="replace")

    th = threading.Thread(target=server, daemon=True)
    th.start()
    o = io.BytesIO()
    try:
        rc = agent.run(c.node(CLIENT_NODE)["port"], argv, out=o,
                       err=io.BytesIO() if quiet else sys.stderr.buffer, timeout=3600)
    except agent.AgentError as e:
        raise NetvmError("node %d: %s" % (CLIENT_NODE, e))
    th.join(150)  # it exits at the client's quit, or 120 s without a client
    return rc, srv.get("rc"), srv.get("out", srv.get("err", "")), o.getvalue().decode(errors="replace")


def run(c, iterations, sizes=None, tests=None, csv_only=False, plots=True, out_dir=BENCH_DIR,
        rounds=3):
    """Boots nothing: runs netvm-bench `rounds` times on the up cluster c
    (server on node 1, client on node 0), writes out_dir, prints every
    round (none is kept over another: a target counts only as often as
    rounds meet it).  Returns 0; NetvmError if a transfer failed or did
    not verify."""
    os.makedirs(out_dir, exist_ok=True)
    t = Timer()
    load0 = loadavg()
    wake = wakeups()
    code, out, err = agent.capture(c.node(CLIENT_NODE)["port"],
                                   ["ping", "-c", "1", "-W", "10", SERVER_ADDR], timeout=60)
    if code != 0:
        raise NetvmError("node %d cannot reach node %d's data NIC at %s: %s" % (
            CLIENT_NODE, SERVER_NODE, SERVER_ADDR, (out + err).decode(errors="replace").strip()))
    argv = ["netvm-bench", "client", "-n", str(iterations)]
    if sizes:
        argv += ["-s", sizes]
    if tests:
        argv += ["-T", tests]
    argv.append(SERVER_ADDR)
    all_rounds = []
    for i in range(rounds):
        if not csv_only:
            say("--- round %d/%d: netvm-bench, node %d (client) -> node %d (server, %s), "
                "NetVM and TCP per size" % (i + 1, rounds, CLIENT_NODE, SERVER_NODE, SERVER_ADDR))
        l0 = loadavg()
        rc, src, sout, text = one_round(c, argv, csv_only)
        rows = parse_csv(text) if rc in (0, 1) else []
        bad = [r for r in rows if r["verified"] != "yes"]
        if rc != 0 or src != 0 or bad or not rows:
            if src not in (0, None):
                print("netvm: server on node %d: exit %s\n%s" % (SERVER_NODE, src, sout),
                      file=sys.stderr)
            raise NetvmError("netvm-bench failed in round %d (client exit %d, server exit %s, "
                             "%d unverified row%s)" % (i + 1, rc, src, len(bad),
                                                      "" if len(bad) == 1 else "s"))
        all_rounds.append({"round": i + 1, "loadavg_before": l0, "loadavg_after": loadavg(),
                           "rows": rows, "summary": summary(rows)})
    host = {"cpus": os.cpu_count(), "loadavg_before": load0, "loadavg_after": loadavg(),
            "wakeup": wake}
    flat = [dict(r, round=rd["round"]) for rd in all_rounds for r in rd["rows"]]
    with open(os.path.join(out_dir, "results.csv"), "w") as f:
        f.write("round," + ",".join(FIELDS) + "\n")
        for r in flat:
            f.write(",".join("" if r[k] is None else str(r[k]) for k in ["round"] + FIELDS) + "\n")
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "iterations": iterations, "sizes": sizes, "tests": tests, "rounds": all_rounds,
                   "client_node": CLIENT_NODE, "server_node": SERVER_NODE, "host": host}, f,
                  indent=1)
    if csv_only:
        with open(os.path.join(out_dir, "results.csv")) as f:
            sys.stdout.write(f.read())
    made = []
    if plots:
        made = plot(flat, out_dir)
        made += [p for p in [plot_ratios(flat, out_dir)] if p]
    if not csv_only:
        for rd in all_rounds:
            print_round(rd["round"], rounds, rd["rows"], rd["summary"])
        print("=== every round")
        print_targets([rd["summary"] for rd in all_rounds])
        print("host: %d CPUs, load average %s before, %s after; per round: %s (other VMs skew the "
              "figures)" % (host["cpus"], fmt(load0, "%.2f"), fmt(host["loadavg_after"], "%.2f"),
                            ", ".join("%s-%s" % (fmt(rd["loadavg_before"], "%.2f"),
                                                 fmt(rd["loadavg_after"], "%.2f"))
                                      for rd in all_rounds)))
        print("host: %s" % describe_wakeups(wake))
        say("results: %s%s (%s)" % (", ".join(rel(os.path.join(out_dir, f)) for f in (
            "results.csv", "results.json")), "".join(", " + rel(p) for p in made), t))
    return 0


# --- ./netvm bench -----------------------------------------------------------

def cmd_bench(a, c):
    """netvm-bench and its TCP baseline (run() above), or with --kernel the
    kernel-side benchmark: node 0 writes to and reads from node 1's test
    window by physical address (netvm-ktest bench).  On a cluster of its
    own ('bench' unless --cluster), so that a user's 'default' is left alone."""
    if a.iterations < 1 or a.rounds < 1:
        raise NetvmError("--iterations and --rounds must be at least 1")
    check_args(a.sizes, a.tests)
    if a.eth and (a.kernel or a.sizes or a.tests or a.csv):
        raise NetvmError("--eth has its own sizes and tests and prints a table: not with --kernel, "
                         "--sizes, --tests or --csv")
    if a.fi and (a.eth or a.kernel or a.sizes or a.tests or a.csv):
        raise NetvmError("--fi has its own sizes and tests and prints a table: not with --eth, "
                         "--kernel, --sizes, --tests or --csv")
    if (a.fi_paths or a.fi_no_netpipe or a.fi_unchecked) and not a.fi:
        raise NetvmError("--fi-paths, --fi-no-netpipe and --fi-unchecked go with --fi")
    fi_paths = a.fi_paths.split(",") if a.fi_paths else None
    c = Cluster(cluster_name(getattr(a, "cluster", None) or "bench"))
    if not a.no_build:
        buildmod.build()
    if a.libvirt:
        from . import libvirt
        libvirt.up(c, 2, "tcg", DEFAULT_MEM, DEFAULT_TIMEOUT, a.libvirt)
        down = lambda: libvirt.down(c)   # noqa: E731
    else:
        c.up(2, "tcg", DEFAULT_MEM, DEFAULT_TIMEOUT)
        down = c.down
    try:
        if a.fi:
            from . import bench_fi
            return bench_fi.run(c, a.iterations, os.path.abspath(a.out) if a.out else BENCH_DIR,
                                not a.no_plot, a.rounds, fi_paths, not a.fi_no_netpipe,
                                not a.fi_unchecked)
        if a.eth:
            from . import bench_eth
            return bench_eth.run(c, a.iterations, os.path.abspath(a.out) if a.out else BENCH_DIR,
                                 not a.no_plot, a.rounds)
        if not a.kernel:
            return run(c, a.iterations, a.sizes, a.tests, a.csv, not a.no_plot,
                       os.path.abspath(a.out) if a.out else BENCH_DIR, a.rounds)
        code, out, err = agent.capture(c.node(1)["port"],
                                       ["cat", "/sys/class/netvm/netvm0/ktest_pa"], timeout=60)
        pa = out.decode(errors="replace").strip()
        if code != 0 or not pa.startswith("0x"):
            raise NetvmError("node 1 has no NetVM test window (%s)" %
                             (err.decode(errors="replace").strip() or "exit %d" % code))
        if not a.csv:
            say("--- NetVM writeP/readP, node 0 -> node 1's window at %s" % pa)
        argv = ["netvm-ktest"] + (["--csv"] if a.csv else []) + ["bench", "1", pa, str(a.iterations)]
        rc = c.run(0, argv, timeout=1800)
        if rc != 0:
            raise NetvmError("netvm-ktest bench failed on node 0 (exit %d)" % rc)
    finally:
        down()
    return 0


def add_bench_args(sp):
    sp.add_argument("--no-build", action="store_true", help="use what is built")
    sp.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    sp.add_argument("--iterations", type=int, default=1000, metavar="N",
                    help="round trips per size (default 1000; fewer above 4 KiB; bandwidth runs "
                    "scale with it)")
    sp.add_argument("--sizes", metavar="B,B,..", help="message sizes, 4..1048576 (default: 4 B to "
                    "1 MiB, powers of 4, and 8)")
    sp.add_argument("--tests", metavar="T,T,..", help="only these netvm-bench tests (netvm-bench "
                    "--help; unet_stop, FUGU under a stopped receiver, only when named)")
    sp.add_argument("--rounds", type=int, default=3, metavar="R",
                    help="run the sweep R times, every round reported (default 3)")
    sp.add_argument("--no-plot", action="store_true", help="skip the PNG plots")
    sp.add_argument("--libvirt", metavar="URI[,URI]",
                    help="the two nodes as libvirt domains, as up --libvirt (e.g. qemu:///system)")
    sp.add_argument("--out", metavar="DIR", help="where the CSV, JSON and PNGs go (default "
                    "build/bench)")
    sp.add_argument("--kernel", action="store_true",
                    help="instead: the kernel NetVM benchmark (netvm-ktest writeP/readP by "
                    "physical address)")
    sp.add_argument("--eth", action="store_true",
                    help="instead: nvm0 (Ethernet over the NIC) against the virtio-net data "
                    "network: TCP round trips and streams, iperf3, perftest over soft RoCE "
                    "(docs/bench.md)")
    sp.add_argument("--fi", action="store_true",
                    help="instead: libfabric (fi_pingpong, NetPIPE under Open MPI's mtl ofi) on "
                    "the netvm provider, verbs over soft RoCE on nvm0 and tcp over virtio-net, "
                    "against NetVM writes (docs/libfabric.md)")
    sp.add_argument("--fi-paths", metavar="P,P,..",
                    help="with --fi: only these paths (netvm: the provider's own RDM, netvm-rxd, "
                    "verbs, tcp); netvm-bench's NetVM write always runs")
    sp.add_argument("--fi-no-netpipe", action="store_true",
                    help="with --fi: fi_pingpong only, no NetPIPE under Open MPI")
    sp.add_argument("--fi-unchecked", action="store_true",
                    help="with --fi: fi_pingpong without -c (its buffers neither filled nor "
                    "verified; guest-fi checks the data)")
    sp.set_defaults(func=cmd_bench)


COMMANDS = [
    Command("bench", "build, boot 2 nodes ('bench'), run netvm-bench (libnetvm write/read/atomics/"
            "notifications, U-Net messages) and the same over TCP on a virtio-net link, plot "
            "them (build/bench/*.png), shut down", add_bench_args),
]
