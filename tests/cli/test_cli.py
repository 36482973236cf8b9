#!/usr/bin/python3
"""The front door's own logic, no VM: how commands are wired, argument
errors (exact message and exit status), the cluster state file, node and
limit checks, topologies and the QEMU link wiring they lead to.

    tests/cli/test_cli.py [TestClass ...]      (meson: one test per class)

./netvm runs in this process (cli.main) with the state of clusters in a
temporary directory; handlers that would build or boot are replaced by
recorders.  The topology tests run netvm-switch --routes: NETVM_SWITCH
(meson sets it), or build/meson/fabric/netvm-switch.
"""
import errno
import importlib
import io
import json
import os
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import unittest
import xml.etree.ElementTree as ET
import zlib
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

sys.dont_write_bytecode = True   # leave no __pycache__ in tools/
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tools"))

from netvm_cli import (build, cli, cluster, clustercmd, fabric, inject, libvirt, libvirt_remote, libvirt_save,  # noqa: E402
                       mpirun, snapshot, testing)
from netvm_cli import cpugroups, vmsched  # noqa: E402
from netvm_cli.cluster import Cluster  # noqa: E402
from netvm_cli.command import Command  # noqa: E402
from netvm_cli.common import MESON_BUILD, NetvmError  # noqa: E402

STEPS_MSG = "(steps: deps,qemu,kernel,driver,meson,image,pkgdisk)"


def netvm(*argv):
    """./netvm ARGV in this process: (exit status, stdout, stderr)."""
    out_bytes = io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", write_through=True)
    err = io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = cli.main([str(a) for a in argv])
        except SystemExit as e:      # argparse's errors and --help
            rc = e.code
        out.flush()
    return rc, out_bytes.getvalue().decode(), err.getvalue()


class StateDirCase(unittest.TestCase):
    """Clusters live in a fresh directory; NETVM_CLUSTER and
    NETVM_LINK_THREAD are unset (the link thread, the default), and so is
    NETVM_YIELD_WAIT_US (the NIC only yields)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="netvm-cli-test-")
        self.clusters = os.path.join(self.tmp, "cluster")
        # no test touches the host's cpu cgroups: none is found
        patches = [mock.patch.object(cluster, "CLUSTERS", self.clusters),
                   mock.patch.object(cpugroups, "MOUNTS", os.path.join(self.tmp, "no-mounts")),
                   mock.patch.dict(os.environ)]
        for p in patches:
            p.start()
            self.addCleanup(p.stop)
        os.environ.pop("NETVM_CLUSTER", None)
        os.environ.pop("NETVM_LINK_THREAD", None)
        os.environ.pop("NETVM_YIELD_WAIT_US", None)
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        self.addCleanup(signal.signal, signal.SIGHUP, signal.getsignal(signal.SIGHUP))

    def make_cluster(self, name, state):
        """A cluster with this state file, as `up` leaves it."""
        c = Cluster(name)
        os.makedirs(c.dir)
        c.state = state
        c.save()
        return c

    def expect(self, res, rc, out="", err=""):
        self.assertEqual(res, (rc, out, err))

    def refused(self, msg, *argv):
        """./netvm ARGV fails with 'netvm: error: MSG' and status 1."""
        self.expect(netvm(*argv), 1, err="netvm: error: %s\n" % msg)


def two_nodes(**extra):
    st = {"name": "x", "n": 2, "accel": "tcg", "mem": 512,
          "nodes": [{"id": 0, "pid": 0, "port": 1}, {"id": 1, "pid": 0, "port": 2}]}
    st.update(extra)
    return st


class TestWiring(StateDirCase):
    """cli.py wires the modules' COMMANDS: each once, in help order."""

    def fake(self, *names):
        cmds = [Command(n, "help of " + n, lambda sp: sp.set_defaults(func=lambda a, c: 0))
                for n in names]
        return type("Module", (), {"COMMANDS": cmds})

    def test_help_lists_commands_in_order(self):
        text = cli.parser().format_help()
        where = [re.search(r"^    %s\b" % re.escape(n), text, re.M) for n in cli.HELP_ORDER]
        self.assertTrue(all(where), text)
        self.assertEqual([m.start() for m in where], sorted(m.start() for m in where))

    def test_every_module_command_is_wired(self):
        declared = sorted(c.name for m in cli.modules() for c in m.COMMANDS)
        self.assertEqual(declared, sorted(cli.HELP_ORDER))
        self.assertEqual(len(declared), 22)
        # each in the module the table names, so that ./netvm CMD finds it
        # loading that module alone
        for cmd, name in cli.COMMAND_MODULES:
            self.assertIn(cmd, [c.name for c in importlib.import_module("netvm_cli." + name).COMMANDS])

    def test_one_command_loads_one_module(self):
        """./netvm run parses as the whole parser does, and loads none of
        the modules of booting, benchmarking or libvirt."""
        argv = ["--cluster", "a", "run", "-e", "A=1", "--timeout", "3", "1", "--", "ls", "-l"]
        self.assertEqual(cli.command_of(argv), "run")
        one, whole = (vars(p.parse_args(argv)) for p in (cli.command_parser("run"), cli.parser()))
        self.assertEqual(one.pop("func").__qualname__, whole.pop("func").__qualname__)
        self.assertEqual(one, whole)
        for argv in (["-h"], ["--cluster"], ["--cluster", "a"], ["nosuch"], [], ["--cluster=a", "-x", "run"]):
            self.assertIsNone(cli.command_of(argv), argv)
        self.assertEqual(cli.command_of(["--cluster=a", "status"]), "status")
        code = ("import sys; sys.path.insert(0, %r); from netvm_cli import cli; "
                "cli.command_parser('run'); print(' '.join(sorted(m for m in sys.modules "
                "if m.startswith('netvm_cli.') and type(sys.modules[m]) is type(sys))))"
                % os.path.join(REPO, "tools"))   # a lazy module is of its own type until loaded
        r = subprocess.run([sys.executable, "-I", "-B", "-c", code], stdout=subprocess.PIPE, text=True, check=True)
        self.assertEqual(r.stdout.split(), ["netvm_cli.agent", "netvm_cli.cli", "netvm_cli.cluster",
                                            "netvm_cli.clustercmd", "netvm_cli.command", "netvm_cli.common",
                                            "netvm_cli.fabric"])

    def test_order_must_match_declarations(self):
        a, b = self.fake("one", "two"), self.fake("three")
        self.assertEqual([c.name for c in cli.commands_in_order((a, b), ("three", "one", "two"))],
                         ["three", "one", "two"])
        with self.assertRaisesRegex(AssertionError, "does not list"):
            cli.commands_in_order((a, b), ("one", "two"))
        with self.assertRaisesRegex(AssertionError, "does not list"):
            cli.commands_in_order((a,), ("one", "two", "three"))
        with self.assertRaisesRegex(AssertionError, "does not list"):
            cli.commands_in_order((a, b), ("one", "two", "three", "one"))
        with self.assertRaisesRegex(AssertionError, "'two' declared twice"):
            cli.commands_in_order((a, self.fake("two")), ("one", "two"))

    def test_a_command_without_handler_is_refused(self):
        m = type("Module", (), {"COMMANDS": [Command("idle", "no handler", lambda sp: None)]})
        with self.assertRaisesRegex(AssertionError, "'idle' sets no handler"):
            cli.parser((m,), ("idle",))

    def test_no_command_prints_help_and_exits_2(self):
        rc, out, err = netvm()
        self.assertEqual((rc, err), (2, ""))
        self.assertTrue(out.startswith("usage: netvm [-h] [--cluster NAME] COMMAND ..."), out)

    def test_unknown_command(self):
        rc, out, err = netvm("nosuch")
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("netvm: error: argument COMMAND: invalid choice: 'nosuch'", err)

    def test_cluster_before_or_after_the_command(self):
        for argv, name in ((["--cluster", "a", "status"], "a"),
                           (["status", "--cluster", "b"], "b"),
                           (["--cluster", "a", "status", "--cluster", "b"], "b"),
                           (["status"], "default")):
            self.expect(netvm(*argv), 1, "netvm: cluster '%s' is not up\n" % name)

    def test_cluster_from_environment(self):
        os.environ["NETVM_CLUSTER"] = "env1"
        self.expect(netvm("status"), 1, "netvm: cluster 'env1' is not up\n")
        self.expect(netvm("--cluster", "arg", "status"), 1, "netvm: cluster 'arg' is not up\n")


