"""Guest groups for the driver's network virtual memory (issue 5), run by
run-guest-tests.py (which passes its helpers in `g`):

  netvm-vm        a remote read, write and notification into node 1's
                  exported range after each of: nothing, MADV_PAGEOUT to
                  zram swap, munmap + mmap, fork (COW kept by the child,
                  then broken by the child), mremap away and back,
                  MADV_DONTNEED, THP on, THP off, memory pressure from
                  another process; a notification as a signal (O_ASYNC);
                  per-endpoint sysfs and the debugfs views; nothing pinned.
  netvm-teardown  kill -9 of the writer and of the exporter mid-stream
                  leaves no endpoint, translation or pin; rmmod is refused
                  while an endpoint is open; 100 rmmod/insmod cycles on
                  node 1 while node 0 sends, then everything works.
  netvm-death     node 1's QEMU killed mid-stream: every pending and
                  later call on node 0 fails with EHOSTUNREACH in time.
  netvm-unmap     the NIC kept inside a page (debugfs lock_hold): giving
                  the page up (MADV_DONTNEED) waits for it; the writes
                  before and after verified at node 1.

The guest programs are tests/guest/netvm_vm_test.c (netvm-vm-test) and
tests/guest/netvm_unmap_test.c (netvm-unmap-test).
"""
import json
import os
import signal
import time

SYS = "/sys/class/netvm/netvm0"
DBG = "/sys/kernel/debug/netvm/netvm0"
EVENTS = ["none", "pageout", "remap", "fork", "forkw", "mremap", "dontneed",
          "thp-on", "thp-off", "pressure"]
SIGNAL = 40  # a real-time signal, chosen with F_SETSIG


def kv(text):
    w = text.split()
    return dict((w[i], w[i + 1]) for i in range(0, len(w) - 1, 2))


def lines_kv(text):
    return dict((l.split()[0], int(l.split()[1])) for l in text.splitlines()
                if len(l.split()) == 2 and l.split()[1].lstrip("-").isdigit())


def pinned(g, n):
    """FOLL_PIN acquired - released, and nr_mlock, on node n."""
    rc, out, err = g.sh(n, "grep -E '^(nr_foll_pin_acquired|nr_foll_pin_released|nr_mlock) ' /proc/vmstat")
    d = kv(out)
    return (int(d.get("nr_foll_pin_acquired", 0)) - int(d.get("nr_foll_pin_released", 0)),
            int(d.get("nr_mlock", -1)))


def mapped(g, n):
    """Translations in node n's NIC, from debugfs pt's header."""
    rc, out, err = g.sh(n, "head -n 1 %s/pt" % DBG)
    return int(kv(out).get("mapped", -1)) if rc == 0 else -1


def info_rows(g):
    """Node 1's pt_rows (for a command's destination hash)."""
    rc, out, err = g.sh(1, "head -n 1 %s/pt" % DBG)
    return kv(out).get("pt_rows", "1")


def sender_verdict(out, fw0, fw1):
    """The traffic node 0 sent during the reload cycles: OUT holds a
    "w N" / "c N" line per write / import with its exit status and a last
    "rounds N"; fw0 / fw1 are node 0's fw_counters before and after.
    Good when rounds ran, no write succeeded (node 1 has no endpoint on
    port 1: each is refused or fails while node 1 reloads), no command
    died of a signal or was not found (status >= 126), and node 0's
    firmware counted every write and its error completion.  Returns
    (good, a tally such as "12 rounds; w3: 12, c1: 12")."""
    status = {}
    rounds = -1
    for line in out.splitlines():
        w = line.split()
        if len(w) == 2 and w[0] in ("w", "c") and w[1].isdigit():
            key = w[0] + w[1]
            status[key] = status.get(key, 0) + 1
        elif len(w) == 2 and w[0] == "rounds" and w[1].isdigit():
            rounds = int(w[1])
    writes = sum(n for k, n in status.items() if k[0] == "w")
    moved = {k: fw1.get(k, 0) - fw0.get(k, 0) for k in ("cmd_write", "error_completions")}
    good = (rounds > 0 and writes >= rounds and status.get("w0", 0) == 0 and
            all(int(k[1:]) < 126 for k in status) and
            moved["cmd_write"] >= writes and moved["error_completions"] >= writes)
    tally = "%d rounds; %s; node 0 fw: %s" % (
        rounds, ", ".join("%s: %d" % kv for kv in sorted(status.items())),
        ", ".join("%s +%d" % kv for kv in sorted(moved.items())))
    return good, tally


