#!/usr/bin/python3
"""Guest tests for the LANai hardware model (2 VMs, TAP output):

  - raw frames of every size from 1 byte to the maximum, both directions,
    through all three DMA engines, every byte verified;
  - a stream saved mid-transfer on both VMs (QEMU migration to files) and
    restored into new QEMU processes completes with no frame lost,
    duplicated or reordered (the frame pattern carries a sequence number).

Boots its own cluster 't-guest-hardware' and always tears it down.
"""
import subprocess
import sys
import time

from guestlib import BOOT_TIMEOUT, NETVM, Tap

CLUSTER = "t-guest-hardware"
RAW = "/netvm/build/meson/guest-lib/netvm-raw"
T = Tap()
ok = T.ok


def nv(*args, timeout=300):
    try:
        r = subprocess.run([NETVM, "--cluster", CLUSTER] + list(args), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return -1, "", "(timed out)"


def sh(node, script, timeout=120):
    return nv("run", str(node), "--", "sh", "-c", script, timeout=timeout)


def background(node, cmd, out):
    """Start cmd in node, detached from the agent connection."""
    return sh(node, "setsid %s > %s 2>&1 < /dev/null &" % (cmd, out))


def wait_file(node, path, pattern, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rc, out, _ = sh(node, "cat %s 2>/dev/null" % path)
        if pattern in out:
            return out
        time.sleep(1)
    return sh(node, "cat %s 2>/dev/null" % path)[1]


def counter(node, name):
    rc, out, _ = sh(node, "cat /sys/class/netvm/netvm0/%s" % name)
    return int(out.strip()) if rc == 0 and out.strip().isdigit() else -1


def sweep(src, dst):
    background(dst, RAW + " sweep-recv 4096 30000", "/tmp/sweep.out")
    time.sleep(1)
    rc, out, err = sh(src, RAW + " sweep-send 4096")
    res = wait_file(dst, "/tmp/sweep.out", "received", 60)
    ok(rc == 0 and "0 bad" in res,
       "node %d -> node %d: one raw frame of every size 1..4096 B, every byte verified" % (src, dst),
       "send: %s %s\nrecv: %s" % (out, err, res))


def stalled_reader():
    """Node 1 reads nothing while node 0 -- the server end of the
    back-to-back stream link -- sends: the frames back up into node 0's NIC,
    node 0 itself keeps running (QEMU's main loop used to block in
    sendmsg() on the accepted socket and freeze the VM), and once node 1
    reads, every frame arrives."""
    frames = 3000
    tx0 = counter(0, "raw_tx")
    background(0, RAW + " send %d 4096" % frames, "/tmp/stall.out")
    time.sleep(1.5)
    t0 = time.monotonic()
    rc, out, err = sh(0, "echo alive; cat /sys/class/netvm/netvm0/raw_tx", timeout=30)
    dt = time.monotonic() - t0
    w = out.split()
    stalled = rc == 0 and len(w) == 2 and w[0] == "alive" and int(w[1]) - tx0 < frames
    ok(stalled and dt < 20, "node 0 answers while its link is stalled by a reader that reads nothing "
       "(%.1f s; %s of %d frames on the wire)" % (dt, int(w[1]) - tx0 if len(w) == 2 else "?", frames),
       out + err)
    rc, out, err = sh(1, RAW + " recv %d 30000" % frames, timeout=300)
    res = wait_file(0, "/tmp/stall.out", "sent", 60)
    ok(rc == 0 and "received %d frames" % frames in out and " 0 bad" in out and
       "sent %d" % frames in res,
       "node 1 reads: all %d frames arrive in order, none lost" % frames, out + err + res)


def save_restore():
    frames = 200000
    for n in (0, 1):
        sh(n, "cp %s /tmp/netvm-raw" % RAW)
    dropped0 = counter(1, "raw_rx_dropped")
    rx0 = counter(1, "raw_rx")
    background(1, "/tmp/netvm-raw recv %d 120000" % frames, "/tmp/recv.out")
    time.sleep(1)
    background(0, "/tmp/netvm-raw send %d 1500" % frames, "/tmp/send.out")
    time.sleep(2)
    before = counter(1, "raw_rx")
    ok(rx0 < before < rx0 + frames, "the save happens mid-stream (%d of %d frames received)"
       % (before - rx0, frames))
    rc, out, err = nv("save", "--order", "0,1", timeout=300)
    if not ok(rc == 0, "save both VMs mid-stream (sender first)", out + err):
        return
    rc, out, err = nv("restore", timeout=300)
    if not ok(rc == 0, "restore both VMs into new QEMU processes", out + err):
        return
    res = wait_file(1, "/tmp/recv.out", "received", 180)
    sent = sh(0, "cat /tmp/send.out")[1]
    ok("received %d frames" % frames in res and " 0 bad" in res and "sent %d" % frames in sent,
       "the stream saved mid-transfer completes: %d frames, none lost, duplicated or reordered"
       % frames, "receiver: %s\nsender: %s\nraw_rx before save: %d" % (res, sent, before))
    ok(counter(1, "raw_rx_dropped") == dropped0, "no frame dropped by the receiving driver")
    rc, out, _ = sh(1, "cat /sys/class/netvm/netvm0/link_state")
    ok(out.strip() == "up", "the link is up again after restore", out)


def main():
    print("TAP version 13", flush=True)
    nv("down")
    rc, out, err = nv("up", "-n", "2", "--timeout", BOOT_TIMEOUT, timeout=600)
    if not ok(rc == 0, "boot a 2-node cluster", out + err):
        T.plan()
        return 1
    try:
        sweep(0, 1)
        sweep(1, 0)
        stalled_reader()
        save_restore()
    finally:
        nv("down")
    T.plan()
    return 1 if T.failed else 0


if __name__ == "__main__":
    sys.exit(main())
