#!/usr/bin/python3
"""Guest test group mpi-fi: Debian's unmodified Open MPI on the netvm
libfabric provider (docs/libfabric.md, "MPI over it"), 4 VMs, ranks started
with ./netvm mpirun --fi (pml cm, mtl ofi, no BTL but self, FI_PROVIDER),
on each of two paths in turn: libfabric's ofi_rxd on the provider's
datagrams ("netvm;ofi_rxd") and the provider's own RDM endpoints
("netvm;^ofi_rxd": eager over U-Net, rendezvous by NetVM reads).

  - ompi_info lists the ofi mtl and the ofi btl (the package disk's
    Open MPI has its libfabric plugins)
  - per path: fi_info offers FI_EP_RDM with FI_TAGGED under the provider
    name the path's entries carry ("netvm;ofi_rxd", "netvm")
  - on 2 and on 4 nodes (one rank a node; on ofi_rxd on 2 only, unless
    NETVM_TEST_RXD_ALL=1, which also runs the 8-rank job below there):
      - one mpi4py job: a ring (Sendrecv of 64 KiB, every byte checked),
        an allreduce of Python ints and an Allreduce of 65536 64-bit
        integers (512 KiB, segmented by the provider), every sum compared
        with the exact one; each rank's line compared exactly; Open MPI's
        verbose account (--verbose-fi): every rank selected pml cm and
        mtl ofi, which opened the netvm provider's domain (netvm0; on the
        native path ./netvm mpirun --fi lets the mtl take entries of the
        provider netvm only)
  - two ranks a node on the 4 nodes (8 ranks): every rank sends every
    other rank a message of 2000 B (eager) and of 20000 B (past the
    native path's eager limit) in each of 3 rounds, all at once
    (Isend/Irecv), and checks every byte of each it receives; so the two
    ranks of a node each talk to every remote rank, a common peer
    (U-Net's channels per endpoint, docs/unet.md "Tags"); each rank's
    line compared exactly
  - on the native path the 4- and 8-rank jobs run with
    FI_NETVM_SPIN_US=200 (an empty completion queue sleeps in the NIC's
    interrupt after 200 us): ranks that only wait leave the host CPUs to
    the peers they wait for (4 VMs on a 2-CPU host), and MPI runs over
    the sleeping path too; the 2-rank jobs, NetPIPE and hpcc spin
  - on ofi_rxd, with NETVM_TEST_HPCC=1 only: a short hpcc on 4 ranks
    (HPL N=200 on a 2 x 2 grid, then its other tests): exit 0, HPL's
    residual check PASSED, no failure.  It takes 6-11 minutes on ofi_rxd
    under TCG, more than the whole guest suite may grow, so `./netvm
    test` leaves it out (and says so in its output)
  - NetPIPE (NPopenmpi, 2 ranks: it is a two-rank ping-pong) in integrity
    mode, every message 1 B .. 64 KiB checked by the receiver
  - what carried it: on ofi_rxd every rank's node's NIC sent and received
    at least as many U-Net messages as its data needs (a 4 KiB message at
    most); on the native path messages past 4056 B go by rendezvous, so
    every node's NIC issued at least one NetVM read per such message
    received and moved at least their bytes, and sent and received U-Net
    messages (the requests and "done"s) for each; ofi_rxd issues no NetVM
    reads at all, so these show which path carried the traffic

The paths are one parameter, NETVM_MPI_FI_PROVIDER: the providers to run,
separated by spaces (default "netvm;ofi_rxd netvm;^ofi_rxd").

With the arguments "hpcc NP", group mpi-hpcc (NP 2) or mpi-hpccNP
instead (its own cluster of NP VMs, 't-guest-mpi-hpcc' or
't-guest-mpi-hpccNP'): the same short hpcc on the native path only, on
NP ranks (1 x 2, or 2 x 2 for 4), passing as above, every node's NIC
having issued NetVM reads and received at least one of hpcc's
2,000,000-byte messages; hpcc's per-test times and its latency and
bandwidth test's own account of its parts are noted.

TAP output; the cluster is always torn down.
Environment: NETVM, NETVM_TEST_BOOT_TIMEOUT, NETVM_MPI_FI_PROVIDER, NETVM_TEST_HPCC,
NETVM_TEST_RXD_ALL, NETVM_TEST_HPCC_SPIN_US ("SPIN" or
"SPIN,NAP": hpcc's ranks with those FI_NETVM_SPIN_US and FI_NETVM_NAP_US;
unset: they spin).
"""
import os
import re
import sys
import time

