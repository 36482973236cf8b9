"""Guest group for U-Net's overflow control (docs/unet.md), run by
run-guest-tests.py (which passes its helpers in `g`):

  unet-flow  2 VMs, node 0 sends, node 1 receives (netvm-fugu-test), node
         1's high-water mark lowered to HIWAT_KIB so a pause reaches it:
         - a full-speed sender of random sizes (1..4096 B) against a
           receiver stopped twice for 1.2 s: every message delivered, in
           order, byte-verified; holds asserted and released, direct
           delivery again after each pause;
         - the same against a receiver that sleeps after every receive, the
           sender using NETVM_UNET_DONTWAIT (-EAGAIN while held);
         - a runaway sender to one stopped endpoint while a second endpoint
           on node 1 takes a paced stream: the second is never held;
         - the held sender killed: its endpoint goes, the receiver gets an
           in-order prefix, node 0 opens a new endpoint afterwards;
         - the receiver killed with messages buffered: the sender is
           released at once (not by expiry) and finishes.

  unet-flow-emu  the same 2 VMs, the stopped-twice scenario (8,000
         messages) with kernel-emulated endpoints (NETVM_UNET_EMULATE): a
         virtual-port receiver holds its NIC sender (the driver has the NI
         send HOLD and RELEASE from the virtual port), and a virtual-port
         sender is held by its NIC receiver (the frames reach the driver);
         every message delivered in order, byte-verified, holds counted;
         and an emulated sender using NETVM_UNET_DONTWAIT against a
         receiver that sleeps after every receive (-EAGAIN while held).

The guest program is tests/guest/netvm_fugu_test.c (netvm-fugu-test).
"""
import time

from guestlib import await_file, fugu_fields as fields, sysfs_counters

SYS = "/sys/class/netvm/netvm0"
HIWAT_KIB = 512


def counters(g, n):
    return sysfs_counters(g.sh, n)


class Pair:
    """A receiver on node 1 and a sender on node 0, connected (tag from
    NAME); start() lets the sender go."""

    def __init__(self, g, name, n, seed, recv_opts=(), send_opts=(), recv_emu=False,
                 send_emu=False):
        self.g, self.name = g, name
        self.ports = []
        emu = ["-e", "NETVM_UNET_EMULATE=1"]
        g.sh(0, "rm -f /tmp/%s.*" % name)
        g.sh(1, "rm -f /tmp/%s.*" % name)
        self.recv = g.Background(1, ["netvm-fugu-test", "recv", name, "0", str(n), str(seed),
                                     *recv_opts], timeout=600, opts=emu if recv_emu else ())
        self.ok = False
        rc, out, err = g.sh(1, await_file("/tmp/%s.info" % name))
        if not g.T.ok(rc == 0 and out.startswith("port "), "%s: receiver's endpoint open on node 1 (%s)"
                      % (name, out.strip()), g.diag(rc, out, err)):
            return
        self.ports.append(int(out.split()[1]))
        self.send = g.Background(0, ["netvm-fugu-test", "send", name, "1", out.split()[1], str(n),
                                     str(seed), *send_opts], timeout=600,
                                 opts=emu if send_emu else ())
        rc, out, err = g.sh(0, await_file("/tmp/%s.info" % name))
        if not g.T.ok(rc == 0 and out.startswith("port "), "%s: sender's endpoint open on node 0 (%s)"
                      % (name, out.strip()), g.diag(rc, out, err)):
            return
        self.ports.append(int(out.split()[1]))
        rc, out, err = g.sh(1, "echo %s > /tmp/%s.peer.tmp && mv /tmp/%s.peer.tmp /tmp/%s.peer; %s"
                            % (out.split()[1], name, name, name, await_file("/tmp/%s.ready" % name)))
        self.ok = g.T.ok(rc == 0 and out.strip() == "ready", "%s: channel set up at both ends" % name,
                         g.diag(rc, out, err))

    def start(self):
        self.g.sh(0, "echo go > /tmp/%s.go" % self.name)

    def results(self, timeout=600):
        rr = self.recv.wait(timeout)
        sr = self.send.wait(timeout)
        return (rr[0], fields(rr[1].decode(errors="replace"), "recv"), rr), \
               (sr[0], fields(sr[1].decode(errors="replace"), "send"), sr)


def wait_counter(g, node, name, above, secs=120):
    """Wait (polling the node's firmware counters) until NAME > ABOVE."""
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if counters(g, node).get(name, 0) > above:
            return True
        time.sleep(0.2)
    return False