def start_server(g):
    srv = g.Background(1, ["netvm-vm-test", "serve"], timeout=1800)
    rc, out, err = g.sh(1, "for i in $(seq 150); do test -f /tmp/nvvm.info && break; sleep 0.2; done; "
                        "cat /tmp/nvvm.info")
    info = kv(out)
    ok = g.T.ok(rc == 0 and "port" in info, "node 1: netvm-vm-test exports 4 MiB as \"vm\": %s" % out.strip(),
                g.diag(rc, out, err) + ("" if "port" in info else "\n" + g.diag(*srv.wait(5))))
    return srv, (info if ok else None)


def ctl(g, line, timeout=240):
    rc, out, err = g.sh(1, "echo '%s' > /tmp/nvvm.ctl; cat /tmp/nvvm.resp" % line, timeout=timeout)
    return out.strip() if rc == 0 else "exit %d: %s" % (rc, err.strip())


def client_round(g, port, what, rseed, wseed, nseed, notf):
    rc, out, err = g.nv("run", "0", "--", "netvm-vm-test", "client", "1", port, str(rseed), str(wseed),
                        str(nseed), str(notf), timeout=180)
    text = out.decode(errors="replace")
    good = rc == 0 and text.count("ok - ") == 3 and "not ok" not in text
    g.T.ok(good, "%s: node 0 read R (byte-checked), wrote W, wrote N + notification %d"
           % (what, notf), g.diag(rc, out, err))
    return good