from guestlib import Tap, diag, run_netvm, run_parallel, sysfs_counters, tap_cluster_main

T = Tap()
CLUSTER = "t-guest-mpi-fi"
NODES = 4
PROVIDERS = os.environ.get("NETVM_MPI_FI_PROVIDER", "netvm;ofi_rxd netvm;^ofi_rxd").split()
DOMAIN = "netvm0"           # the netvm provider's domain on NIC 0 (docs/libfabric.md)
UNET_MSG = 4096             # the largest U-Net message (NETVM_UNET_MSG_MAX)
EAGER_MAX = 4056            # the native RDM's eager limit (inject_size, docs/libfabric.md)
RING_N, RING_LEN = 20, 65536
# the native path's jobs of more ranks than 2 let an empty completion queue
# sleep after this many microseconds (FI_NETVM_SPIN_US, docs/libfabric.md
# "Spinning or sleeping"): their ranks only wait between messages, and 4
# VMs spinning on 2 host CPUs take the time their peers need (the 4- and
# 8-rank jobs: 28.1 and 25.1 s spinning in CI); the 2-rank jobs, NetPIPE
# and hpcc keep the default, spinning
NAP_SPIN_US = 200
MPI4PY_K = 65536


def nv(*args, timeout=300):
    return run_netvm(CLUSTER, args, timeout)


def sh(node, script, timeout=300):
    return nv("run", node, "--", "sh", "-c", script, timeout=timeout)


def native(provider):
    """The path of the provider's own RDM endpoints (ofi_rxd left out)."""
    return "^ofi_rxd" in provider.split(";")


def prov_name(provider):
    """The prov_name of the entries PROVIDER selects: the "^" parts only
    leave out."""
    return ";".join(p for p in provider.split(";") if not p.startswith("^"))


def naps(provider, np):
    """mpirun's spin for a job whose ranks only wait (None: they spin)."""
    return str(NAP_SPIN_US) if native(provider) and np > 2 else None


def napping(provider, np):
    return ", ranks sleeping after %d us of empty reads" % NAP_SPIN_US if naps(provider, np) else ""


def mpirun(provider, np, argv, verbose=False, timeout=600, spin=None):
    """spin: "SPIN[,NAP]", the ranks' FI_NETVM_SPIN_US and FI_NETVM_NAP_US
    (None: they spin)."""
    env = [x for v, name in zip(spin.split(",") if spin else [], ("SPIN", "NAP"))
           for x in ("-x", "FI_NETVM_%s_US=%d" % (name, int(v)))]
    return nv("mpirun", "--fi", provider, *(["--verbose-fi"] if verbose else []), "-n", np,
              *env, "--timeout", timeout, "--", *argv, timeout=timeout + 60)


COUNTED = ("unet_tx", "unet_rx", "cmd_read", "rx_bytes")


def counters(nodes):
    """{node: {counter: value}} of the NICs' firmware counters COUNTED."""
    out = {}
    for n in nodes:
        c = sysfs_counters(sh, n)
        out[n] = dict((k, c.get(k)) for k in COUNTED)
    return out


