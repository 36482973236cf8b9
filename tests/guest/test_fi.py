#!/usr/bin/python3
"""Guest test group fi: the netvm libfabric provider (docs/libfabric.md)
under Debian's unmodified libfabric tools, on 2 VMs.

  - netvm-pkgs puts the provider into libfabric's provider directory
  - fi_info -p netvm: its own entries (netvm0, FI_EP_RDM and FI_EP_DGRAM)
    and libfabric's ofi_rxd stacked on the latter (FI_EP_RDM); -t
    FI_EP_DGRAM -v and -t FI_EP_RDM -v list exactly the capabilities the
    provider claims; FI_EP_MSG is refused (FI_ENODATA, 61); FI_TAGGED
    comes natively and from ofi_rxd, FI_RMA and FI_ATOMIC only from
    libfabric's ofi_rxd stacked on it
  - fi_pingpong -e dgram -c (data checks on) between the nodes: both sides
    exit 0, every size of its sweep (64 B .. 4 KiB, the largest U-Net
    message) done with all iterations acknowledged, and U-Net carried it
    (the NICs' U-Net counters moved by exactly that much, nothing dropped)
  - 1 B and 4096 B alone (-S), checked, with FI_NETVM_YIELD=0: neither NIC
    counted a yield (DB_YIELDS)
  - software loop-back: server and client on one node, checked, and the
    NIC's U-Net counters did not move
  - fi-netvm-test (tests/guest/fi_netvm_test.c), the provider against the
    API: on one node (AV, bad addresses, sizes, FI_ETRUNC, sread, cancel,
    iovecs, selective completion, every refused operation -FI_ENOSYS
    through libfabric's wrappers, fi_mr_reg, the event queue)
    and FI_SOURCE across the nodes (a server learns its client)
  - FI_EP_RDM from ofi_rxd stacked on it (FI_PROVIDER-style "netvm;ofi_rxd"):
    fi_pingpong -e rdm -c, its whole sweep up to 1 MiB, checked, over U-Net
  - the native FI_EP_RDM: fi_pingpong -p 'netvm;^ofi_rxd' -e rdm -c between
    the nodes (its whole sweep to 1 MiB: 4 KiB and up by rendezvous, NetVM
    reads), and -S 1048576 alone, checked,
    over U-Net; fi-netvm-rdm-test (tests/guest/fi_netvm_rdm_test.c) on one
    node (messages, tags, unexpected, directed receives, remote CQ data,
    probes, errors, the window and resends, RMA and atomics on the
    loop-back) and across the nodes (RMA and atomics over NetVM into
    dropped pages, a wrong key; two RDM endpoints of one node both
    exchanging tagged messages with the server's one; a flood of 320
    tagged messages, 256 unexpected and the rest resent)
  - the sweep again with every empty read napping (FI_NETVM_SPIN_US=0),
    and with the defaults: the naps counted, the rendezvous paths, and the
    yields of the spinning one (logged by the provider, at least as many
    counted by each NIC)

TAP output; the cluster 't-guest-fi' is always torn down.
Environment: NETVM, NETVM_TEST_BOOT_TIMEOUT.
"""
import re
import sys

from guestlib import (Tap, diag, run_netvm, run_parallel, sysfs_number, tap_cluster_main,
                      tcp_listening, wait_guest)

T = Tap()
CLUSTER = "t-guest-fi"
PEER_IP = "10.77.0.2"       # node 1 on the data network (cluster.py DATA_IP)
OOB_PORT = 47592            # fi_pingpong's control port
ITERS = 200
CAPS = "[ FI_MSG, FI_RECV, FI_SEND, FI_LOCAL_COMM, FI_REMOTE_COMM, FI_SOURCE ]"
RDM_CAPS = ("[ FI_MSG, FI_RMA, FI_TAGGED, FI_ATOMIC, FI_READ, FI_WRITE, FI_RECV, FI_SEND, "
            "FI_REMOTE_READ, FI_REMOTE_WRITE, FI_LOCAL_COMM, FI_REMOTE_COMM, FI_SOURCE, "
            "FI_DIRECTED_RECV ]")
