#!/usr/bin/python3
"""Build the netvm guest initramfs (a gzipped newc cpio archive).

    images/mkimage.py --kernel-root build/kernel/root --abi ABI \
        --agent build/meson/images/netvm-agent --out build/image/initramfs.cpio.gz \
        [--libs-from DIR ...] [--force]

Contents:
  /init                       images/init
  /bin/busybox + applet links busybox-static from the host
  /bin/netvm-agent            the guest agent (static)
  /bin/netvm-pkgs             images/netvm-pkgs: mounts the package disk
  /lib/modules/NAME.ko        kernel modules for virtio-net and the 9p share,
                              decompressed; load order in /etc/netvm/modules
  /lib64/ld-linux-x86-64.so.2, /lib/x86_64-linux-gnu/*.so*
                              the host's glibc pieces that the guest programs
                              (run from the 9p share) need, found with ldd
  /dev/console, /dev/null     so that /init has stdio before devtmpfs

The archive is rewritten only when an input changed: a signature of every
input (path, size, mtime) is kept next to it (OUT.inputs).  Stdlib only.
"""
import argparse
import gzip
import hashlib
import io
import json
import lzma
import os
import stat
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Modules the guest needs, by name; their dependencies are added from
# modules.dep.  Built-in ones (modules.builtin) are skipped.
WANTED_MODULES = [
    "virtio_pci",       # virtio transport
    "virtio_net",       # control NIC for the agent
    "9pnet_virtio",     # 9p transport
    "9p",               # the host share at /netvm
    "zram",             # swap in RAM: the driver tests page exports out
    "virtio_blk",       # the package disk (docs/packages.md) ...
    "squashfs",         # ... its file system ...
    "overlay",          # ... laid over the root by /bin/netvm-pkgs
]
# Always copied: programs built on the host may need them.
BASE_LIBS = [
    "/lib64/ld-linux-x86-64.so.2",
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/lib/x86_64-linux-gnu/libm.so.6",
    "/lib/x86_64-linux-gnu/libpthread.so.0",
    "/lib/x86_64-linux-gnu/libdl.so.2",
    "/lib/x86_64-linux-gnu/librt.so.1",
    "/lib/x86_64-linux-gnu/libgcc_s.so.1",
]


def die(msg):
    print("mkimage: error: " + msg, file=sys.stderr)
    sys.exit(1)


class Cpio:
    """Minimal newc writer."""

    def __init__(self):
        self.buf = io.BytesIO()
        self.ino = 1
        self.names = set()

    def _entry(self, name, mode, data=b"", rdev=(0, 0)):
        if name in self.names:
            return
        self.names.add(name)
        nb = name.encode() + b"\0"
        hdr = "070701" + "".join("%08x" % v for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0,
            rdev[0], rdev[1], len(nb), 0))
        self.ino += 1
        self.buf.write(hdr.encode() + nb)
        self.buf.write(b"\0" * (-(110 + len(nb)) % 4))
        self.buf.write(data)
        self.buf.write(b"\0" * (-len(data) % 4))

    def dir(self, name, mode=0o755):
        parts = name.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            self._entry("/".join(parts[:i]), stat.S_IFDIR | mode)

    def file(self, name, data, mode=0o644):
        name = name.strip("/")
        if "/" in name:
            self.dir(os.path.dirname(name))
        self._entry(name, stat.S_IFREG | mode, data)

    def symlink(self, name, target):
        name = name.strip("/")
        if "/" in name:
            self.dir(os.path.dirname(name))
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def chardev(self, name, major, minor, mode=0o600):
        self._entry(name.strip("/"), stat.S_IFCHR | mode, rdev=(major, minor))

    def finish(self):
        self._entry("TRAILER!!!", 0)
        return self.buf.getvalue()


def read_module(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".xz"):
        return lzma.decompress(data)
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", path], check=True,
                              stdout=subprocess.PIPE).stdout
    if path.endswith(".gz"):
        return gzip.decompress(data)
    return data


def modname(relpath):
    base = os.path.basename(relpath)
    for ext in (".xz", ".zst", ".gz"):
        if base.endswith(ext):
            base = base[:-len(ext)]
    return base[:-3] if base.endswith(".ko") else base


def module_order(moddir):
    """Module files to load, dependencies first."""
    depfile = os.path.join(moddir, "modules.dep")
    if not os.path.exists(depfile):
        die(depfile + " missing (run depmod -b on the kernel tree)")
    deps, byname = {}, {}
    with open(depfile) as f:
        for line in f:
            mod, _, rest = line.partition(":")
            deps[mod] = rest.split()
            byname[modname(mod).replace("-", "_")] = mod
    builtin = set()
    bfile = os.path.join(moddir, "modules.builtin")
    if os.path.exists(bfile):
        with open(bfile) as f:
            builtin = {modname(l.strip()).replace("-", "_") for l in f}
    order = []

    def visit(mod):
        if mod in order:
            return
        # modules.dep lists the transitive closure; modprobe loads it
        # from the end, but recursing keeps us right whatever its order.
        for d in reversed(deps.get(mod, [])):
            visit(d)
        order.append(mod)

    for name in WANTED_MODULES:
        if name in builtin:
            continue
        if name not in byname:
            die("kernel module %s not found in %s" % (name, moddir))
        visit(byname[name])
    return order


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def needed_libs(dirs):
    """Shared libraries (outside the dirs themselves) that ELF files need."""
    libs = set(p for p in BASE_LIBS if os.path.exists(p))
    for d in dirs:
        if not os.path.isdir(d):
            continue
        for root, subdirs, files in os.walk(d):
            subdirs[:] = [s for s in subdirs if not s.endswith(".p")]
            for fn in files:
                p = os.path.join(root, fn)
                if not os.path.isfile(p) or not is_elf(p):
                    continue
                if not (os.access(p, os.X_OK) or ".so" in fn):
                    continue
                r = subprocess.run(["ldd", p], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True)
                for line in r.stdout.splitlines():
                    parts = line.split()
                    # "libx.so => /path (0x...)" or "/lib64/ld-linux... (0x..)"
                    cand = parts[2] if "=>" in parts and len(parts) > 2 else parts[0] if parts else ""
                    if cand.startswith("/") and not any(
                            cand.startswith(os.path.abspath(x) + "/") for x in dirs):
                        libs.add(cand)
    return sorted(libs)