def moved(provider, before, after, msgs, what):
    """What carried MSGS (a node's received messages, [bytes]): on ofi_rxd
    every node's NIC sent and received at least the U-Net messages their
    bytes need; on the native path at least one U-Net message each way per
    message (eager, or a rendezvous request and its "done"), and for those
    past the eager limit a NetVM read each and their bytes received."""
    try:
        d = dict((n, dict((k, after[n][k] - before[n][k]) for k in COUNTED)) for n in before)
    except TypeError:
        d = None
    if not native(provider):
        least = sum(msgs) // UNET_MSG
        T.ok(d is not None and all(v["unet_tx"] >= least and v["unet_rx"] >= least
                                   for v in d.values()),
             "%s went over U-Net: every node's NIC sent and received >= %d messages (%s)"
             % (what, least, d), "before %s after %s" % (before, after))
        return
    big = [m for m in msgs if m > EAGER_MAX]
    T.ok(d is not None and
         all(v["unet_tx"] >= len(msgs) and v["unet_rx"] >= len(msgs) and
             v["cmd_read"] >= len(big) and v["rx_bytes"] >= sum(big) for v in d.values()),
         "%s went over U-Net and NetVM reads: every node's NIC sent and received >= %d U-Net "
         "messages, issued >= %d NetVM reads and received >= %d B (%s)"
         % (what, len(msgs), len(big), sum(big), d), "before %s after %s" % (before, after))


def check_setup():
    res = run_parallel(lambda n: nv("run", n, "--", "netvm-pkgs"), dict((n, (n,)) for n in range(NODES)))
    for n in range(NODES):
        T.ok(res[n][0] == 0, "node %d: netvm-pkgs" % n, diag(*res[n]))
    rc, out, err = nv("run", 0, "--", "ompi_info")
    comps = set(re.findall(r"^\s*MCA (\w+): (\w+) ", out, re.M))
    T.ok(rc == 0 and ("mtl", "ofi") in comps and ("btl", "ofi") in comps and ("pml", "cm") in comps,
         "ompi_info: Open MPI has the ofi mtl, the ofi btl and the cm pml", diag(rc, out, err, 2000))


def check_fi_info(provider):
    rc, out, err = nv("run", 0, "--", "fi_info", "-p", provider, "-t", "FI_EP_RDM", "-c", "FI_TAGGED")
    T.ok(rc == 0 and re.findall(r"^provider: (.*)$", out, re.M) == [prov_name(provider)],
         "fi_info -p '%s': provider %s offers FI_EP_RDM with FI_TAGGED (what the ofi mtl asks "
         "for)" % (provider, prov_name(provider)), diag(rc, out, err))


MPI4PY = r"""
import socket, sys
from array import array
from mpi4py import MPI
c = MPI.COMM_WORLD
r, s, N, L, K = c.rank, c.size, int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
bad = 0
got = bytearray(L)
for i in range(N):
    mine = bytes((r * 7 + i + j) & 255 for j in range(256)) * (L // 256)
    c.Sendrecv(mine, (r + 1) % s, i, got, (r - 1) % s, i)
    p = (r - 1) % s
    bad += bytes(got) != bytes((p * 7 + i + j) & 255 for j in range(256)) * (L // 256)
a = c.allreduce(r * 1000003 + 7)
mine = array('q', [r * 1000003 + i for i in range(K)])
tot = array('q', bytes(8 * K))
c.Allreduce(mine, tot, op=MPI.SUM)
wrong = sum(tot[i] != s * i + 1000003 * s * (s - 1) // 2 for i in range(K))
print("rank %d of %d on %s: ring %d x %d B, %d bad; allreduce %d; Allreduce of %d int64, %d wrong"
      % (r, s, socket.gethostname(), N, L, bad, a, K, wrong), flush=True)
"""


MPI_ALL = r"""
import socket, sys
from mpi4py import MPI
c = MPI.COMM_WORLD
r, s, N = c.rank, c.size, int(sys.argv[1])
lens = [int(a) for a in sys.argv[2:]]
base = bytes(range(256)) * (max(lens) // 256 + 2)
def msg(a, b, i, n):   # from rank a to rank b, round i: its own rotation
    k = (a * 31 + b * 7 + i * 3 + n) % 256
    return base[k:k + n]
bad = 0
for i in range(N):
    for n in lens:
        got = dict((p, bytearray(n)) for p in range(s) if p != r)
        reqs = [c.Irecv(got[p], p, i) for p in got]
        reqs += [c.Isend(msg(r, p, i, n), p, i) for p in got]
        MPI.Request.Waitall(reqs)
        bad += sum(bytes(got[p]) != msg(p, r, i, n) for p in got)
print("rank %d of %d on %s: %d rounds of %s B to and from each of %d ranks, %d bad"
      % (r, s, socket.gethostname(), N, "+".join(map(str, lens)), s - 1, bad), flush=True)
"""
ALL_N, ALL_LENS = 3, (2000, 20000)


