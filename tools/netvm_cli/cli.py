"""./netvm: command line (argparse) and the demo/test workflows."""
import argparse
import os
import signal
import subprocess
import sys
import threading
import time

from . import agent
from . import bench as benchmod
from . import build as buildmod
from . import fabric
from . import inject
from . import mapper
from . import mpirun as mpirunmod
from . import snapshot
from .cluster import Cluster, cluster_name
from .common import MESON_BUILD, REPO, NetvmError, Timer, say


def read_frame_arg(path, hexstr):
    """./netvm inject's bytes: FILE's contents or --hex."""
    if hexstr is not None:
        try:
            return bytes.fromhex(hexstr)
        except ValueError:
            raise NetvmError("inject: --hex: not an even number of hex digits")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise NetvmError("inject: %s: %s" % (path, e.strerror))


DEFAULT_TIMEOUT = 180
DEFAULT_MEM = 512

EPILOG = """first steps:
  ./netvm demo      build everything, boot 2 linked VMs, exchange frames, tear down
  ./netvm test      build everything, run all test suites (meson test)
  ./netvm bench     build, boot 2 nodes, libnetvm vs TCP benchmark and plots, shut down

cluster selection: --cluster NAME or NETVM_CLUSTER (default: 'default');
state in build/cluster/NAME/.  See README.md and docs/."""


