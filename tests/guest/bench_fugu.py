#!/usr/bin/python3
"""FUGU's overflow control under a full-speed sender (meson benchmark
'fugu-bench', docs/bench.md): boots cluster 'bench-fugu' (2 nodes); node 0
streams MESSAGES U-Net messages of random size (1..4096 B) as fast as
netvm_unet_send allows to node 1 (netvm-fugu-test send/recv), whose
receiver checks every message's number, size and bytes, and stops itself
(SIGSTOP) once, for PAUSE seconds, after a quarter of them.  Per pause it
reports the messages diverted to the driver's pageable buffer, the holds
(overflow control) and the time the sender spent held (sampled every ms
by the sender), the time from the receiver waking to direct delivery
again, and the sender's throughput over the whole run.  Not a pass/fail
test: it fails only if a message is lost, out of order or wrong.

    tests/guest/bench_fugu.py [MESSAGES] [PAUSES] [HIWAT_KIB]
        (default 200000, 0,0.25,1,4, the driver's default 8192)
Environment: NETVM (path of ./netvm).
"""
import os
import sys
import threading
import time

from guestlib import bench_cluster, fugu_fields as fields, netvm_runner

CLUSTER = "bench-fugu"

nv = netvm_runner(CLUSTER, default_timeout=1800)


def wait_file(node, path):
    return nv("run", node, "--", "sh", "-c",
              "for i in $(seq 600); do test -f %s && break; sleep 0.2; done; cat %s" % (path, path),
              timeout=180).stdout.strip()


def one(messages, pause, run):
    """One sender/receiver pair; returns (receiver fields, sender fields, problems)."""
    name = "fb%d" % run
    at = messages // 4
    res = {}
    popts = ["-p", "%d:%d" % (at, int(float(pause) * 1000))] if float(pause) > 0 else []
    rth = threading.Thread(target=lambda: res.update(r=nv(
        "run", 1, "--", "netvm-fugu-test", "recv", name, "0", messages, 0x1000 + run, *popts)),
        daemon=True)
    rth.start()
    rport = wait_file(1, "/tmp/%s.info" % name).split()
    sth = threading.Thread(target=lambda: res.update(s=nv(
        "run", 0, "--", "netvm-fugu-test", "send", name, "1", rport[-1], messages, 0x1000 + run)),
        daemon=True)
    sth.start()
    sport = wait_file(0, "/tmp/%s.info" % name).split()
    nv("run", 1, "--", "sh", "-c", "echo %s > /tmp/%s.peer.tmp && mv /tmp/%s.peer.tmp /tmp/%s.peer"
       % (sport[-1], name, name, name))
    wait_file(1, "/tmp/%s.ready" % name)
    nv("run", 0, "--", "sh", "-c", "echo go > /tmp/%s.go" % name)
    sth.join(1800)
    rth.join(600)
    r = fields(res["r"].stdout, "recv") if "r" in res else {}
    s = fields(res["s"].stdout, "send") if "s" in res else {}
    bad = []
    if not r or not s or res["r"].returncode or res["s"].returncode or \
            r.get("got") != messages or r.get("bad") or r.get("lost") or r.get("dropped") or \
            s.get("err") or s.get("peer_dropped"):
        bad.append("pause %s: receiver %s %s\nsender %s %s" % (
            pause, r, res.get("r") and res["r"].stderr[-2000:], s,
            res.get("s") and res["s"].stderr[-2000:]))
    return r, s, bad


def main():
    messages = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    pauses = (sys.argv[2] if len(sys.argv) > 2 else "0,0.25,1,4").split(",")
    hiwat = sys.argv[3] if len(sys.argv) > 3 else None
    with bench_cluster(CLUSTER) as up:
        if not up:
            return 1
        if hiwat:
            nv("run", 1, "--", "sh", "-c", "echo %s > /sys/module/netvm/parameters/unet_divert_kib" % hiwat)
        mark = nv("run", 1, "--", "cat", "/sys/module/netvm/parameters/unet_divert_kib").stdout.strip()
        print("FUGU overflow control: %d U-Net messages of 1..4096 B (random), full speed, node 0 -> "
              "node 1;\nthe receiver verifies every byte and stops (SIGSTOP) for PAUSE s after a "
              "quarter of them;\nhigh-water mark %s KiB (2 TCG guests, %d host CPUs, %s)" % (
                  messages, mark, os.cpu_count(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
        print("%7s %9s %9s %9s %6s %8s %10s %9s %9s %8s %5s" % (
            "pause s", "direct", "diverted", "div %", "holds", "held s", "to direct", "run s",
            "msg/s", "MB/s", "lost"))
        bad = []
        for run, pause in enumerate(pauses):
            r, s, probs = one(messages, pause, run)
            bad += probs
            if r and s:
                print("%7s %9d %9d %8.1f%% %6d %8.2f %10s %9.2f %9.0f %8.2f %5d" % (
                    pause, r["direct"], r["diverted"], 100.0 * r["diverted"] / messages,
                    s["tx_held"], s["held_secs"],
                    "%.2f" % r["back0"] if "back0" in r and r["back0"] >= 0 else "-",
                    s["secs"], s["msgs_per_s"], s["mb_per_s"],
                    messages - r["got"] + r["lost"]), flush=True)
        if bad:
            print("FAILED")
            print("fugu-bench: " + "\n".join(bad), file=sys.stderr)
            return 1
        print("every message arrived once, in order, byte for byte; none lost. 'to direct': from "
              "the receiver waking to the first message taken with the endpoint in direct mode; "
              "'held s': the sender's time held, sampled every ms")
        return 0


if __name__ == "__main__":
    sys.exit(main())
