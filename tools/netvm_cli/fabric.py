"""The fabric of a cluster: netvm-switch started by `up`, routes, and thin
wrappers over its control socket (status, fault, link, capture).

Files in the cluster's state dir (docs/cluster.md, docs/fabric.md):
  fabric.topo         the topology the switch runs (a copy of --topology, or
                      one N-port switch s0 with node I on port I)
  routes.json         netvm-switch --routes fabric.topo
  switch.log          the switch's stdout/stderr
  nodeI.sock          node I's port (QEMU connects, server=off)
  control.sock        the switch's control socket
"""
import json
import os
import signal
import socket
import subprocess
import time

from .command import Command
from .common import MESON_BUILD, NetvmError, proc_info, proc_running, rel

SWITCH_BIN = os.path.join(MESON_BUILD, "fabric", "netvm-switch")
SYSFS = "/sys/class/netvm/netvm0"


def switch_binary():
    path = os.environ.get("NETVM_SWITCH") or SWITCH_BIN
    if not os.access(path, os.X_OK):
        raise NetvmError("%s missing: run ./netvm build" % rel(path))
    return path


def single_topology(n):
    lines = ["# written by ./netvm up: one %d-port switch, node I on port I" % n,
             "switch s0 %d" % n]
    lines += ["node %d s0:%d" % (i, i) for i in range(n)]
    return "\n".join(lines) + "\n"


