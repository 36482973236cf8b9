"""What the libvirt guest tests share (test_libvirt.py, test_libvirt_ssh.py):
this host's libvirt daemons, started here when none answers, with QEMU
run as root in a mount namespace of their own (docs/cluster.md, "A slow
define where only root may open /dev/kvm"); ./netvm console on a pty."""
import contextlib
import fcntl
import os
import pty
import re
import select
import shlex
import signal
import subprocess
import time

from guestlib import NETVM, run

# what a daemon started here writes (libvirtd -d and virtlogd -d, as root)
PIDFILES = {"virtlogd": "/run/virtlogd.pid", "libvirtd": "/run/libvirtd.pid"}
QEMU_CONF = "/etc/libvirt/qemu.conf"
# held by each libvirt test for its whole run: a test stops the daemons it
# started when it ends, which would pull them from under another test that
# found them running and used them
DAEMONS_LOCK = "/run/lock/netvm-test-libvirtd.lock"


def ktests(nv, node, *cmds):
    """netvm-ktest once per cmd (a tuple of its arguments), one after
    another in one `./netvm run` (nv(*args, timeout=): the test's): each
    run costs a front-door start and an agent round trip, a second and
    more through an ssh tunnel.  -> [(rc, out, err)] per cmd (err: the
    run's whole stderr); those a failed run did not reach failed too."""
    # the status on a line of its own even after output without a newline
    script = "".join("netvm-ktest %s; printf '\\n#ktest-rc %%d\\n' $?\n"
                     % " ".join(shlex.quote(str(a)) for a in c) for c in cmds)
    rc, out, err = nv("run", node, "--", "sh", "-c", script, timeout=120)
    res, part = [], []
    for line in out.splitlines():
        m = re.match(r"^#ktest-rc (\d+)$", line)
        if m:
            res.append((int(m.group(1)), "\n".join(part[:-1] if part and not part[-1] else part), err))
            part = []
        else:
            part.append(line)
    return res + [(rc or 255, "\n".join(part), err)] * (len(cmds) - len(res))


@contextlib.contextmanager
def daemons_held():
    """This host's libvirt daemons, for this test alone while it runs
    (the suite runs guest-libvirt and guest-libvirt-ssh among the other
    tests, and either may start and stop them)."""
    os.makedirs(os.path.dirname(DAEMONS_LOCK), exist_ok=True)
    with open(DAEMONS_LOCK, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("# waiting for %s: another libvirt test runs" % DAEMONS_LOCK, flush=True)
            t0 = time.monotonic()
            fcntl.flock(f, fcntl.LOCK_EX)
            print("# waited %.0f s for the libvirt daemons" % (time.monotonic() - t0), flush=True)
        yield


def virsh(uri, *args, timeout=60):
    return run(["virsh", "-q", "-c", uri] + list(args), timeout=timeout)


def wait_for(cond, secs, step=0.1):
    deadline = time.monotonic() + secs
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


def pid_of(name, pidfile=None):
    try:
        with open(pidfile or PIDFILES[name]) as f:
            pid = int(f.read().strip())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def qemu_conf(tmp):
    """A daemon's qemu.conf: the host's, with QEMU run as root.  libvirt
    runs its capability probe of our emulator and then asks whether the
    user of qemu.conf (libvirt-qemu) may open /dev/kvm; where only root
    may (mode 0600), it finds KVM "not available now", throws the cached
    capabilities away and probes again on every call that needs them (a
    define ran 12 probes).  As root the cache holds."""
    with open(QEMU_CONF) as f:
        host = [l for l in f if not re.match(r"\s*(user|group)\s*=", l)]
    path = os.path.join(tmp, "qemu.conf")
    with open(path, "w") as f:
        f.writelines(host + ['user = "root"\n', 'group = "root"\n'])
    return path


def start_daemons(tmp, uri="qemu:///system"):
    """virtlogd (the serial logs and QEMU's output go through it) and
    libvirtd, if none runs; -> {name: pid} of those started here.
    libvirtd runs in a mount namespace of its own where qemu_conf() is
    bound over QEMU_CONF: the host's file is not changed, and the binding
    ends with the daemon."""
    started = {}
    if pid_of("virtlogd") is None:
        subprocess.run(["virtlogd", "-d"], check=True)
        if wait_for(lambda: pid_of("virtlogd") is not None, 30):
            started["virtlogd"] = pid_of("virtlogd")
    subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                    'mount --bind "$1" "$2" && exec libvirtd -d', "sh", qemu_conf(tmp), QEMU_CONF],
                   check=True)
    if wait_for(lambda: virsh(uri, "uri")[0] == 0, 60):
        started["libvirtd"] = pid_of("libvirtd")
    return started


def stop_pid(pid, secs=30):
    """SIGTERM to a daemon started by the test; -> True once it is gone."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    return wait_for(lambda: not os.path.exists("/proc/%d" % pid), secs)


def stop_daemons(started, tap):
    for name in ("libvirtd", "virtlogd"):
        pid = started.get(name)
        if pid:
            tap.ok(stop_pid(pid), "%s (pid %d, started by this test) stopped" % (name, pid))


def console_echo(cluster, node):
    """./netvm console NODE on a terminal (virsh console wants one): a line
    typed there runs in the node's shell; Ctrl-] leaves.  -> (the answer
    seen, the exit status or None, the output)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(NETVM, [NETVM, "--cluster", cluster, "console", str(node)])
    seen = b""
    deadline = time.monotonic() + 60
    sent = None
    while time.monotonic() < deadline and b"console-" + b"42" not in seen:
        r, _, _ = select.select([fd], [], [], 1.0)
        if r:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
        # virsh says "Escape character" before it makes its terminal raw,
        # which may flush what was typed meanwhile: typed again while the
        # answer has not come
        if b"Escape character" in seen and (sent is None or time.monotonic() - sent > 5):
            os.write(fd, b"\recho console-$((6*7))\r")
            sent = time.monotonic()
    found = b"console-42" in seen
    os.write(fd, b"\x1d")
    end = time.monotonic() + 30
    status = None
    while time.monotonic() < end:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p:
            status = st
            break
        try:
            if select.select([fd], [], [], 0.5)[0]:
                os.read(fd, 4096)
        except OSError:
            pass
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    os.close(fd)
    return found, status, seen