NATIVE = "netvm;^ofi_rxd"    # the provider's own RDM, not ofi_rxd's stacked on it
NATIVE_ITERS = 20
COUNTERS = ("unet_tx", "unet_rx", "unet_no_channel", "unet_dropped", "unet_diverted")


def nv(*args, timeout=300):
    return run_netvm(CLUSTER, args, timeout)


def sh(node, script, timeout=300):
    return nv("run", node, "--", "sh", "-c", script, timeout=timeout)


def counters(node):
    rc, out, _ = sh(node, "cat /sys/class/netvm/netvm0/fw_counters")
    got = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] in COUNTERS and f[1].isdigit():
            got[f[0]] = int(f[1])
    return got if rc == 0 and len(got) == len(COUNTERS) else None


def rows(out):
    """fi_pingpong's result rows: [(size, sent, acked)]."""
    return [(m.group(1), m.group(2), m.group(3)) for m in
            re.finditer(r"^(\S+)\s+(\S+)\s+=(\S+)\s+\S+\s+\S+s\s", out, re.M)]


def check_setup():
    res = run_parallel(lambda node: nv("run", node, "--", "netvm-pkgs"), {0: (0,), 1: (1,)})
    for node in (0, 1):
        T.ok(res[node][0] == 0, "node %d: netvm-pkgs" % node, diag(*res[node]))
    rc, out, err = sh(0, "readlink /usr/lib/x86_64-linux-gnu/libfabric/libnetvm-fi.so")
    T.ok(rc == 0 and out.strip() == "/netvm/build/meson/guest-lib/fi_netvm/libnetvm-fi.so",
         "the provider is in libfabric's provider directory", diag(rc, out, err))


def info_fields(out, ep_type):
    """The fields of fi_info -v's entry of provider netvm with ep_type."""
    for block in re.split(r"^---$", out, flags=re.M):
        fields = {}
        for line in block.splitlines():
            k, _, v = line.strip().partition(": ")
            fields.setdefault(k, v)
        if fields.get("prov_name") == "netvm" and fields.get("type") == ep_type:
            return fields
    return {}


