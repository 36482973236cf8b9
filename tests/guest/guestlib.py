"""Shared pieces of the guest test scripts: TAP output, paths, running
./netvm (run_netvm, ClusterShell: nv and sh) and reading its answers.

Each script boots its own cluster through ./netvm and prints TAP (meson's
protocol 'tap'); diagnostics of a failed check go to stderr, which
`meson test --print-errorlogs` shows.
"""
import contextlib
import io
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NETVM = os.environ.get("NETVM", os.path.join(REPO, "netvm"))
BOOT_TIMEOUT = os.environ.get("NETVM_TEST_BOOT_TIMEOUT", "300")


def cluster_processes(cluster, switch_dir=None):
    """Live (not zombie) processes of a cluster of this checkout: its QEMUs
    (named netvm-CLUSTER-nodeN, with this repo on their command line: another
    checkout may run the same test meanwhile) and, if switch_dir is given,
    netvm-switch processes working there."""
    tag = ("netvm-%s-node" % cluster).encode()
    repo = REPO.encode()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read()
            with open("/proc/%s/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    continue
        except (OSError, IndexError):
            continue
        if tag in cmd and repo in cmd:
            found.append(pid)
        elif switch_dir and b"netvm-switch" in cmd:
            try:
                cwd = os.readlink("/proc/%s/cwd" % pid)
            except OSError:
                continue
            if cwd.startswith(switch_dir):
                found.append(pid)
    return found


SLOW_S = 60


def slow_note(argv, secs, rc):
    """A TAP comment for a command that took SLOW_S or more: where a
    group's time goes shows in its log (a check once passed only when its
    command's timeout killed a spinning guest program, 120 s a run)."""
    if secs >= SLOW_S:
        what = " ".join(str(a) for a in argv)
        print("# slow: %.1f s, exit %s: %s" % (secs, rc, what[:200].replace("\n", " ")), flush=True)


def run(argv, timeout=300, stdin=None, binary=False):
    """Runs argv -> (rc, stdout, stderr), text unless binary; stdin: bytes
    to feed it (default: none).  A timeout gives rc -1 and says so at the
    end of stderr."""
    import subprocess

    t0 = time.monotonic()
    try:
        r = subprocess.run([str(a) for a in argv], input=stdin,
                           stdin=subprocess.DEVNULL if stdin is None else None,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = -1, e.stdout or b"", (e.stderr or b"") + b"\n(timed out)"
    slow_note(argv, time.monotonic() - t0, rc)
    if binary:
        return rc, out, err
    return rc, out.decode(errors="replace"), err.decode(errors="replace")


def run_netvm(cluster, args, timeout=300, stdin=None, binary=False):
    """./netvm --cluster CLUSTER ARGS -> (rc, stdout, stderr), as run()."""
    fast = run_in_process(cluster, list(args), timeout, stdin)
    if fast is not None:
        rc, out, err = fast
        return (rc, out, err) if binary else (rc, out.decode(errors="replace"), err.decode(errors="replace"))
    return run([NETVM, "--cluster", cluster] + list(args), timeout, stdin, binary)


# run_netvm's `run` in this process (run_in_process) unless this is False:
# the front door's own group (guest-frontdoor) and NETVM_TEST_VIA_CLI=1
# run every command through ./netvm
IN_PROCESS = os.environ.get("NETVM_TEST_VIA_CLI") != "1"
_front_door = []


def front_door():
    """The netvm_cli package of the checkout NETVM is in, imported once
    (its bytecode cached where ./netvm caches it)."""
    if not _front_door:
        import importlib
        tools = os.path.join(os.path.dirname(os.path.abspath(NETVM)), "tools")
        if sys.pycache_prefix is None and not sys.dont_write_bytecode:
            sys.pycache_prefix = os.path.join(os.path.dirname(tools), "build", "pycache")
        sys.path.insert(0, tools)
        _front_door.append(tuple(importlib.import_module("netvm_cli." + m)
                                 for m in ("cluster", "common", "agent")))
    return _front_door[0]


def run_in_process(cluster, args, timeout, stdin):
    """`./netvm --cluster CLUSTER run NODE -- CMD...` (no stdin, no other
    option: the form the checks use thousands of times) through the front
    door's own code in this process -> (rc, stdout bytes, stderr bytes),
    with ./netvm's exit status and error line; None for any other form,
    which run_netvm runs as a command.  Starting ./netvm costs a Python
    start and its imports, 0.1-0.2 s of CPU, more than most checks' guest
    command; the front door's parsing of `run` has tests of its own
    (cli-arguments, guest-frontdoor).  A timeout gives rc -1 and says so,
    as run() does: closing the agent's connection kills the command."""
    if not IN_PROCESS or stdin is not None or len(args) < 4 or args[0] != "run" or args[2] != "--" or \
            not str(args[1]).isdigit():
        return None
    clustermod, common, agent = front_door()
    argv = [str(a) for a in args[3:]]
    out, err = io.BytesIO(), io.BytesIO()
    t0 = time.monotonic()
    try:
        c = clustermod.Cluster(clustermod.cluster_name(cluster))
        rc = c.run(str(args[1]), argv, out=out, err=err, deadline=t0 + timeout)
    except common.NetvmError as e:
        if isinstance(e.__cause__, agent.DeadlinePassed):
            rc = -1
            err.write(b"\n(timed out)")
        else:
            rc = 1
            err.write(("netvm: error: %s\n" % e).encode())
    slow_note(["netvm", "--cluster", cluster] + [str(a) for a in args], time.monotonic() - t0, rc)
    return rc, out.getvalue(), err.getvalue()


class ClusterShell:
    """nv() and sh() for one cluster, what every test script calls:
    nv(*args) runs ./netvm --cluster NAME ARGS, sh(node, script) a shell
    script in a node; both -> (rc, stdout, stderr) as run() (sh's output
    is always text).  name may be set later, by a script that takes it
    from its arguments."""

    def __init__(self, name=None, timeout=300, sh_timeout=300, binary=False):
        self.name = name
        self.timeout = timeout
        self.sh_timeout = sh_timeout
        self.binary = binary

    def nv(self, *args, timeout=None, stdin=None):
        return run_netvm(self.name, args, self.timeout if timeout is None else timeout,
                         stdin, self.binary)

    def sh(self, node, script, timeout=None):
        return run_netvm(self.name, ["run", node, "--", "sh", "-c", script],
                         self.sh_timeout if timeout is None else timeout)

    def state_dir(self):
        return os.path.join(REPO, "build", "cluster", self.name)


def diag(rc, out, err, tail=None):
    """A failed command for a TAP diagnostic; tail: keep only the last
    TAIL characters of each stream."""
    if isinstance(out, bytes):
        out, err = out.decode(errors="replace"), err.decode(errors="replace")
    out, err = out.strip(), err.strip()
    if tail:
        out, err = out[-tail:], err[-tail:]
    return "exit %s\nstdout: %s\nstderr: %s" % (rc, out, err)


SYSFS = "/sys/class/netvm/netvm0"


def sysfs_counters(sh, node, name="fw_counters"):
    """A 'name value' per line file of node's NIC in sysfs (fw_counters,
    ep_counters) as {name: int}, through sh (ClusterShell.sh); lines whose
    value is not a whole number are left out."""
    rc, out, err = sh(node, "cat %s/%s" % (SYSFS, name))
    return dict((l.split()[0], int(l.split()[1])) for l in out.splitlines()
                if len(l.split()) == 2 and l.split()[1].isdigit())


def sysfs_number(sh, node, name):
    """A one-number file of node's NIC in sysfs (db_yields, nv_bounces) as
    an int through sh (ClusterShell.sh), or None if it cannot be read."""
    rc, out, err = sh(node, "cat %s/%s" % (SYSFS, name))
    return int(out) if rc == 0 and out.strip().isdigit() else None


def tcp_listening(port):
    """A shell condition: a TCP socket listens on port in the node
    (/proc/net/tcp*, state 0A)."""
    return "grep -qi ':%04X [0-9A-F:]* 0A ' /proc/net/tcp /proc/net/tcp6" % port


def wait_guest(sh, node, cond, tries=1200):
    """Until the shell condition cond holds in node, tried 0.1 s apart at
    most tries times, through sh (ClusterShell.sh or a script's own
    sh(node, script, timeout)); True if it came to hold."""
    script = ("i=0; while ! (%s) >/dev/null 2>&1; do i=$((i+1)); [ $i -lt %d ] || exit 1; "
              "sleep 0.1; done" % (cond, tries))
    return sh(node, script, timeout=tries // 10 + 60)[0] == 0


def fugu_fields(text, kind):
    """The key=value pairs of netvm-fugu-test's 'fugu-KIND' line, as floats."""
    import re

    for line in text.splitlines():
        if line.startswith("fugu-%s " % kind):
            return dict((k, float(v)) for k, v in re.findall(r"(\w+)=(-?[\d.]+)", line))
    return {}


def run_parallel(fn, jobs):
    """Calls fn(*args) for every {key: args} at once, in threads; returns
    {key: result}."""
    import threading

    res = {}

    def one(k, args):
        res[k] = fn(*args)

    ths = [threading.Thread(target=one, args=(k, a)) for k, a in jobs.items()]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    return res


def netvm_runner(cluster, default_timeout=600):
    """A function that runs ./netvm --cluster CLUSTER ARGS (text mode) and
    returns the CompletedProcess: what the benchmark scripts share."""
    import subprocess

    def nv(*args, timeout=default_timeout):
        return subprocess.run([NETVM, "--cluster", cluster] + [str(a) for a in args],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, errors="replace",
                              timeout=timeout)
    return nv


@contextlib.contextmanager
def bench_cluster(cluster, n=2, timeout=900):
    """For a benchmark script: a fresh N-node cluster CLUSTER (what an
    interrupted run left taken down first), taken down again when the block
    ends.  Yields True once it is up, or False after printing ./netvm's
    output on stderr."""
    run_netvm(cluster, ["down"], timeout=120)
    try:
        rc, out, err = run_netvm(cluster, ["up", "-n", n], timeout=timeout)
        if rc != 0:
            print("%s: ./netvm up -n %d failed:\n%s%s" % (cluster, n, out, err), file=sys.stderr)
        yield rc == 0
    finally:
        run_netvm(cluster, ["down"], timeout=120)


def await_file(path):
    """A guest shell snippet: wait up to 60 s for PATH (a file one guest
    program writes when it is ready), then print it."""
    return "for i in $(seq 300); do test -f %s && break; sleep 0.2; done; cat %s" % (path, path)


def netvm_shell(cluster):
    """(nv, sh) of ClusterShell(CLUSTER), with 600 s timeouts: what the
    benchmark scripts that take text use."""
    c = ClusterShell(cluster, timeout=600, sh_timeout=600)
    return c.nv, c.sh


class Tap:
    """Numbered TAP results; call plan() at the end."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc, diag=""):
        self.n += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, desc), flush=True)
        if not cond:
            self.failed += 1
            print("--- not ok %d - %s" % (self.n, desc), file=sys.stderr)
            for line in str(diag).splitlines():
                print("    " + line, file=sys.stderr)
            sys.stderr.flush()
        return cond

    def note(self, msg):
        for line in str(msg).splitlines():
            print("# " + line, flush=True)

    def plan(self):
        print("1..%d" % self.n, flush=True)


def tap_cluster_main(T, cluster, n, body, up_args=(), switch_dir=None):
    """The frame of a TAP guest test: a fresh N-node cluster (what an
    interrupted run left taken down first), body() run on it, then taken
    down, checking that no QEMU, switch, socket or state dir is left.
    Returns the exit status."""
    import signal

    def nv(*args, timeout=300):
        return run_netvm(cluster, args, timeout)

    def on_signal(signum, frame):
        raise SystemExit(128 + signum)

    state = os.path.join(REPO, "build", "cluster", cluster)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    nv("down")
    try:
        t0 = time.monotonic()
        rc, out, err = nv("up", "-n", n, "--timeout", BOOT_TIMEOUT, *up_args,
                          timeout=int(BOOT_TIMEOUT) + 60)
        if rc != 0:
            print("Bail out! ./netvm up -n %d failed: %s" % (n, err.strip().replace("\n", " | ")),
                  flush=True)
            print(out + err, file=sys.stderr)
            return 1
        T.note("cluster of %d up in %.1f s" % (n, time.monotonic() - t0))
        body()
    finally:
        rc, out, err = nv("down")
        left = cluster_processes(cluster, switch_dir=switch_dir or state)
        if os.path.exists(state):
            left.append(state)
        T.ok(rc == 0 and not left, "down leaves no QEMU, no switch, no socket or state dir",
             diag(rc, out, err) + "\nleft: %s" % left)
        print("1..%d" % T.n, flush=True)
    return 1 if T.failed else 0
