"""`./netvm deps` and `./netvm build`: the build pipeline (docs/build.md).

Steps, in order, each quick when its outputs are up to date:
  deps    ci/install-deps.sh, kernel ABI resolution, linux-headers-ABI
  qemu    qemu-device/build-qemu.sh          -> build/qemu/qemu-system-x86_64
          qemu-device/build-qemu.sh --asan   -> build/qemu-asan/ (device fuzzer)
  kernel  apt-get download linux-image-ABI   -> build/kernel/{vmlinuz,root}
  driver  make -C guest-driver KDIR=...      -> guest-driver/netvm.ko
  meson   meson setup/compile build/meson    -> libraries, tools, tests, agent
  image   images/mkimage.py                  -> build/image/initramfs.cpio.gz
  pkgdisk images/packages.list, apt, dpkg-deb -> build/pkgdisk/pkgs.squashfs (pkgdisk.py)

kernel and pkgdisk run in a thread of their own beside qemu: they mostly
wait on the archive and the disk while QEMU's compiles keep the CPUs busy.
"""
import glob
import os
import shutil
import subprocess
import threading

from .command import Command
from .common import (BUILD, DOWNLOADS, DRIVER_DIR, DRIVER_KO, IMAGE_DIR, INITRAMFS,
                     KERNEL_ABI_FILE, KERNEL_DIR, KERNEL_ROOT, LOGS, MESON_BUILD,
                     PYTHON, REPO, VMLINUZ, AGENT_BIN, NetvmError, Timer, is_root,
                     qemu_binary, rel, run, say, show_tail)

STEPS = ["deps", "qemu", "kernel", "driver", "meson", "image", "pkgdisk"]