def check_info():
    rc, out, err = nv("run", 0, "--", "fi_info", "-p", "netvm")
    # the provider's own entries, and libfabric's ofi_rxd stacked on it
    want = ("provider: netvm;ofi_rxd\n    fabric: netvm\n    domain: netvm0\n"
            "    version: 117.0\n    type: FI_EP_RDM\n    protocol: FI_PROTO_RXD\n"
            "provider: netvm\n    fabric: netvm\n    domain: netvm0\n    version: 0.1\n"
            "    type: FI_EP_RDM\n    protocol: FI_PROTO_UNSPEC\n"
            "provider: netvm\n    fabric: netvm\n    domain: netvm0\n    version: 0.1\n"
            "    type: FI_EP_DGRAM\n    protocol: FI_PROTO_UNSPEC\n")
    T.ok(rc == 0 and out == want,
         "fi_info -p netvm: its own entries (netvm0, FI_EP_RDM, FI_EP_DGRAM) and ofi_rxd's RDM "
         "on it", diag(rc, out, err))
    rc, out, err = nv("run", 0, "--", "fi_info", "-p", "netvm", "-t", "FI_EP_DGRAM", "-v")
    fields = info_fields(out, "FI_EP_DGRAM")
    T.ok(rc == 0 and fields.get("caps") == CAPS and fields.get("max_msg_size") == "4096" and
         fields.get("inject_size") == "4096" and fields.get("threading") == "FI_THREAD_SAFE" and
         fields.get("mr_mode") == "[  ]" and fields.get("data_progress") == "FI_PROGRESS_MANUAL",
         "fi_info -p netvm -t FI_EP_DGRAM -v: the claimed capabilities exactly, 4096 B messages, no "
         "registration needed", diag(rc, out, err))
    rc, out, err = nv("run", 0, "--", "fi_info", "-p", "netvm", "-t", "FI_EP_RDM", "-v")
    fields = info_fields(out, "FI_EP_RDM")
    T.ok(rc == 0 and fields.get("caps") == RDM_CAPS and fields.get("max_msg_size") == "1073741824" and
         fields.get("inject_size") == "4056" and fields.get("msg_order") == "[ FI_ORDER_SAS ]" and
         fields.get("cq_data_size") == "8" and fields.get("mr_mode") == "[ FI_MR_PROV_KEY ]" and
         fields.get("data_progress") == "FI_PROGRESS_MANUAL",
         "fi_info -p netvm -t FI_EP_RDM -v: the native entry's capabilities exactly (RMA and "
         "atomics with provider keys), messages up to 1 GiB (rendezvous past 4056 B, injects up to "
         "4056 B), FI_ORDER_SAS, 8 bytes of remote CQ data",
         diag(rc, out, err))
    rc, out, err = nv("run", 0, "--", "fi_info", "-p", "netvm", "-t", "FI_EP_MSG")
    T.ok(rc == 61 and "fi_getinfo: -61" in out + err,
         "fi_info -p netvm -t FI_EP_MSG: refused, FI_ENODATA", diag(rc, out, err))
    # RDM, tags, RMA, atomics: native, and ofi_rxd's stacked on the datagrams
    for what, provs_want in ((("-t", "FI_EP_RDM"), {"netvm", "netvm;ofi_rxd"}),
                             (("-c", "FI_TAGGED"), {"netvm", "netvm;ofi_rxd"}),
                             (("-c", "FI_RMA"), {"netvm", "netvm;ofi_rxd"}),
                             (("-c", "FI_ATOMIC"), {"netvm", "netvm;ofi_rxd"})):
        rc, out, err = nv("run", 0, "--", "fi_info", "-p", "netvm", *what)
        provs = re.findall(r"^provider: (.*)$", out, re.M)
        types = set(re.findall(r"^    type: (.*)$", out, re.M))
        T.ok(rc == 0 and set(provs) == provs_want and types == {"FI_EP_RDM"},
             "fi_info -p netvm %s %s: offered by %s" % (what + (" and ".join(sorted(provs_want)),)),
             diag(rc, out, err))


def pingpong(server, client, target, args, prov="netvm", ep="dgram", wrap=()):
    """fi_pingpong on server and client -> (server result, client result);
    wrap: a command that runs fi_pingpong (e.g. env NAME=VALUE)."""
    cmd = list(wrap) + ["fi_pingpong", "-p", prov, "-e", ep, "-c"] + args
    res = {}

    def srv():
        res["s"] = nv("run", server, "--", *cmd, timeout=600)

    def cli():
        if wait_guest(sh, server, tcp_listening(OOB_PORT)):
            res["c"] = nv("run", client, "--", *(cmd + [target]), timeout=600)
        else:
            res["c"] = (-1, "", "the server never listened on port %d" % OOB_PORT)
    run_parallel(lambda f: f(), {"s": (srv,), "c": (cli,)})
    return res["s"], res["c"]


def check_both(s, c, want_rows, what, quiet=True):
    """quiet: nothing on stderr but what is expected (ofi_rxd warns of each
    send it must retry, so not for it)."""
    for res, who in ((s, "server"), (c, "client")):
        rc, out, err = res
        T.ok(rc == 0 and rows(out) == want_rows and
             (not quiet or "error" not in (out + err).lower()),
             "%s: %s exits 0, sizes %s, every iteration acknowledged, data checked"
             % (what, who, ", ".join(r[0] for r in want_rows)), diag(rc, out, err))


