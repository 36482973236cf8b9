"""./netvm mpirun: an MPI job across a cluster's nodes (docs/packages.md).

    ./netvm mpirun [--mpi openmpi|mpich] [-n N] [-x NAME=VALUE] [--net IFACE | --fi PROVIDER]
                   [--verbose-fi] -- PROGRAM [ARG...]

Makes the package disk usable on every node (netvm-pkgs), then runs
Debian's mpirun (mpirun.openmpi or mpirun.mpich) on node 0 with the nodes'
data addresses as hosts.  The launcher starts the ranks on the other
nodes through their guest agents (netvm-rsh, images/agent/netvm-rsh.c):
no ssh.  MPI traffic stays on the data network (TCP), or with --net goes
over another interface every node has (nvm0, the Ethernet interface over
the NIC: docs/ethernet.md) while the launch stays on the data network;
or with --fi over libfabric (Open MPI's pml cm and mtl ofi on a provider:
"netvm;^ofi_rxd" or netvm-native, the netvm provider's own RDM;
"netvm;ofi_rxd" or netvm-rxd, libfabric's ofi_rxd on the netvm provider's
datagrams, docs/libfabric.md; "verbs;ofi_rxm", "tcp", ...).
Every node gets
ceil(N / nodes) slots, filled in node order.  Output streams back; the exit
status is mpirun's.
"""
import argparse
import re
import threading

from . import agent
from .cluster import DATA_IP
from .command import Command
from .common import NetvmError

RSH = "/netvm/build/meson/images/netvm-rsh"
DATA_NET = (DATA_IP % 0) + "/24"  # 10.77.0.0/24: the data NICs' network
MPIS = ("openmpi", "mpich")


def add_mpirun_args(sp):
    sp.add_argument("--mpi", choices=MPIS, default="openmpi", help="MPI implementation (default openmpi)")
    sp.add_argument("-n", "--np", type=int, metavar="N", help="number of ranks (default: one a node)")
    sp.add_argument("-x", "--env", action="append", default=[], metavar="NAME=VALUE",
                    help="environment for every rank (repeatable)")
    sp.add_argument("--net", metavar="IFACE", default=None,
                    help="the ranks' TCP traffic over IFACE (e.g. nvm0, addressed by you on every "
                         "node) instead of the data NIC; the launch stays on the data network")
    sp.add_argument("--fi", metavar="PROVIDER", default=None,
                    help="Open MPI: the ranks' messages over libfabric (pml cm, mtl ofi) on "
                         "PROVIDER: 'netvm;^ofi_rxd' or netvm-native (the netvm provider's own "
                         "RDM), 'netvm;ofi_rxd' or netvm-rxd (ofi_rxd on its datagrams), "
                         "'verbs;ofi_rxm', tcp, ... (docs/libfabric.md)")
    sp.add_argument("--verbose-fi", action="store_true",
                    help="with --fi: Open MPI says which mtl and which libfabric provider it chose")
    sp.add_argument("--timeout", type=int, default=None, metavar="S", help="give up after S seconds")
    sp.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- PROGRAM [ARG...]",
                    help="program to run")
    sp.set_defaults(func=lambda a, c: cmd_mpirun(c, a))