def delivered_all(g, name, rrc, r, src, s, rr, sr):
    n = int(r.get("n", -1))
    return g.T.ok(rrc == 0 and src == 0 and r.get("got") == n and r.get("bad") == 0 and
                  r.get("lost") == 0 and r.get("dropped") == 0 and s.get("err") == 0 and
                  s.get("peer_dropped") == 0,
                  "%s: all %d messages delivered in order, byte-verified, none lost (%d direct, %d "
                  "diverted); sender %.0f msg/s, %.1f MB/s" % (
                      name, n, r.get("direct", 0), r.get("diverted", 0), s.get("msgs_per_s", 0),
                      s.get("mb_per_s", 0)),
                  g.diag(*rr) + "\n" + g.diag(*sr))


def stopped_twice(g):
    name = "flow-stop"
    p = Pair(g, name, 20000, 0x5eed, recv_opts=["-p", "4000:1200", "-p", "12000:1200"])
    if not p.ok:
        return
    p.start()
    (rrc, r, rr), (src, s, sr) = p.results()
    delivered_all(g, name, rrc, r, src, s, rr, sr)
    g.T.ok(r.get("hold_on", 0) >= 2 and r.get("hold_off") == r.get("hold_on") and
           s.get("tx_held", 0) >= 2 and s.get("hold_expired") == 0 and r.get("divert_mode") == 0,
           "%s: overflow control held the sender %d time(s) (%.2f s in all), released it as often, "
           "no hold ran out" % (name, s.get("tx_held", 0), s.get("held_secs", 0)),
           g.diag(*rr) + "\n" + g.diag(*sr))
    g.T.ok(r.get("back0", -1) >= 0 and r.get("back1", -1) >= 0,
           "%s: direct delivery again after each pause (%.2f s and %.2f s after waking)"
           % (name, r.get("back0", -1), r.get("back1", -1)), g.diag(*rr))


def slow_receiver(g):
    name = "flow-slow"
    p = Pair(g, name, 4000, 0x51, recv_opts=["-s", "300"], send_opts=["-n"])
    if not p.ok:
        return
    p.start()
    (rrc, r, rr), (src, s, sr) = p.results()
    delivered_all(g, name, rrc, r, src, s, rr, sr)
    g.T.ok(r.get("hold_on", 0) >= 1 and r.get("hold_off") == r.get("hold_on") and
           s.get("tx_held", 0) >= 1 and r.get("divert_mode") == 0 and s.get("eagain", 0) > 0,
           "%s: a receiver sleeping 300 us per message holds the sender %d time(s) (%.2f s; "
           "NETVM_UNET_DONTWAIT sends got -EAGAIN %d times), direct again at the end"
           % (name, s.get("tx_held", 0), s.get("held_secs", 0), s.get("eagain", 0)),
           g.diag(*rr) + "\n" + g.diag(*sr))


def runaway_beside_flowing(g):
    a = Pair(g, "flow-run", 8000, 0x77, recv_opts=["-p", "1000:2000"])
    b = Pair(g, "flow-side", 1500, 0x78, send_opts=["-r", "2000"])
    if not (a.ok and b.ok):
        return
    a.start()
    b.start()
    (arc, ar, arr), (asc, as_, asr) = a.results()
    (brc, br, brr), (bsc, bs, bsr) = b.results()
    delivered_all(g, "flow-run", arc, ar, asc, as_, arr, asr)
    delivered_all(g, "flow-side", brc, br, bsc, bs, brr, bsr)
    g.T.ok(as_.get("tx_held", 0) >= 1 and bs.get("tx_held", 1) == 0 and br.get("hold_on", 1) == 0,
           "a runaway sender to a stopped endpoint is held (%d time(s), %.2f s) while a second "
           "endpoint on the same node takes its stream unheld (%d direct, %d diverted)"
           % (as_.get("tx_held", 0), as_.get("held_secs", 0), br.get("direct", 0), br.get("diverted", 0)),
           g.diag(*asr) + "\n" + g.diag(*bsr) + "\n" + g.diag(*brr))