def check_two_nodes():
    before = {n: counters(n) for n in (0, 1)}
    s, c = pingpong(1, 0, PEER_IP, ["-I", str(ITERS)])
    n = str(ITERS)
    want = [(size, n, n) for size in ("64", "256", "1k", "4k")]
    check_both(s, c, want, "fi_pingpong -e dgram -c -I %d, node 0 to node 1" % ITERS)
    after = {n: counters(n) for n in (0, 1)}
    if None in before.values() or None in after.values():
        T.ok(False, "the NICs' U-Net counters could be read", str((before, after)))
        return
    d = {n: {k: after[n][k] - before[n][k] for k in COUNTERS} for n in (0, 1)}
    # each way, one message per iteration and size, and fi_pingpong's one
    # exchange before the sweep
    msgs = 4 * ITERS + 1
    T.ok(d[0]["unet_tx"] == msgs and d[1]["unet_rx"] == msgs and
         d[1]["unet_tx"] == msgs and d[0]["unet_rx"] == msgs and
         all(d[k][c] == 0 for k in (0, 1)
             for c in ("unet_no_channel", "unet_dropped", "unet_diverted")),
         "U-Net carried it: exactly %d messages each way, every one received, none dropped "
         "(%s)" % (msgs, d), str(d))
    # these two spin without a yield (FI_NETVM_YIELD=0): their NICs count none
    before = db_yields()
    for size in ("1", "4096"):
        s, c = pingpong(1, 0, PEER_IP, ["-I", "50", "-S", size], wrap=["env", "FI_NETVM_YIELD=0"])
        label = "4k" if size == "4096" else size
        check_both(s, c, [(label, "50", "50")], "fi_pingpong -S %s, FI_NETVM_YIELD=0" % size)
    after = db_yields()
    T.ok(None not in list(before.values()) + list(after.values()) and before == after,
         "FI_NETVM_YIELD=0: neither NIC counted a yield (DB_YIELDS before %s, after %s)"
         % (before, after))


def check_loopback():
    before = counters(0)
    s, c = pingpong(0, 0, "127.0.0.1", ["-I", "50", "-S", "1024"])
    check_both(s, c, [("1k", "50", "50")], "software loop-back, both on node 0")
    after = counters(0)
    T.ok(before is not None and before == after,
         "loop-back: the NIC's U-Net counters did not move", str((before, after)))


FI_TEST = "/netvm/build/meson/guest-lib/fi_netvm/fi-netvm-test"
RDM_TEST = "/netvm/build/meson/guest-lib/fi_netvm/fi-netvm-rdm-test"
RDM_LOCAL_CHECKS = 99


def tap_lines(out):
    return [l for l in out.splitlines() if l.startswith(("ok - ", "not ok - "))]


def check_api():
    """fi-netvm-test (tests/guest/fi_netvm_test.c): the API on one node's
    loop-back, then FI_SOURCE across the nodes."""
    rc, out, err = nv("run", 0, "--", FI_TEST, "local", timeout=300)
    lines = tap_lines(out)
    T.ok(rc == 0 and len(lines) == 124 and all(l.startswith("ok") for l in lines),
         "fi-netvm-test local: AV table and map, bad addresses, getname, 1..4096 B checked "
         "with readfrom, FI_ETRUNC, FI_EMSGSIZE, sread, fi_cancel, iovecs of 1..4, selective "
         "completion, 68 refused operations -FI_ENOSYS, fi_tostr, fi_mr_reg, the event queue "
         "(%d checks)" % len(lines),
         diag(rc, out, err))
    res = {}

    def srv():
        res["s"] = sh(1, "rm -f /tmp/fi.addr; exec %s server" % FI_TEST, timeout=300)

    def cli():
        rc, addr, err = sh(1, "i=0; while [ ! -s /tmp/fi.addr ]; do i=$((i+1)); "
                              "[ $i -lt 1200 ] || exit 1; sleep 0.1; done; cat /tmp/fi.addr")
        if rc == 0 and re.fullmatch(r"netvm:1:\d+", addr):
            res["c"] = nv("run", 0, "--", FI_TEST, "client", addr, timeout=300)
        else:
            res["c"] = (-1, addr, "the server wrote no address: " + err)
    run_parallel(lambda f: f(), {"s": (srv,), "c": (cli,)})
    for k, who, n in (("s", "server (node 1)", 7), ("c", "client (node 0)", 7)):
        rc, out, err = res[k]
        lines = tap_lines(out)
        T.ok(rc == 0 and len(lines) == n and all(l.startswith("ok") for l in lines),
             "fi-netvm-test %s: a sender not in the AV is FI_ADDR_NOTAVAIL, once inserted "
             "readfrom names it; 1..4096 B each way checked" % who, diag(rc, out, err))