def group_vm(g):
    T = g.T
    for n in (0, 1):
        rc, out, err = g.sh(n, "cat %s/nv_state" % SYS)
        if not T.ok(rc == 0 and out.strip() == "on", "node %d: NetVM on" % n, g.diag(rc, out, err)):
            return
    rc, out, err = g.sh(1, "echo 256M > /sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null && "
                        "swapon /dev/zram0 && grep -c zram0 /proc/swaps")
    T.ok(rc == 0 and out.strip() == "1", "node 1: 256 MiB of zram swap on", g.diag(rc, out, err))
    pins0 = {n: pinned(g, n) for n in (0, 1)}

    srv, info = start_server(g)
    if not info:
        return
    port = info["port"]
    for i, ev in enumerate(EVENTS):
        rseed, wseed, nseed, notf = 100 + i, 200 + i, 300 + i, 1 + i
        r = ctl(g, "prep %d" % rseed)
        r = ctl(g, "event %s %d" % (ev, rseed)) if r == "ok" else r
        st = kv(r[3:]) if r.startswith("ok ") else {}
        if not T.ok(bool(st), "node 1: event %s: %s" % (ev, r), r):
            continue
        swap, res, huge = int(st["swap"]), int(st["resident"]), int(st["huge"])
        if ev in ("pageout", "pressure"):
            T.ok(swap > 0, "%s: exported pages are in swap (%d kB; %d of 1024 pages resident)"
                 % (ev, swap, res), r)
        if ev == "thp-on":
            T.ok(huge > 0, "thp-on: the exported range is backed by huge pages (%d kB)" % huge, r)
        if ev == "thp-off":
            T.ok(huge == 0, "thp-off: no huge pages in the exported range", r)
        client_round(g, port, "after " + ev, int(st["rseed"]), wseed, nseed, notf)
        want = "ok child ok" if ev in ("fork", "forkw") else "ok"
        v = ctl(g, "verify %d %d %d" % (wseed, nseed, notf))
        T.ok(v == want, "after %s: node 1 finds W and N byte for byte, notification %d pending once%s"
             % (ev, notf, "; the child's copy unchanged" if want != "ok" else ""), v)

    # a notification as a signal (O_ASYNC + F_SETSIG)
    r = ctl(g, "sigon %d" % SIGNAL)
    T.ok(r == "ok", "node 1: O_ASYNC and F_SETSIG %d on the endpoint's fd" % SIGNAL, r)
    ctl(g, "prep 400")
    client_round(g, port, "signal", 400, 401, 402, 50)
    r = ctl(g, "sigwait 30000")
    T.ok(r == "ok signo %d fd-match 1 code-pollin 1" % SIGNAL,
         "node 1: the notification raised signal %d with si_fd and POLL_IN" % SIGNAL, r)
    r = ctl(g, "verify 401 402 50")
    T.ok(r == "ok", "node 1: the signalled notification's data in place", r)

    # observability: per-endpoint sysfs, debugfs
    rc, out, err = g.sh(1, "cat %s/endpoints/%s/pid; cat %s/endpoints/%s/counters; cat %s/endpoints/%s/exports"
                        % (SYS, port, SYS, port, SYS, port))
    c = lines_kv(out)
    T.ok(rc == 0 and out.split()[0] == info["pid"] and c.get("page_misses", 0) > 0 and
         c.get("bounces", 0) > 0 and c.get("invalidations", 0) > 0 and c.get("restarts", 0) > 0 and
         c.get("installs", 0) > 0 and "errors" in c and "credit_stalls" in c and " vm " not in out and
         "\nvm 0x" in out,
         "node 1: endpoints/%s/ has pid, counters (misses, restarts, bounces, invalidations, credit "
         "stalls) and exports"
         % port, g.diag(rc, out, err))
    rc, out, err = g.sh(1, "cat %s/pt" % DBG)
    rows = [kv(l) for l in out.splitlines()[1:]]
    T.ok(rc == 0 and out.startswith("max_ppn ") and
         int(kv(out.splitlines()[0]).get("mapped", -1)) == len(rows) and
         all(r.get("way", "-1") != "-1" and r.get("lock") == "0" for r in rows) and
         any(r.get("port") == port for r in rows),
         "node 1: debugfs pt lists %d translations, each in its row, none locked" % len(rows),
         g.diag(rc, out[:2000], err))
    rc, out, err = g.sh(1, "cat %s/fw_counters %s/endpoints" % (DBG, DBG))
    T.ok(rc == 0 and "cmd_write " in out and ("port %s pid %s" % (port, info["pid"])) in out,
         "node 1: debugfs fw_counters and endpoints", g.diag(rc, out, err))

    r = ctl(g, "quit")
    src, sout, serr = srv.wait(60)
    T.ok(r == "bye" and src == 0, "node 1: the exporter exits", g.diag(src, sout, serr))
    check_clean(g, pins0, "after the run")


def check_clean(g, pins0, when):
    for n in (0, 1):
        ok = False
        for _ in range(30):
            rc, out, err = g.sh(n, "cat %s/ep_counters; ls %s/endpoints | wc -l" % (SYS, SYS))
            c = lines_kv(out)
            if c.get("endpoints", -1) == 0 and out.split()[-1] == "0" and mapped(g, n) == 0:
                ok = True
                break
            time.sleep(1)
        g.T.ok(ok and c.get("unmap_timeouts", 1) == 0 and c.get("evq_overflow", 1) == 0,
               "node %d %s: no endpoint, no translation left, no unmap timeout or lost event" % (n, when),
               "%s\nmapped %d" % (out, mapped(g, n)))
        p = pinned(g, n)
        g.T.ok(p == pins0[n], "node %d %s: pinned pages (FOLL_PIN, mlock) back to %s" % (n, when, pins0[n]),
               "before %s after %s" % (pins0[n], p))
        rc, out, err = g.sh(n, "dmesg | grep -E 'WARNING|BUG|Oops|leak' | head -n 5")
        g.T.ok(rc == 0 and out.strip() == "", "node %d %s: no kernel warning" % (n, when), out)


