#!/usr/bin/python3
"""Guest tests of the fabric: 4 VMs through netvm-switch (./netvm up -n 4).

    tests/guest/test_fabric.py switch   one 4-port switch: all-to-all writeP/readP,
                                        capture read by tshark, faults on every port
                                        during a stress run, a link down mid-transfer,
                                        the switch restarted (every node reconnects),
                                        a VM killed
    tests/guest/test_fabric.py tree     fabric/topologies/tree4.topo (two leaves,
                                        two spines, 3-byte routes): all-to-all;
                                        the mapper: a re-map from another node,
                                        a node leaving and joining again

TAP output (meson protocol 'tap').  The cluster is 't-fabric-GROUP'; it is
always torn down, and the test checks that no QEMU, no switch and no socket
is left.  Environment: NETVM (path of ./netvm), NETVM_TEST_BOOT_TIMEOUT.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from guestlib import REPO, ClusterShell, Tap, diag, run_parallel, sysfs_counters, tap_cluster_main
N = 4
KiB = 1024




T = Tap()
CLUSTER = None


def ci():
    """Under CI (CI=true) a missing tool is a failure, not a skip."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


G = ClusterShell(sh_timeout=300)    # named by main()
nv, sh, state_dir = G.nv, G.sh, G.state_dir


def parallel(jobs):
    """Runs {key: (node, script)} at once; returns {key: (rc, out, err)}."""
    return run_parallel(sh, jobs)


def cluster_state():
    with open(os.path.join(state_dir(), "cluster.json")) as f:
        return json.load(f)


def counters(node):
    return sysfs_counters(sh, node)


def window_pas(nodes):
    pa = {}
    for n in nodes:
        rc, out, err = nv("run", n, "--", "netvm-ktest", "pa")
        ok = rc == 0 and out.strip().startswith("0x")
        T.ok(ok, "node %d: NetVM on, test window at %s" % (n, out.strip() if ok else "?"),
             diag(rc, out, err))
        if not ok:
            raise SystemExit(1)
        pa[n] = int(out.strip(), 16)
    return pa


ROUNDS = [0]


