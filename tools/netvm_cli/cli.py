"""./netvm: wires the commands the modules declare (COMMANDS, command.py)
into one argparse parser and runs the one asked for (docs/frontdoor.md)."""
import argparse
import os
import signal
import sys

from . import agent
from . import bench
from . import build
from . import clustercmd
from . import demo
from . import fabric
from . import inject
from . import libvirt
from . import mapper
from . import mpirun
from . import snapshot
from . import testing
from .cluster import Cluster, cluster_name
from .command import CLUSTER_HELP
from .common import NetvmError

# the modules that declare commands
MODULES = (build, clustercmd, libvirt, fabric, inject, mapper, mpirun, snapshot, demo, bench, testing)

# the order ./netvm --help lists them in: every declared command, once
HELP_ORDER = ("deps", "build", "up", "run", "console", "status", "fault", "link", "inject", "map",
              "capture", "mpirun", "reload-driver", "down", "libvirt-xml", "save", "restore", "logs", "demo", "bench",
              "fuzz", "test")

EPILOG = """first steps:
  ./netvm demo      build everything, boot 2 linked VMs, exchange frames, tear down
  ./netvm test      build everything, run all test suites (meson test)
  ./netvm bench     build, boot 2 nodes, libnetvm vs TCP benchmark and plots, shut down

cluster selection: --cluster NAME or NETVM_CLUSTER (default: 'default');
state in build/cluster/NAME/.  See README.md and docs/."""


def commands_in_order(modules=MODULES, order=HELP_ORDER):
    """The modules' commands in help order; a command declared twice, or
    declared and not placed in the order (or the reverse), is an error."""
    declared = {}
    for m in modules:
        for cmd in m.COMMANDS:
            if cmd.name in declared:
                raise AssertionError("command %r declared twice" % cmd.name)
            declared[cmd.name] = cmd
    if sorted(declared) != sorted(order):
        raise AssertionError("HELP_ORDER %s does not list the declared commands %s once each"
                             % (sorted(order), sorted(declared)))
    return [declared[name] for name in order]


def parser(modules=MODULES, order=HELP_ORDER):
    p = argparse.ArgumentParser(prog="netvm", description="netvm front door: build, boot and test "
                                "clusters of QEMU VMs with the emulated LANai/Myrinet NIC.",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cluster", metavar="NAME", help=CLUSTER_HELP)
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    for cmd in commands_in_order(modules, order):
        cmd.add_to(sub)
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
        # every command validates the cluster's name, even one that uses none
        c = Cluster(cluster_name(getattr(args, "cluster", None)))
        return args.func(args, c) or 0
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