def check_two_a_node(provider):
    """Two ranks on each node, every rank exchanging checked messages with
    every other: two local endpoints with common peers."""
    np = 2 * NODES
    t0 = time.monotonic()
    rc, out, err = mpirun(provider, np, ["python3", "-c", MPI_ALL, ALL_N] + list(ALL_LENS),
                          spin=naps(provider, np))
    T.note("%s, %d ranks, 2 a node, all to all: %.1f s" % (provider, np, time.monotonic() - t0))
    got = sorted((l for l in out.splitlines() if l.startswith("rank ")),
                 key=lambda l: int(l.split()[1]))
    lens = "+".join(map(str, ALL_LENS))
    # the hosts' slots are filled in node order: ranks 2n and 2n + 1 on node n
    want = ["rank %d of %d on node%d: %d rounds of %s B to and from each of %d ranks, 0 bad"
            % (r, np, r // 2, ALL_N, lens, np - 1) for r in range(np)]
    T.ok(rc == 0 and got == want,
         "%s, %d ranks, 2 a node%s: every rank to and from every other, %d rounds of %s B, every "
         "byte checked; lines exact" % (provider, np, napping(provider, np), ALL_N, lens),
         diag(rc, out, err, 3000))


def check_mpi4py(provider, np):
    """One job: Open MPI's account of what it chose (verbose), a ring and
    the allreduces, the NICs' counters around it."""
    nodes = range(np)
    before = counters(nodes)
    t0 = time.monotonic()
    rc, out, err = mpirun(provider, np, ["python3", "-c", MPI4PY, RING_N, RING_LEN, MPI4PY_K],
                          verbose=True, spin=naps(provider, np))
    T.note("%s, %d ranks, ring and allreduces: %.1f s" % (provider, np, time.monotonic() - t0))
    after = counters(nodes)
    got = sorted(l for l in out.splitlines() if l.startswith("rank "))
    total = 1000003 * np * (np - 1) // 2 + 7 * np
    want = ["rank %d of %d on node%d: ring %d x %d B, 0 bad; allreduce %d; Allreduce of %d int64, "
            "0 wrong" % (r, np, r, RING_N, RING_LEN, total, MPI4PY_K) for r in nodes]
    T.ok(rc == 0 and got == want,
         "%s, %d ranks%s, mpi4py: ring of %d x %d B (every byte checked), allreduce (exactly %d) "
         "and Allreduce of %d int64 (every sum exact); lines exact"
         % (provider, np, napping(provider, np), RING_N, RING_LEN, total, MPI4PY_K),
         diag(rc, out, err, 3000))
    text = out + err
    # the mtl names the domain of the provider it opened: the netvm
    # provider's (netvm0), which no other provider has
    T.ok(rc == 0 and
         len(re.findall(r"^\[node\d+:\d+\] select: component cm selected$", text, re.M)) == np and
         len(re.findall(r"^\[node\d+:\d+\] mca:base:select:\(  mtl\) Selected component \[ofi\]$",
                        text, re.M)) == np and
         len(re.findall(r"mtl:ofi:provider: (\S+)$", text, re.M)) == np and
         set(re.findall(r"mtl:ofi:provider: (\S+)$", text, re.M)) == {DOMAIN},
         "%s, %d ranks, Open MPI verbose: every rank selected pml cm, mtl ofi, on domain %s"
         % (provider, np, DOMAIN), diag(rc, out[-2000:], err[-3000:]))
    # the ring alone: RING_N messages of RING_LEN received per node
    moved(provider, before, after, [RING_LEN] * RING_N, "%s, %d-rank ring" % (provider, np))


HPCCINF = """HPLinpack benchmark input file
netvm: a short HPCC over the netvm libfabric provider
HPL.out      output file name (if any)
6            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
200          Ns
1            # of NBs
40           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
%d           Ps
%d           Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                               Number of additional problem sizes for PTRANS
1200                            values of N
0                               number of additional blocking sizes for PTRANS
40                              values of NB
"""
HPCC_DIR = "/tmp/hpcc"
HPCC_BEFF_MSG = 2000000     # b_eff's large message (fixed in hpcc)


def hpcc_sections(res_out):
    """hpcc's tests in hpccoutf.txt with their seconds, from the last
    "Current time (EPOCH) is ..." before each "Begin of NAME section." to
    the last before its "End of"."""
    out, now, begun = [], None, None
    for line in res_out.splitlines():
        m = re.match(r"Current time \(([\d.]+)\)", line)
        if m:
            now = float(m.group(1))
        m = re.match(r"(Begin|End) of (\w+) section", line)
        if m and m.group(1) == "Begin":
            begun = now
        elif m and now is not None and begun is not None:
            out.append("%s %.1f" % (m.group(2), now - begun))
    # its latency and bandwidth test's own account of its parts
    parts = re.findall(r"^ - for (cross ping_pong latency|cross ping_pong bandwidth|ring latency|"
                       r"ring bandwidth)\s*=\s*([\d.]+) sec", res_out, re.M)
    return ", ".join(out) + "; of LatencyBandwidth: " + ", ".join("%s %s" % p for p in parts)


def check_hpcc(provider, np):
    p = 2 if np == 4 else 1
    inf = HPCCINF % (p, np // p)
    nodes = range(min(np, NODES))
    res = run_parallel(lambda n: sh(n, "rm -rf %s && mkdir -p %s" % (HPCC_DIR, HPCC_DIR)),
                       dict((n, (n,)) for n in nodes))
    rc, out, err = run_netvm(CLUSTER, ["run", "-i", 0, "--", "sh", "-c", "cat > %s/hpccinf.txt" % HPCC_DIR],
                             stdin=inf.encode())
    ok = rc == 0 and all(r[0] == 0 for r in res.values())
    before = counters(nodes)
    t0 = time.monotonic()
    rc, out, err = mpirun(provider, np, ["sh", "-c", "cd %s && exec hpcc" % HPCC_DIR], timeout=1200,
                          spin=os.environ.get("NETVM_TEST_HPCC_SPIN_US"))
    T.note("%s, %d ranks, hpcc: %.1f s" % (provider, np, time.monotonic() - t0))
    after = counters(nodes)
    _, res_out, _ = sh(0, "cat %s/hpccoutf.txt" % HPCC_DIR)
    T.note("%s, %d ranks, hpcc's tests (s): %s" % (provider, np, hpcc_sections(res_out)))
    summary = dict(re.findall(r"^(\w+)=(\S+)$", res_out, re.M))
    T.note("%s, %d ranks, hpcc's latency and bandwidth: %s" % (provider, np, ", ".join(
        "%s=%s" % (k, summary.get(k)) for k in (
            "MaxPingPongLatency_usec", "MinPingPongBandwidth_GBytes",
            "NaturallyOrderedRingBandwidth_GBytes", "RandomlyOrderedRingBandwidth_GBytes",
            "RandomlyOrderedRingLatency_usec"))))
    hpl = re.findall(r"\|\|Ax-b\|\|_oo/\(eps\*\(\|\|A\|\|_oo\*\|\|x\|\|_oo\+\|\|b\|\|_oo\)\*N\)=.*"
                     r"\.\.\.\.\.\. (\w+)", res_out)
    T.ok(ok and rc == 0 and summary.get("CommWorldProcs") == str(np) and
         summary.get("HPL_N") == "200" and hpl == ["PASSED"] and "FAILED" not in res_out and
         "End of HPC Challenge tests." in res_out,
         "%s, %d ranks: hpcc (HPL N=200 on %d x %d, then its other tests) exits 0, HPL's "
         "residual PASSED, nothing FAILED" % (provider, np, p, np // p),
         diag(rc, out, err, 2000) + "\nhpccoutf.txt:\n" + res_out[-3000:])
    # its latency and bandwidth test sends 2,000,000-byte messages around
    # rings through every rank: each node received some by NetVM reads
    moved(provider, before, after, [HPCC_BEFF_MSG], "%s, %d-rank hpcc" % (provider, np))


def check_netpipe(provider):
    """NetPIPE's integrity mode on 2 ranks (node 0 and node 1): every
    message checked by the receiving rank."""
    before = counters((0, 1))
    t0 = time.monotonic()
    rc, out, err = mpirun(provider, 2, ["NPopenmpi", "-i", "-u", "65536"])
    T.note("%s, NetPIPE: %.1f s" % (provider, time.monotonic() - t0))
    after = counters((0, 1))
    sizes = [(int(m.group(1)), "Integrity check passed" in l) for l in err.splitlines()
             for m in [re.match(r"^\s*\d+:\s+(\d+) bytes", l)] if m]
    T.ok(rc == 0 and "0: node0" in out.splitlines() and "1: node1" in out.splitlines() and
         len(sizes) >= 20 and all(ok for _, ok in sizes) and max(n for n, _ in sizes) > 32768 and
         "Integrity check failed" not in out + err,
         "NPopenmpi -i over %s: %d message sizes up to %s B, every one checked, ranks on node0 "
         "and node1" % (provider, len(sizes), max([n for n, _ in sizes] or [0])),
         diag(rc, out, err))
    # NetPIPE's sizes each once a way at least (it repeats each many times)
    moved(provider, before, after, [n for n, _ in sizes], "%s, NetPIPE" % provider)


def main_hpcc(np):
    """Groups mpi-hpcc and mpi-hpcc4: hpcc on the native path only, on np
    ranks, on a cluster of np VMs of its own (2 back to back: a cluster of
    4 would put a switch between the 2 ranks' nodes and double their
    run)."""
    global NODES
    provider = "netvm;^ofi_rxd"
    NODES = np

    def body():
        check_setup()
        check_fi_info(provider)
        check_hpcc(provider, np)
    return tap_cluster_main(T, CLUSTER, NODES, body)


def main():
    def body():
        check_setup()
        for provider in PROVIDERS:
            check_fi_info(provider)
            # ofi_rxd: 2 ranks only unless asked; its 4- and 8-rank jobs
            # (43 s and 39 s of ranks spinning on every vCPU) exercise the
            # same datagrams, and the native path runs all three
            full = native(provider) or os.environ.get("NETVM_TEST_RXD_ALL") == "1"
            for np in (2, 4) if full else (2,):
                check_mpi4py(provider, np)
            if full:
                check_two_a_node(provider)
            else:
                T.note("%s: 4 ranks and 2 ranks a node left out (NETVM_TEST_RXD_ALL=1 runs them)"
                       % provider)
            # hpcc on the native path is group mpi-hpcc (main_hpcc); on
            # ofi_rxd its own tests take minutes under TCG (343 s on 2
            # ranks, 406 s on 4, the shared host loaded; 659 s on 4 another
            # time): on the 2 x 2 grid only, and only when asked for
            if not native(provider) and os.environ.get("NETVM_TEST_HPCC") == "1":
                check_hpcc(provider, 4)
            elif not native(provider):
                T.note("hpcc on ofi_rxd left out (6-11 min): NETVM_TEST_HPCC=1 runs it")
            check_netpipe(provider)
    return tap_cluster_main(T, CLUSTER, NODES, body)


if __name__ == "__main__":
    if sys.argv[1:2] == ["hpcc"]:
        if sys.argv[2:] not in (["2"], ["4"]):
            sys.exit("usage: test_mpi_fi.py [hpcc 2|4]")
        CLUSTER = "t-guest-mpi-hpcc" + ("" if sys.argv[2] == "2" else sys.argv[2])
        sys.exit(main_hpcc(int(sys.argv[2])))
    sys.exit(main())
