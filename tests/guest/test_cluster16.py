#!/usr/bin/python3
"""A 16-node cluster through a two-level switch fabric (meson test
'guest-cluster16'): ./netvm up -n 16 --topology fabric/topologies/tree16.topo
(every node started from the boot template, docs/cluster.md "Fast boot";
routes installed by the mapper), then

  - every node has its own identity: hostname, NETVM_NODE, the NIC's node
    id, the data NIC's address and MAC, all different and as expected;
  - status: 16 nodes, links up, 15 routes each (1 byte within a leaf,
    3 bytes across the spines);
  - all-to-all NetVM writeP, then readP: every node writes to every other
    node (240 transfers) and reads from every other; every byte verified.
    The patterns are position-dependent (byte i of a region is a hash of
    i + seed) and each seed is unique per (round, writer, reader), salted
    per run, and a multiple of 1 MiB (the window's size) apart from every
    other: a transfer landing at the wrong place or from the wrong node
    cannot verify.  One round: a second (there were two) cost the suite
    about 70 s of a test that runs alone, and could only add a transfer
    that silently did not happen, which the first round's fresh windows
    catch as well (NETVM_TEST_ROUNDS=2 or 3 runs more).

TAP output.  The cluster is 't-guest-cluster16'; it is always torn down and
nothing may be left.  Environment: NETVM, NETVM_TEST_BOOT_TIMEOUT, NETVM_TEST_ROUNDS.
"""
import os
import random
import sys
import time

from guestlib import REPO, ClusterShell, Tap, diag, run_parallel, tap_cluster_main

N = 16
KiB = 1024
SIZE = 16 * KiB
ROUNDS = int(os.environ.get("NETVM_TEST_ROUNDS", "1"))  # at most 3: seeds fit 32 bits
CLUSTER = "t-guest-cluster16"
TOPOLOGY = os.path.join(REPO, "fabric", "topologies", "tree16.topo")
T = Tap()
SALT = random.randrange(4)


G = ClusterShell(CLUSTER, sh_timeout=600)
nv, sh = G.nv, G.sh


def seed(rnd, s, d):
    """Unique per (salt, round, writer, reader); 1 MiB apart (fits 32 bits)."""
    return ((SALT * (ROUNDS + 1) + rnd) * 256 + s * 16 + d) << 20


def all_ok(res):
    return all(r[0] == 0 for r in res.values())


def why(res):
    return "\n".join("node %d: %s" % (k, diag(*r)) for k, r in sorted(res.items()) if r[0] != 0)


def identities():
    res = run_parallel(sh, {n: (n, "hostname; echo $NETVM_NODE; "
                                   "cat /sys/class/netvm/netvm0/node_id; "
                                   "ip -o -4 addr show | grep -o '10\\.77\\.0\\.[0-9]*'; "
                                   "cat /sys/class/net/*/address | grep '^52:54:00:77:'")
                            for n in range(N)})
    bad = []
    for n in range(N):
        rc, out, err = res[n]
        want = ["node%d" % n, str(n), str(n), "10.77.0.%d" % (n + 1), "52:54:00:77:00:%02x" % (n + 1)]
        if rc != 0 or out.split() != want:
            bad.append("node %d: want %s, got rc %d %s %s" % (n, want, rc, out.split(), err.strip()))
    T.ok(not bad, "16 identities: hostname, NETVM_NODE, NIC node id, data address and MAC of each",
         "\n".join(bad))


def check_routes():
    rc, out, err = nv("status", timeout=600)
    lines = [l for l in out.splitlines() if l[:1].isdigit() and " up " in l]
    ok = rc == 0 and "l0,l1,l2,l3,s0,s1" in out and len(lines) == N
    for l in lines:
        f = l.split()
        me, routes = int(f[0]), dict(r.split(":") for r in f[6:])
        want = {d: (1 if d // 4 == me // 4 else 3) for d in range(N) if d != me}
        ok = ok and {int(d): len(h) // 2 for d, h in routes.items()} == want
    T.ok(ok, "status: 16 nodes, links up, 15 routes each (1 byte within a leaf, 3 across spines)",
         diag(rc, out, err))


def window_pas():
    res = run_parallel(sh, {n: (n, "netvm-ktest pa") for n in range(N)})
    ok = all_ok(res) and all(r[1].strip().startswith("0x") for r in res.values())
    T.ok(ok, "NetVM on in all 16 nodes (their test windows)", why(res))
    if not ok:
        raise SystemExit(1)
    return {n: int(res[n][1].strip(), 16) for n in range(N)}


def round_trip(pa, rnd):
    nodes = range(N)
    # writes: s's bytes land at s*SIZE in d's window
    t0 = time.monotonic()
    res = run_parallel(sh, {s: (s, " && ".join(
        "netvm-ktest write %d %#x %d %d %d" % (d, pa[d] + s * SIZE, s * SIZE, SIZE, seed(rnd, s, d))
        for d in nodes if d != s)) for s in nodes})
    T.ok(all_ok(res), "round %d: all-to-all writeP of %d KiB, 240 transfers (%.1f s)"
         % (rnd, SIZE // KiB, time.monotonic() - t0), why(res))
    res = run_parallel(sh, {d: (d, " && ".join(
        "netvm-ktest check %d %d %d" % (s * SIZE, SIZE, seed(rnd, s, d)) for s in nodes if s != d))
        for d in nodes})
    T.ok(all_ok(res), "round %d: every byte written arrived where it belongs" % rnd, why(res))
    # reads: d fills its upper half with its own seed; s reads it into
    # 768K + d*16K of its own window and checks it there
    up = 512 * KiB
    res = run_parallel(sh, {d: (d, "netvm-ktest fill %d %d %d" % (up, SIZE, seed(rnd, d, d)))
                            for d in nodes})
    T.ok(all_ok(res), "round %d: read regions filled" % rnd, why(res))
    t0 = time.monotonic()
    res = run_parallel(sh, {s: (s, " && ".join(
        "netvm-ktest read %d %#x %d %d && netvm-ktest check %d %d %d" % (
            d, pa[d] + up, 768 * KiB + d * SIZE, SIZE, 768 * KiB + d * SIZE, SIZE, seed(rnd, d, d))
        for d in nodes if d != s)) for s in nodes})
    T.ok(all_ok(res), "round %d: all-to-all readP of %d KiB, every byte verified (%.1f s)"
         % (rnd, SIZE // KiB, time.monotonic() - t0), why(res))


def body():
    identities()
    check_routes()
    pa = window_pas()
    for rnd in range(1, ROUNDS + 1):
        round_trip(pa, rnd)


if __name__ == "__main__":
    sys.exit(tap_cluster_main(T, CLUSTER, N, body, ["--topology", TOPOLOGY]))