def group_teardown(g):
    T = g.T
    for n in (0, 1):
        rc, out, err = g.sh(n, "cat %s/nv_state" % SYS)
        if not T.ok(rc == 0 and out.strip() == "on", "node %d: NetVM on" % n, g.diag(rc, out, err)):
            return
    pins0 = {n: pinned(g, n) for n in (0, 1)}
    srv, info = start_server(g)
    if not info:
        return
    port = info["port"]

    def streaming():
        st = g.Background(0, ["netvm-vm-test", "stream", "1", port], timeout=300)
        # the writer's own endpoint on node 0 completes commands
        rc, out, err = g.sh(0, "for i in $(seq 120); do grep -qs '^done [1-9]' %s/endpoints/*/counters "
                            "&& exit 0; sleep 0.5; done; exit 1" % SYS, timeout=120)
        return st, rc == 0

    # kill -9 of the writer
    st, moving = streaming()
    T.ok(moving, "node 0 streams writes into node 1's export")
    rc, out, err = g.sh(0, "kill -9 $(pidof netvm-vm-test)")
    src, sout, serr = st.wait(60)
    T.ok(rc == 0 and src == 128 + 9, "node 0: the writer killed with SIGKILL mid-stream",
         g.diag(rc, out, err) + "\n" + g.diag(src, sout, serr))
    for _ in range(20):
        if lines_kv(g.sh(0, "cat %s/ep_counters" % SYS)[1]).get("endpoints") == 0:
            break
        time.sleep(1)
    T.ok(lines_kv(g.sh(0, "cat %s/ep_counters" % SYS)[1]).get("endpoints") == 0 and mapped(g, 0) == 0
         and pinned(g, 0) == pins0[0], "node 0: no endpoint, translation or pin left by the killed writer")
    ctl(g, "prep 9")
    client_round(g, port, "after the writer was killed", 9, 10, 11, 3)
    v = ctl(g, "verify 10 11 3")
    T.ok(v == "ok", "node 1: the exporter still serves, W and N verified", v)

    # kill -9 of the exporter
    st, moving = streaming()
    T.ok(moving, "node 0 streams again")
    rc, out, err = g.sh(1, "kill -9 %s" % info["pid"])
    src, sout, serr = st.wait(120)
    srv.wait(30)
    T.ok(rc == 0 and src == 3 and b"stopped after" in sout,
         "node 0: the writer stops with an error when the exporter is killed",
         g.diag(rc, out, err) + "\n" + g.diag(src, sout, serr))
    check_clean(g, pins0, "after kill -9 of both sides")

    # rmmod is refused while an endpoint is open
    g.sh(1, "rm -f /tmp/nvvm.info /tmp/nvvm.ctl /tmp/nvvm.resp")
    srv, info = start_server(g)
    if info:
        rc, out, err = g.sh(1, "rmmod netvm")
        rc2, out2, err2 = g.sh(1, "cat %s/endpoints/%s/pid" % (SYS, info["port"]))
        # delete_module fails with EAGAIN (busybox) or "in use" (kmod)
        T.ok(rc != 0 and ("in use" in err or "temporarily unavailable" in err) and rc2 == 0,
             "node 1: rmmod refused while an endpoint is open (module in use)",
             g.diag(rc, out, err) + "\n" + g.diag(rc2, out2, err2))
        T.ok(ctl(g, "quit") == "bye" and srv.wait(60)[0] == 0, "node 1: the exporter exits")

    # 100 rmmod/insmod cycles on node 1 while node 0 sends NetVM traffic
    # that node 1's NIC and kernel consume themselves: user writes to port
    # 1 (refused NO_PORT, or PEER_RESET/UNREACHABLE while node 1 reloads)
    # and import requests (kernel-control frames, ENOENT).  Raw frames
    # would not do: with nobody reading them node 1 holds its receive
    # descriptors back (by design) and the link stalls.
    g.sh(0, "rm -f /tmp/stop /tmp/sent")
    fw0 = lines_kv(g.sh(0, "cat %s/fw_counters" % SYS)[1])
    # each command's exit status is kept ("w N" / "c N"): see sender_verdict
    sender = g.Background(0, ["sh", "-c", "n=0; while [ ! -f /tmp/stop ]; do "
                              "netvm-ep-test write 1 1 0x100000 0x1 %s 8192 5 >/dev/null 2>&1; "
                              "echo w $?; netvm-vm-test client 1 1 1 1 1 1 >/dev/null 2>&1; "
                              "echo c $?; n=$((n+1)); touch /tmp/sent; done; echo rounds $n"
                              % info_rows(g)],
                          timeout=1500)
    # the cycles start once the sender has finished a round
    g.sh(0, "for i in $(seq 600); do test -f /tmp/sent && break; sleep 0.1; done")
    t0 = time.monotonic()
    rc, out, err = g.sh(1, "i=0; while [ $i -lt 100 ]; do rmmod netvm || exit 1; "
                        "insmod /netvm/guest-driver/netvm.ko || exit 2; i=$((i+1)); done; echo $i",
                        timeout=1200)
    dt = time.monotonic() - t0
    g.sh(0, "touch /tmp/stop")
    srcs, sout, serr = sender.wait(120)
    fw1 = lines_kv(g.sh(0, "cat %s/fw_counters" % SYS)[1])
    good, tally = sender_verdict(sout.decode(errors="replace"), fw0, fw1)
    T.ok(rc == 0 and out.strip() == "100" and srcs == 0 and good,
         "node 1: 100 rmmod/insmod cycles in %.0f s while node 0 sent writes and imports (%s)"
         % (dt, tally), g.diag(rc, out, err) + "\n" + g.diag(srcs, sout, serr) +
         "\nnode 0 fw_counters before %s\nafter %s" % (fw0, fw1))
    rc, out, err = g.sh(1, "cat %s/selftest %s/nv_state %s/link_state" % (SYS, SYS, SYS))
    T.ok(rc == 0 and out.split() == ["passed", "on", "up"], "node 1: bound, NetVM on, link up after the cycles",
         g.diag(rc, out, err))
    rc, out, err = g.sh(1, "cat %s/ktest_pa" % SYS)
    pa = out.strip()
    # the first command to a peer that restarted may be abandoned with
    # PEER_RESET (ECONNRESET) by design; the next one must work
    first = g.nv("run", "0", "--", "netvm-ktest", "write", "1", pa, "0", "70000", "77", timeout=120)
    rc, out, err = first
    if rc != 0 and b"reset by peer" in err:
        T.note("first writeP after the cycles: ECONNRESET (peer restarted), as designed; again")
        rc, out, err = g.nv("run", "0", "--", "netvm-ktest", "write", "1", pa, "0", "70000", "77",
                            timeout=120)
    rc2, out2, err2 = g.nv("run", "1", "--", "netvm-ktest", "check", "0", "70000", "77", timeout=120)
    T.ok(rc == 0 and rc2 == 0, "after the cycles: writeP 70000 B node 0 -> node 1 verified",
         g.diag(rc, out, err) + "\n" + g.diag(rc2, out2, err2))
    srv, info = start_server(g)
    if info:
        ctl(g, "prep 21")
        client_round(g, info["port"], "after the cycles", 21, 22, 23, 4)
        v = ctl(g, "verify 22 23 4")
        T.ok(v == "ok", "after the cycles: node 1 verifies W and N", v)
        ctl(g, "quit")
        srv.wait(60)
    rc, out, err = g.sh(1, "dmesg | grep -E 'WARNING|BUG|Oops' | head -n 5")
    T.ok(rc == 0 and out.strip() == "", "node 1: no kernel warning after the cycles", out)