def sender_killed(g):
    name = "flow-ks"
    held0 = counters(g, 0).get("unet_held", 0)
    p = Pair(g, name, 1000000, 0x99, recv_opts=["-p", "300:4000", "-q", "5"])
    if not p.ok:
        return
    p.start()
    held = wait_counter(g, 0, "unet_held", held0)
    rc, out, err = g.sh(0, "kill -9 $(cat /tmp/%s.pid) && echo killed" % name)
    g.T.ok(held and rc == 0 and out.strip() == "killed",
           "%s: the sender held by the stopped receiver, then killed (SIGKILL)" % name, g.diag(rc, out, err))
    (rrc, r, rr), (src, s, sr) = p.results()
    g.T.ok(rrc == 0 and r.get("bad") == 0 and r.get("got", 0) > 300 and r.get("lost") == 0,
           "%s: the receiver got an in-order, byte-verified prefix of %d messages and lost none"
           % (name, r.get("got", 0)), g.diag(*rr))
    rc, out, err = g.sh(0, "cat %s/ep_counters" % SYS)
    g.T.ok(rc == 0 and "endpoints 0" in out, "%s: node 0 closed the killed sender's endpoint" % name, out)


KR_MSGS = 5000


def receiver_killed(g):
    name = "flow-kr"
    c0 = counters(g, 0)
    # 5000: the sender is held at about 700 (300 taken, then the receive
    # buffers and the high-water mark), long before its end; what it sends
    # after the release goes to a closed port (30000 took 62 s of the
    # group)
    p = Pair(g, name, KR_MSGS, 0xaa, recv_opts=["-p", "300:60000"])
    if not p.ok:
        return
    p.start()
    held = wait_counter(g, 0, "unet_held", c0.get("unet_held", 0))
    rc, out, err = g.sh(1, "kill -9 $(cat /tmp/%s.rpid) && echo killed" % name)
    g.T.ok(held and rc == 0 and out.strip() == "killed",
           "%s: the receiver, stopped with messages buffered and its sender held, killed" % name,
           g.diag(rc, out, err))
    (rrc, r, rr), (src, s, sr) = p.results()
    c1 = counters(g, 0)
    g.T.ok(src == 0 and s.get("err") == 0 and s.get("sent") == KR_MSGS and s.get("hold_expired") == 0 and
           c1.get("unet_hold_expired", 0) == c0.get("unet_hold_expired", 0),
           "%s: the sender was released when the receiver's endpoint closed (not by expiry) and "
           "finished (%d sent)" % (name, s.get("sent", 0)), g.diag(*sr))
    rc, out, err = g.sh(1, "cat %s/ep_counters" % SYS)
    g.T.ok(rc == 0 and "endpoints 0" in out, "%s: node 1 closed the killed receiver's endpoint "
           "(its buffered messages went with it)" % name, out)


def flow_setup(g):
    """NetVM on in both nodes and node 1's high-water mark at HIWAT_KIB;
    False (reported) if not."""
    for n in (0, 1):
        rc, out, err = g.sh(n, "cat %s/nv_state" % SYS)
        if not g.T.ok(rc == 0 and out.strip() == "on", "node %d: NetVM on" % n, g.diag(rc, out, err)):
            return False
    rc, out, err = g.sh(1, "echo %d > /sys/module/netvm/parameters/unet_divert_kib && "
                        "cat /sys/module/netvm/parameters/unet_divert_kib" % HIWAT_KIB)
    return g.T.ok(rc == 0 and out.strip() == str(HIWAT_KIB),
                  "node 1: high-water mark %d KiB" % HIWAT_KIB, g.diag(rc, out, err))


def group_unet_flow(g):
    if not flow_setup(g):
        return
    sender_killed(g)
    receiver_killed(g)
    slow_receiver(g)
    runaway_beside_flowing(g)
    stopped_twice(g)
    c = [counters(g, n) for n in (0, 1)]
    g.T.ok(c[1].get("unet_hold_tx", 0) > 0 and c[1].get("unet_release_tx", 0) > 0 and
           c[0].get("unet_held", 0) > 0 and c[1].get("unet_dropped", 1) == 0,
           "firmware counters: node 1 sent %d HOLD, %d RELEASE; node 0's sends held %d time(s); "
           "%d holds ran out; none dropped" % (c[1].get("unet_hold_tx", 0), c[1].get("unet_release_tx", 0),
                                               c[0].get("unet_held", 0), c[0].get("unet_hold_expired", 0)),
           "%s / %s" % tuple(c))


