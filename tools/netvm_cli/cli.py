"""./netvm: wires the commands the modules declare (COMMANDS, command.py)
into one argparse parser and runs the one asked for (docs/frontdoor.md)."""
import argparse
import importlib
import os
import signal
import sys

from .cluster import Cluster, cluster_name
from .command import CLUSTER_HELP
from .agent import OutputClosed
from .common import NetvmError

# every command, in the order ./netvm --help lists them, with the module
# that declares it (its COMMANDS): ./netvm COMMAND loads that module only
COMMAND_MODULES = (
    ("deps", "build"), ("build", "build"), ("up", "clustercmd"), ("run", "clustercmd"),
    ("console", "clustercmd"), ("status", "clustercmd"), ("fault", "fabric"), ("link", "fabric"),
    ("inject", "inject"), ("map", "mapper"), ("capture", "fabric"), ("mpirun", "mpirun"),
    ("reload-driver", "clustercmd"), ("down", "clustercmd"), ("libvirt-xml", "libvirt"),
    ("save", "snapshot"), ("restore", "snapshot"), ("logs", "clustercmd"), ("demo", "demo"),
    ("bench", "bench"), ("fuzz", "testing"), ("test", "testing"))
HELP_ORDER = tuple(cmd for cmd, _ in COMMAND_MODULES)

EPILOG = """first steps:
  ./netvm demo      build everything, boot 2 linked VMs, exchange frames, tear down
  ./netvm test      build everything, run all test suites (meson test)
  ./netvm bench     build, boot 2 nodes, libnetvm vs TCP benchmark and plots, shut down

cluster selection: --cluster NAME or NETVM_CLUSTER (default: 'default');
state in build/cluster/NAME/.  See README.md and docs/."""


def modules(cmds=HELP_ORDER):
    """The modules declaring cmds, imported, each once, in help order."""
    names = [m for cmd, m in COMMAND_MODULES if cmd in cmds]
    return tuple(importlib.import_module("." + m, __package__) for m in dict.fromkeys(names))


def commands_in_order(modules, order=HELP_ORDER):
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


def _top():
    p = argparse.ArgumentParser(prog="netvm", description="netvm front door: build, boot and test "
                                "clusters of QEMU VMs with the emulated LANai/Myrinet NIC.",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cluster", metavar="NAME", help=CLUSTER_HELP)
    return p, p.add_subparsers(dest="cmd", metavar="COMMAND")


def parser(mods=None, order=HELP_ORDER):
    """The whole parser: every command (what --help, an unknown command and
    a misplaced option need)."""
    p, sub = _top()
    for cmd in commands_in_order(modules() if mods is None else mods, order):
        cmd.add_to(sub)
    return p


def command_parser(name):
    """A parser of the one command name, parsing its arguments as the whole
    parser does, after only its own module is loaded."""
    p, sub = _top()
    [cmd] = [c for m in modules((name,)) for c in m.COMMANDS if c.name == name]
    cmd.add_to(sub)
    return p


def command_of(argv):
    """The command argv names, after --cluster NAME; None if an option or
    an unknown word comes first (the whole parser answers those)."""
    i = 0
    while i < len(argv):
        if argv[i] == "--cluster":
            i += 2
        elif argv[i].startswith("--cluster="):
            i += 1
        else:
            return argv[i] if argv[i] in HELP_ORDER else None
    return None


def _terminate(signum, frame):
    # unwinds like Ctrl-C, so that a half-started cluster is torn down
    raise SystemExit(128 + signum)


def main(argv):
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    name = command_of(argv)
    p = command_parser(name) if name else parser()
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
    except (BrokenPipeError, OutputClosed):
        # like a shell command killed by SIGPIPE; keep Python from
        # complaining about the closed stdout at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + signal.SIGPIPE