def node_pid(g, n):
    """Node n's QEMU process id, from the cluster's state."""
    with open(os.path.join(g.repo, "build", "cluster", g.cluster, "cluster.json")) as f:
        return json.load(f)["nodes"][n]["pid"]


def group_death(g):
    """Node 1's QEMU killed (kill -9) in the middle of node 0's stream of
    asynchronous writes and reads into node 1's export, with the command
    queue full: the call in progress and every later one on node 0 fail
    with EHOSTUNREACH (ECONNRESET would also be right) well within 30 s;
    node 0's QEMU and kernel are intact."""
    T = g.T
    for n in (0, 1):
        rc, out, err = g.sh(n, "cat %s/nv_state; cat /sys/module/netvm/parameters/nv_giveup_ms" % SYS)
        if not T.ok(rc == 0 and out.split() == ["on", "6000"],
                    "node %d: NetVM on, give-up 6000 ms" % n, g.diag(rc, out, err)):
            return
    srv, info = start_server(g)
    if not info:
        return
    st = g.Background(0, ["netvm-vm-test", "death", "1", info["port"]], timeout=300)
    rc, out, err = g.sh(0, "for i in $(seq 120); do grep -qs '^done [1-9]' %s/endpoints/*/counters "
                        "&& exit 0; sleep 0.5; done; exit 1" % SYS, timeout=120)
    if not T.ok(rc == 0, "node 0 streams writes and reads into node 1's export", g.diag(rc, out, err)):
        return
    time.sleep(2)
    pid0, pid1 = node_pid(g, 0), node_pid(g, 1)
    os.kill(pid1, signal.SIGKILL)
    t0 = time.monotonic()
    src, sout, serr = st.wait(120)
    dt = time.monotonic() - t0
    lines = [l.split() for l in sout.decode(errors="replace").splitlines()]
    first = next((l for l in lines if l[:1] == ["first"]), None)
    later = [l for l in lines if l[:1] == ["later"]]
    gone = ("EHOSTUNREACH", "ECONNRESET")
    T.ok(src == 3 and first is not None and first[1] in gone and dt <= 30,
         "node 1 killed: node 0's call in progress fails with %s, the stream ended %.1f s after "
         "the kill (%s rounds before)" % (first[1] if first else "?", dt, first[3] if first else "?"),
         g.diag(src, sout, serr))
    T.ok(len(later) == 4 and all(l[2] in gone and int(l[3]) <= 30000 for l in later),
         "every later call fails with the same error: %s" %
         ", ".join("%s %s in %s ms" % (l[1], l[2], l[3]) for l in later), g.diag(src, sout, serr))
    try:
        os.kill(pid0, 0)
        alive = True
    except OSError:
        alive = False
    rc, out, err = g.sh(0, "cat %s/nv_state; dmesg | grep -E 'WARNING|BUG|Oops' | head -n 5; echo end" % SYS)
    T.ok(alive and rc == 0 and out.split() == ["on", "end"],
         "node 0: QEMU alive, NetVM on, no kernel warning", g.diag(rc, out, err))
    rc, out, err = g.sh(0, "cat %s/fw_counters" % SYS)
    c = lines_kv(out)
    T.ok(c.get("error_completions", 0) > 0 and c.get("phys_refused", -1) == 0,
         "node 0: the firmware failed the operations (error_completions %d)"
         % c.get("error_completions", 0), out)
    srv.wait(1)