def check_rdm_over_rxd():
    """FI_EP_RDM from libfabric's ofi_rxd stacked on the provider: its whole
    sweep (up to 1 MiB, segmented into U-Net messages), data checked."""
    before = {n: counters(n) for n in (0, 1)}
    s, c = pingpong(1, 0, PEER_IP, ["-I", "5"], prov="netvm;ofi_rxd", ep="rdm")
    want = [(size, "5", "5") for size in ("64", "256", "1k", "4k", "64k", "1m")]
    check_both(s, c, want, "fi_pingpong -p 'netvm;ofi_rxd' -e rdm -c -I 5", quiet=False)
    after = {n: counters(n) for n in (0, 1)}
    # 5 x 1 MiB each way alone is 1280 messages of 4 KiB at least
    T.ok(None not in before.values() and None not in after.values() and
         all(after[n]["unet_tx"] - before[n]["unet_tx"] >= 1280 for n in (0, 1)),
         "rxd's packets went over U-Net (at least 1280 messages each way)", str((before, after)))


def check_rdm_native():
    """The provider's own FI_EP_RDM: fi_pingpong between the nodes, then
    fi-netvm-rdm-test on one node and across the nodes."""
    before = {n: counters(n) for n in (0, 1)}
    # the whole sweep: 4 KiB and up go by rendezvous (NetVM reads)
    s, c = pingpong(1, 0, PEER_IP, ["-I", str(NATIVE_ITERS)], prov=NATIVE, ep="rdm")
    n = str(NATIVE_ITERS)
    want = [(size, n, n) for size in ("64", "256", "1k", "4k", "64k", "1m")]
    check_both(s, c, want, "fi_pingpong -p '%s' -e rdm -c -I %d, node 0 to node 1"
               % (NATIVE, NATIVE_ITERS))
    after = {n: counters(n) for n in (0, 1)}
    # a message (or a rendezvous request) per iteration and size each way
    # at least (acks and "done"s are extra), none lost by U-Net
    T.ok(None not in before.values() and None not in after.values() and
         all(after[n]["unet_tx"] - before[n]["unet_tx"] >= 6 * NATIVE_ITERS and
             after[n]["unet_dropped"] == before[n]["unet_dropped"] for n in (0, 1)),
         "native RDM went over U-Net (at least %d messages each way, none dropped)"
         % (6 * NATIVE_ITERS), str((before, after)))
    s, c = pingpong(1, 0, PEER_IP, ["-I", "10", "-S", "1048576"], prov=NATIVE, ep="rdm")
    check_both(s, c, [("1m", "10", "10")], "fi_pingpong -p '%s' -e rdm -c -S 1048576 -I 10"
               % NATIVE)
    rc, out, err = nv("run", 0, "--", RDM_TEST, "local", timeout=300)
    lines = tap_lines(out)
    T.ok(rc == 0 and len(lines) == RDM_LOCAL_CHECKS and all(l.startswith("ok") for l in lines),
         "fi-netvm-rdm-test local: the RDM entry, sizes, completion on acknowledgement, tags "
         "unexpected and posted, ignore bits, directed receives, remote CQ data, FI_PEEK/"
         "FI_CLAIM/FI_DISCARD, FI_ETRUNC, fi_cancel, the window, resends, RMA and atomics "
         "(loop-back), wrong keys, read-only regions, rendezvous messages up to 1 MiB from and "
         "into dropped pages, pieces, FI_ETRUNC, counters (exact counts of messages, RMA and "
         "atomics, errors, waits) (%d checks)" % len(lines),
         diag(rc, out, err))
    res = {}

    def srv():
        # info: the endpoint's counters at close, rendezvous paths included
        res["s"] = sh(1, "rm -f /tmp/fi-rdm.addr; FI_LOG_LEVEL=info exec %s server"
                      % RDM_TEST, timeout=300)

    def cli():
        rc, addr, err = sh(1, "i=0; while [ ! -s /tmp/fi-rdm.addr ]; do i=$((i+1)); "
                              "[ $i -lt 1200 ] || exit 1; sleep 0.1; done; cat /tmp/fi-rdm.addr")
        if rc == 0 and re.fullmatch(r"netvm:1:\d+", addr):
            res["c"] = nv("run", 0, "--", RDM_TEST, "client", addr, timeout=300)
        else:
            res["c"] = (-1, addr, "the server wrote no address: " + err)
    run_parallel(lambda f: f(), {"s": (srv,), "c": (cli,)})
    for k, who, n in (("s", "server (node 1)", 12), ("c", "client (node 0)", 11)):
        rc, out, err = res[k]
        lines = tap_lines(out)
        T.ok(rc == 0 and len(lines) == n and all(l.startswith("ok") for l in lines),
             "fi-netvm-rdm-test %s: RMA and atomics over NetVM into dropped pages, a wrong "
             "key; rendezvous messages of 4057 B, 100000 B (read into place), 1 MiB (written) "
             "and 200000 B in 3 pieces (into 2, read through the bounce area) between "
             "dropped pages, checked; 300000 B into a receive 100 B into a page, 8 KiB into "
             "read-only pages (FI_EKEYREJECTED both sides), 8 KiB after, its pages then "
             "taking a memory region on both sides; two RDM endpoints "
             "of node 0 and the server's one "
             "exchanging 24 tagged messages each way, each checked; "
             "320 tagged messages over U-Net, 256 unexpected, the rest resent, each "
             "checked; remote CQ data back" % who, diag(rc, out, err))
    # the server's endpoint at close: of its 7 rendezvous receives, 1 MiB
    # and 300000 B (over FI_NETVM_RDV_READ_MAX) and the read-only one
    # offered to the client's writes; 4057 B, 100000 B and 8 KiB read into
    # place, and 200000 B into two pieces read through the bounce area
    closed = re.findall(r"RDM endpoint closed: .*?(\d+) rendezvous received written, "
                        r"(\d+) read \((\d+) into place\)", res["s"][2])
    T.ok(closed == [("3", "4", "3")],
         "the server's rendezvous receives: 3 written by the client, 4 read, 3 of them "
         "into place (%s)" % closed, res["s"][2][-2000:])