class TestArguments(StateDirCase):
    """Argument errors: the exact message and status, before anything runs."""

    def test_bad_cluster_names(self):
        for name in ("bad name", "bad/name", "-lead", ".hidden", "x" * 41):
            with self.subTest(name=name):
                self.refused("bad cluster name %r: use letters, digits, '.', '_', '-'" % name,
                             "--cluster=" + name, "status")
        self.expect(netvm("--cluster", "a" * 40, "status"), 1,
                    "netvm: cluster '%s' is not up\n" % ("a" * 40))
        os.environ["NETVM_CLUSTER"] = "no good"
        # even a command that acts on no cluster checks the name
        self.refused("bad cluster name 'no good': use letters, digits, '.', '_', '-'", "deps")

    @mock.patch.object(build, "build", return_value=None)
    def test_build_skip(self, built):
        self.refused("unknown build step(s): foo %s" % STEPS_MSG, "build", "--skip", "foo,qemu")
        self.refused("unknown build step(s): a,z %s" % STEPS_MSG, "build", "--skip", "z,a")
        built.assert_not_called()
        self.expect(netvm("build", "--skip", "qemu,,kernel"), 0)
        self.expect(netvm("build"), 0)
        self.assertEqual(built.call_args_list, [mock.call({"qemu", "kernel"}), mock.call(set())])

    @mock.patch.object(build, "step_deps")
    def test_deps(self, deps):
        self.expect(netvm("deps"), 0, "netvm: dependencies are installed\n")
        deps.assert_called_once_with()

    @mock.patch.object(Cluster, "run", autospec=True, return_value=7)
    def test_run(self, run):
        for argv in (["run", "0"], ["run", "0", "--"]):
            self.refused("run: no command given (usage: ./netvm run NODE -- CMD [ARG...])", *argv)
        self.refused("run: -e wants NAME=VALUE, got 'X'", "run", "-e", "A=1", "-e", "X", "0", "--", "true")
        run.assert_not_called()
        # the status is the command's; a '--' after the first one is the command's
        self.expect(netvm("run", "-e", "A=1", "-C", "/tmp", "1", "--", "echo", "--", "x"), 7)
        self.expect(netvm("run", "-i", "--timeout", "2.5", "0", "sh"), 7)
        (c1, n1, argv1), kw1 = run.call_args_list[0]
        (c2, n2, argv2), kw2 = run.call_args_list[1]
        self.assertEqual((c1.name, n1, argv1), ("default", "1", ["echo", "--", "x"]))
        self.assertEqual(kw1, dict(env=["A=1"], cwd="/tmp", stdin=False, timeout=None))
        self.assertEqual((n2, argv2, kw2), ("0", ["sh"], dict(env=[], cwd=None, stdin=True, timeout=2.5)))

    def test_run_separator(self):
        self.assertEqual(clustercmd.run_argv(["--", "echo", "--"], []), ["echo", "--"])
        self.assertEqual(clustercmd.run_argv(["echo", "--", "x"], ["A=="]), ["echo", "--", "x"])
        with self.assertRaisesRegex(NetvmError, r"^run: -e wants NAME=VALUE, got 'A'$"):
            clustercmd.run_argv(["true"], ["B=1", "A"])

    def test_run_usage_errors(self):
        rc, out, err = netvm("run")
        self.assertEqual((rc, out), (2, ""))
        self.assertTrue(err.endswith("netvm run: error: the following arguments are required: NODE, CMD\n"), err)

    @mock.patch.object(snapshot, "save", return_value=None)
    def test_save_order(self, save):
        self.refused("save: --order: 'x' is not a node id", "save", "--order", "1,x")
        self.refused("save: --order: '-1' is not a node id", "save", "--order", "-1")
        save.assert_not_called()
        self.expect(netvm("save", "--order", "1, 0,", "--drain", "0"), 0)
        self.expect(netvm("save"), 0)
        self.assertEqual([(c.name, o, d) for (c, o, d), _ in save.call_args_list],
                         [("default", [1, 0], 0.0), ("default", [], 1.0)])

    def test_inject_source(self):
        self.refused("inject: --hex: not an even number of hex digits", "inject", "--from", "0", "--hex", "abc")
        missing = os.path.join(self.tmp, "none")
        self.refused("inject: %s: No such file or directory" % missing, "inject", "--from", "0", missing)
        rc, out, err = netvm("inject", "--from", "0", "--hex", "00", missing)
        self.assertEqual((rc, out), (2, ""))
        self.assertTrue(err.endswith("netvm inject: error: argument FILE: not allowed with argument --hex\n"))
        frame = os.path.join(self.tmp, "frame")
        with open(frame, "wb") as f:
            f.write(b"\x00\xff\x10")
        self.assertEqual(inject.read_frame_arg(frame, None), b"\x00\xff\x10")
        self.assertEqual(inject.read_frame_arg(None, "00ff10"), b"\x00\xff\x10")

    @mock.patch.object(build, "build", side_effect=AssertionError("built"))
    def test_bench_arguments_before_building(self, built):
        self.refused("--iterations and --rounds must be at least 1", "bench", "--iterations", "0")
        self.refused("--iterations and --rounds must be at least 1", "bench", "--rounds", "0")
        self.refused("--sizes: '3' is not a size in 4..1048576", "bench", "--sizes", "4,3")
        self.refused("--sizes: '1048577' is not a size in 4..1048576", "bench", "--sizes", "1048577")
        self.refused("--tests: no test 'nope' (tests: write_lat notf_spin notf_wait notf_handler "
                     "read_lat write_bw read_bw atomic_lat cswap_lat unet_lat unet_bw tcp_lat "
                     "tcp_bw unet_stop)", "bench", "--tests", "write_lat,nope")
        for extra in (["--kernel"], ["--sizes", "8"], ["--tests", "tcp_lat"], ["--csv"]):
            self.refused("--eth has its own sizes and tests and prints a table: not with --kernel, "
                         "--sizes, --tests or --csv", "bench", "--eth", *extra)
        for extra in (["--kernel"], ["--sizes", "8"], ["--tests", "tcp_lat"], ["--csv"]):
            self.refused("--fi has its own sizes and tests and prints a table: not with --eth, "
                         "--kernel, --sizes, --tests or --csv", "bench", "--fi", *extra)

    def test_mpirun_fi_command_line(self):
        """--fi: Open MPI's cm pml on the ofi mtl, no BTL but self, the
        provider in FI_PROVIDER, the mtl's exclude list emptied."""
        cmd = mpirun.command("openmpi", 4, ["10.77.0.1", "10.77.0.2"], "eth1", ["A=b"], ["prog", "x"],
                             fi="netvm;ofi_rxd")
        self.assertEqual(cmd, ["mpirun.openmpi", "--allow-run-as-root", "-n", "4", "--host",
                               "10.77.0.1:2,10.77.0.2:2", "--mca", "plm_rsh_agent", mpirun.RSH,
                               "--mca", "oob_tcp_if_include", "10.77.0.0/24",
                               "--mca", "pml", "cm", "--mca", "mtl", "ofi", "--mca", "btl", "self",
                               "--mca", "mtl_ofi_provider_exclude", "",
                               "-x", "FI_PROVIDER=netvm;ofi_rxd", "-x", "A=b", "prog", "x"])
        verbose = mpirun.command("openmpi", 2, ["10.77.0.1"], "eth1", [], ["p"], fi="tcp",
                                 verbose_fi=True)
        self.assertEqual(verbose[-9:], ["-x", "FI_PROVIDER=tcp", "--mca", "mtl_base_verbose", "100",
                                        "--mca", "pml_base_verbose", "100", "p"])

    def test_mpirun_fi_native(self):
        """'netvm;^ofi_rxd' (or netvm-native): FI_PROVIDER leaves ofi_rxd
        out, the mtl's include list (instead of its exclude list: Open MPI
        refuses both) names netvm; bad names refused."""
        want = ["--mca", "btl", "self", "--mca", "mtl_ofi_provider_include", "netvm",
                "-x", "FI_PROVIDER=^ofi_rxd", "p"]
        for spec in ("netvm;^ofi_rxd", "netvm-native"):
            cmd = mpirun.command("openmpi", 2, ["10.77.0.1"], "eth1", [], ["p"], fi=spec)
            self.assertEqual(cmd[-len(want):], want)
        self.assertEqual(mpirun.fi_provider("netvm-rxd"), ("netvm;ofi_rxd", None, "netvm;ofi_rxd"))
        self.assertEqual(mpirun.fi_provider("a;^b;^c"), ("^b,c", "a", "a"))
        for bad in ("", "^ofi_rxd", "netvm;", "net vm", "netvm;^", "x" * 33, "netvm;'"):
            with self.assertRaises(NetvmError) as e:
                mpirun.fi_provider(bad)
            self.assertIn("--fi wants a libfabric provider name", str(e.exception))

    def test_mpirun_fi_verbs_universe(self):
        """verbs (ofi_rxm over soft RoCE) gets FI_UNIVERSE_SIZE=64, which
        keeps ofi_rxm's completion queue under rxe's max_cqe, unless -x
        gives one; other providers get none."""
        cmd = mpirun.command("openmpi", 2, ["10.77.0.1"], "eth1", [], ["p"], fi="verbs;ofi_rxm")
        self.assertEqual(cmd[-5:], ["-x", "FI_PROVIDER=verbs;ofi_rxm", "-x", "FI_UNIVERSE_SIZE=64", "p"])
        cmd = mpirun.command("openmpi", 2, ["10.77.0.1"], "eth1", ["FI_UNIVERSE_SIZE=8"], ["p"],
                             fi="verbs;ofi_rxm")
        self.assertEqual(cmd[-5:], ["-x", "FI_PROVIDER=verbs;ofi_rxm", "-x", "FI_UNIVERSE_SIZE=8", "p"])
        for spec in ("tcp", "netvm-native", "netvm;ofi_rxd"):
            cmd = mpirun.command("openmpi", 2, ["10.77.0.1"], "eth1", [], ["p"], fi=spec)
            self.assertFalse([a for a in cmd if a.startswith("FI_UNIVERSE_SIZE")], spec)

    @mock.patch.object(Cluster, "up", autospec=True)
    def test_demo_and_bench_use_their_own_cluster(self, up):
        up.side_effect = lambda c, *a, **kw: (_ for _ in ()).throw(NetvmError("up " + c.name))
        os.environ["NETVM_CLUSTER"] = "users"
        self.refused("up bench", "bench", "--no-build")
        self.refused("up mine", "--cluster", "mine", "bench", "--no-build")
        for argv, name in ((["demo"], "demo"), (["demo", "--cluster", "mine"], "mine")):
            rc, out, err = netvm(*argv, "--no-build")
            self.assertEqual((rc, err), (1, "netvm: error: up %s\n" % name))
            self.assertIn("booting a 2-node cluster '%s'" % name, out)

    def test_test_command_line(self):
        base = ["meson", "test", "-C", MESON_BUILD, "--print-errorlogs"]
        # one test more than there are CPUs, unless told otherwise
        self.assertEqual(testing.meson_test_cmd([], [], env={}, cpus=2),
                         base + ["--num-processes", "3"])
        self.assertEqual(testing.meson_test_cmd([], [], env={"MESON_TESTTHREADS": "1"}, cpus=2),
                         base)
        for told in (["-j", "1"], ["-j1"], ["--num-processes", "1"], ["--num-processes=1"]):
            self.assertEqual(testing.meson_test_cmd([], told, env={}, cpus=2), base + told)
        with mock.patch.object(testing.subprocess, "call", return_value=3) as call, \
                mock.patch.dict(os.environ, {"MESON_TESTTHREADS": "2"}):
            rc, out, err = netvm("test", "--no-build", "--suite", "unit", "--suite", "cli", "--", "--list")
        want = base + ["--suite", "unit", "--suite", "cli", "--list"]
        self.assertEqual((rc, out, err), (3, "netvm: running: %s\n" % " ".join(want), ""))
        self.assertEqual(call.call_args[0][0], want)


