"""Guest groups for the DSM extensions on U-Net (docs/dsm.md), run by
run-guest-tests.py (which passes its helpers in `g`):

  dsm    2 VMs: netvm-dsm-test on both nodes, a TreadMarks-like mix of
         short interrupting requests, 4 KiB page replies into reply
         buffers, gathered diff replies and non-interrupting barrier
         arrivals; byte-verified, exact reply-table hit/miss counts, and
         quiet messages raising no upcall.
  dsm4   the same among 4 VMs through netvm-switch.
  dsm-emu  the same on 2 VMs with node 0's endpoint kernel-emulated (the
         driver plays its NI: reply table, quiet messages, gathers).

The guest program is tests/guest/netvm_dsm_test.c (netvm-dsm-test).
"""
import time

from guestlib import await_file, sysfs_counters

SYS = "/sys/class/netvm/netvm0"
ROUNDS = {2: 40, 4: 24}
QUIET_N = 20    # netvm_dsm_test.c
DIV_N = 40      # netvm_dsm_test.c: quiet replies sent with buffers running out


def counters(g, n):
    return sysfs_counters(g.sh, n)


def tap_lines(g, text):
    """The program's own lines (they name their node)."""
    for line in text.splitlines():
        if line.startswith("ok - "):
            g.T.ok(True, line[5:])
        elif line.startswith("not ok - "):
            g.T.ok(False, line[9:])
        elif line.startswith("# "):
            g.T.note(line[2:])


def mix(g, nodes, emulate=False):
    rounds = ROUNDS[nodes]
    for n in range(nodes):
        rc, out, err = g.sh(n, "cat %s/nv_state; rm -f /tmp/dsm.*" % SYS)
        if not g.T.ok(rc == 0 and out.strip() == "on", "node %d: NetVM on" % n, g.diag(rc, out, err)):
            return
    before = [counters(g, n) for n in range(nodes)]
    t0 = time.monotonic()
    env = ["-e", "NETVM_UNET_EMULATE=1"] if emulate else []
    procs = [g.Background(n, ["netvm-dsm-test", "node", str(n), str(nodes), str(rounds)], timeout=900,
                          opts=env if n == 0 else ())
             for n in range(nodes)]
    ports = []
    for n in range(nodes):
        rc, out, err = g.sh(n, await_file("/tmp/dsm.info"))
        w = out.split()
        if not g.T.ok(rc == 0 and len(w) == 2, "node %d: endpoint open (%s)" % (n, out.strip()),
                      g.diag(rc, out, err)):
            return
        ports.append(w[1])
    for n in range(nodes):
        g.sh(n, "echo '%s' > /tmp/dsm.peers.tmp && mv /tmp/dsm.peers.tmp /tmp/dsm.peers" % " ".join(ports))
    for n in range(nodes):
        rc, out, err = g.sh(n, await_file("/tmp/dsm.ready"))
        if not g.T.ok(rc == 0 and out.strip() == "ready", "node %d: channels to every node set up" % n,
                      g.diag(rc, out, err)):
            return
    for n in range(nodes):
        g.sh(n, "echo go > /tmp/dsm.go")
    for n, p in enumerate(procs):
        rc, out, err = p.wait(900)
        tap_lines(g, out.decode(errors="replace"))
        g.T.ok(rc == 0, "node %d: netvm-dsm-test exits 0 (%.1f s)" % (n, time.monotonic() - t0),
               g.diag(rc, out, err))
    after = [counters(g, n) for n in range(nodes)]
    d = [dict((k, a[k] - b.get(k, 0)) for k in a) for a, b in zip(after, before)]
    if emulate:
        # node 0's NI is its driver: the program's own checks above counted
        # its hits, misses and quiet messages; the NIC only carried them
        g.T.ok(d[0].get("unet_tx", 0) > 0 and d[0].get("unet_rx", 1) == 0 and
               d[0].get("unet_reply_hits", 1) == 0 and d[1].get("unet_reply_hits", 0) > 0 and
               d[0].get("unet_gather", 1) == 0 and d[1].get("unet_gather", 0) == rounds,
               "firmware counters: node 0's NIC sent %d messages for the emulated endpoint (KSEND, "
               "its gathers done by the driver) and delivered none to a NIC endpoint; node 1: %d hits"
               % (d[0].get("unet_tx", 0), d[1].get("unet_reply_hits", 0)), "%s" % d)
        for n in range(nodes):
            rc, out, err = g.sh(n, "cat %s/ep_counters" % SYS)
            g.T.ok(rc == 0 and "endpoints 0" in out, "node %d: every endpoint closed" % n, out)
        return
    hits = sum(x.get("unet_reply_hits", 0) for x in d)
    misses = sum(x.get("unet_reply_misses", 0) for x in d)
    # per node and round: one page and one diff reply; the page misses in
    # every third round (unregistered), the diff in every fifth (too small)
    round_miss = nodes * (sum(1 for r in range(rounds) if r % 3 == 2) +
                          sum(1 for r in range(rounds) if r % 5 == 4))
    want_hits = 2 * nodes * rounds - round_miss
    # node 0's diverted-replies check: the direct ones are misses (nothing
    # registered), the diverted ones neither (they skip the table)
    want_miss = round_miss + DIV_N - d[0].get("unet_diverted", 0)
    g.T.ok(hits == want_hits and misses == want_miss,
           "firmware counters: %d reply-table hits, %d misses (want %d, %d)"
           % (hits, misses, want_hits, want_miss), "%s" % d)
    gathers = sum(x.get("unet_gather", 0) for x in d)
    g.T.ok(gathers == nodes * rounds,
           "firmware counters: %d gathered sends (one per diff reply)" % gathers, "%s" % d)
    quiet = d[0].get("unet_quiet", 0)
    # node 0 also counts the direct part of the diverted-replies check
    want_quiet = (nodes - 1) * rounds + QUIET_N + DIV_N - d[0].get("unet_diverted", 0)
    g.T.ok(quiet == want_quiet and
           all(x.get("unet_quiet", 0) == 0 for x in d[1:]),
           "firmware counters: node 0 received %d quiet messages direct (barrier arrivals and the "
           "quiet checks; want %d), the others none" % (quiet, want_quiet), "%s" % d)
    g.T.ok(all(x.get("unet_dropped", 0) == 0 for x in d) and
           all(x.get("unet_diverted", 0) == 0 for x in d[1:]) and d[0].get("unet_diverted", 0) > 0,
           "nothing dropped; diverted only in node 0's check (%d)" % d[0].get("unet_diverted", 0),
           "%s" % d)
    for n in range(nodes):
        rc, out, err = g.sh(n, "cat %s/ep_counters" % SYS)
        g.T.ok(rc == 0 and "endpoints 0" in out, "node %d: every endpoint closed" % n, out)


def group_dsm(g):
    mix(g, 2)


def group_dsm4(g):
    mix(g, 4)


def group_dsm_emu(g):
    mix(g, 2, emulate=True)
