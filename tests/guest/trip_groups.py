"""Guest group for tripwires (docs/tripwire.md), run by run-guest-tests.py
(which passes its helpers in `g`):

  netvm-trip   node 1 exports a buffer and sets tripwires on exact ranges
               (writes; reads once-only; a three-page tripset; an atomic's
               word); node 0 reads, writes and increments beside and inside
               them, step by step; node 1 checks each hit (who, what) and
               that nothing outside a range fires; node 0's own outgoing
               tripwire; the NIC's table of 4096; ids freed with the
               endpoint.

  netvm-trip4  4 VMs through netvm-switch: node 0 sets a write tripwire
               per client node on its own range; nodes 1-3 write into
               theirs (and just beside it) at the same time; each tripwire
               fires once, naming the node whose range it is.

The guest program is tests/guest/netvm_trip_test.c (netvm-trip-test).
"""
SYS = "/sys/class/netvm/netvm0"


def tap_lines(g, who, text):
    for line in text.splitlines():
        if line.startswith("ok - "):
            g.T.ok(True, "%s: %s" % (who, line[5:]))
        elif line.startswith("not ok - "):
            g.T.ok(False, "%s: %s" % (who, line[9:]))
        elif line.startswith("# "):
            g.T.note(line[2:])


def trips(g, n):
    rc, out, err = g.sh(n, "cat %s/tripwires" % SYS)
    return dict((l.split()[0], int(l.split()[1])) for l in out.splitlines() if len(l.split()) == 2)


def group_trip(g):
    srv = g.Background(1, ["netvm-trip-test", "serve"], timeout=300)
    rc, out, err = g.sh(1, "for i in $(seq 150); do test -f /tmp/nvtrip.info && break; sleep 0.2; done; "
                        "cat /tmp/nvtrip.info")
    w = out.split()
    info = dict((w[i], w[i + 1]) for i in range(0, len(w) - 1, 2))
    if not g.T.ok(rc == 0 and "port" in info, "node 1: tripwires set on its export: %s" % out.strip(),
                  g.diag(rc, out, err) + "\n" + g.diag(*srv.wait(5))):
        return
    t = trips(g, 1)
    g.T.ok(t.get("in_use") == 7 and t.get("max") == 4096,
           "node 1's sysfs: 7 tripwires in use of 4096", "%s" % t)
    crc, cout, cerr = g.nv("run", "0", "--", "netvm-trip-test", "client", "1", info["port"], timeout=240)
    tap_lines(g, "node 0", cout.decode(errors="replace"))
    g.T.ok(crc == 0, "node 0: netvm-trip-test client exits 0", g.diag(crc, cout, cerr))
    src, sout, serr = srv.wait(240)
    tap_lines(g, "node 1", sout.decode(errors="replace") if isinstance(sout, bytes) else sout)
    g.T.ok(src == 0, "node 1: netvm-trip-test serve exits 0", g.diag(src, sout, serr))
    t = trips(g, 1)
    g.T.ok(t.get("in_use") == 0 and t.get("set", 0) >= 4096,
           "node 1: every id free again once the endpoint closed (set %s)" % t.get("set"), "%s" % t)
    t0 = trips(g, 0)
    g.T.ok(t0.get("in_use") == 0 and t0.get("set") == 1 and t0.get("cleared") == 1,
           "node 0: its outgoing tripwire set and cleared", "%s" % t0)
    rc, out, err = g.sh(1, "grep -E '^tripwires ' %s/fw_counters" % SYS)
    g.T.ok(rc == 0 and int(out.split()[1]) == 29,
           "node 1's firmware counted 29 hits (A, B, C x3, D, F x23)", g.diag(rc, out, err))

    # the RPC of the trip-bench benchmark, for correctness: 50 calls each way
    for mode in ("idle", "busy"):
        g.sh(1, "rm -f /tmp/nvrpc.info")
        srv = g.Background(1, ["netvm-trip-rpc", "serve", mode], timeout=120)
        rc, out, err = g.sh(1, "for i in $(seq 150); do test -f /tmp/nvrpc.info && break; sleep 0.2; done; "
                            "cat /tmp/nvrpc.info")
        w = out.split()
        if not g.T.ok(rc == 0 and len(w) == 4, "tripwire RPC server (%s) up" % mode, g.diag(rc, out, err)):
            continue
        crc, cout, cerr = g.nv("run", "0", "--", "netvm-trip-rpc", "call", w[1], w[3], "50", timeout=120)
        src, sout, serr = srv.wait(60)
        cout = cout.decode(errors="replace")
        g.T.ok(crc == 0 and " bad 0" in cout and src == 0,
               "tripwire RPC, server %s: 50 calls, every reply checked" % mode,
               g.diag(crc, cout, cerr) + "\n" + g.diag(src, sout, serr))


def group_trip4(g):
    srv = g.Background(0, ["netvm-trip-test", "serve-multi", "3"], timeout=300)
    rc, out, err = g.sh(0, "for i in $(seq 150); do test -f /tmp/nvtrip.info && break; sleep 0.2; done; "
                        "cat /tmp/nvtrip.info")
    w = out.split()
    info = dict((w[i], w[i + 1]) for i in range(0, len(w) - 1, 2))
    if not g.T.ok(rc == 0 and "port" in info, "node 0: a tripwire per client node: %s" % out.strip(),
                  g.diag(rc, out, err) + "\n" + g.diag(*srv.wait(5))):
        return
    clients = [g.Background(n, ["netvm-trip-test", "client-multi", "0", info["port"]], timeout=240)
               for n in (1, 2, 3)]
    for n, c in zip((1, 2, 3), clients):
        rc, out, err = c.wait(240)
        g.T.ok(rc == 0, "node %d: wrote into its range and beside it" % n, g.diag(rc, out, err))
    src, sout, serr = srv.wait(240)
    tap_lines(g, "node 0", sout.decode(errors="replace") if isinstance(sout, bytes) else sout)
    g.T.ok(src == 0, "node 0: netvm-trip-test serve-multi exits 0", g.diag(src, sout, serr))