def group_unmap(g):
    """netvm-unmap: the invalidation waits while the NI holds the page
    (netvm-unmap-test; the NIC's lock kept by debugfs lock_hold)."""
    g.sh(1, "rm -f /tmp/nvunmap.info")
    srv = g.Background(1, ["netvm-unmap-test", "serve"], timeout=300)
    rc, out, err = g.sh(1, "for i in $(seq 150); do test -f /tmp/nvunmap.info && break; sleep 0.2; done; "
                        "cat /tmp/nvunmap.info")
    info = kv(out)
    if not g.T.ok(rc == 0 and "port" in info, "node 1: netvm-unmap-test exports \"target\": %s" % out.strip(),
                  g.diag(rc, out, err) + ("" if "port" in info else "\n" + g.diag(*srv.wait(5)))):
        return
    crc, cout, cerr = g.nv("run", "0", "--", "netvm-unmap-test", "client", "1", info["port"], timeout=240)
    src, sout, serr = srv.wait(240)
    for who, text in (("node 0", cout), ("node 1", sout)):
        for line in text.decode(errors="replace").splitlines():
            if line.startswith("ok - "):
                g.T.ok(True, "%s: %s" % (who, line[5:]))
            elif line.startswith("not ok - "):
                g.T.ok(False, "%s: %s" % (who, line[9:]))
    g.T.ok(crc == 0, "node 0: netvm-unmap-test client exits 0", g.diag(crc, cout, cerr))
    g.T.ok(src == 0, "node 1: netvm-unmap-test serve exits 0", g.diag(src, sout, serr))
    rc, out, err = g.sh(0, "dmesg | grep -E 'WARNING|BUG|Oops|still locked' | head -n 5; echo end")
    g.T.ok(rc == 0 and out.split() == ["end"], "node 0: no kernel warning", g.diag(rc, out, err))