def parser():
    p = argparse.ArgumentParser(prog="netvm", description="netvm front door: build, boot and test "
                                "clusters of QEMU VMs with the emulated LANai/Myrinet NIC.",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cluster", metavar="NAME", help="cluster to act on (default: $NETVM_CLUSTER or 'default')")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")

    def cmd(name, help_, **kw):
        sp = sub.add_parser(name, help=help_, description=help_, **kw)
        sp.add_argument("--cluster", metavar="NAME", default=argparse.SUPPRESS,
                        help="cluster to act on (default: $NETVM_CLUSTER or 'default')")
        return sp

    cmd("deps", "install the Debian packages and kernel headers the build needs (as root)")
    sp = cmd("build", "build QEMU, the guest kernel and driver, the meson tree and the guest image")
    sp.add_argument("--skip", metavar="STEP[,STEP]", default="",
                    help="skip steps (development only): " + ",".join(buildmod.STEPS))
    sp = cmd("up", "boot a cluster in the background and wait until every node is ready")
    sp.add_argument("-n", "--nodes", type=int, default=2, help="number of nodes (default 2; max 16); more than 2 go through "
                    "netvm-switch")
    sp.add_argument("--topology", metavar="FILE",
                    help="run netvm-switch with this topology file (fabric/topologies/) and connect "
                    "node I where the file puts it (default for -n > 2: one N-port switch)")
    sp.add_argument("--routes", choices=("map", "static"), default="map",
                    help="with a switch: run the mapper in node 0 (default), or program the static routes "
                    "netvm-switch computes from the topology; the mapper falls back to static routes")
    sp.add_argument("--accel", choices=("tcg", "kvm"), default="tcg", help="QEMU accelerator (default tcg)")
    sp.add_argument("--mem", type=int, default=DEFAULT_MEM, metavar="MB", help="guest RAM (default %d)" % DEFAULT_MEM)
    sp.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT, metavar="S",
                    help="seconds to wait for all nodes (default %d)" % DEFAULT_TIMEOUT)
    sp.add_argument("--qemu-arg", action="append", default=[], metavar="ARG",
                    help="extra QEMU argument for every node (repeatable), e.g. --qemu-arg=-trace "
                    "--qemu-arg='lanai_*'")
    sp = cmd("run", "run a command in a node; streams its output, exits with its status",
             usage="netvm run [-h] [-i] [-e NAME=VALUE] [-C DIR] [--timeout S] NODE -- CMD [ARG...]")
    sp.add_argument("-i", "--stdin", action="store_true", help="forward the host's stdin (default: empty stdin)")
    sp.add_argument("-e", "--env", action="append", default=[], metavar="NAME=VALUE", help="environment entry")
    sp.add_argument("-C", "--cwd", metavar="DIR", help="working directory in the guest (default /)")
    sp.add_argument("--timeout", type=float, metavar="S", help="give up after S seconds")
    sp.add_argument("node", metavar="NODE")
    sp.add_argument("argv", nargs=argparse.REMAINDER, metavar="CMD")
    sp = cmd("console", "interactive serial console of a node (Ctrl-] to leave)")
    sp.add_argument("node", metavar="NODE")
    cmd("status", "per node: pid, alive, ready, link state, routes; the switch's per-port counters")
    sp = cmd("fault", "inject faults on frames leaving a switch port (netvm-switch control socket)",
             usage="netvm fault [-h] TARGET (drop=R dup=R reorder=R corrupt=R delay_ms=N... | clear)")
    sp.add_argument("target", metavar="TARGET",
                    help="a node id N (its port), SWITCH:PORT, nodeN, or 'all' (every used port)")
    sp.add_argument("settings", nargs="+", metavar="SETTING",
                    help="drop=R dup=R reorder=R corrupt=R (rates 0..1) delay_ms=N, or clear")
    sp = cmd("link", "take the link of a node (or SWITCH:PORT) down or up; nothing is lost")
    sp.add_argument("target", metavar="TARGET", help="a node id N, SWITCH:PORT or nodeN")
    sp.add_argument("updown", choices=("down", "up"))
    sp = cmd("inject", "put arbitrary bytes on the wire as if NODE had sent them (through the switch: "
             "into its port; back to back: into the other node's link)")
    sp.add_argument("--from", dest="frm", type=int, required=True, metavar="NODE", help="the sender")
    sp.add_argument("--to", type=int, metavar="NODE",
                    help="through the switch: put the static route to NODE in front (routes.json); "
                    "back to back: the other node (default)")
    src = sp.add_mutually_exclusive_group(required=True)
    src.add_argument("file", nargs="?", metavar="FILE", help="the frame's bytes")
    src.add_argument("--hex", metavar="HEX", help="the frame's bytes in hex")
    sp.add_argument("--crc", action="store_true",
                    help="append the CRC-32 of the bytes after any route bytes, as a NIC does")
    sp.add_argument("--count", type=int, default=1, metavar="N", help="send it N times (default 1)")
    sp = cmd("map", "run the mapper in a node: discover the fabric with probes, install every node's "
             "routes (re-map after a node joins or leaves)")
    sp.add_argument("--node", type=int, default=0, metavar="N", help="node that runs the mapper (default 0)")
    sp.add_argument("-n", "--dry-run", action="store_true", help="print the map, install nothing")
    sp.add_argument("--json", action="store_true", help="print the mapper's JSON")
    sp = cmd("capture", "pcap capture of the switch's traffic (tshark -X lua_script:fabric/netvm.lua -r FILE)")
    sp.add_argument("action", choices=("start", "stop"))
    sp.add_argument("file", nargs="?", metavar="FILE", help="capture file (start)")
    mpirunmod.add_parser(cmd)
    cmd("reload-driver", "rebuild netvm.ko and reload it in every running node (no reboot)")
    cmd("down", "stop the cluster: kill its VMs, remove its sockets and state dir")
    sp = cmd("save", "save every node (QEMU migration to files) and stop the cluster")
    sp.add_argument("--order", metavar="N[,N]", default="",
                    help="stop nodes in this order, senders first (default 0,1,...)")
    sp.add_argument("--drain", type=float, default=1.0, metavar="S",
                    help="seconds between stopping two nodes, so the link drains (default 1)")
    sp = cmd("restore", "start a saved cluster again from its files")
    sp.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT, metavar="S",
                    help="seconds to wait for all nodes (default %d)" % DEFAULT_TIMEOUT)
    sp = cmd("logs", "print a node's serial console log")
    sp.add_argument("node", metavar="NODE")
    sp.add_argument("-f", "--follow", action="store_true", help="keep printing while the node runs")
    sp = cmd("demo", "build, boot 2 nodes, show the NICs exchanging frames, shut down")
    sp.add_argument("--no-build", action="store_true", help="use what is built")
    sp = cmd("bench", "build, boot 2 nodes ('bench'), run netvm-bench (libnetvm write/read/atomics/"
             "notifications, U-Net messages) and the same over TCP on a virtio-net link, plot "
             "them (build/bench/*.png), shut down")
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
                    help="run the sweep R times and keep the best figure of each test and size "
                    "(default 3)")
    sp.add_argument("--no-plot", action="store_true", help="skip the PNG plots")
    sp.add_argument("--out", metavar="DIR", help="where the CSV, JSON and PNGs go (default "
                    "build/bench)")
    sp.add_argument("--kernel", action="store_true",
                    help="instead: the kernel NetVM benchmark (netvm-ktest writeP/readP by "
                    "physical address)")
    sp = cmd("fuzz", "fuzz the lanai device (ASan/UBSan QEMU) and print executions and coverage")
    sp.add_argument("--minutes", type=float, default=10, help="how long (default 10)")
    sp.add_argument("--seed", type=int, default=None, help="random seed (default: from the clock)")
    sp.add_argument("--keep-going", action="store_true", help="go on after a crash")
    sp.add_argument("--no-build", action="store_true", help="use what is built")
    sp = cmd("test", "build, then run the test suites (meson test)")
    sp.add_argument("--suite", action="append", default=[], metavar="SUITE",
                    help="run only this suite (unit, qtest, fabric, guest, lint, fuzz, devfuzz); "
                    "repeatable")
    sp.add_argument("--no-build", action="store_true", help="use what is built")
    sp.add_argument("--mutants", action="store_true",
                    help="mutation testing instead (tests/mutants/run-mutants.py; after --: "
                    "mutant names or prefixes, --list, --keep-going)")
    sp.add_argument("meson_args", nargs="*", metavar="MESON_TEST_ARG",
                    help="more arguments for meson test (after --)")
    return p


