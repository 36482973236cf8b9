"""Paths and small helpers shared by the netvm front door."""
import os
import subprocess
import sys
import threading
import time

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(TOOLS)
BUILD = os.path.join(REPO, "build")

# Outputs of `./netvm build` (see docs/build.md).
QEMU_BUILD = os.path.join(BUILD, "qemu")
KERNEL_DIR = os.path.join(BUILD, "kernel")
KERNEL_ABI_FILE = os.path.join(KERNEL_DIR, "ABI")
KERNEL_ROOT = os.path.join(KERNEL_DIR, "root")
VMLINUZ = os.path.join(KERNEL_DIR, "vmlinuz")
DOWNLOADS = os.path.join(BUILD, "downloads")
MESON_BUILD = os.path.join(BUILD, "meson")
IMAGE_DIR = os.path.join(BUILD, "image")
INITRAMFS = os.path.join(IMAGE_DIR, "initramfs.cpio.gz")
LOGS = os.path.join(BUILD, "logs")
CLUSTERS = os.path.join(BUILD, "cluster")
DRIVER_DIR = os.path.join(REPO, "guest-driver")
DRIVER_KO = os.path.join(DRIVER_DIR, "netvm.ko")
AGENT_BIN = os.path.join(MESON_BUILD, "images", "netvm-agent")

PYTHON = "/usr/bin/python3"

# ./netvm up's defaults, also what demo, bench and restore use
DEFAULT_TIMEOUT = 180   # seconds for every node to be ready
DEFAULT_MEM = 512       # MiB of guest RAM


def qemu_binary():
    """The QEMU to run: build/qemu/qemu-system-x86_64 (NETVM_QEMU overrides)."""
    return os.environ.get("NETVM_QEMU") or os.path.join(QEMU_BUILD, "qemu-system-x86_64")


def lazy_import(name):
    """The front door's module NAME (netvm_cli.NAME), loaded at its first
    attribute use (importlib.util.LazyLoader): ./netvm run, which tests
    call thousands of times, then loads only what running a command needs,
    not what booting or benchmarking does."""
    import importlib.util
    full = __package__ + "." + name
    if full in sys.modules:
        return sys.modules[full]
    spec = importlib.util.find_spec(full)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    setattr(sys.modules[__package__], name, module)
    return module


class NetvmError(Exception):
    """A failure reported to the user as one line, exit status 1."""


def say(msg):
    # from a thread beside a child's one updating line on a terminal
    # (build.py's steps beside build-qemu's progress): over that line
    over = "\r\033[K" if threading.current_thread() is not threading.main_thread() and \
        sys.stdout.isatty() else ""
    print(over + "netvm: " + msg, flush=True)


def warn(msg):
    print("netvm: warning: " + msg, file=sys.stderr, flush=True)


def rel(path):
    """A path relative to the repository, for messages."""
    try:
        r = os.path.relpath(path, os.getcwd())
    except ValueError:
        return path
    return r if not r.startswith("../..") else path


def run(cmd, log=None, cwd=None, env=None, tail=True):
    """Runs cmd; with log, its output goes to that file and, on failure, the
    last lines are shown.  Returns the exit status."""
    if log is None:
        return subprocess.call(cmd, cwd=cwd, env=env)
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "wb") as f:
        rc = subprocess.call(cmd, cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
    if rc != 0 and tail:
        show_tail(log, 40)
    return rc


def show_tail(path, n):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return
    if len(lines) > n:
        print("... (%d lines; full log: %s)" % (len(lines), rel(path)), file=sys.stderr)
    for line in lines[-n:]:
        print("  | " + line, file=sys.stderr)
    sys.stderr.flush()


def is_root():
    return os.geteuid() == 0


def proc_info(pid):
    """(state letter, argv as a list of bytes) of a process, None if gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv = f.read().split(b"\0")
    except (OSError, IndexError):
        return None
    return state, argv


def proc_running(pid):
    """proc_info(pid) if the process runs (neither gone nor a zombie)."""
    info = proc_info(pid)
    return info if info and info[0] not in ("Z", "X") else None


class Timer:
    def __init__(self):
        self.t0 = time.monotonic()

    def __str__(self):
        return "%.1f s" % (time.monotonic() - self.t0)

    @property
    def secs(self):
        return time.monotonic() - self.t0