def prepare(c, nodes):
    """netvm-pkgs on every node at once; the data NIC's name (the same on
    every node: identical device sets)."""
    results = {}

    def one(node):
        try:
            results[node["id"]] = agent.capture(node["port"], ["netvm-pkgs"], timeout=300)
        except agent.AgentError as e:
            results[node["id"]] = (255, b"", str(e).encode())
    threads = [threading.Thread(target=one, args=(nd,)) for nd in nodes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for nid in sorted(results):
        code, _, err = results[nid]
        if code != 0:
            raise NetvmError("node %d: netvm-pkgs failed (%d): %s" % (
                nid, code, err.decode(errors="replace").strip()))
    code, out, _ = agent.capture(nodes[0]["port"], ["cat", "/run/netvm-pkgs.done"], timeout=30)
    iface = out.decode().strip()
    if code != 0 or not iface:
        raise NetvmError("node 0 has no data NIC: the cluster predates it? ./netvm down; ./netvm up")
    return iface


# ofi_rxm opens one verbs completion queue of (FI_OFI_RXM_MSG_TX_SIZE +
# FI_OFI_RXM_MSG_RX_SIZE) x FI_UNIVERSE_SIZE entries, by default (128 + 128)
# x 256 = 65536 (fi_rxm(7)); rxe allows 32767 (ibv_devinfo -v: max_cqe), so
# ibv_create_cq fails and with it fi_enable (-FI_EINVAL).  A universe of 64
# peers asks for 16384 entries (docs/libfabric.md, "verbs over soft RoCE").
VERBS_UNIVERSE = 64

# --fi's friendlier names for the netvm provider's two RDM paths
FI_ALIASES = {"netvm-native": "netvm;^ofi_rxd", "netvm-rxd": "netvm;ofi_rxd"}


def fi_provider(spec):
    """--fi's PROVIDER (an alias, a provider name, a layered one such as
    "netvm;ofi_rxd", or one with utility providers left out, "netvm;^ofi_rxd")
    -> (FI_PROVIDER's value, the ofi mtl's include list or None, the
    prov_name of the libfabric entries that are then chosen).

    libfabric takes "^" only in fi_getinfo's hints and at the start of
    FI_PROVIDER (which then leaves out what it lists), and Open MPI's mtl
    passes no provider name in its hints: so "A;^B" becomes FI_PROVIDER=^B
    (no B stacked on anything) and the mtl's include list A (none of the
    other providers' entries)."""
    spec = FI_ALIASES.get(spec, spec)
    parts = spec.split(";")
    out = [p[1:] for p in parts if p.startswith("^")]
    keep = [p for p in parts if not p.startswith("^")]
    if not keep or not all(re.fullmatch(r"[A-Za-z0-9_-]{1,32}", p) for p in keep + out):
        raise NetvmError("mpirun: --fi wants a libfabric provider name (PROV, PROV;UTIL or "
                         "PROV;^UTIL) or one of %s, got %r" % (", ".join(sorted(FI_ALIASES)), spec))
    name = ";".join(keep)
    if not out:
        return spec, None, name
    return "^" + ",".join(out), name, name


def fi_mca(provider, verbose=False):
    """Open MPI's settings for its ranks' messages over libfabric's
    PROVIDER (see fi_provider): the cm pml on the ofi mtl, no BTL but self
    (so nothing falls back to TCP), FI_PROVIDER choosing the provider; the
    mtl's own list of providers to leave out (tcp, udp, ... by default)
    emptied, so that the one FI_PROVIDER names is taken whatever it is, or
    instead its list to take naming it when FI_PROVIDER only leaves out.  VERBOSE:
    the mtl and provider chosen, in Open MPI's words."""
    env, include, _ = fi_provider(provider)
    mca = ["--mca", "pml", "cm", "--mca", "mtl", "ofi", "--mca", "btl", "self"]
    # Open MPI refuses both lists at once
    if include is not None:
        mca += ["--mca", "mtl_ofi_provider_include", include]
    else:
        mca += ["--mca", "mtl_ofi_provider_exclude", ""]
    mca += ["-x", "FI_PROVIDER=%s" % env]
    if verbose:
        mca += ["--mca", "mtl_base_verbose", "100", "--mca", "pml_base_verbose", "100"]
    return mca


def command(mpi, np, hosts, iface, env, argv, net=None, fi=None, verbose_fi=False):
    """mpirun's command line on node 0; NET: the interface for the ranks'
    traffic (default: the data network); FI: Open MPI's ranks on libfabric
    with this provider instead."""
    slots = -(-np // len(hosts))
    hostlist = ",".join("%s:%d" % (h, slots) for h in hosts)
    if mpi == "openmpi":
        cmd = ["mpirun.openmpi", "--allow-run-as-root", "-n", str(np), "--host", hostlist,
               "--mca", "plm_rsh_agent", RSH,
               "--mca", "oob_tcp_if_include", DATA_NET]
        if fi is not None:
            cmd += fi_mca(fi, verbose_fi)
            names = fi_provider(fi)[2].split(";")
            if "verbs" in names and not any(e.startswith("FI_UNIVERSE_SIZE=") for e in env):
                cmd += ["-x", "FI_UNIVERSE_SIZE=%d" % VERBS_UNIVERSE]
        else:
            cmd += ["--mca", "btl_tcp_if_include", net or DATA_NET,
                    "--mca", "pml", "ob1", "--mca", "btl", "self,vader,tcp"]
        for e in env:
            name, _, value = e.partition("=")
            cmd += ["-x", "%s=%s" % (name, value)]
    else:
        # hydra: its proxies reach back to node 0 by its hostname (/etc/hosts,
        # written by netvm-pkgs); UCX on TCP over the data NIC
        cmd = ["mpirun.mpich", "-n", str(np), "-hosts", hostlist,
               "-launcher", "rsh", "-launcher-exec", RSH,
               "-genv", "UCX_NET_DEVICES", net or iface, "-genv", "UCX_TLS", "tcp,self,sm"]
        for e in env:
            name, _, value = e.partition("=")
            cmd += ["-genv", name, value]
    return cmd + list(argv)


def cmd_mpirun(c, a):
    st = c.require_up()
    nodes = st["nodes"]
    if not st.get("data_net"):
        raise NetvmError("cluster '%s' has no data network (started before it existed?)" % c.name)
    for e in a.env:
        if "=" not in e or e.startswith("="):
            raise NetvmError("mpirun: -x wants NAME=VALUE, got %r" % e)
    argv = a.argv[1:] if a.argv[:1] == ["--"] else a.argv
    if not argv:
        raise NetvmError("mpirun: no program given (./netvm mpirun -- PROGRAM [ARG...])")
    np = a.np if a.np is not None else len(nodes)
    if np < 1:
        raise NetvmError("mpirun: -n must be at least 1")
    for node in nodes:
        if not c.pid_alive(node):
            raise NetvmError("node %d is not running (./netvm status)" % node["id"])
    if a.net is not None and not re.fullmatch(r"[A-Za-z0-9_.-]{1,15}", a.net):
        raise NetvmError("mpirun: --net wants an interface name, got %r" % a.net)
    if a.fi is not None:
        if a.mpi != "openmpi" or a.net is not None:
            raise NetvmError("mpirun: --fi is for Open MPI, and not with --net")
        fi_provider(a.fi)
    elif a.verbose_fi:
        raise NetvmError("mpirun: --verbose-fi goes with --fi")
    iface = prepare(c, nodes)
    hosts = [DATA_IP % (nd["id"] + 1) for nd in nodes]
    return c.run(0, command(a.mpi, np, hosts, iface, a.env, argv, a.net,
                                  a.fi, a.verbose_fi), timeout=a.timeout)


COMMANDS = [
    Command("mpirun", "run an MPI program across the cluster's nodes (Debian's Open MPI or MPICH "
            "from the package disk; ranks started through the guest agents, no ssh)", add_mpirun_args),
]