def lib_dest(path):
    """Where a host library goes in the image."""
    base = os.path.basename(path)
    if base.startswith("ld-linux"):
        return "lib64/" + base
    return "lib/x86_64-linux-gnu/" + base


def signature(files, extra):
    h = hashlib.sha256()
    h.update(json.dumps(extra, sort_keys=True).encode())
    for p in sorted(set(files)):
        st = os.stat(p)
        h.update(("%s %d %d\n" % (p, st.st_size, st.st_mtime_ns)).encode())
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description="build the netvm guest initramfs")
    ap.add_argument("--kernel-root", required=True,
                    help="extracted linux-image package (has lib/modules/ABI)")
    ap.add_argument("--abi", required=True, help="kernel ABI, e.g. 6.1.0-56-amd64")
    ap.add_argument("--agent", required=True, help="netvm-agent binary")
    ap.add_argument("--busybox", default="/bin/busybox")
    ap.add_argument("--init", default=os.path.join(HERE, "init"))
    ap.add_argument("--pkgs-helper", default=os.path.join(HERE, "netvm-pkgs"))
    ap.add_argument("--libs-from", action="append", default=[],
                    help="directory of guest programs whose libraries to copy")
    ap.add_argument("--out", required=True)
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args()

    moddir = os.path.join(a.kernel_root, "lib", "modules", a.abi)
    for p, what in ((a.agent, "guest agent"), (a.busybox, "busybox-static"),
                    (a.init, "init script"), (a.pkgs_helper, "netvm-pkgs script"),
                    (moddir, "kernel modules")):
        if not os.path.exists(p):
            die("%s missing: %s" % (what, p))
    mods = module_order(moddir)
    libs = needed_libs(a.libs_from)
    modfiles = [os.path.join(moddir, m) for m in mods]
    inputs = [a.agent, a.busybox, a.init, a.pkgs_helper, os.path.abspath(__file__)] + modfiles + \
        [os.path.realpath(l) for l in libs]
    sig = signature(inputs, {"abi": a.abi, "mods": mods, "libs": libs})
    sigfile = a.out + ".inputs"
    if not a.force and os.path.exists(a.out) and os.path.exists(sigfile):
        with open(sigfile) as f:
            if f.read().strip() == sig:
                print("mkimage: %s up to date" % a.out)
                return

    c = Cpio()
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "etc/netvm", "proc", "sys",
              "dev", "tmp", "run", "root", "netvm", "lib/modules",
              "lib/x86_64-linux-gnu", "lib64", "var/log"):
        c.dir(d)
    c.symlink("usr/lib", "../lib")
    c.chardev("dev/console", 5, 1)
    c.chardev("dev/null", 1, 3, 0o666)
    with open(a.init, "rb") as f:
        c.file("init", f.read(), 0o755)
    with open(a.busybox, "rb") as f:
        c.file("bin/busybox", f.read(), 0o755)
    applets = subprocess.run([a.busybox, "--list-full"], check=True,
                             stdout=subprocess.PIPE, text=True).stdout.split()
    for app in applets:
        if app in ("bin/busybox", "linuxrc"):
            continue
        depth = app.count("/")
        c.symlink(app, "../" * depth + "bin/busybox")
    with open(a.agent, "rb") as f:
        c.file("bin/netvm-agent", f.read(), 0o755)
    with open(a.pkgs_helper, "rb") as f:
        c.file("bin/netvm-pkgs", f.read(), 0o755)
    names = []
    for m, path in zip(mods, modfiles):
        n = modname(m)
        c.file("lib/modules/%s.ko" % n, read_module(path))
        names.append(n)
    c.file("etc/netvm/modules", ("\n".join(names) + "\n").encode())
    for lib in libs:
        with open(lib, "rb") as f:
            c.file(lib_dest(lib), f.read(), 0o755)
    c.file("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")
    c.file("etc/group", b"root:x:0:\n")

    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = a.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(gzip.compress(c.finish(), compresslevel=6, mtime=0))
    os.replace(tmp, a.out)
    with open(sigfile, "w") as f:
        f.write(sig + "\n")
    print("mkimage: wrote %s (%d KiB; %d modules, %d libraries)" % (
        a.out, os.path.getsize(a.out) // 1024, len(names), len(libs)))


if __name__ == "__main__":
    main()