def stopped_twice_emulated(g, name, recv_emu, send_emu):
    """The stopped-twice scenario with one end kernel-emulated."""
    c0 = [counters(g, n) for n in (0, 1)]
    p = Pair(g, name, 8000, 0xe5, recv_opts=["-p", "2000:1200", "-p", "5000:1200"],
             recv_emu=recv_emu, send_emu=send_emu)
    if not p.ok:
        return
    rport, sport = p.ports
    g.T.ok((rport >= 16) == recv_emu and (sport >= 16) == send_emu,
           "%s: receiver on port %d, sender on port %d (%s kernel-emulated)"
           % (name, rport, sport, "receiver" if recv_emu else "sender"))
    p.start()
    (rrc, r, rr), (src, s, sr) = p.results()
    delivered_all(g, name, rrc, r, src, s, rr, sr)
    g.T.ok(r.get("hold_on", 0) >= 2 and r.get("hold_off") == r.get("hold_on") and
           s.get("tx_held", 0) >= 2 and s.get("hold_expired") == 0 and r.get("divert_mode") == 0 and
           r.get("back0", -1) >= 0 and r.get("back1", -1) >= 0,
           "%s: the receiver held its sender %d time(s) and released it as often; the sender was "
           "held %d time(s) (%.2f s), no hold ran out; direct again after each pause"
           % (name, r.get("hold_on", 0), s.get("tx_held", 0), s.get("held_secs", 0)),
           g.diag(*rr) + "\n" + g.diag(*sr))
    c1 = [counters(g, n) for n in (0, 1)]
    d = [dict((k, c1[n].get(k, 0) - c0[n].get(k, 0)) for k in c1[n]) for n in (0, 1)]
    if recv_emu:
        # node 1's NI sent the driver's HOLD/RELEASE; node 0's NI held
        ok = d[1].get("unet_hold_tx", 0) >= 2 and d[1].get("unet_release_tx", 0) >= 2 and \
            d[0].get("unet_held", 0) >= 2
    else:
        # node 1's NI held the virtual port; the frames reached node 0's driver
        ok = d[1].get("unet_hold_tx", 0) >= 2 and d[1].get("unet_release_tx", 0) >= 2 and \
            d[0].get("unet_ctl_kernel", 0) >= 4 and d[0].get("unet_held", 0) == 0
    g.T.ok(ok and d[1].get("unet_dropped", 1) == 0 and d[0].get("unet_hold_expired", 1) == 0,
           "%s: firmware counters: node 1 sent %d HOLD, %d RELEASE; node 0 held %d NIC send(s), "
           "handed %d control frame(s) to its driver" % (
               name, d[1].get("unet_hold_tx", 0), d[1].get("unet_release_tx", 0),
               d[0].get("unet_held", 0), d[0].get("unet_ctl_kernel", 0)), "%s / %s" % tuple(d))


def slow_receiver_emulated_sender(g):
    """A kernel-emulated sender with NETVM_UNET_DONTWAIT: -EAGAIN while held."""
    name = "flow-eslow"
    p = Pair(g, name, 4000, 0x52, recv_opts=["-s", "300"], send_opts=["-n"], send_emu=True)
    if not p.ok:
        return
    p.start()
    (rrc, r, rr), (src, s, sr) = p.results()
    delivered_all(g, name, rrc, r, src, s, rr, sr)
    g.T.ok(p.ports[1] >= 16 and r.get("hold_on", 0) >= 1 and r.get("hold_off") == r.get("hold_on") and
           s.get("tx_held", 0) >= 1 and s.get("hold_expired") == 0 and r.get("divert_mode") == 0 and
           s.get("eagain", 0) > 0,
           "%s: an emulated sender (port %d) to a receiver sleeping 300 us per message is held %d "
           "time(s) (%.2f s; NETVM_UNET_DONTWAIT sends got -EAGAIN %d times), direct again at the end"
           % (name, p.ports[1], s.get("tx_held", 0), s.get("held_secs", 0), s.get("eagain", 0)),
           g.diag(*rr) + "\n" + g.diag(*sr))


def group_unet_flow_emu(g):
    if not flow_setup(g):
        return
    stopped_twice_emulated(g, "flow-erecv", True, False)
    stopped_twice_emulated(g, "flow-esend", False, True)
    slow_receiver_emulated_sender(g)
    for n in (0, 1):
        rc, out, err = g.sh(n, "cat %s/ep_counters" % SYS)
        g.T.ok(rc == 0 and "endpoints 0" in out, "node %d: every endpoint closed" % n, out)
