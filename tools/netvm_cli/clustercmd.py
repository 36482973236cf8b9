"""The commands on one cluster and its nodes: up, run, console, status,
reload-driver, down, logs (the Cluster they drive: cluster.py; a cluster
started with up --libvirt: libvirt.py for up, status, console and down)."""
import argparse

from .cluster import BACK_TO_BACK_MAX, MAX_NODES
from .command import Command
from .common import DEFAULT_MEM, DEFAULT_TIMEOUT, NetvmError, lazy_import, say

# loaded by the commands that use them (run needs neither)
buildmod = lazy_import("build")
libvirt = lazy_import("libvirt")
libvirt_remote = lazy_import("libvirt_remote")


def add_up_args(sp):
    sp.add_argument("-n", "--nodes", type=int, default=2,
                    help="number of nodes (default 2; max %d); more than %d go through netvm-switch"
                    % (MAX_NODES, BACK_TO_BACK_MAX))
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
    sp.add_argument("--libvirt", metavar="URI[,URI...]",
                    help="start the nodes as libvirt domains, spread over these URIs round robin: this "
                    "host's (qemu:///system, qemu:///session) or another's over ssh "
                    "(qemu+ssh://[USER@]HOST[:PORT]/system[?keyfile=K&no_verify=1&command=SSH]; that host "
                    "needs this checkout built at the same path and libvirtd, checked first; it runs a "
                    "netvm-switch of its own, linked to this host's over TCP). More than 2 nodes, or other "
                    "hosts: through netvm-switch. docs/cluster.md, \"libvirt and several hosts\"")
    sp.set_defaults(func=up)


def up(a, c):
    if a.libvirt is None:
        return c.up(a.nodes, a.accel, a.mem, a.timeout, a.qemu_arg, topology=a.topology, routes=a.routes)
    if a.topology or a.qemu_arg:
        raise NetvmError("--libvirt takes neither --topology nor --qemu-arg")
    return libvirt.up(c, a.nodes, a.accel, a.mem, a.timeout, a.libvirt)


def by_engine(plain, through_libvirt):
    """A handler that drives a libvirt cluster through libvirt.py and any
    other through Cluster."""
    return lambda a, c: through_libvirt(a, c) if libvirt.is_libvirt(c) else plain(a, c)


def run_argv(argv, env):
    """./netvm run's command (what follows NODE, a leading '--' dropped:
    Python 3.11's argparse drops one itself, this one covers a second or
    an argparse that keeps it), after checking it and the -e entries."""
    argv = argv[1:] if argv[:1] == ["--"] else argv
    if not argv:
        raise NetvmError("run: no command given (usage: ./netvm run NODE -- CMD [ARG...])")
    for e in env:
        if "=" not in e:
            raise NetvmError("run: -e wants NAME=VALUE, got %r" % e)
    return argv


def add_run_args(sp):
    sp.add_argument("-i", "--stdin", action="store_true", help="forward the host's stdin (default: empty stdin)")
    sp.add_argument("-e", "--env", action="append", default=[], metavar="NAME=VALUE", help="environment entry")
    sp.add_argument("-C", "--cwd", metavar="DIR", help="working directory in the guest (default /)")
    sp.add_argument("--timeout", type=float, metavar="S", help="give up after S seconds")
    sp.add_argument("node", metavar="NODE")
    sp.add_argument("argv", nargs=argparse.REMAINDER, metavar="CMD")
    sp.set_defaults(func=lambda a, c: c.run(a.node, run_argv(a.argv, a.env), env=a.env, cwd=a.cwd,
                                            stdin=a.stdin, timeout=a.timeout))


def add_console_args(sp):
    sp.add_argument("node", metavar="NODE")
    sp.set_defaults(func=by_engine(lambda a, c: c.console(a.node), lambda a, c: libvirt.console(c, a.node)))


def add_logs_args(sp):
    sp.add_argument("node", metavar="NODE")
    sp.add_argument("-f", "--follow", action="store_true", help="keep printing while the node runs")
    sp.set_defaults(func=by_engine(lambda a, c: c.logs(a.node, a.follow),
                                   lambda a, c: libvirt.logs(c, a.node, a.follow)))


def reload_driver(a, c):
    c.require_up()
    say("[driver] rebuilding netvm.ko")
    buildmod.step_driver()
    if libvirt.is_libvirt(c):
        libvirt_remote.push_driver(c)   # nodes on other hosts load their checkout's
    c.reload_driver()


COMMANDS = [
    Command("up", "boot a cluster in the background and wait until every node is ready", add_up_args),
    Command("run", "run a command in a node; streams its output, exits with its status", add_run_args,
            usage="netvm run [-h] [-i] [-e NAME=VALUE] [-C DIR] [--timeout S] NODE -- CMD [ARG...]"),
    Command("console", "interactive serial console of a node (Ctrl-] to leave)",
            add_console_args),
    Command("status", "per node: pid, alive, ready, link state, routes; the switch's per-port counters",
            lambda sp: sp.set_defaults(func=by_engine(lambda a, c: c.status(), lambda a, c: libvirt.status(c)))),
    Command("reload-driver", "rebuild netvm.ko and reload it in every running node (no reboot)",
            lambda sp: sp.set_defaults(func=reload_driver)),
    Command("down", "stop the cluster: kill its VMs (undefine its libvirt domains), remove its sockets "
            "and state dir",
            lambda sp: sp.set_defaults(func=by_engine(lambda a, c: c.down(), lambda a, c: libvirt.down(c)))),
    Command("logs", "print a node's serial console log", add_logs_args),
]
