"""./netvm map, and the routes of a switched cluster: the mapper
(netvm-mapper, guest-lib/mapper/) runs in a node, discovers the fabric with
probes and installs every node's route table; the static routes that
netvm-switch computes from the topology file are the fallback.
docs/fabric.md, "The mapper"."""
import json

from . import agent
from .command import Command
from .common import NetvmError, say, warn

GUEST_MAPPER = "netvm-mapper"   # on the guest's PATH (images/init)


def run_mapper(c, node, install=True, timeout=60):
    """Runs the mapper in node; returns (exit status, map dict or None,
    stderr text)."""
    nd = c.node(node)
    if c.state.get("fabric"):
        # the switch forwards SCOUT and ROUTES from this node only
        from . import fabric
        fabric.control(c, "mapper %d" % nd["id"])
    argv = [GUEST_MAPPER, "-j"] + ([] if install else ["-n"])
    try:
        code, out, err = agent.capture(nd["port"], argv, timeout=timeout)
    except agent.AgentError as e:
        raise NetvmError("node %d: %s" % (node, e))
    err = err.decode(errors="replace").strip()
    try:
        m = json.loads(out.decode(errors="replace")) if out.strip() else None
    except ValueError:
        m = None
    return code, m, err


def map_cluster(c, node=0):
    """Maps a freshly booted (or reloaded) cluster from node; every node
    must be found and must acknowledge its table.  Returns the map."""
    code, m, err = run_mapper(c, node)
    want = sorted(nd["id"] for nd in c.state["nodes"])
    if m is None:
        raise NetvmError("the mapper failed in node %d: %s" % (node, err or "no output"))
    if sorted(m["nodes"]) != want or m["acked"] != len(want) or code != 0:
        raise NetvmError("the mapper found nodes %s (acknowledged: %d), expected %s%s"
                         % (m["nodes"], m["acked"], want, (": " + err) if err else ""))
    return m


def install_routes(c):
    """Routes for every node of a switched cluster: the mapper, or the
    static routes when the cluster was booted with --routes static or the
    mapper fails."""
    if c.state.get("routes_mode", "map") == "map":
        try:
            m = map_cluster(c)
        except NetvmError as e:
            warn("%s; installing static routes instead" % e)
        else:
            c.state["routes"] = "mapper (node %d, generation %d)" % (m["mapper"], m["generation"])
            c.save()
            say("mapper: %d switch%s, %d nodes, routes installed on every node (generation %d)"
                % (len(m["switches"]), "" if len(m["switches"]) == 1 else "es",
                   len(m["nodes"]), m["generation"]))
            return
    c.program_routes()
    c.state["routes"] = "static (netvm-switch --routes)"
    c.save()


def cmd_map(c, node, dry_run, as_json):
    """./netvm map: maps from node and prints the map; the route tables of
    every node found are replaced (nodes that left lose their routes)."""
    from . import fabric
    fabric.require_fabric(c)
    c.node(node)
    code, m, err = run_mapper(c, node, install=not dry_run)
    if m is None:
        raise NetvmError("the mapper failed in node %d: %s" % (node, err or "no output"))
    if as_json:
        print(json.dumps(m, indent=1))
    else:
        print("map from node %d, generation %d: %d switch%s, nodes %s%s" % (
            m["mapper"], m["generation"], len(m["switches"]),
            "" if len(m["switches"]) == 1 else "es", ",".join(map(str, m["nodes"])),
            "" if dry_run else ", routes installed on %d" % m["acked"]))
        for sw in m["switches"]:
            links = " ".join("%s=%s" % kv for kv in sorted(sw["links"].items(), key=lambda kv: int(kv[0])))
            print("  %-6s %2d ports  %s" % (sw["name"], sw["ports"], links))
    if err:
        for line in err.splitlines():
            warn(line)
    if not dry_run and code == 0:
        c.state["routes"] = "mapper (node %d, generation %d)" % (m["mapper"], m["generation"])
        c.save()
    if code != 0:
        raise NetvmError("the mapper in node %d exited with %d" % (node, code))


def add_map_args(sp):
    sp.add_argument("--node", type=int, default=0, metavar="N", help="node that runs the mapper (default 0)")
    sp.add_argument("-n", "--dry-run", action="store_true", help="print the map, install nothing")
    sp.add_argument("--json", action="store_true", help="print the mapper's JSON")
    sp.set_defaults(func=lambda a, c: cmd_map(c, a.node, a.dry_run, a.json))


COMMANDS = [
    Command("map", "run the mapper in a node: discover the fabric with probes, install every node's "
            "routes (re-map after a node joins or leaves)", add_map_args),
]