def _terminate(signum, frame):
    # unwinds like Ctrl-C, so that a half-started cluster is torn down
    raise SystemExit(128 + signum)


def main(argv):
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    p = parser()
    args = p.parse_args(argv)
    if not args.cmd:
        p.print_help()
        return 2
    try:
        return dispatch(args) or 0
    except NetvmError as e:
        print("netvm: error: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("netvm: interrupted", file=sys.stderr)
        return 130
    except (BrokenPipeError, agent.OutputClosed):
        # like a shell command killed by SIGPIPE; keep Python from
        # complaining about the closed stdout at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + signal.SIGPIPE


def dispatch(a):
    name = cluster_name(getattr(a, "cluster", None))
    c = Cluster(name)
    if a.cmd == "deps":
        buildmod.step_deps()
        say("dependencies are installed")
    elif a.cmd == "build":
        skip = set(s for s in a.skip.split(",") if s)
        bad = skip - set(buildmod.STEPS)
        if bad:
            raise NetvmError("unknown build step(s): %s (steps: %s)" % (",".join(sorted(bad)), ",".join(buildmod.STEPS)))
        buildmod.build(skip)
    elif a.cmd == "up":
        c.up(a.nodes, a.accel, a.mem, a.timeout, a.qemu_arg, topology=a.topology, routes=a.routes)
    elif a.cmd == "down":
        c.down()
    elif a.cmd == "save":
        order = [int(x) for x in a.order.split(",") if x.strip()]
        snapshot.save(c, order, a.drain)
    elif a.cmd == "restore":
        snapshot.restore(c, a.timeout)
    elif a.cmd == "status":
        return c.status()
    elif a.cmd == "fault":
        return fabric.cmd_fault(c, a.target, a.settings)
    elif a.cmd == "link":
        return fabric.cmd_link(c, a.target, a.updown)
    elif a.cmd == "capture":
        return fabric.cmd_capture(c, a.action, a.file)
    elif a.cmd == "inject":
        return inject.cmd_inject(c, a.frm, a.to, read_frame_arg(a.file, a.hex), a.crc, a.count)
    elif a.cmd == "map":
        mapper.cmd_map(c, a.node, a.dry_run, a.json)
    elif a.cmd == "run":
        argv = a.argv[1:] if a.argv[:1] == ["--"] else a.argv
        if not argv:
            raise NetvmError("run: no command given (usage: ./netvm run NODE -- CMD [ARG...])")
        for e in a.env:
            if "=" not in e:
                raise NetvmError("run: -e wants NAME=VALUE, got %r" % e)
        return c.run(a.node, argv, env=a.env, cwd=a.cwd, stdin=a.stdin, timeout=a.timeout)
    elif a.cmd == "mpirun":
        return mpirunmod.cmd_mpirun(c, a)
    elif a.cmd == "console":
        return c.console(a.node)
    elif a.cmd == "logs":
        return c.logs(a.node, a.follow)
    elif a.cmd == "reload-driver":
        c.require_up()
        say("[driver] rebuilding netvm.ko")
        buildmod.step_driver()
        c.reload_driver()
    elif a.cmd == "demo":
        # its own cluster, so that a user's 'default' one is left alone
        return demo(Cluster(cluster_name(getattr(a, "cluster", None) or "demo")), a.no_build)
    elif a.cmd == "bench":
        return bench(Cluster(cluster_name(getattr(a, "cluster", None) or "bench")), a)
    elif a.cmd == "test":
        return test(a)
    elif a.cmd == "fuzz":
        return fuzz(a)
    return 0


def demo(c, no_build):
    t = Timer()
    if not no_build:
        buildmod.build()
    say("--- booting a 2-node cluster '%s' (NIC link: node 0 <-> node 1 over a unix socket)" % c.name)
    c.up(2, "tcg", DEFAULT_MEM, DEFAULT_TIMEOUT)
    try:
        for n in (0, 1):
            say("--- node %d: netvm-info" % n)
            rc = c.run(n, ["netvm-info"], timeout=60)
            if rc != 0:
                raise NetvmError("netvm-info failed on node %d (exit %d)" % (n, rc))
        count, size = 5, 64
        say("--- raw frames: node 1 echoes, node 0 sends %d frames of %d bytes and checks the echoes" % (count, size))
        echo = {}

        def echo_server():
            try:
                echo["rc"] = c.run(1, ["netvm-raw", "echo", str(count)], timeout=120)
            except NetvmError as e:
                echo["err"] = str(e)

        th = threading.Thread(target=echo_server, daemon=True)
        th.start()
        time.sleep(1.0)  # let the echo side open the device
        rc = c.run(0, ["netvm-raw", "ping", str(count), str(size)], timeout=120)
        th.join(130)
        if rc != 0:
            raise NetvmError("netvm-raw ping failed on node 0 (exit %d)" % rc)
        if echo.get("rc") != 0:
            raise NetvmError("netvm-raw echo failed on node 1 (%s)" % echo.get("err", "exit %s" % echo.get("rc")))
        say("--- done: both NICs bound and self-tested; %d frames went 0 -> 1 -> 0 intact" % count)
    finally:
        c.down()
    say("demo finished in %s" % t)
    return 0


def bench(c, a):
    """netvm-bench and its TCP baseline (tools/netvm_cli/bench.py), or with
    --kernel the kernel-side benchmark: node 0 writes to and reads from node
    1's test window by physical address (netvm-ktest bench)."""
    if a.iterations < 1 or a.rounds < 1:
        raise NetvmError("--iterations and --rounds must be at least 1")
    benchmod.check_args(a.sizes, a.tests)
    if not a.no_build:
        buildmod.build()
    c.up(2, "tcg", DEFAULT_MEM, DEFAULT_TIMEOUT)
    try:
        if not a.kernel:
            return benchmod.run(c, a.iterations, a.sizes, a.tests, a.csv, not a.no_plot,
                                os.path.abspath(a.out) if a.out else benchmod.BENCH_DIR,
                                a.rounds)
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
        c.down()
    return 0


def fuzz(a):
    """The device fuzzer (tests/devfuzz) for --minutes, from the seed
    corpus; crash reproducers in build/devfuzz/."""
    if not a.no_build:
        buildmod.build(skip=["kernel", "driver", "meson", "image"])
    seed = a.seed if a.seed is not None else int(time.time())
    work = os.path.join(REPO, "build", "devfuzz")
    cmd = [sys.executable, os.path.join(REPO, "tests", "devfuzz", "devfuzz.py"),
           "--qemu", os.path.join(REPO, "build", "qemu-asan", "qemu-system-x86_64"),
           "--seconds", str(int(a.minutes * 60)), "--seed", str(seed),
           "--corpus", os.path.join(REPO, "tests", "devfuzz", "corpus"), "--work", work]
    if a.keep_going:
        cmd.append("--keep-going")
    say("running: %s" % " ".join(cmd))
    return subprocess.call(cmd, cwd=REPO, stdin=subprocess.DEVNULL)


def test(a):
    if not a.no_build:
        buildmod.build()
    if a.mutants:
        # each mutant is rebuilt and tested on its own (docs/testing.md)
        # Ctrl-C reaches the runner too, which restores the source; wait
        # for it (subprocess.call would kill it mid-restore)
        p = subprocess.Popen([sys.executable, os.path.join(REPO, "tests", "mutants",
                                                           "run-mutants.py")] + a.meson_args, cwd=REPO)
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            return p.wait()
        finally:
            signal.signal(signal.SIGINT, old)
    cmd = ["meson", "test", "-C", MESON_BUILD, "--print-errorlogs"]
    for s in a.suite:
        cmd += ["--suite", s]
    cmd += a.meson_args
    say("running: %s" % " ".join(cmd))
    return subprocess.call(cmd, cwd=REPO, stdin=subprocess.DEVNULL)