def naps(res):
    """The naps the provider's completion queues counted (logged at close
    with FI_LOG_LEVEL=info), summed; None if no queue said."""
    m = re.findall(r"completion queue closed: (\d+) naps", res[2])
    return sum(int(k) for k in m) if m else None


def yields(res):
    """The yields the provider's completion queues counted (logged at close
    with FI_LOG_LEVEL=info), summed; None if no queue said."""
    m = re.findall(r"completion queue closed: .*, (\d+) yields", res[2])
    return sum(int(k) for k in m) if m else None


def db_yields():
    """{node: the NIC's DB_YIELDS} for nodes 0 and 1, None where unread."""
    return {n: sysfs_number(sh, n, "db_yields") for n in (0, 1)}


def rdv_paths(res):
    """(written, read, read into place) an endpoint counted at close
    (FI_LOG_LEVEL=info), or None."""
    m = re.findall(r"(\d+) rendezvous received written, (\d+) read \((\d+) into place\)", res[2])
    return tuple(int(k) for k in m[0]) if len(m) == 1 else None


def check_naps():
    """FI_NETVM_SPIN_US=0: every read of an empty completion queue sleeps in
    the NIC's interrupt (fnv_nap.c).  The whole native sweep still arrives
    checked, both sides slept at least once an iteration, and with the
    default neither slept at all.  The same runs show FI_NETVM_RDV_READ_MAX
    taking effect: 0 in the napping one (nothing read into place), unset in
    the other (4 KiB and 64 KiB read into place, 1 MiB written).  With
    the default, spinning, both sides yielded (FI_NETVM_YIELD) and every
    yield reached the NIC of its node: its DB_YIELDS grew at least as
    much."""
    iters = 10
    want = [(size, str(iters), str(iters)) for size in ("64", "256", "1k", "4k", "64k", "1m")]
    sweeps, nic_yields = {}, {}
    for spin in ("0", None):
        wrap = ["env", "FI_LOG_LEVEL=info"] + (["FI_NETVM_SPIN_US=" + spin,
                                                "FI_NETVM_RDV_READ_MAX=0"] if spin else [])
        before = db_yields()
        sweeps[spin] = pingpong(1, 0, PEER_IP, ["-I", str(iters)], prov=NATIVE, ep="rdm",
                                wrap=wrap)
        after = db_yields()
        nic_yields[spin] = [None if None in (before[n], after[n]) else after[n] - before[n]
                            for n in (1, 0)]
    for spin, what in (("0", "FI_NETVM_SPIN_US=0 (a nap at every empty read)"),
                       (None, "the default (FI_NETVM_SPIN_US unset)")):
        check_both(*sweeps[spin], want, "%s: fi_pingpong -p '%s' -e rdm -c -I %d"
                   % (what, NATIVE, iters), quiet=False)
    n = len(want) * iters
    slept = [naps(r) for r in sweeps["0"]]
    spun = [naps(r) for r in sweeps[None]]
    T.ok(None not in slept and min(slept) >= n and spun == [0, 0],
         "FI_NETVM_SPIN_US=0: server and client slept %s times for %d iterations; with the "
         "default %s (never)" % (slept, n, spun),
         "\n".join(r[2][-1500:] for r in sweeps["0"] + sweeps[None]))
    offered = [yields(r) for r in sweeps[None]]
    T.ok(None not in offered + nic_yields[None] and min(offered) > 0 and
         all(nic >= own for nic, own in zip(nic_yields[None], offered)),
         "the default: server and client yielded %s times while they spun, their NICs "
         "counted %s" % (offered, nic_yields[None]),
         "\n".join(r[2][-1500:] for r in sweeps["0"] + sweeps[None]))
    off = [rdv_paths(r) for r in sweeps["0"]]
    on = [rdv_paths(r) for r in sweeps[None]]
    # each side receives iters messages of each rendezvous size (4 KiB,
    # 64 KiB, 1 MiB), each into a page-aligned buffer of one piece
    T.ok(off == [(3 * iters, 0, 0)] * 2 and on == [(iters, 2 * iters, 2 * iters)] * 2,
         "FI_NETVM_RDV_READ_MAX=0: every rendezvous written, none read %s; unset: 4 KiB and "
         "64 KiB read into place, 1 MiB written %s (written, read, into place: server, client)"
         % (off, on),
         "\n".join(r[2][-1500:] for r in sweeps["0"] + sweeps[None]))


def main():
    def body():
        check_setup()
        check_info()
        check_two_nodes()
        check_loopback()
        check_api()
        check_rdm_over_rxd()
        check_rdm_native()
        check_naps()
    return tap_cluster_main(T, CLUSTER, 2, body)


if __name__ == "__main__":
    sys.exit(main())