def kernel_abi(resolve=True):
    """The guest kernel ABI (e.g. 6.1.0-56-amd64), resolved once from apt's
    linux-image-amd64 and recorded in build/kernel/ABI."""
    if os.path.exists(KERNEL_ABI_FILE):
        with open(KERNEL_ABI_FILE) as f:
            abi = f.read().strip()
        if abi:
            return abi
    if not resolve:
        raise NetvmError("no guest kernel yet: run ./netvm build")

    def query():
        r = subprocess.run(["apt-cache", "depends", "linux-image-amd64"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "Depends:" and parts[1].startswith("linux-image-"):
                return parts[1][len("linux-image-"):]
        return None

    abi = query()
    if not abi and is_root():
        say("apt-get update (to resolve linux-image-amd64)")
        subprocess.call(["apt-get", "update", "-qq"])
        abi = query()
    if not abi:
        raise NetvmError("apt cannot resolve linux-image-amd64: run 'apt-get update' as root "
                         "(and check that the Debian archive is reachable)")
    os.makedirs(KERNEL_DIR, exist_ok=True)
    with open(KERNEL_ABI_FILE, "w") as f:
        f.write(abi + "\n")
    say("guest kernel ABI: %s (recorded in %s)" % (abi, rel(KERNEL_ABI_FILE)))
    return abi


def headers_dir(abi):
    return "/usr/src/linux-headers-" + abi


def step_deps():
    rc = subprocess.call(["sh", os.path.join(REPO, "ci", "install-deps.sh")],
                         stdin=subprocess.DEVNULL)
    if rc != 0:
        raise NetvmError("installing host packages failed (see above); as root: sh ci/install-deps.sh")
    abi = kernel_abi()
    if not os.path.isdir(headers_dir(abi)):
        pkg = "linux-headers-" + abi
        if not is_root():
            raise NetvmError("kernel headers missing: as root run: apt-get install %s" % pkg)
        say("installing %s" % pkg)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        rc = subprocess.call(["apt-get", "install", "-y", "-qq", "--no-install-recommends", pkg],
                             env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        if rc != 0 or not os.path.isdir(headers_dir(abi)):
            raise NetvmError("apt-get install %s failed: is the Debian archive reachable? "
                             "(if that ABI is gone from the archive, remove %s and rebuild)"
                             % (pkg, rel(KERNEL_ABI_FILE)))


def step_qemu():
    script = os.path.join(REPO, "qemu-device", "build-qemu.sh")
    if not os.path.exists(script):
        raise NetvmError("qemu-device/build-qemu.sh is missing")
    rc = subprocess.call(["sh", script], stdin=subprocess.DEVNULL)
    if rc != 0:
        raise NetvmError("building QEMU failed (see above)")
    if not os.access(qemu_binary(), os.X_OK):
        raise NetvmError("QEMU build produced no %s" % rel(qemu_binary()))
    # the ASan/UBSan build the device fuzzer (suite devfuzz) runs against
    rc = subprocess.call(["sh", script, "--asan"], stdin=subprocess.DEVNULL)
    if rc != 0:
        raise NetvmError("building the ASan QEMU failed (see above)")


def step_kernel():
    abi = kernel_abi()
    pkg = "linux-image-" + abi
    debs = sorted(glob.glob(os.path.join(DOWNLOADS, pkg + "_*_amd64.deb")))
    if not debs:
        say("downloading %s" % pkg)
        os.makedirs(DOWNLOADS, exist_ok=True)
        rc = run(["apt-get", "download", pkg], cwd=DOWNLOADS,
                 log=os.path.join(LOGS, "kernel-download.log"))
        debs = sorted(glob.glob(os.path.join(DOWNLOADS, pkg + "_*_amd64.deb")))
        if rc != 0 or not debs:
            raise NetvmError("apt-get download %s failed: is the Debian archive reachable? "
                             "(if that ABI is gone from the archive, remove %s and rebuild)"
                             % (pkg, rel(KERNEL_ABI_FILE)))
    deb = debs[-1]
    stamp = os.path.join(KERNEL_ROOT, ".netvm-deb")
    current = open(stamp).read().strip() if os.path.exists(stamp) else ""
    if current == os.path.basename(deb) and os.path.exists(VMLINUZ):
        return "up to date"
    say("extracting %s" % os.path.basename(deb))
    shutil.rmtree(KERNEL_ROOT, ignore_errors=True)
    os.makedirs(KERNEL_ROOT)
    if subprocess.call(["dpkg-deb", "-x", deb, KERNEL_ROOT]) != 0:
        raise NetvmError("dpkg-deb -x %s failed" % rel(deb))
    # The package has no modules.dep (made at install time): make it here.
    if subprocess.call(["depmod", "-b", KERNEL_ROOT, abi]) != 0:
        raise NetvmError("depmod -b %s %s failed" % (rel(KERNEL_ROOT), abi))
    shutil.copyfile(os.path.join(KERNEL_ROOT, "boot", "vmlinuz-" + abi), VMLINUZ)
    with open(stamp, "w") as f:
        f.write(os.path.basename(deb) + "\n")
    return "vmlinuz %s" % abi


def step_driver():
    if not any(os.path.exists(os.path.join(DRIVER_DIR, f)) for f in ("Makefile", "Kbuild")):
        raise NetvmError("guest-driver/Makefile is missing: the driver cannot be built")
    abi = kernel_abi()
    kdir = headers_dir(abi)
    if not os.path.isdir(kdir):
        raise NetvmError("%s missing: run ./netvm deps" % kdir)
    # every CPU (Kbuild builds one file at a time unless told), and through
    # ccache when there is one, hashed relative to the checkout as QEMU's
    # compiles are (build-qemu.sh), so that CI's fresh clone reuses them
    cmd = ["make", "-C", DRIVER_DIR, "-j%d" % (os.cpu_count() or 1), "KDIR=" + kdir]
    env = None
    if shutil.which("ccache"):
        cmd.append("CC=ccache gcc")
        env = dict(os.environ, CCACHE_BASEDIR=REPO, CCACHE_NOHASHDIR="1")
    rc = run(cmd, log=os.path.join(LOGS, "driver.log"), env=env)
    if rc != 0:
        raise NetvmError("building guest-driver/netvm.ko failed (log: %s)"
                         % rel(os.path.join(LOGS, "driver.log")))
    if not os.path.exists(DRIVER_KO):
        raise NetvmError("make -C guest-driver produced no netvm.ko")


def step_meson():
    log = os.path.join(LOGS, "meson.log")
    if not os.path.exists(os.path.join(MESON_BUILD, "build.ninja")):
        say("meson setup %s" % rel(MESON_BUILD))
        args = ["meson", "setup", MESON_BUILD, REPO]
        if os.path.isdir(MESON_BUILD):
            args.append("--wipe")
        if run(args, log=log) != 0:
            raise NetvmError("meson setup failed (log: %s)" % rel(log))
    if run(["meson", "compile", "-C", MESON_BUILD], log=log, tail=False) != 0:
        with open(log, errors="replace") as f:
            text = f.read()
        if "--wipe" in text or "incompatible" in text:
            # a build dir made by another meson version: start it afresh
            say("meson setup --wipe %s (stale build directory)" % rel(MESON_BUILD))
            if run(["meson", "setup", "--wipe", MESON_BUILD, REPO], log=log) != 0:
                raise NetvmError("meson setup --wipe failed (log: %s)" % rel(log))
            if run(["meson", "compile", "-C", MESON_BUILD], log=log) != 0:
                raise NetvmError("meson compile failed (log: %s)" % rel(log))
        else:
            show_tail(log, 40)
            raise NetvmError("meson compile failed (log: %s)" % rel(log))


def step_image():
    abi = kernel_abi(resolve=False)
    if not os.path.exists(AGENT_BIN):
        raise NetvmError("%s missing (meson build incomplete?)" % rel(AGENT_BIN))
    cmd = [PYTHON, "-B", os.path.join(REPO, "images", "mkimage.py"),
           "--kernel-root", KERNEL_ROOT, "--abi", abi, "--agent", AGENT_BIN,
           "--libs-from", os.path.join(MESON_BUILD, "guest-lib"),
           "--libs-from", os.path.join(MESON_BUILD, "tests", "guest"),
           "--out", INITRAMFS]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise NetvmError("building the guest image failed (see above)")
    return r.stdout.strip().replace("mkimage: ", "")


def step_pkgdisk():
    from . import pkgdisk
    return pkgdisk.step_pkgdisk(kernel_abi(resolve=False))


STEP_FUNCS = {"deps": step_deps, "qemu": step_qemu, "kernel": step_kernel,
              "driver": step_driver, "meson": step_meson, "image": step_image,
              "pkgdisk": step_pkgdisk}


# Steps that mostly wait on the network and the disk, in their order: while
# qemu builds they run in a thread (image needs kernel's modules, pkgdisk
# needs them too; nothing else needs either)
BESIDE_QEMU = ["kernel", "pkgdisk"]


def run_step(name):
    t = Timer()
    say("[%s] ..." % name)
    detail = STEP_FUNCS[name]()
    say("[%s] done in %s%s" % (name, t, (": " + detail) if detail else ""))


class Beside(threading.Thread):
    """BESIDE_QEMU's steps, in order, in a thread; wait(name) returns once
    that step is done and raises its error if it (or one before it) failed."""
    def __init__(self, names):
        super().__init__(name="build-beside", daemon=True)
        self.names = names
        self.done = dict((n, threading.Event()) for n in names)
        self.error = None

    def run(self):
        for name in self.names:
            try:
                if self.error is None:
                    run_step(name)
            except BaseException as e:      # handed to the main thread by wait()
                say("[%s] failed (the build stops when qemu is done): %s" % (name, e))
                self.error = e
            self.done[name].set()

    def wait(self, name):
        self.done[name].wait()
        if self.error is not None:
            raise self.error


def build(skip=()):
    total = Timer()
    beside = None
    for name in STEPS:
        if name in skip:
            say("[%s] skipped" % name)
            continue
        if name == "qemu":
            names = [n for n in BESIDE_QEMU if n not in skip]
            if names:
                beside = Beside(names)
                beside.start()
        if beside and name in beside.names:
            beside.wait(name)
            continue
        run_step(name)
    say("build complete in %s" % total)


def require_built():
    """For commands that boot VMs: one line naming what to do."""
    missing = [p for p in (qemu_binary(), VMLINUZ, INITRAMFS) if not os.path.exists(p)]
    if missing:
        raise NetvmError("%s missing: run ./netvm build first" % rel(missing[0]))


def parse_skip(text):
    """--skip STEP[,STEP] as a set of steps; an unknown step is an error."""
    skip = set(s for s in text.split(",") if s)
    bad = skip - set(STEPS)
    if bad:
        raise NetvmError("unknown build step(s): %s (steps: %s)" % (",".join(sorted(bad)), ",".join(STEPS)))
    return skip


# --- ./netvm deps, ./netvm build -------------------------------------------

def cmd_deps(a, c):
    step_deps()
    say("dependencies are installed")


def add_build_args(sp):
    sp.add_argument("--skip", metavar="STEP[,STEP]", default="",
                    help="skip steps (development only): " + ",".join(STEPS))
    sp.set_defaults(func=lambda a, c: build(parse_skip(a.skip)))


COMMANDS = [
    Command("deps", "install the Debian packages and kernel headers the build needs (as root)",
            lambda sp: sp.set_defaults(func=cmd_deps)),
    Command("build", "build QEMU, the guest kernel and driver, the meson tree and the guest image",
            add_build_args),
]

__all__ = ["build", "STEPS", "step_deps", "step_driver", "kernel_abi", "require_built",
           "BUILD", "IMAGE_DIR", "COMMANDS"]