def load_routes(topo_path, n):
    """The routes among nodes 0..n-1 of the topology: {src: {dst: hex}}."""
    r = subprocess.run([switch_binary(), "--routes", topo_path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise NetvmError("netvm-switch --routes %s: %s" % (rel(topo_path), r.stderr.strip()))
    data = json.loads(r.stdout)
    ids = {nd["id"] for nd in data["nodes"]}
    missing = [i for i in range(n) if i not in ids]
    if missing:
        raise NetvmError("topology %s has no node %s (nodes: %s)" % (
            rel(topo_path), ",".join(map(str, missing)), ",".join(map(str, sorted(ids)))))
    routes = {i: {} for i in range(n)}
    for e in data["routes"]:
        if e["src"] < n and e["dst"] < n:
            if e["hex"] is None or e.get("route") is None:
                raise NetvmError("topology %s: node %d cannot reach node %d" % (
                    rel(topo_path), e["src"], e["dst"]))
            routes[e["src"]][e["dst"]] = e["hex"]
    return data, routes


def start_switch(c, n, topology, only=None):
    """Starts netvm-switch for cluster c in its state dir (only: the switch
    of the topology this process runs, the others elsewhere); returns the
    state entry {"pid", "topology", "routes"}."""
    topo = c.path("fabric.topo")
    if topology == "@reuse":  # restore: the file is already there
        with open(topo) as f:
            text = f.read()
    elif topology:
        try:
            with open(topology) as f:
                text = f.read()
        except OSError as e:
            raise NetvmError("--topology %s: %s" % (topology, e.strerror))
    else:
        text = single_topology(n)
    with open(topo, "w") as f:
        f.write(text)
    data, routes = load_routes(topo, n)
    log = open(c.path("switch.log"), "wb")
    with log:
        # the mapper runs in node 0 (./netvm map --node N hands the role on)
        p = subprocess.Popen([switch_binary(), "--topology", "fabric.topo", "--sock-dir", ".",
                              "--mapper", "0"] + (["--only", only] if only else []),
                             cwd=c.dir, stdin=subprocess.DEVNULL, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 10
    while True:
        try:
            with open(c.path("switch.log"), errors="replace") as f:
                out = f.read()
        except OSError:
            out = ""
        if "netvm-switch ready:" in out:
            break
        if p.poll() is not None or time.monotonic() > deadline:
            if p.poll() is None:
                p.kill()
            p.wait()
            raise NetvmError("netvm-switch did not start: %s (log: %s)" % (
                (out.strip().splitlines() or ["exit status %s" % p.returncode])[-1],
                rel(c.path("switch.log"))))
        time.sleep(0.02)
    return {"pid": p.pid, "topology": topology or "single:%d" % n,
            "switches": [s["name"] for s in data["switches"]],
            "routes": {str(k): {str(d): h for d, h in v.items()} for k, v in routes.items()}}


def switch_alive(c, fab):
    info = proc_running(fab["pid"]) if fab and fab.get("pid") else None
    return bool(info) and b"fabric.topo" in info[1] and \
        os.path.basename(SWITCH_BIN).encode() in info[1][0]


def stop_switch(c, fab, grace=5.0):
    """SIGTERM (the switch removes its sockets), SIGKILL after grace; reaps
    it if it is our child."""
    if not fab or not fab.get("pid"):
        return
    pid = fab["pid"]
    if switch_alive(c, fab):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
    if not _wait_gone(pid, grace, zombie_ok=True):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _wait_gone(pid, 10.0, zombie_ok=True)
    # a zombie holds nothing: init reaps it, as it does a daemonized QEMU
    # (Cluster.kill_all), without anyone waiting for it


def _wait_gone(pid, secs, zombie_ok):
    """Until the switch has exited (zombie_ok) or is reaped, at most secs."""
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:  # not our child (another ./netvm started it)
            info = proc_info(pid)
            if not info:
                return True
            zombie = info[0] in ("Z", "X")
            if not zombie and b"fabric.topo" not in info[1]:
                return True  # the pid was reused
            if zombie and zombie_ok:
                return True
        time.sleep(0.05)
    return False


def control(c, line, timeout=10.0):
    """One command on the switch's control socket; the JSON answer."""
    path = c.path("control.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.sendall(line.encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except OSError as e:
        raise NetvmError("switch control socket %s: %s" % (rel(path), e.strerror or e))
    finally:
        s.close()
    ans = parse_answer(buf, line)
    if not ans.get("ok"):
        raise NetvmError("switch: %s: %s" % (line, ans.get("error", "failed")))
    return ans


def parse_answer(buf, line):
    """The switch's JSON answer to the command line; a NetvmError if it
    is not JSON (cut short, or no answer)."""
    try:
        return json.loads(buf.decode())
    except ValueError:
        raise NetvmError("switch: bad answer to %r: %r" % (line[:60], buf[:200]))


def port_arg(c, arg):
    """A node id N means nodeN; SWITCH:PORT and nodeN pass through."""
    if arg.isdigit():
        n = len(c.state["nodes"])
        if int(arg) >= n:
            raise NetvmError("no node %s in cluster '%s' (nodes 0..%d); a switch port is SWITCH:PORT"
                             % (arg, c.name, n - 1))
        return "node" + arg
    return arg


def used_ports(c):
    ans = control(c, "stats")
    return ["%s:%d" % (sw["name"], p["port"]) for sw in ans["switches"] for p in sw["ports"]]


def route_lines(fab, i):
    return "".join("%s %s\n" % (d, h) for d, h in sorted(fab["routes"][str(i)].items(),
                                                           key=lambda kv: int(kv[0])))


def require_fabric(c):
    st = c.require_up()
    fab = st.get("fabric")
    if not fab:
        raise NetvmError("cluster '%s' has no switch (2 nodes back to back): boot it with "
                         "-n 3 or more, or --topology FILE" % c.name)
    if not switch_alive(c, fab):
        raise NetvmError("cluster '%s': its netvm-switch (pid %d) is not running (log: %s)"
                         % (c.name, fab["pid"], rel(c.path("switch.log"))))
    return fab


# --- thin wrappers (./netvm fault, link, capture) ---------------------------
# (their arguments: COMMANDS at the end)

def cmd_fault(c, target, settings):
    require_fabric(c)
    if not settings:
        raise NetvmError("fault: give drop=R dup=R reorder=R corrupt=R delay_ms=N, or clear")
    if settings != ["clear"]:
        for s in settings:
            k, _, v = s.partition("=")
            if k not in ("drop", "dup", "reorder", "corrupt", "delay_ms") or not v:
                raise NetvmError("fault: bad setting %r (drop=R dup=R reorder=R corrupt=R "
                                 "delay_ms=N, or clear)" % s)
    ports = used_ports(c) if target == "all" else [port_arg(c, target)]
    for p in ports:
        ans = control(c, "fault %s %s" % (p, " ".join(settings)))
        f = ans.get("port", {}).get("faults") or ans.get("faults")
        print("%s: %s" % (p, json.dumps(f) if f is not None else "ok"))
    return 0


def cmd_link(c, target, updown):
    require_fabric(c)
    if updown not in ("up", "down"):
        raise NetvmError("link: say up or down")
    control(c, "link %s %s" % (port_arg(c, target), updown))
    print("%s: link %s" % (port_arg(c, target), updown))
    return 0


def cmd_capture(c, action, path=None):
    require_fabric(c)
    if action == "start":
        if not path:
            raise NetvmError("capture start: give a FILE")
        control(c, "capture start %s" % os.path.abspath(path))
        print("capturing to %s (./netvm capture stop)" % path)
    elif action == "stop":
        control(c, "capture stop")
        print("capture stopped")
    else:
        raise NetvmError("capture: start FILE or stop")
    return 0


COUNTERS = ("rx_frames", "tx_frames", "drop_bad_route", "drop_port_down", "drop_bad_src",
            "injected", "drop_injected", "dup_injected", "reorder_injected", "corrupt_injected",
            "drop_stalled", "drop_queue_full", "bp_stalls")


def print_ports(c):
    ans = control(c, "stats")
    short = ("rx", "tx", "badrt", "pdown", "badsrc", "inject", "drop", "dup", "reord", "corr",
             "stall", "qfull", "bp")
    print("%-8s %-10s %-12s" % ("port", "label", "state") + "".join("%9s" % s for s in short))
    for sw in ans["switches"]:
        for p in sw["ports"]:
            print("%-8s %-10s %-12s" % ("%s:%d" % (sw["name"], p["port"]), p["label"].replace(" ", "-")[:10], p["state"])
                  + "".join("%9d" % p.get(k, 0) for k in COUNTERS))
            f = {k: v for k, v in p.get("faults", {}).items() if v}
            if f:
                print("%8s faults: %s" % ("", " ".join("%s=%s" % kv for kv in f.items())))


def add_fault_args(sp):
    sp.add_argument("target", metavar="TARGET",
                    help="a node id N (its port), SWITCH:PORT, nodeN, or 'all' (every used port)")
    sp.add_argument("settings", nargs="+", metavar="SETTING",
                    help="drop=R dup=R reorder=R corrupt=R (rates 0..1) delay_ms=N, or clear")
    sp.set_defaults(func=lambda a, c: cmd_fault(c, a.target, a.settings))


def add_link_args(sp):
    sp.add_argument("target", metavar="TARGET", help="a node id N, SWITCH:PORT or nodeN")
    sp.add_argument("updown", choices=("down", "up"))
    sp.set_defaults(func=lambda a, c: cmd_link(c, a.target, a.updown))


def add_capture_args(sp):
    sp.add_argument("action", choices=("start", "stop"))
    sp.add_argument("file", nargs="?", metavar="FILE", help="capture file (start)")
    sp.set_defaults(func=lambda a, c: cmd_capture(c, a.action, a.file))


COMMANDS = [
    Command("fault", "inject faults on frames leaving a switch port (netvm-switch control socket)",
            add_fault_args,
            usage="netvm fault [-h] TARGET (drop=R dup=R reorder=R corrupt=R delay_ms=N... | clear)"),
    Command("link", "take the link of a node (or SWITCH:PORT) down or up; nothing is lost",
            add_link_args),
    Command("capture", "pcap capture of the switch's traffic (tshark -X lua_script:fabric/netvm.lua "
            "-r FILE)", add_capture_args),
]