class TestStateFile(StateDirCase):
    """build/cluster/NAME/cluster.json: written whole, read back, and what
    the commands make of a missing, corrupt or stale one."""

    def test_round_trip(self):
        st = two_nodes(fabric={"pid": 5, "routes": {"0": {"1": "81"}}}, routes_mode="static")
        self.make_cluster("x", st)
        c = Cluster("x")
        self.assertEqual(c.load(), st)
        self.assertEqual(sorted(os.listdir(c.dir)), ["cluster.json"])   # no .tmp left
        c.state["nodes"][1]["ready"] = True
        c.save()
        self.assertEqual(Cluster("x").load()["nodes"][1], {"id": 1, "pid": 0, "port": 2, "ready": True})
        with open(c.state_file) as f:
            self.assertEqual(json.load(f), c.state)

    def test_missing_and_corrupt(self):
        c = Cluster("x")
        self.assertIsNone(c.load())
        os.makedirs(c.dir)
        with open(c.state_file, "w") as f:
            f.write('{"nodes": [')
        self.assertEqual(c.load(), {"nodes": []})       # corrupt: stale

    def test_not_up(self):
        self.refused("cluster 'default' is not up: run ./netvm up", "logs", "0")
        self.refused("cluster 'x' is not up: run ./netvm up (with --cluster x)", "--cluster", "x", "map")
        self.expect(netvm("--cluster", "x", "status"), 1, "netvm: cluster 'x' is not up\n")
        self.expect(netvm("--cluster", "x", "down"), 0, "netvm: cluster 'x' is not up\n")
        self.refused("cluster 'x' has no saved state: ./netvm save first", "--cluster", "x", "restore")

    def test_node_index(self):
        c = self.make_cluster("x", two_nodes())
        self.assertEqual(c.node("1"), {"id": 1, "pid": 0, "port": 2})
        self.assertEqual(c.node(0)["port"], 1)
        for bad in ("2", "-1", "a", "1.0", ""):
            with self.subTest(node=bad):
                with self.assertRaises(NetvmError) as e:
                    c.node(bad)
                self.assertEqual(str(e.exception), "no node %s in cluster 'x' (nodes: 0..1)" % bad)
        self.refused("no node 5 in cluster 'x' (nodes: 0..1)", "--cluster", "x", "console", "5")
        self.refused("node 1 is not running (./netvm status)", "--cluster", "x", "run", "1", "--", "true")

    def test_down_removes_leftovers(self):
        c = Cluster("x")
        os.makedirs(c.dir)
        open(c.path("node0.serial.log"), "w").close()
        self.expect(netvm("--cluster", "x", "down"), 0, "netvm: cluster 'x': removed leftovers\n")
        self.assertFalse(os.path.exists(c.dir))
        self.assertFalse(os.path.exists(self.clusters))    # the last one takes build/cluster along

    def test_logs_of_a_failed_up(self):
        c = Cluster("x")
        os.makedirs(c.dir)
        with open(c.path("node1.serial.log"), "wb") as f:
            f.write(b"boot\xc3\xa9 log\n")
        self.expect(netvm("--cluster", "x", "logs", "1"), 0, "boot\u00e9 log\n")
        self.refused("cluster 'x' is not up: run ./netvm up (with --cluster x)", "--cluster", "x", "logs", "0")

    def fake_node(self, name, i):
        """A process that passes for node i of cluster name (its name on the
        command line, as QEMU's -name puts it) until its stdin closes.
        Returned once it runs the shell: right after the fork its command
        line may still be empty (the kernel lets a vfork parent go on
        before the new program's arguments are in place)."""
        p = subprocess.Popen(["sh", "-c", "echo up; read x", "netvm-%s-node%d" % (name, i)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.addCleanup(lambda: (p.poll() is None and p.kill(), p.wait(), p.stdout.close()))
        self.assertEqual(p.stdout.readline(), b"up\n")
        return p

    def test_pid_alive_is_the_clusters_process(self):
        c = Cluster("x")
        p = self.fake_node("x", 1)
        self.assertTrue(c.pid_alive({"id": 1, "pid": p.pid}))
        self.assertFalse(c.pid_alive({"id": 0, "pid": p.pid}))          # another node's name
        self.assertFalse(Cluster("y").pid_alive({"id": 1, "pid": p.pid}))
        self.assertFalse(c.pid_alive({"id": 1, "pid": os.getpid()}))     # a recycled pid
        p.stdin.close()
        os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)            # a zombie now
        self.assertFalse(c.pid_alive({"id": 1, "pid": p.pid}))

    def test_stale_state_is_cleaned(self):
        p = self.fake_node("x", 0)
        c = self.make_cluster("x", two_nodes(nodes=[{"id": 0, "pid": p.pid, "port": 1},
                                                    {"id": 1, "pid": os.getpid(), "port": 2}]))
        self.assertEqual(c.clean_stale(), 1)        # node 0 runs: up refuses
        self.assertTrue(os.path.exists(c.state_file))
        p.stdin.close()
        p.wait()
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(c.clean_stale(), 0)
        self.assertEqual(out.getvalue(), "netvm: removing stale cluster 'x' (its VMs are gone)\n")
        self.assertFalse(os.path.exists(c.dir))

    def test_down_stops_the_nodes(self):
        p = self.fake_node("x", 0)
        reaper = threading.Thread(target=p.wait)     # as init reaps daemonized QEMU
        reaper.start()
        c = self.make_cluster("x", two_nodes(nodes=[{"id": 0, "pid": p.pid, "port": 1}]))
        rc, out, err = netvm("--cluster", "x", "down")
        reaper.join()
        self.assertEqual((rc, err, p.returncode), (0, "", -signal.SIGTERM))
        self.assertRegex(out, r"^netvm: cluster 'x' down \(1 node stopped in \d+\.\d s\)\n$")
        self.assertFalse(os.path.exists(c.dir))


class TestLimits(StateDirCase):
    """Node counts, memory and the nodes a frame may come from or go to."""

    def test_node_count(self):
        self.refused("-n must be at least 1", "up", "-n", "0")
        self.refused("at most 16 nodes (-n 17): each node is a QEMU with one emulated CPU, and 16 "
                     "is what 2 host cores carry", "up", "-n", "17")
        with mock.patch.object(cluster, "check_memory", side_effect=NetvmError("limits passed")) as cm:
            self.refused("limits passed", "up", "-n", "16", "--mem", "64")
            self.refused("limits passed", "up", "-n", "1")
        self.assertEqual(cm.call_args_list, [mock.call(16, 64), mock.call(1, 512)])

    def test_memory(self):
        with self.assertRaises(NetvmError) as e:
            cluster.check_memory(2, 1 << 40)
        self.assertRegex(str(e.exception), r"^2 nodes x 1099511627776 MiB need about 2199023255680 "
                         r"MiB but the host has \d+ MiB available: fewer nodes, or a smaller --mem$")
        cluster.check_memory(1, 1)          # fits

    def test_node_threads_scheduling(self):
        """vmsched (docs/bench.md, "The tail of a spinning round trip" and "Crossed CPUs"), on a
        stand-in process with no vCPU thread: the default, with no cpu
        cgroup to use, falls back to pin-idle with a note: pins it (its main
        loop) to its node's CPU and gives it the kernel's least slice,
        cross-idle to the next node's vCPU's CPU; NETVM_VM_SCHED=none
        leaves it alone; a bad value is refused by name."""
        p = subprocess.Popen(["sleep", "60"])
        try:
            before = vmsched.get_slice(p.pid)
            self.assertIsNotNone(before)
            allowed = os.sched_getaffinity(p.pid)
            with mock.patch.dict(os.environ, {"NETVM_VM_SCHED": "none"}):
                self.assertEqual(vmsched.apply(p.pid, "x", 1), set())
            self.assertEqual((vmsched.get_slice(p.pid), os.sched_getaffinity(p.pid)),
                             (before, allowed))
            with mock.patch.dict(os.environ, {"NETVM_VM_SCHED": "fast"}):
                with self.assertRaises(NetvmError) as e:
                    vmsched.apply(p.pid)
            self.assertEqual(str(e.exception),
                             "NETVM_VM_SCHED=fast: one of pin-idle, pin-group, cross-cgroup, "
                             "cross-idle, short-main, none")
            # cross-cgroup with no cpu cgroup here: pin-idle and a note
            vmsched._noted.discard("cgroup")
            err = io.StringIO()
            with mock.patch.dict(os.environ, {"NETVM_VM_SCHED": "cross-cgroup"}), \
                    redirect_stderr(err):
                done = vmsched.apply(p.pid, "x", 1)
            self.assertEqual(err.getvalue(), "netvm: warning: no cpu cgroup for the cross-cgroup "
                             "scheduling (no cpu cgroup controller mounted): pin-idle instead\n")
            self.assertNotIn("cgroup", done)
            self.assertIn("pin", done)
            self.assertNotIn("idle-vcpu", done)     # no thread of sleep is a vCPU
            self.assertEqual(os.sched_getaffinity(p.pid), {vmsched.node_cpu("x", 1)})
            # kernels before 6.12 have no per-task slice: apply says so
            self.assertEqual(vmsched.get_slice(p.pid),
                             vmsched.MAIN_SLICE_NS if "short-main" in done else before)
            self.assertEqual(os.sched_getscheduler(p.pid), os.SCHED_OTHER)
            with mock.patch.dict(os.environ, {"NETVM_VM_SCHED": "cross-idle"}):
                self.assertIn("pin", vmsched.apply(p.pid, "x", 1))
            self.assertEqual(os.sched_getaffinity(p.pid), {vmsched.main_cpu("x", 1)})
            # pin-group with no cpu cgroup: pin-idle and a note
            vmsched._noted.discard("cgroup")
            err = io.StringIO()
            with mock.patch.dict(os.environ, {"NETVM_VM_SCHED": "pin-group"}), redirect_stderr(err), \
                    mock.patch.object(cpugroups, "hierarchy", lambda mounts=None: None):
                done = vmsched.apply(p.pid, "x", 1)
            self.assertEqual((err.getvalue(), "cgroup" in done, "pin" in done),
                             ("netvm: warning: no cpu cgroup for the pin-group scheduling (no cpu "
                              "cgroup controller mounted): pin-idle instead\n", False, True))
            self.assertEqual(os.sched_getaffinity(p.pid), {vmsched.node_cpu("x", 1)})
            # the default: pin-idle, no cgroup tried
            vmsched._noted.discard("cgroup")
            err = io.StringIO()
            with mock.patch.dict(os.environ), redirect_stderr(err):
                os.environ.pop("NETVM_VM_SCHED", None)
                self.assertEqual(vmsched.policy(), "pin-idle")
                done = vmsched.apply(p.pid, "x", 0)
            self.assertEqual((err.getvalue(), "cgroup" in done, "pin" in done), ("", False, True))
            self.assertEqual(os.sched_getaffinity(p.pid), {vmsched.node_cpu("x", 0)})
            with mock.patch.dict(os.environ, {"NETVM_VM_SCHED": "cross-idle"}):
                self.assertEqual(vmsched.policy(), "cross-idle")
        finally:
            p.kill()
            p.wait()
        self.assertEqual(vmsched.apply(p.pid), set())   # the process is gone: nothing to do
        cpus = sorted(os.sched_getaffinity(0))
        # the two nodes of a pair land on different CPUs where there are two
        self.assertEqual(len({vmsched.node_cpu("bench", i) for i in (0, 1)}), min(2, len(cpus)))
        # cross-idle: each main loop on the CPU of the other node's vCPU
        self.assertEqual([vmsched.main_cpu("bench", i) for i in (0, 1)],
                         [vmsched.node_cpu("bench", i) for i in (1, 0)])

    def fake_cgroup_rmdir(self, path):
        """rmdir in a fake cgroup root, as cgroupfs does it: EBUSY while a
        live thread is in the group or a group is under it; its control
        files go with it."""
        for n in os.listdir(path):
            p = os.path.join(path, n)
            if os.path.isdir(p):
                raise OSError(errno.EBUSY, "busy", path)
            if n in ("tasks", "cgroup.threads", "cgroup.procs"):
                with open(p) as f:
                    if any(os.path.exists("/proc/%s" % t) for t in f.read().split()):
                        raise OSError(errno.EBUSY, "busy", path)
        shutil.rmtree(path)

    @staticmethod
    def fake_cgroup_attach(path, tid):
        """A thread into a fake cgroup: its tasks file lists one id a line,
        as cgroupfs shows it."""
        with open(path, "a") as f:
            f.write("%d\n" % tid)

    def vcpu_stand_in(self, names=("CPU 0/TCG",)):
        """A process with a main thread and a thread named as QEMU names
        its vCPU ("CPU 0/TCG"), or one of each of names; it prints a line
        once the names are set."""
        p = subprocess.Popen([sys.executable, "-c", (
            "import ctypes, sys, threading\n"
            "def named(n):\n"
            "    ev = threading.Event()\n"
            "    def body():\n"
            "        ctypes.CDLL(None).prctl(15, n, 0, 0, 0)\n"
            "        ev.set()\n"
            "        threading.Event().wait()\n"
            "    threading.Thread(target=body, daemon=True).start()\n"
            "    ev.wait()\n"
            "for n in %r: named(n)\n"
            "print('ready', flush=True); sys.stdin.read()\n" % ([n.encode() for n in names],))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.stdin.close)
        self.assertEqual(p.stdout.readline(), "ready\n")
        return p

    def test_pin_group(self):
        """pin-group (docs/bench.md, "One group per cluster,
        the link thread free"), on a stand-in with a vCPU and a link
        thread, in a fake cgroup v1 root: every thread in the cluster's
        one group, weighing one node per vCPU in it; the vCPU SCHED_IDLE
        and, with the main thread, pinned to the node's CPU; the link
        thread free on every CPU this process may use; release removes
        the group once empty.  libvirt's nodes (own_cgroups False): pinned
        as pin-idle, no group."""
        root = os.path.join(self.tmp, "cg")
        os.makedirs(root)
        found = (1, root)
        rmdir = mock.patch.object(cpugroups, "_rmdir", self.fake_cgroup_rmdir)
        rmdir.start()
        self.addCleanup(rmdir.stop)
        attach = mock.patch.object(cpugroups, "_attach", self.fake_cgroup_attach)
        attach.start()
        self.addCleanup(attach.stop)
        g = os.path.join(root, cpugroups.prefix() + "x", "all")
        anywhere = os.sched_getaffinity(0)
        with mock.patch.dict(os.environ, {"NETVM_VM_SCHED": "pin-group"}):
            p = self.vcpu_stand_in(("CPU 0/TCG", "lanai-link"))
            q = self.vcpu_stand_in(("CPU 0/TCG", "lanai-link"))
            for proc in (p, q):
                self.addCleanup(proc.wait)
                self.addCleanup(proc.kill)
            names = {proc.pid: dict((n, t) for t, n in vmsched.threads(proc.pid)) for proc in (p, q)}
            self.assertEqual(vmsched.apply(p.pid, "x", 0, found) - {"short-main"},
                             {"pin", "cgroup", "idle-vcpu"})
            with open(os.path.join(g, "cpu.shares")) as f:
                self.assertEqual(f.read(), str(cpugroups.WEIGHT_V1))
            vmsched.apply(q.pid, "x", 1, found)
            with open(os.path.join(g, "cpu.shares")) as f:
                self.assertEqual(f.read(), str(2 * cpugroups.WEIGHT_V1))   # two nodes now
            with open(os.path.join(g, "tasks")) as f:
                self.assertEqual(sorted(int(t) for t in f.read().split()),
                                 sorted(t for proc in (p, q) for t, _ in vmsched.threads(proc.pid)))
            for i, proc in enumerate((p, q)):
                vcpu, link = names[proc.pid]["CPU 0/TCG"], names[proc.pid]["lanai-link"]
                self.assertEqual(os.sched_getaffinity(vcpu), {vmsched.node_cpu("x", i)})
                self.assertEqual(os.sched_getaffinity(proc.pid), {vmsched.node_cpu("x", i)})
                self.assertEqual(os.sched_getaffinity(link), anywhere)
                self.assertEqual(os.sched_getscheduler(vcpu), os.SCHED_IDLE)
                self.assertEqual([os.sched_getscheduler(t) for t in (proc.pid, link)],
                                 [os.SCHED_OTHER] * 2)
            vmsched.release("x", found)                      # live threads in it: kept
            self.assertTrue(os.path.isdir(g))
            r = self.vcpu_stand_in(("CPU 0/TCG", "lanai-link"))
            self.addCleanup(r.wait)
            self.addCleanup(r.kill)
            link = [t for t, n in vmsched.threads(r.pid) if n == "lanai-link"][0]
            self.assertEqual(vmsched.apply(r.pid, "x", 1, found, own_cgroups=False) - {"short-main"},
                             {"pin", "idle-vcpu"} if vmsched.own_group(r.pid) else {"pin"})
            self.assertEqual(os.sched_getaffinity(link), {vmsched.node_cpu("x", 1)})
            for proc in (p, q):
                proc.kill()
                proc.wait()
        vmsched.release("x", found)
        self.assertFalse(os.path.exists(os.path.dirname(g)))

    def test_idle_vcpu_group(self):
        """pin-idle on a QEMU whose vCPU libvirt put in a cpu cgroup of its
        own (DOMAIN/vcpu0 beside DOMAIN/emulator, a fake v1 root here):
        that group made idle (cpu.idle 1) and the vCPU SCHED_IDLE, both
        pinned to the node's CPU.  A vCPU group that holds another thread
        too, or the main loop's own group, is left as it was; so is the
        vCPU's policy."""
        root = os.path.join(self.tmp, "cg")
        dom = os.path.join(root, "machine", "dom")
        p = self.vcpu_stand_in()
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        (vcpu,) = [t for t, name in vmsched.threads(p.pid) if name == "CPU 0/TCG"]
        for d, tids in (("emulator", [p.pid]), ("vcpu0", [vcpu])):
            os.makedirs(os.path.join(dom, d))
            for fn, text in (("tasks", "\n".join(map(str, tids))), ("cpu.idle", "0")):
                with open(os.path.join(dom, d, fn), "w") as f:
                    f.write(text)
        groups = {str(p.pid): "/machine/dom/emulator", "%d/task/%d" % (p.pid, vcpu): "/machine/dom/vcpu0"}
        with mock.patch.object(cpugroups, "own_path", lambda v, pid="self": groups[str(pid)]), \
                mock.patch.object(vmsched, "own_group", lambda pid: False), \
                mock.patch.dict(os.environ, {"NETVM_VM_SCHED": "pin-idle"}):
            with open(os.path.join(dom, "vcpu0", "tasks"), "a") as f:
                f.write("\n%d" % p.pid)          # not the vCPU's alone: left alone
            self.assertEqual(vmsched.apply(p.pid, "x", 0, (1, root)) - {"short-main"}, {"pin"})
            self.assertEqual(os.sched_getscheduler(vcpu), os.SCHED_OTHER)
            with open(os.path.join(dom, "vcpu0", "tasks"), "w") as f:
                f.write(str(vcpu))
            groups["%d/task/%d" % (p.pid, vcpu)] = "/machine/dom/emulator"   # the main loop's group
            self.assertEqual(vmsched.apply(p.pid, "x", 0, (1, root)) - {"short-main"}, {"pin"})
            groups["%d/task/%d" % (p.pid, vcpu)] = "/machine/dom/vcpu0"
            with open(os.path.join(dom, "vcpu0", "cpu.idle")) as f:
                self.assertEqual(f.read(), "0")
            done = vmsched.apply(p.pid, "x", 0, (1, root))
        self.assertEqual(done - {"short-main"}, {"pin", "idle-group", "idle-vcpu"})
        for d, idle in (("vcpu0", "1"), ("emulator", "0")):
            with open(os.path.join(dom, d, "cpu.idle")) as f:
                self.assertEqual(f.read(), idle)
        self.assertEqual(os.sched_getscheduler(vcpu), os.SCHED_IDLE)
        self.assertEqual(os.sched_getscheduler(p.pid), os.SCHED_OTHER)
        self.assertEqual({os.sched_getaffinity(t) == {vmsched.node_cpu("x", 0)} for t in (vcpu, p.pid)}, {True})

    def test_cross_cgroup(self):
        """cross-cgroup (docs/bench.md, "Crossed CPUs in per-CPU cgroups")
        on a stand-in with a vCPU thread, in a fake cgroup v1 root: the
        vCPU in the cluster's group of its node's CPU, pinned there and
        SCHED_IDLE, the main thread in the group of the next node's vCPU's
        CPU; each group weighs one node; down's release removes the groups
        once no thread is left in them, up's remove_stale only this
        checkout's empty ones.  No writable controller: pin-idle, and one
        note."""
        root = os.path.join(self.tmp, "cg")
        os.mkdir(root)
        found = (1, root)
        os.environ["NETVM_VM_SCHED"] = "cross-cgroup"
        rmdir = mock.patch.object(cpugroups, "_rmdir", self.fake_cgroup_rmdir)
        rmdir.start()
        self.addCleanup(rmdir.stop)
        p = self.vcpu_stand_in()
        try:
            (vcpu,) = [t for t, name in vmsched.threads(p.pid) if name == "CPU 0/TCG"]
            done = vmsched.apply(p.pid, "x", 1, found)
            self.assertEqual(done - {"short-main"}, {"pin", "cgroup", "idle-vcpu"})
            vcpu_cpu, main_cpu = vmsched.node_cpu("x", 1), vmsched.main_cpu("x", 1)
            self.assertEqual(os.sched_getaffinity(vcpu), {vcpu_cpu})
            self.assertEqual(os.sched_getaffinity(p.pid), {main_cpu})
            self.assertEqual(os.sched_getscheduler(vcpu), os.SCHED_IDLE)
            self.assertEqual(os.sched_getscheduler(p.pid), os.SCHED_OTHER)
            g = os.path.join(root, cpugroups.prefix() + "x")
            self.assertRegex(cpugroups.prefix(), r"^netvm-[0-9a-f]{8}-$")
            others = sorted(t for t, _ in vmsched.threads(p.pid) if t != vcpu)
            if vcpu_cpu == main_cpu:     # a one-CPU host: one group holds all
                groups = {vcpu_cpu: sorted(others + [vcpu])}
            else:
                groups = {vcpu_cpu: [vcpu], main_cpu: others}
            self.assertEqual(sorted(os.listdir(g)), ["cpu%d" % c for c in sorted(groups)])
            for cpu, tids in groups.items():
                with open(os.path.join(g, "cpu%d" % cpu, "tasks")) as f:
                    self.assertEqual(sorted(int(t) for t in f.read().split()), tids)
                with open(os.path.join(g, "cpu%d" % cpu, "cpu.shares")) as f:
                    self.assertEqual(f.read(), "1024")
            # the host's own cgroups untouched
            with open("/proc/%d/cgroup" % p.pid) as f:
                self.assertNotIn("netvm-", f.read())
            # a stale group of this checkout and one of another checkout
            os.makedirs(os.path.join(root, cpugroups.prefix() + "gone", "cpu0"))
            os.makedirs(os.path.join(root, "netvm-00000000-gone", "cpu0"))
            self.assertEqual(cpugroups.remove_stale(found), ["gone"])
            self.assertEqual(sorted(os.listdir(root)), sorted([cpugroups.prefix() + "x",
                                                               "netvm-00000000-gone"]))
            vmsched.release("x", found)              # a live thread in it: kept
            self.assertTrue(os.path.isdir(g))
        finally:
            p.kill()
            p.wait()
        vmsched.release("x", found)
        self.assertEqual(os.listdir(root), ["netvm-00000000-gone"])
        vmsched.release("x", found)                  # nothing left: nothing to do
        # no cpu controller: pin-idle (autogroups permitting), one note for all nodes
        vmsched._noted.discard("cgroup")
        err = io.StringIO()
        for attempt in range(2):
            p = self.vcpu_stand_in()
            try:
                with redirect_stderr(err):
                    done = vmsched.apply(p.pid, "x", 1)
                self.assertNotIn("cgroup", done)
                self.assertEqual({c for t, _ in vmsched.threads(p.pid)
                                  for c in os.sched_getaffinity(t)}, {vmsched.node_cpu("x", 1)})
            finally:
                p.kill()
                p.wait()
        self.assertEqual(err.getvalue(), "netvm: warning: no cpu cgroup for the cross-cgroup "
                         "scheduling (no cpu cgroup controller mounted): pin-idle instead\n")

    def test_cgroup_hierarchy(self):
        """Where the cpu controller is: v1's cpu hierarchy first, else a v2
        mount listing cpu; in v2 the cluster's group is a threaded root
        with one threaded child per CPU, weighted cpu.weight."""
        mounts = os.path.join(self.tmp, "mounts")
        v2 = os.path.join(self.tmp, "unified")
        os.mkdir(v2)
        with open(os.path.join(v2, "cgroup.controllers"), "w") as f:
            f.write("memory pids\n")
        lines = ["tmpfs /sys/fs/cgroup tmpfs rw 0 0",
                 "cgroup2 %s cgroup2 rw,relatime 0 0" % v2]
        with open(mounts, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.assertIsNone(cpugroups.hierarchy(mounts))
        with open(os.path.join(v2, "cgroup.controllers"), "w") as f:
            f.write("cpu memory pids\n")
        self.assertEqual(cpugroups.hierarchy(mounts), (2, v2))
        with open(mounts, "a") as f:
            f.write("cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,relatime,cpu,cpuacct 0 0\n")
        self.assertEqual(cpugroups.hierarchy(mounts), (1, "/sys/fs/cgroup/cpu,cpuacct"))
        self.assertIsNone(cpugroups.hierarchy(os.path.join(self.tmp, "none")))
        with open(os.path.join(v2, "cgroup.subtree_control"), "w") as f:
            f.write("memory\n")
        with mock.patch.object(cpugroups, "own_path", return_value="/"):
            g = cpugroups.Groups("y", (2, v2))
            g.place(4242, {0: [4242], 1: [4243, 4244]}, lambda t: t == 4243)
        with open(os.path.join(v2, "cgroup.subtree_control")) as f:
            self.assertEqual(f.read(), "+cpu")
        d = os.path.join(v2, cpugroups.prefix() + "y")
        expect = {"cgroup.subtree_control": "+cpu", "cgroup.procs": "4242",
                  "cpu0/cgroup.type": "threaded", "cpu0/cgroup.threads": "4242",
                  "cpu0/cpu.weight": "100", "cpu1/cgroup.type": "threaded",
                  "cpu1/cgroup.threads": "42434244", "cpu1/cpu.weight": "100"}
        for fn, text in expect.items():
            with open(os.path.join(d, fn)) as f:
                self.assertEqual(f.read(), text, fn)

    def test_topology_file_must_exist(self):
        topo = os.path.join(self.tmp, "none.topo")
        self.refused("--topology %s: no such file" % topo, "up", "--mem", "1", "--topology", topo)

    def test_inject_nodes(self):
        self.make_cluster("x", two_nodes())
        x = ("--cluster", "x", "inject")
        self.refused("inject: --from 2: cluster 'x' has nodes 0..1", *x, "--from", "2", "--hex", "00")
        self.refused("inject: --to 5: cluster 'x' has nodes 0..1", *x, "--from", "0", "--to", "5", "--hex", "00")
        self.refused("inject: --from -1: cluster 'x' has nodes 0..1", *x, "--from", "-1", "--hex", "00")
        self.refused("inject: --count must be at least 1", *x, "--from", "0", "--count", "0", "--hex", "00")
        self.refused("inject: back to back, node 0's frames can only reach node 1",
                     *x, "--from", "0", "--to", "0", "--hex", "00")
        self.refused("inject: a frame is 1..65600 bytes, not 65601", *x, "--from", "0", "--hex", "00" * 65601)
        self.refused("inject: a frame is 1..65600 bytes, not 0", *x, "--from", "0", "--hex", "")
        self.make_cluster("one", two_nodes(nodes=[{"id": 0, "pid": 0, "port": 1}]))
        self.refused("inject: cluster 'one' has no link (1 node)", "--cluster", "one", "inject",
                     "--from", "0", "--hex", "00")

    def test_inject_back_to_back_writes_the_fifo(self):
        c = self.make_cluster("x", two_nodes())
        fifo = c.path("node1.inject")
        os.mkfifo(fifo, 0o600)
        r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)   # QEMU's end
        self.addCleanup(os.close, r)
        self.expect(netvm("--cluster", "x", "inject", "--from", "0", "--hex", "0102ff", "--crc",
                          "--count", "2"), 0, "injected 2 frame(s) of 7 bytes on the link into node 1\n")
        rec = b"\x00\x00\x00\x07\x01\x02\xff" + struct.pack(">I", zlib.crc32(b"\x01\x02\xff"))
        self.assertEqual(os.read(r, 1000), rec * 2)
        # none (an old cluster), then one that no QEMU reads
        for why in ("No such file or directory", "No such device or address"):
            self.refused("node 0's inject FIFO %s: %s (a cluster started before ./netvm inject "
                         "existed has none)" % (fabric.rel(c.path("node0.inject")), why),
                         "--cluster", "x", "inject", "--from", "1", "--hex", "00")
            if not os.path.exists(c.path("node0.inject")):
                os.mkfifo(c.path("node0.inject"), 0o600)

    def test_frame_bytes_through_the_switch(self):
        c = self.make_cluster("x", two_nodes(fabric={"routes": {"0": {"2": "8182"}}}))
        crc = struct.pack(">I", zlib.crc32(b"\x01\x02"))
        self.assertEqual(inject.frame_bytes(c, 0, 2, b"\x01\x02", True), b"\x81\x82\x01\x02" + crc)
        self.assertEqual(inject.frame_bytes(c, 0, 2, b"\x01\x02", False), b"\x81\x82\x01\x02")
        # route bytes given by hand are not part of the CRC
        self.assertEqual(inject.frame_bytes(c, 0, None, b"\x83\x01\x02", True), b"\x83\x01\x02" + crc)
        with self.assertRaisesRegex(NetvmError, r"^inject: no route from node 0 to node 1$"):
            inject.frame_bytes(c, 0, 1, b"\x01", False)

    def test_switch_port_names(self):
        c = self.make_cluster("x", two_nodes())
        c.load()
        self.assertEqual([fabric.port_arg(c, a) for a in ("1", "s0:3", "node7")], ["node1", "s0:3", "node7"])
        with self.assertRaisesRegex(NetvmError, r"^no node 2 in cluster 'x' \(nodes 0\.\.1\); "
                                    r"a switch port is SWITCH:PORT$"):
            fabric.port_arg(c, "2")


class TestTopology(StateDirCase):
    """Which clusters go through netvm-switch, the topology they run, its
    routes, and how each node's QEMU is linked."""

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_which_clusters_use_the_switch(self):
        self.assertEqual([cluster.uses_switch(n, None) for n in (1, 2, 3, 16)], [False, False, True, True])
        self.assertTrue(cluster.uses_switch(2, "two.topo"))

    def test_single_switch_topology(self):
        self.assertEqual(fabric.single_topology(3),
                         "# written by ./netvm up: one 3-port switch, node I on port I\n"
                         "switch s0 3\nnode 0 s0:0\nnode 1 s0:1\nnode 2 s0:2\n")

    def test_routes_of_a_topology(self):
        data, routes = fabric.load_routes(self.write("s.topo", fabric.single_topology(3)), 3)
        self.assertEqual(routes, {0: {1: "81", 2: "82"}, 1: {0: "80", 2: "82"}, 2: {0: "80", 1: "81"}})
        self.assertEqual([s["name"] for s in data["switches"]], ["s0"])
        # nodes the cluster does not use are left out
        self.assertEqual(fabric.load_routes(self.write("s4.topo", fabric.single_topology(4)), 2)[1],
                         {0: {1: "81"}, 1: {0: "80"}})
        two = self.write("two.topo", "switch s0 2\nnode 0 s0:0\nnode 1 s0:1\n")
        with self.assertRaisesRegex(NetvmError, r"^topology \S*two\.topo has no node 2 \(nodes: 0,1\)$"):
            fabric.load_routes(two, 3)
        apart = self.write("apart.topo", "switch s0 2\nswitch s1 2\nnode 0 s0:0\nnode 1 s0:1\nnode 2 s1:0\n")
        with self.assertRaisesRegex(NetvmError, r"^topology \S*apart\.topo: node 0 cannot reach node 2$"):
            fabric.load_routes(apart, 3)
        bad = self.write("bad.topo", "switch s0\n")
        with self.assertRaisesRegex(NetvmError, r"^netvm-switch --routes \S*bad\.topo: \S"):
            fabric.load_routes(bad, 1)

    def test_route_lines_by_destination(self):
        fab = {"routes": {"0": {"10": "8a", "2": "82", "9": "89"}}}
        self.assertEqual(fabric.route_lines(fab, 0), "2 82\n9 89\n10 8a\n")

    def qemu_cmd(self, c, i, n, template=False):
        cmd = c.qemu_cmd(i, n, 4000 + i, "tcg", 256, ["-extra"], template=template)
        return cmd, " ".join(cmd)

    def test_back_to_back_link(self):
        with mock.patch.dict(os.environ, {"NETVM_LINK_THREAD": "0"}):
            c = self.make_cluster("x", two_nodes())
            for i in (0, 1):
                cmd, text = self.qemu_cmd(c, i, 2)
                # absolute: QEMU leaves its working directory while it connects
                self.assertIn("stream,id=link0,server=%s,addr.type=unix,addr.path=%s"
                              % ("on" if i == 0 else "off", c.path("link0.sock")), cmd)
                self.assertIn("lanai,id=nic,netdev=link0,node-id=%d,sram-size=8388608,peer-node=%d"
                              % (i, 1 - i), cmd)
                self.assertIn("pipe,id=inject,path=node%d.inject" % i, cmd)
                self.assertTrue(stat.S_ISFIFO(os.stat(c.path("node%d.inject" % i)).st_mode))
                self.assertIn("hostfwd=tcp:127.0.0.1:%d-:7777" % (4000 + i), text)
                self.assertEqual(cmd[-1], "-extra")
                # debug-threads: the vCPU thread is named "CPU 0/TCG" (perf sched, vmsched)
                self.assertIn("guest=netvm-x-node%d,debug-threads=on" % i, cmd)

    def test_yield_wait_env(self):
        c = self.make_cluster("x", two_nodes())
        nic = [a for a in self.qemu_cmd(c, 0, 2)[0] if a.startswith("lanai,")]
        self.assertEqual(len(nic), 1)
        self.assertNotIn("yield-wait-us", nic[0])
        with mock.patch.dict(os.environ, {"NETVM_YIELD_WAIT_US": "1000"}):
            nic = [a for a in self.qemu_cmd(c, 1, 2)[0] if a.startswith("lanai,")]
            self.assertTrue(nic[0].endswith(",yield-wait-us=1000"), nic)
        for bad in ("abc", "-5", "1e3"):
            with mock.patch.dict(os.environ, {"NETVM_YIELD_WAIT_US": bad}):
                with self.assertRaisesRegex(NetvmError, "NETVM_YIELD_WAIT_US must be a number"):
                    self.qemu_cmd(c, 0, 2)

    def test_back_to_back_link_thread(self):
        c = self.make_cluster("x", two_nodes())
        # the default: NETVM_LINK_THREAD unset
        for i in (0, 1):
            cmd, text = self.qemu_cmd(c, i, 2)
            # the device opens the socket (node 0 listens) and the inject FIFO;
            # no netdev, no redirector
            self.assertIn("lanai,id=nic,link-socket=%s%s,node-id=%d,sram-size=8388608,"
                          "peer-node=%d,link-inject=%s"
                          % (c.path("link0.sock"), ",link-listen=on" if i == 0 else "", i, 1 - i,
                             c.path("node%d.inject" % i)), cmd)
            self.assertNotIn("link0,", text.replace("link0.sock", ""))
            self.assertNotIn("filter-redirector", text)
            self.assertTrue(stat.S_ISFIFO(os.stat(c.path("node%d.inject" % i)).st_mode))

    def test_switched_link_thread(self):
        c = self.make_cluster("x", two_nodes(fabric={"pid": 1, "routes": {}}))
        cmd, text = self.qemu_cmd(c, 2, 3)     # the default: NETVM_LINK_THREAD unset
        self.assertIn("lanai,id=nic,link-socket=%s,node-id=2,sram-size=8388608" % c.path("node2.sock"), cmd)
        self.assertNotIn("-netdev stream", text)
        self.assertNotIn("link-listen", text)

    def test_single_node_has_no_peer(self):
        c = self.make_cluster("x", two_nodes(nodes=[]))
        cmd, text = self.qemu_cmd(c, 0, 1)
        self.assertIn("lanai,id=nic,link-socket=%s,link-listen=on,node-id=0,sram-size=8388608"
                      % c.path("link0.sock"), cmd)
        self.assertNotIn("inject", text)

    def test_link_thread_setting(self):
        c = self.make_cluster("x", two_nodes())
        with mock.patch.dict(os.environ, {"NETVM_LINK_THREAD": "yes"}):
            with self.assertRaisesRegex(NetvmError, r"^NETVM_LINK_THREAD=yes: 1 \(the default"):
                self.qemu_cmd(c, 0, 2)

    def test_switched_link(self):
        with mock.patch.dict(os.environ, {"NETVM_LINK_THREAD": "0"}):
            c = self.make_cluster("x", two_nodes(fabric={"pid": 1, "routes": {}}))
            cmd, text = self.qemu_cmd(c, 2, 3)
            self.assertIn("stream,id=link0,server=off,addr.type=unix,addr.path=%s,reconnect-ms=500"
                          % c.path("node2.sock"), cmd)
            self.assertTrue(os.path.isabs(c.path("node2.sock")))
            self.assertIn("lanai,id=nic,netdev=link0,node-id=2,sram-size=8388608", cmd)
            self.assertNotIn("peer-node", text)
            self.assertNotIn("inject", text)      # the switch checks and injects
            self.assertEqual(os.listdir(c.dir), ["cluster.json"])
            # two nodes through the switch (--topology): no peer-node either
            cmd, text = self.qemu_cmd(c, 0, 2)
            self.assertIn("lanai,id=nic,netdev=link0,node-id=0,sram-size=8388608", cmd)
            self.assertIn("stream,id=link0,server=off,addr.type=unix,addr.path=%s,reconnect-ms=500"
                          % c.path("node0.sock"), cmd)

    def test_link_socket_path_limit(self):
        c = self.make_cluster("x", two_nodes(fabric={"pid": 1, "routes": {}}))
        c.dir = "/" + "d" * (cluster.SUN_PATH_MAX - len("/node2.sock") - 1)
        self.assertEqual(len(c.abs_socket("node2.sock")), cluster.SUN_PATH_MAX)
        c.dir += "d"
        with self.assertRaisesRegex(NetvmError, r"^socket path /d+/node2\.sock is 108 bytes, more than "
                                    r"a unix socket's 107: use a shorter --cluster name or checkout path$"):
            self.qemu_cmd(c, 2, 3)

    def test_template_ram(self):
        c = self.make_cluster("x", two_nodes(template_ram="/t.ram"))
        _, node = self.qemu_cmd(c, 0, 2)
        _, tmpl = self.qemu_cmd(c, 0, 1, template=True)
        self.assertIn("memory-backend-file,id=ram,size=256M,mem-path=/t.ram,share=off,readonly=on,rom=off", node)
        self.assertIn("memory-backend-file,id=ram,size=256M,mem-path=/t.ram,share=on", tmpl)
        self.assertIn("netvm.node=0", node)
        self.assertIn("netvm.template=1", tmpl)


class TestLibvirt(StateDirCase):
    """Clusters as libvirt domains (libvirt.py): --libvirt's checks, the
    nodes spread over the URIs, each node's domain XML against the QEMU
    command line ./netvm up gives it, and the commands that go through
    virsh for such a cluster (virsh replaced by a recorder)."""

    def test_uri_checks(self):
        self.refused("--libvirt wants URI[,URI...], e.g. qemu:///system or "
                     "qemu:///system,qemu+ssh://root@host2/system", "up", "--libvirt", "qemu:///system,")
        self.refused("--libvirt xen:///system: not a libvirt QEMU URI (qemu:///system, qemu:///session, "
                     "qemu+ssh://[USER@]HOST[:PORT]/system)", "up", "--libvirt", "xen:///system")
        self.refused("--libvirt qemu+tcp://h/system: a remote host is reached through "
                     "qemu+ssh://[USER@]HOST[:PORT]/system only (the front door needs ssh to it as well)",
                     "up", "--libvirt", "qemu:///system,qemu+tcp://h/system")
        self.refused("--libvirt qemu+ssh://h/session: a remote host's system daemon (/system), as root there",
                     "up", "--libvirt", "qemu:///system,qemu+ssh://h/session")
        self.refused("--libvirt: 1 to 16 nodes (-n 17)", "up", "-n", "17", "--libvirt", "qemu:///system")
        self.refused("--libvirt takes neither --topology nor --qemu-arg",
                     "up", "--libvirt", "qemu:///system", "--qemu-arg=-S")
        self.assertFalse(os.path.exists(self.clusters))
        self.assertEqual(libvirt.parse_uris("qemu:///system,qemu+ssh://u@h:22/system?keyfile=/k"),
                         ["qemu:///system", "qemu+ssh://u@h:22/system?keyfile=/k"])

    def test_ssh_takes_the_uris_options(self):
        """The front door's ssh to a remote host uses what the URI gives
        libvirt: user, port, keyfile=, no_verify=1, command=."""
        h = libvirt_remote.Host("qemu+ssh://me@h2:2222/system?keyfile=/k/id&no_verify=1&command=/x/ssh")
        self.assertEqual(h.argv("-N"), ["/x/ssh", "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20",
                                        "-p", "2222", "-i", "/k/id", "-o", "StrictHostKeyChecking=no",
                                        "-N", "me@h2"])
        self.assertEqual(libvirt_remote.Host("qemu+ssh://h2/system").argv(),
                         ["ssh", "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20", "h2"])

    def fake_ssh(self, script):
        path = os.path.join(self.tmp, "fake-ssh")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + script + "\n")
        os.chmod(path, 0o755)
        return libvirt_remote.Host("qemu+ssh://root@h2/system?command=" + path)

    def test_remote_check_errors(self):
        """Before anything is defined: ssh's own failure, and a remote host
        without the checkout, each with what to do."""
        with self.assertRaises(NetvmError) as e:
            libvirt_remote.check(self.fake_ssh("echo 'Connection refused' >&2; exit 255"))
        self.assertEqual(str(e.exception), "cannot reach root@h2 over ssh (qemu+ssh://root@h2/system?command=%s): "
                         "Connection refused" % os.path.join(self.tmp, "fake-ssh"))
        with self.assertRaises(NetvmError) as e:
            libvirt_remote.check(self.fake_ssh("echo 'missing: /r/build/x'; exit 4"))
        self.assertIn(": missing: /r/build/x: a remote host needs this checkout at the same path (%s), built "
                      "(./netvm build there), and libvirt" % cluster.REPO, str(e.exception))

    def test_remote_topology(self):
        """One switch per host: s0 here with this host's nodes and an
        uplink per remote host, which dials s0 on this host's address."""
        where = ["qemu:///system", "qemu+ssh://a/system", "qemu:///system", "qemu+ssh://a/system",
                 "qemu+ssh://b/system"]
        with mock.patch.object(libvirt_remote, "fabric_port", side_effect=[7101, 7102]):
            text, info = libvirt_remote.topology(where, {"qemu+ssh://a/system": "192.0.2.1",
                                                         "qemu+ssh://b/system": "198.51.100.1"})
        self.assertEqual(text.splitlines()[1:], [
            "switch s0 4", "node 0 s0:0", "node 2 s0:1",
            "switch h1 3", "node 1 h1:0", "node 3 h1:1", "link s0:2 h1:2 tcp:192.0.2.1:7101",
            "switch h2 2", "node 4 h2:0", "link s0:3 h2:1 tcp:198.51.100.1:7102"])
        self.assertEqual(info, {"qemu+ssh://a/system": ("h1", 7101), "qemu+ssh://b/system": ("h2", 7102)})

    def test_remote_node_domain(self):
        """With a node on another host even 2 nodes go through switches:
        the remote node's link is its own switch's TCP port on that host's
        loopback, the local one's our switch's socket; no peer-node, no
        FIFO."""
        c = self.make_cluster("x", two_nodes(nodes=[], fabric={"pid": 1}, libvirt={
            "uris": ["qemu:///system", "qemu+ssh://h/system"],
            "remote": {"qemu+ssh://h/system": {"switch": "h1", "base": 30000, "nodes": [1]}}}))
        # the local node's NIC reads our switch's socket in its thread; the
        # remote one's link is TCP, a netdev
        args = [a.get("value") for a in self.domain(c, 0, 2).iter("{%s}arg" % libvirt.QEMU_NS)]
        self.assertIn("lanai,id=nic,link-socket=%s,node-id=0,sram-size=8388608,addr=0x12" % c.path("node0.sock"),
                      args)
        self.assertNotIn("-netdev", args[args.index("-device", args.index("-device") + 1):])
        with mock.patch.dict(os.environ, {"NETVM_LINK_THREAD": "0"}):
            args = [a.get("value") for a in self.domain(c, 0, 2).iter("{%s}arg" % libvirt.QEMU_NS)]
        self.assertIn("stream,id=link0,server=off,addr.type=unix,addr.path=%s,reconnect-ms=500"
                      % c.path("node0.sock"), args)
        self.assertIn("lanai,id=nic,netdev=link0,node-id=0,sram-size=8388608,addr=0x12", args)
        args = [a.get("value") for a in self.domain(c, 1, 2).iter("{%s}arg" % libvirt.QEMU_NS)]
        self.assertIn("stream,id=link0,server=off,addr.type=inet,addr.host=127.0.0.1,addr.port=30001,"
                      "reconnect-ms=500", args)
        self.assertIn("lanai,id=nic,netdev=link0,node-id=1,sram-size=8388608,addr=0x12", args)
        self.assertNotIn("-chardev", args)

    def test_round_robin(self):
        self.assertEqual(libvirt.spread(5, ["a", "b"]), ["a", "b", "a", "b", "a"])
        self.assertEqual(libvirt.spread(2, ["a", "b", "c"]), ["a", "b"])
        self.assertEqual(libvirt.parse_uris("qemu:///system, qemu:///session"),
                         ["qemu:///system", "qemu:///session"])

    def domain(self, c, i, n):
        return ET.fromstring(libvirt.domain_xml(c, i, n, 4000 + i, "tcg", 256))

    def test_domain_has_the_nodes_devices(self):
        c = self.make_cluster("x", two_nodes(data_net={"group": "239.77.0.1", "port": 5555}))
        ns = {"q": libvirt.QEMU_NS}
        for i in (0, 1):
            dom = self.domain(c, i, 2)
            self.assertEqual(dom.findtext("name"), "netvm-x-node%d" % i)
            self.assertEqual(dom.findtext("devices/emulator"), cluster.qemu_binary())
            self.assertEqual(dom.find("memory").attrib, {"unit": "MiB"})
            self.assertEqual(dom.findtext("memory"), "256")
            self.assertEqual(dom.findtext("os/cmdline"),
                             "console=ttyS0 quiet panic=-1 netvm.node=%d netvm.data=10.77.0.%d" % (i, i + 1))
            self.assertEqual(dom.find("devices/filesystem/source").get("dir"), cluster.REPO)
            self.assertIsNotNone(dom.find("devices/filesystem/readonly"))
            self.assertEqual(dom.find("seclabel").attrib, {"type": "static", "model": "dac", "relabel": "no"})
            self.assertEqual(dom.find("devices/serial/log").get("file"), c.path("node%d.serial.log" % i))
            for thread in ("1", "0"):
                # every device ./netvm up gives node i that libvirt's XML does
                # not express is passed through, with a fixed PCI slot; the
                # link as up's, read by the NIC's thread or (0) a netdev
                with mock.patch.dict(os.environ, {"NETVM_LINK_THREAD": thread}):
                    args = [a.get("value") for a in self.domain(c, i, 2).findall("q:commandline/q:arg", ns)]
                    cmd = c.qemu_cmd(i, 2, 4000 + i, "tcg", 256, [])
                devices = [cmd[k + 1] for k, a in enumerate(cmd) if a == "-device"]
                passed = [args[k + 1] for k, a in enumerate(args) if a == "-device"]
                expressed = ("virtio-9p-pci,", "virtio-blk-pci,")
                self.assertEqual(sorted(re.sub(r",addr=0x1[0-9a-f]$", "", d) for d in passed),
                                 sorted(d for d in devices if not d.startswith(expressed)))
                if thread == "1":
                    self.assertIn("lanai,id=nic,link-socket=%s%s,node-id=%d,sram-size=8388608,peer-node=%d,"
                                  "link-inject=%s,addr=0x12" % (c.path("link0.sock"), ",link-listen=on" if i == 0
                                                                else "", i, 1 - i, c.path("node%d.inject" % i)),
                                  args)
                    self.assertNotIn("-chardev", args)
                else:
                    self.assertIn("stream,id=link0,server=%s,addr.type=unix,addr.path=%s"
                                  % ("on" if i == 0 else "off", c.path("link0.sock")), args)
                    self.assertIn("pipe,id=inject,path=%s" % c.path("node%d.inject" % i), args)
            self.assertIn("user,id=ctl,restrict=on,hostfwd=tcp:127.0.0.1:%d-:7777" % (4000 + i), args)
            self.assertIn("unix:%s,server=on,wait=off" % c.path("node%d.qmp" % i), args)
            self.assertNotIn("-daemonize", args)

    def test_single_node_domain_has_no_peer(self):
        c = self.make_cluster("x", two_nodes(nodes=[]))
        args = [a.get("value") for a in self.domain(c, 0, 1).iter("{%s}arg" % libvirt.QEMU_NS)]
        self.assertIn("lanai,id=nic,link-socket=%s,link-listen=on,node-id=0,sram-size=8388608,addr=0x12"
                      % c.path("link0.sock"), args)
        self.assertNotIn("-chardev", args)

    def test_switch_node_domain(self):
        """Beyond two nodes a domain's NIC goes to its port of the switch,
        with the very -netdev ./netvm up gives that node (the switch
        checks sources and injects: no peer-node, no FIFO)."""
        c = self.make_cluster("x", two_nodes(nodes=[]))
        args = [a.get("value") for a in self.domain(c, 2, 3).iter("{%s}arg" % libvirt.QEMU_NS)]
        self.assertIn("lanai,id=nic,link-socket=%s,node-id=2,sram-size=8388608,addr=0x12" % c.path("node2.sock"),
                      args)
        self.assertNotIn("-chardev", args)
        link = "stream,id=link0,server=off,addr.type=unix,addr.path=%s,reconnect-ms=500" % c.path("node2.sock")
        with mock.patch.dict(os.environ, {"NETVM_LINK_THREAD": "0"}):
            args = [a.get("value") for a in self.domain(c, 2, 3).iter("{%s}arg" % libvirt.QEMU_NS)]
            self.assertIn("lanai,id=nic,netdev=link0,node-id=2,sram-size=8388608,addr=0x12", args)
            self.assertIn(link, args)
            c.state["fabric"] = {"pid": 1}
            self.assertIn(link, c.qemu_cmd(2, 3, 4002, "tcg", 256, []))

    def test_libvirt_xml_writes_each_node(self):
        out = os.path.join(self.tmp, "xml")
        rc, text, err = netvm("--cluster", "x", "libvirt-xml", "--out", out)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(sorted(os.listdir(out)), ["netvm-x-node0.xml", "netvm-x-node1.xml"])
        self.assertEqual(ET.parse(os.path.join(out, "netvm-x-node1.xml")).findtext("name"), "netvm-x-node1")
        self.assertFalse(os.path.exists(self.clusters))       # no cluster state made

    def test_pid_alive_under_libvirt_name(self):
        p = subprocess.Popen(["sh", "-c", "echo up; read x", "-name", "guest=netvm-x-node1,debug-threads=on"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.addCleanup(lambda: (p.poll() is None and p.kill(), p.wait(), p.stdout.close()))
        self.assertEqual(p.stdout.readline(), b"up\n")
        self.assertTrue(Cluster("x").pid_alive({"id": 1, "pid": p.pid}))
        self.assertFalse(Cluster("x").pid_alive({"id": 0, "pid": p.pid}))
        self.assertFalse(Cluster("netvm").pid_alive({"id": 1, "pid": p.pid}))

    def test_down_undefines_every_domain(self):
        nodes = [{"id": i, "pid": 0, "port": 1, "uri": u, "domain": "netvm-x-node%d" % i, "defined": True}
                 for i, u in enumerate(("qemu:///system", "qemu:///session"))]
        c = self.make_cluster("x", two_nodes(nodes=nodes, libvirt={"uris": ["qemu:///system"]}))
        calls = []
        gone = set()

        def virsh(uri, *args, check=True, timeout=120):
            calls.append((uri,) + args)
            if args[0] == "undefine":
                gone.add(args[1])
            if args[0] == "domstate":
                return (1, "error: failed to get domain") if args[1] in gone else (0, "running")
            return 0, ""
        with mock.patch.object(libvirt, "virsh", virsh):
            rc, out, err = netvm("--cluster", "x", "down")
        self.assertEqual((rc, err), (0, ""))
        self.assertRegex(out, r"^netvm: cluster 'x' down \(2 libvirt domains stopped and undefined in \d+\.\d s\)\n$")
        for i, uri in enumerate(("qemu:///system", "qemu:///session")):
            d = "netvm-x-node%d" % i
            self.assertEqual(calls[4 * i:4 * i + 4], [(uri, "domstate", d), (uri, "destroy", d),
                                                     (uri, "undefine", d), (uri, "domstate", d)])
        self.assertFalse(os.path.exists(c.dir))

    def test_save_and_restore_through_virsh(self):
        """save pauses every domain in --order, then has libvirt save each
        (--running); restore has libvirt restore each, node 0 first, and
        removes the files (virsh replaced by a recorder, no guest)."""
        nodes = [{"id": i, "pid": 0, "port": 1, "uri": u, "domain": "netvm-x-node%d" % i, "defined": True}
                 for i, u in enumerate(("qemu:///system", "qemu:///session"))]
        c = self.make_cluster("x", two_nodes(nodes=nodes, libvirt={"uris": ["qemu:///system"]}))
        calls = []

        def virsh(uri, *args, check=True, timeout=120):
            calls.append((uri,) + args)
            if args[0] == "save":
                with open(args[2], "wb") as f:
                    f.write(b"x" * (3 << 20))
            return 0, ""
        with mock.patch.object(libvirt_save, "virsh", virsh), \
                mock.patch.object(libvirt_save, "unmount_shares", lambda nodes, order: None), \
                mock.patch.object(libvirt_save, "mount_shares", lambda nodes: None), \
                mock.patch.object(libvirt_save, "started_here", lambda c, i: 4000 + i), \
                mock.patch.object(Cluster, "wait_ready", lambda self, timeout: None):
            rc, out, err = netvm("--cluster", "x", "save", "--order", "1,0", "--drain", "0")
            self.assertEqual((rc, err), (0, ""))
            self.assertIn("netvm: node 1 saved by libvirt (3 MiB)\n", out)
            snap = os.path.join(c.dir, "snapshot")
            self.assertEqual(calls, [
                ("qemu:///session", "suspend", "netvm-x-node1"), ("qemu:///system", "suspend", "netvm-x-node0"),
                ("qemu:///session", "save", "netvm-x-node1", os.path.join(snap, "node1.save"), "--running"),
                ("qemu:///system", "save", "netvm-x-node0", os.path.join(snap, "node0.save"), "--running")])
            self.assertTrue(json.load(open(c.state_file))["saved"])
            del calls[:]
            rc, out, err = netvm("--cluster", "x", "restore")
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(calls, [("qemu:///system", "restore", os.path.join(snap, "node0.save")),
                                 ("qemu:///session", "restore", os.path.join(snap, "node1.save"))])
        st = json.load(open(c.state_file))
        self.assertEqual(([nd["pid"] for nd in st["nodes"]], "saved" in st), ([4000, 4001], False))
        self.assertEqual(os.listdir(snap), [])

    def test_down_fails_while_a_domain_stays(self):
        nodes = [{"id": 0, "pid": 0, "port": 1, "uri": "qemu:///system", "domain": "netvm-x-node0",
                  "defined": True}]
        c = self.make_cluster("x", two_nodes(nodes=nodes, libvirt={"uris": ["qemu:///system"]}))
        with mock.patch.object(libvirt, "virsh", lambda uri, *a, **kw: (0, "shut off")):
            self.refused("could not remove libvirt domain(s) netvm-x-node0 on qemu:///system",
                         "--cluster", "x", "down")
        self.assertTrue(os.path.exists(c.state_file))


class TestBenchReport(unittest.TestCase):
    """What ./netvm bench writes from its rows: plots and ratios."""

    def test_plot_title_with_a_quote(self):
        # a title with an apostrophe once ended gnuplot's string early
        from netvm_cli import bench
        if not shutil.which("gnuplot"):
            self.skipTest("gnuplot is not installed (./netvm deps installs it)")
        rows = [{"test": "t_a", "size": z, "median_us": 10.0 * z, "p99_us": 20.0 * z, "mbps": None,
                 "round": 1} for z in (8, 64)]
        with tempfile.TemporaryDirectory() as d:
            made = bench.plot(rows, d, charts=(("lat", [("t_a", "one guest's loopback")]),))
            self.assertEqual(made, [os.path.join(d, "lat.png")])
            with open(made[0], "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            with open(os.path.join(d, "lat.gp")) as f:
                self.assertIn("'one guest''s loopback (median)'", f.read())

    def test_wakeprobe(self):
        """fabric/netvm-wakeprobe measures both round trips (the second
        only where two CPUs may be used) and refuses a bad count by its
        exit status; bench reads it, and reads a probe that is missing,
        fails or prints something else as not measured."""
        from netvm_cli import bench
        probe = os.environ.get("NETVM_WAKEPROBE") or bench.WAKEPROBE
        if not os.path.exists(probe):
            self.skipTest("netvm-wakeprobe is not built (meson compile)")
        with tempfile.TemporaryDirectory() as d:
            mine = os.path.join(d, "netvm-wakeprobe")   # a path of this test's own, for pgrep
            shutil.copy(probe, mine)
            w = bench.wakeups(mine, 200)
            # its busy loop goes with it
            self.assertEqual(subprocess.run(["pgrep", "-f", mine], stdout=subprocess.PIPE).stdout, b"")
        self.assertEqual(set(w), {"same_cpu_us", "cross_cpu_us", "cross_busy_us"})
        self.assertGreater(w["same_cpu_us"], 0)
        if len(os.sched_getaffinity(0)) > 1:
            self.assertGreater(w["cross_cpu_us"], 0)
            self.assertGreater(w["cross_busy_us"], 0)
        else:
            self.assertEqual((w["cross_cpu_us"], w["cross_busy_us"]), (None, None))
        for bad in (["0"], ["x"], ["10000001"], ["1", "2"]):
            r = subprocess.run([probe] + bad, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual((r.returncode, r.stdout), (2, ""), bad)
            self.assertTrue(r.stderr.startswith(("netvm-wakeprobe: ROUND_TRIPS must be 1 to 10000000",
                                                 "usage: netvm-wakeprobe")), r.stderr)
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "probe")
            ok = "echo same_cpu_us 3.0; echo cross_cpu_us 4.5; echo cross_busy_us 9.0"
            one = "echo same_cpu_us 3.0; echo cross_cpu_us -; echo cross_busy_us -"
            for body in (ok, one, "echo same_cpu_us fast; echo cross_cpu_us 1; echo cross_busy_us 1",
                         "echo same_cpu_us 3.0; echo cross_cpu_us 4.5", ok + "; exit 1"):
                with open(fake, "w") as f:
                    f.write("#!/bin/sh\n" + body + "\n")
                os.chmod(fake, 0o755)
                got = bench.wakeups(fake)
                if body == ok:
                    self.assertEqual(got, {"same_cpu_us": 3.0, "cross_cpu_us": 4.5, "cross_busy_us": 9.0})
                    self.assertEqual(bench.describe_wakeups(got), "a wake-up round trip 3.0 us on one CPU, "
                                     "4.5 us across two, 9.0 us across two to a busy CPU (netvm-wakeprobe)")
                elif body == one:
                    self.assertEqual(got, {"same_cpu_us": 3.0, "cross_cpu_us": None, "cross_busy_us": None})
                    self.assertIn("one CPU only", bench.describe_wakeups(got))
                else:
                    self.assertIsNone(got, body)
            self.assertIsNone(bench.wakeups(os.path.join(d, "missing")))
        self.assertEqual(bench.describe_wakeups(None),
                         "wake-ups not measured (netvm-wakeprobe missing or failed)")

    def test_fi_pingpong_counts(self):
        # fi_pingpong prints 1000 round trips as "1k": the row was refused
        from netvm_cli import bench_fi
        self.assertEqual([bench_fi.pp_count(t) for t in ("100", "999", "1k", "10k", "2.5k", "1m")],
                         [100, 999, 1000, 10000, 2500, 1000000])
        self.assertGreaterEqual(bench_fi.RTT_MIN_ITERS, 1000)

    def test_fi_pingpong_iterations(self):
        # the targets' sizes run long enough for the first messages not to
        # make the mean (1 MiB ran 5 times: 109-116 MB/s, against 156-203)
        from netvm_cli import bench_fi
        it = {z: bench_fi.pp_iters(z, 100) for z in bench_fi.PP_SIZES}
        self.assertEqual(it, {64: 1000, 4096: 100, 65536: 10, 1 << 20: 50})
        self.assertEqual(bench_fi.pp_iters(1 << 20, 5000), 100)
        self.assertEqual(bench_fi.pp_iters(64, 3), 1000)

    def test_fi_ratios_per_round(self):
        # the targets against write_lat 64 B and write_bw 1 MiB; beside
        # them the 1 MiB against NetVM's own write ping-pong, one way
        from netvm_cli import bench_fi
        mib = 1 << 20
        rows = [{"path": "netvm-bench", "test": "write_lat", "size": 64, "rtt_us": 200.0},
                {"path": "netvm-bench", "test": "write_bw", "size": mib, "mbps": 200.0},
                {"path": "netvm-bench", "test": "write_lat", "size": mib, "rtt_us": 2 * mib / 160.0},
                {"path": "netvm", "test": "fi_pingpong", "size": 64, "rtt_us": 260.0},
                {"path": "netvm", "test": "fi_pingpong", "size": mib, "mbps": 150.0}]
        got = {r["test"]: round(r["ratio"], 6) for r in bench_fi.ratio_rows(rows)}
        self.assertEqual(got, {"ratio_rtt": 1.3, "ratio_bw": 0.75, "ratio_bw_pp": 0.9375})
        # no NetVM ping-pong at 1 MiB in the round: no such ratio
        got = [r["test"] for r in bench_fi.ratio_rows(rows[:2] + rows[3:])]
        self.assertEqual(got, ["ratio_rtt", "ratio_bw"])

    def test_eth_ratios_with_the_loopback_floor(self):
        from netvm_cli import bench_eth
        rows = [{"path": p, "test": "tcp_lat", "size": 8, "median_us": m}
                for p, m in (("nvm0", 400.0), ("virtio", 500.0), ("loopback", 200.0))]
        s = bench_eth.summary(rows)
        self.assertEqual((s["tcp_rr_8B_virtio_over_nvm0"], s["tcp_rr_8B_virtio_over_loopback"]),
                         (1.25, 2.5))
        self.assertIsNone(s["tcp_rr_4096B_virtio_over_loopback"])


class TestCpuProfile(unittest.TestCase):
    """ci/cpu-profile.py: a command's CPU by cluster and by test, its
    status passed on."""

    def test_labels_and_status(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        out = os.path.join(tmp, "cpu.txt")
        # two busy children of a CPU second each: one named by a cluster
        # option, one under a test script; the command exits 3
        spin = os.path.join(tmp, "tests", "guest", "fake-test.py")
        os.makedirs(os.path.dirname(spin))
        with open(spin, "w") as f:
            # a second of CPU however loaded the host (no timing)
            f.write("import time\nwhile time.process_time() < 1.0: pass\n")
        script = "'{0}' '{1}' group &\n'{0}' '{1}' --cluster t-prof &\nwait; exit 3\n".format(sys.executable, spin)
        r = subprocess.run([sys.executable, os.path.join(REPO, "ci", "cpu-profile.py"), "-o", out,
                            "--interval", "0.2", "--", "bash", "-c", script])
        self.assertEqual(r.returncode, 3)
        with open(out) as f:
            head, *rows = f.read().splitlines()
        self.assertRegex(head, r"^\d+ s wall; host CPU [\d.]+ s; seen in samples [\d.]+ s; "
                               r"too short-lived to be seen [\d.]+ s$")
        got = dict((line.split(None, 1)[1], float(line.split()[0])) for line in rows)
        self.assertGreater(got.get("test:tests/guest/fake-test.py group", 0), 0.5, rows)
        self.assertGreater(got.get("cluster:t-prof", 0), 0.5, rows)
        r = subprocess.run([sys.executable, os.path.join(REPO, "ci", "cpu-profile.py")],
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("error: no command given", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:], verbosity=2)