def all_to_all(pa, nodes, size=32 * KiB, tag=""):
    """Every node writeP's to every other node's window (its own slot) and
    readP's a region every other node filled; every byte verified.  Each
    call salts its seeds: a later round writes other bytes to the same
    offsets, so what an earlier round left there cannot pass for it."""
    ROUNDS[0] += 1
    salt = 1000 * ROUNDS[0]

    def seed(s, d):
        return salt + 1 + 16 * s + d
    # writes: s's bytes land at s*64K in d's window
    jobs = {s: (s, " && ".join(
        "netvm-ktest write %d %#x %d %d %d" % (d, pa[d] + s * 64 * KiB, s * 64 * KiB, size, seed(s, d))
        for d in nodes if d != s)) for s in nodes}
    t0 = time.monotonic()
    res = parallel(jobs)
    dt = time.monotonic() - t0
    T.ok(all(r[0] == 0 for r in res.values()),
         "%sall-to-all writeP of %d KiB between %d nodes (%.1f s)" % (tag, size // KiB, len(nodes), dt),
         "\n".join("node %d: %s" % (k, diag(*r)) for k, r in res.items()))
    jobs = {d: (d, " && ".join("netvm-ktest check %d %d %d" % (s * 64 * KiB, size, seed(s, d))
                               for s in nodes if s != d)) for d in nodes}
    res = parallel(jobs)
    T.ok(all(r[0] == 0 for r in res.values()), "%severy byte written arrived intact" % tag,
         "\n".join("node %d: %s" % (k, diag(*r)) for k, r in res.items()))
    # reads: d fills 512K with seed salt+100+d; s reads it into 576K + d*32K
    res = parallel({d: (d, "netvm-ktest fill %d %d %d" % (512 * KiB, size, salt + 100 + d))
                    for d in nodes})
    T.ok(all(r[0] == 0 for r in res.values()), "%sfill the read regions" % tag,
         "\n".join("node %d: %s" % (k, diag(*r)) for k, r in res.items()))
    jobs = {s: (s, " && ".join(
        "netvm-ktest read %d %#x %d %d && netvm-ktest check %d %d %d" % (
            d, pa[d] + 512 * KiB, 576 * KiB + d * size, size, 576 * KiB + d * size, size, salt + 100 + d)
        for d in nodes if d != s)) for s in nodes}
    t0 = time.monotonic()
    res = parallel(jobs)
    dt = time.monotonic() - t0
    T.ok(all(r[0] == 0 for r in res.values()),
         "%sall-to-all readP of %d KiB, every byte verified (%.1f s)" % (tag, size // KiB, dt),
         "\n".join("node %d: %s" % (k, diag(*r)) for k, r in res.items()))


def check_routes(expect_len):
    rc, out, err = nv("status")
    ok = rc == 0 and "switch: pid" in out and "running" in out
    lines = [l for l in out.splitlines() if l[:1].isdigit() and " up " in l]
    ok = ok and len(lines) == N
    for l in lines:
        routes = l.split()[6:]
        ok = ok and len(routes) == N - 1 and all(len(r.split(":")[1]) in expect_len for r in routes)
    T.ok(ok, "status: %d nodes, links up, %d routes each (%s-byte), switch running" % (
        N, N - 1, "/".join(str(x // 2) for x in sorted(expect_len))), diag(rc, out, err))
    return out


def group_switch():
    check_routes({2})
    nodes = list(range(N))
    pa = window_pas(nodes)
    all_to_all(pa, nodes)

    # --- capture of a short run, read by tshark with the dissector
    tmp = tempfile.mkdtemp(prefix="netvm-cap-")
    try:
        cap = os.path.join(tmp, "run.pcap")
        rc, out, err = nv("capture", "start", cap)
        T.ok(rc == 0, "capture start", diag(rc, out, err))
        rc1, out1, err1 = nv("run", 0, "--", "netvm-ktest", "write", 1, hex(pa[1]), 0, 8 * KiB, 9)
        rc, out, err = nv("capture", "stop")
        T.ok(rc == 0 and rc1 == 0, "a short writeP 0 -> 1 while capturing; capture stop",
             diag(rc1, out1, err1) + "\n" + diag(rc, out, err))
        if not shutil.which("tshark") and ci():
            T.ok(False, "tshark installed (required under CI)", "CI=%s" % os.environ["CI"])
        elif not shutil.which("tshark"):
            T.ok(True, "# SKIP tshark not installed")
        else:
            r = subprocess.run(["tshark", "-X", "lua_script:" + os.path.join(REPO, "fabric", "netvm.lua"),
                                "-r", cap, "-T", "fields", "-e", "netvm.port", "-e", "netvm.type",
                                "-e", "netvm.src", "-e", "netvm.dst", "-e", "netvm.net.op",
                                "-e", "netvm.crc.status"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
            rows = [l.split("\t") for l in r.stdout.splitlines() if l.strip()]
            nvm = [x for x in rows if len(x) >= 6 and x[1] in ("2", "0x02")]
            fwd = [x for x in nvm if x[2] == "0" and x[3] == "1"]
            back = [x for x in nvm if x[2] == "1" and x[3] == "0"]
            errs = [l for l in r.stderr.splitlines() if l.strip() and "running as user" not in l.lower()]
            T.ok(r.returncode == 0 and not errs and fwd and back and all(x[5] == "1" for x in nvm),
                 "tshark reads the capture without errors: %d frames, %d NetVM 0->1 (port 1), "
                 "%d NetVM 1->0 (port 0), CRCs good" % (len(rows), len(fwd), len(back)),
                 "rc %d\nstderr: %s\nfirst rows: %s" % (r.returncode, r.stderr.strip(), rows[:8]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    # --- faults on every port during a stress run
    before = {n: counters(n) for n in nodes}
    rc, out, err = nv("fault", "all", "drop=0.01", "dup=0.02", "reorder=0.05")
    T.ok(rc == 0 and out.count("s0:") == N, "fault all drop=0.01 dup=0.02 reorder=0.05 (every port)",
         diag(rc, out, err))
    size, rounds = 128 * KiB, 3
    pairs = {0: 1, 1: 0, 2: 3, 3: 2}

    def stress(s, d):
        # s writes its pattern into d's window (a slot per writer, from
        # 256 KiB up), reads it back into its own window at 832 KiB, compares
        cmds = []
        for i in range(rounds):
            sd, rpa = 300 + 10 * s + i, pa[d] + 128 * KiB * (2 + s)
            cmds.append("netvm-ktest write %d %#x 0 %d %d && netvm-ktest read %d %#x %d %d && "
                        "netvm-ktest check %d %d %d" % (d, rpa, size, sd, d, rpa, 832 * KiB, size,
                                                        832 * KiB, size, sd))
        return " && ".join(cmds)

    t0 = time.monotonic()
    res = parallel({s: (s, stress(s, d)) for s, d in pairs.items()})
    dt = time.monotonic() - t0
    T.ok(all(r[0] == 0 for r in res.values()),
         "under faults: %d x (writeP %d KiB, readP it back, verify) on 4 nodes at once (%.1f s)"
         % (rounds, size // KiB, dt),
         "\n".join("node %d: %s" % (k, diag(*r)) for k, r in res.items()))
    rc, out, err = nv("status")
    T.note("switch after the stress run:\n" + "\n".join(l for l in out.splitlines() if l.startswith("s0:")))
    inj = {}
    cols = next((l.split() for l in out.splitlines() if l.startswith("port ")), [])
    for l in out.splitlines():
        f = l.split()
        if l.startswith("s0:") and len(f) == len(cols):
            for k, name in (("drop", "drop"), ("dup", "dup"), ("reorder", "reord")):
                inj[k] = inj.get(k, 0) + int(f[cols.index(name)])
    T.ok(all(inj.get(k, 0) > 0 for k in ("drop", "dup", "reorder")),
         "the switch dropped, duplicated and reordered frames (%s)" % inj, out)
    after = {n: counters(n) for n in nodes}
    grown = {k: sum(after[n].get(k, 0) - before[n].get(k, 0) for n in nodes)
             for k in ("retransmits", "duplicates", "out_of_window")}
    T.ok(grown["retransmits"] > 0 and grown["duplicates"] > 0,
         "fw_counters: the firmware retransmitted (%d) and discarded duplicates (%d)"
         % (grown["retransmits"], grown["duplicates"]), "before %s\nafter %s" % (before, after))
    rc, out, err = nv("fault", "all", "clear")
    T.ok(rc == 0, "fault all clear", diag(rc, out, err))

    # --- link down during a transfer: it waits (node 0 retransmits into the
    # dead link), completes once the link is up, nothing lost
    rc, out, err = nv("link", 1, "down")
    T.ok(rc == 0, "link 1 down", diag(rc, out, err))
    res = {}
    rt0 = counters(0).get("retransmits", 0)
    th = threading.Thread(target=lambda: res.setdefault("w", sh(
        0, "netvm-ktest write 1 %#x 0 %d 77 && echo written" % (pa[1] + 128 * KiB, 256 * KiB))))
    t0 = time.monotonic()
    th.start()
    # the positive sign that the transfer is held by the outage: node 0's
    # firmware resends what node 1 could not acknowledge (a transfer that
    # got through anyway would end the wait with "w" in res)
    rt = rt0
    while "w" not in res and rt < rt0 + 3 and time.monotonic() - t0 < 60:
        rt = counters(0).get("retransmits", rt)
    done_early = "w" in res
    waited = time.monotonic() - t0
    rc, out, err = nv("link", 1, "up")
    T.ok(rc == 0 and not done_early and rt >= rt0 + 3,
         "link 1 up after %.1f s, the transfer was waiting: not done, node 0 retransmitted %d times"
         % (waited, rt - rt0), diag(rc, out, err) + "\n%s" % (res.get("w"),))
    th.join(120)
    dt = time.monotonic() - t0
    rc, out, err = res.get("w", (-1, "", "no result"))
    rc2, out2, err2 = nv("run", 1, "--", "netvm-ktest", "check", 128 * KiB, 256 * KiB, 77)
    T.ok(rc == 0 and rc2 == 0, "writeP of 256 KiB across the outage completed in %.1f s, every byte "
         "verified" % dt, diag(rc, out, err) + "\n" + diag(rc2, out2, err2))

    # --- the switch restarted: every node's QEMU reconnects by itself
    switch_restart(pa, nodes)

    # --- one VM killed: operations towards it fail in bounded time, the others work
    st = cluster_state()
    victim = st["nodes"][3]["pid"]
    os.kill(victim, signal.SIGKILL)
    t0 = time.monotonic()
    rc, out, err = nv("run", 0, "--", "netvm-ktest", "write", 3, hex(pa[3]), 0, 4 * KiB, 5, timeout=60)
    dt = time.monotonic() - t0
    # bounded: the run's 60 s deadline (a hang gives rc -1); dt is a figure
    T.ok(rc == 1 and "EHOSTUNREACH" in err,
         "node 3 killed: writeP 0 -> 3 fails with EHOSTUNREACH (%.1f s)" % dt, diag(rc, out, err))
    t0 = time.monotonic()
    rc, out, err = nv("run", 1, "--", "netvm-ktest", "read", 3, hex(pa[3]), 0, 4 * KiB, timeout=60)
    dt = time.monotonic() - t0
    T.ok(rc == 1 and "EHOSTUNREACH" in err,
         "readP 1 <- 3 fails with EHOSTUNREACH (%.1f s)" % dt, diag(rc, out, err))
    three = [0, 1, 2]
    all_to_all(pa, three, size=16 * KiB, tag="after the kill: ")


def gone(pid):
    """pid has exited (a zombie counts: its reaper is not this process)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def link_states(nodes, want, secs):
    """Polls the nodes' link_state at once until every one reads want, at
    most secs; returns the nodes that did not."""
    t0 = time.monotonic()
    left = list(nodes)
    while left and time.monotonic() - t0 < secs:
        res = parallel({n: (n, "cat /sys/class/netvm/netvm0/link_state") for n in left})
        left = [n for n in left if res[n][0] != 0 or res[n][1].strip() != want]
    return left


def switch_restart(pa, nodes):
    """Stops netvm-switch and starts it again with the same command line in
    the state dir: every node's link comes back (QEMU's reconnect-ms), and
    the all-to-all transfers verify.  With a relative socket path QEMU,
    which -daemonize moved to /, looked for /nodeI.sock and no node ever
    came back (docs/cluster.md, "Why the link sockets are absolute")."""
    st = cluster_state()
    old = st["fabric"]["pid"]
    with open("/proc/%d/cmdline" % old, "rb") as f:
        argv = [a.decode() for a in f.read().split(b"\0") if a]
    log = os.path.join(state_dir(), "switch.log")
    os.kill(old, signal.SIGTERM)
    while not gone(old):
        time.sleep(0.05)
    left = link_states(nodes, "down", 60)
    T.ok(not left, "switch stopped: every node's link is down (still up: %s)" % (left or "none"))
    # started by a shell that exits at once, as ./netvm up starts it: init
    # reaps it, and ./netvm down (which waits for that) stops it
    r = subprocess.run(["sh", "-c", 'setsid "$@" </dev/null >>switch.log 2>&1 & echo $!', "sh"] + argv,
                       cwd=state_dir(), stdout=subprocess.PIPE, text=True, check=True)
    pid = int(r.stdout.strip())
    st["fabric"]["pid"] = pid
    with open(os.path.join(state_dir(), "cluster.json"), "w") as f:
        json.dump(st, f)
    # bounded waits on observable state: the switch's second ready line,
    # then every node's link_state (a node that never reconnects fails here)
    t0 = time.monotonic()
    while open(log, errors="replace").read().count("netvm-switch ready:") < 2 and \
            not gone(pid) and time.monotonic() - t0 < 30:
        time.sleep(0.05)
    left = link_states(nodes, "up", 120)
    T.ok(not gone(pid) and not left, "switch restarted: every node's link is up again "
         "(%.1f s; still down: %s)" % (time.monotonic() - t0, left or "none"),
         open(log, errors="replace").read()[-2000:])
    all_to_all(pa, nodes, size=16 * KiB, tag="after the switch restart: ")


def group_tree():
    out = check_routes({2, 6})
    T.ok("l0,l1,s0,s1" in out, "the switch runs tree4.topo (l0,l1,s0,s1)", out)
    nodes = list(range(N))
    pa = window_pas(nodes)
    all_to_all(pa, nodes)
    rc, out, err = nv("status")
    spine = [l for l in out.splitlines() if l.startswith(("s0:", "s1:"))]
    T.ok(spine and all(int(l.split()[3]) > 0 for l in spine),
         "traffic crossed both spines", "\n".join(spine))
    remap(pa)


def mapper_json(*args):
    rc, out, err = nv("map", "--json", *args, timeout=120)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, None, err


def routes_of(node):
    rc, out, err = sh(node, "cat /sys/class/netvm/netvm0/routes")
    return {int(l.split()[0]): l.split()[1] for l in out.splitlines() if l.strip()}


def remap(pa):
    """The mapper: installed by up, run again from another node, a node
    leaving (its link down) and joining again."""
    rc, out, err = nv("status")
    T.ok(rc == 0 and "routes: mapper" in out, "up installed the mapper's routes", diag(rc, out, err))
    rc, m, err = mapper_json("--node", 2)
    T.ok(rc == 0 and m and m["nodes"] == [0, 1, 2, 3] and m["acked"] == 4 and
         sorted(s["name"] for s in m["switches"]) == ["l0", "l1", "s0", "s1"],
         "the mapper in node 2 finds switches l0,l1,s0,s1 and nodes 0-3; all 4 install",
         "exit %s map %s\n%s" % (rc, m, err))
    ok = m is not None and all(
        len(r["route"]) == (1 if r["src"] // 2 == r["dst"] // 2 else 3) for r in m["routes"])
    T.ok(ok, "the mapper's routes: 1 byte within a leaf, 3 across the spines",
         json.dumps(m and m["routes"]))
    want = {r["dst"]: "".join("%02x" % (0x80 | b) for b in r["route"])
            for r in (m["routes"] if m else []) if r["src"] == 1}
    got = routes_of(1)
    T.ok(got == want, "node 1's driver holds the routes the mapper computed", "%s\n%s" % (got, want))

    # node 3 leaves: a re-map drops it everywhere, traffic to it fails
    nv("link", 3, "down")
    rc, m, err = mapper_json()
    T.ok(rc == 0 and m and m["nodes"] == [0, 1, 2] and m["acked"] == 3,
         "node 3's link down: the re-map finds nodes 0-2", "exit %s map %s\n%s" % (rc, m, err))
    left = [n for n in range(3) if 3 in routes_of(n)]
    T.ok(not left, "no node keeps a route to node 3", "still routed from %s" % left)
    t0 = time.monotonic()
    rc, out, err = nv("run", 0, "--", "netvm-ktest", "read", 3, hex(pa[3]), 0, 4 * KiB, timeout=60)
    dt = time.monotonic() - t0
    T.ok(rc == 1 and "EHOSTUNREACH" in err, "readP 0 <- 3 fails with EHOSTUNREACH (%.1f s)" % dt,
         diag(rc, out, err))

    # node 3 joins again
    nv("link", 3, "up")
    rc, m, err = mapper_json()
    T.ok(rc == 0 and m and m["nodes"] == [0, 1, 2, 3] and m["acked"] == 4,
         "node 3's link up: the re-map finds nodes 0-3 again", "exit %s map %s\n%s" % (rc, m, err))
    all_to_all(pa, list(range(N)), size=16 * KiB, tag="after the re-map: ")


GROUPS = {"switch": (group_switch, []),
          "tree": (group_tree, ["--topology", os.path.join(REPO, "fabric", "topologies", "tree4.topo")])}


def main():
    global CLUSTER
    if len(sys.argv) != 2 or sys.argv[1] not in GROUPS:
        print("usage: test_fabric.py %s" % "|".join(GROUPS), file=sys.stderr)
        return 2
    group = sys.argv[1]
    CLUSTER = G.name = "t-fabric-" + group
    fn, up_args = GROUPS[group]
    return tap_cluster_main(T, CLUSTER, N, fn, up_args)


if __name__ == "__main__":
    sys.exit(main())
