"""The guests' package disk (docs/packages.md): Debian packages, unmodified,
on a read-only squashfs image that every node gets as a virtio-blk drive.

    ./netvm build   (step "pkgdisk")   -> build/pkgdisk/pkgs.squashfs

images/packages.list names the packages; apt resolves their dependencies
as on an empty system (a private, empty dpkg status), downloads them with
the machine's configured sources into build/downloads/pkgs/, and they are
unpacked with dpkg-deb -x into build/pkgdisk/tree.  What their maintainer
scripts would set up and the programs need is done here: the alternatives
(update-alternatives --install lines of the postinst scripts: mpirun,
libblas.so.3, ...), the ld.so cache (ldconfig -r), and the kernel modules
that RDMA over Ethernet needs (rdma_rxe and its dependencies, from the
guest kernel's package, with depmod's index) so that modprobe finds them.
The tree takes the initramfs's layout (/usr/lib is a link to /lib) because
the guest lays it over its own root (images/netvm-pkgs).

Quick when nothing changed: a key over the list, this file, the kernel
and apt's package lists decides whether to resolve again, and the
resolved set (name=version) whether to rebuild the image.
"""
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess

from .common import (BUILD, DOWNLOADS, KERNEL_ROOT, LOGS, REPO, NetvmError, rel, run, say)

PKG_LIST = os.path.join(REPO, "images", "packages.list")
PKGDISK_DIR = os.path.join(BUILD, "pkgdisk")
PKGDISK = os.path.join(PKGDISK_DIR, "pkgs.squashfs")
DEB_DIR = os.path.join(DOWNLOADS, "pkgs")
TREE = os.path.join(PKGDISK_DIR, "tree")
KEY_FILE = PKGDISK + ".key"
RESOLVED_FILE = PKGDISK + ".packages"
APT_LISTS = "/var/lib/apt/lists"
# Kernel modules the package disk carries (with their dependencies) for
# soft RoCE: rdma_rxe on the data NIC, the verbs and RDMA CM user interfaces.
# crc32_generic: rxe asks the crypto API for "crc32" (the kernel loads it by
# its alias crypto-crc32; it is in no modules.dep line).
RDMA_MODULES = ["rdma_rxe", "crc32_generic", "ib_uverbs", "rdma_ucm", "ib_umad"]
# The serial number the drive has in every guest (images/netvm-pkgs finds
# the disk by it in /sys/block/*/serial).
SERIAL = "netvm-pkgs"


def wanted_packages():
    with open(PKG_LIST) as f:
        names = [l.split("#")[0].strip() for l in f]
    return [n for n in names if n]


def recipe():
    """A hash of this file: how the tree is made."""
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def cache_key(abi):
    h = hashlib.sha256()
    with open(PKG_LIST, "rb") as f:
        h.update(f.read())
    h.update(recipe().encode())
    h.update(abi.encode())
    stamp = os.path.join(KERNEL_ROOT, ".netvm-deb")
    if os.path.exists(stamp):
        with open(stamp, "rb") as f:
            h.update(f.read())
    for p in sorted(glob.glob(os.path.join(APT_LISTS, "*_Packages*"))):
        st = os.stat(p)
        h.update(("%s %d %d\n" % (p, st.st_size, st.st_mtime_ns)).encode())
    return h.hexdigest()


def resolve(pkgs):
    """[(name, version)] of pkgs and their dependencies, as apt would
    install them on a system with no package installed."""
    state = os.path.join(PKGDISK_DIR, "apt-state")
    os.makedirs(state, exist_ok=True)
    status = os.path.join(state, "status")
    open(status, "w").close()
    cmd = ["apt-get", "-s", "-q", "install", "--no-install-recommends",
           "-o", "Dir::State::status=" + status,
           "-o", "Dir::State::extended_states=" + os.path.join(state, "extended_states"),
           "-o", "Dir::Cache::pkgcache=", "-o", "Dir::Cache::srcpkgcache=",
           "-o", "Debug::NoLocking=1"] + pkgs
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        tail = "\n".join(r.stdout.strip().splitlines()[-8:])
        raise NetvmError("apt cannot resolve the package disk's packages (%s):\n%s\n"
                         "(is the Debian archive reachable?  run 'apt-get update' as root)"
                         % (rel(PKG_LIST), tail))
    out = []
    for line in r.stdout.splitlines():
        m = re.match(r"^Inst (\S+) \((\S+) ", line)
        if m:
            out.append((m.group(1), m.group(2)))
    if not out:
        raise NetvmError("apt resolved no packages from %s" % rel(PKG_LIST))
    return sorted(out)


def deb_file(name, version):
    """The file apt-get download writes (':' of an epoch as %3a)."""
    hits = glob.glob(os.path.join(DEB_DIR, "%s_%s_*.deb" % (name, version.replace(":", "%3a"))))
    return hits[0] if hits else None


def download(resolved):
    missing = ["%s=%s" % nv for nv in resolved if not deb_file(*nv)]
    if missing:
        say("downloading %d package%s into %s" % (len(missing), "s" if len(missing) > 1 else "",
                                                 rel(DEB_DIR)))
        os.makedirs(DEB_DIR, exist_ok=True)
        log = os.path.join(LOGS, "pkgdisk-download.log")
        if run(["apt-get", "download"] + missing, cwd=DEB_DIR, log=log) != 0:
            raise NetvmError("apt-get download failed (log: %s): is the Debian archive "
                             "reachable?" % rel(log))
    debs = [deb_file(*nv) for nv in resolved]
    lost = [nv[0] for nv, d in zip(resolved, debs) if not d]
    if lost:
        raise NetvmError("apt-get download left out: %s" % " ".join(lost))
    return debs


# --- the tree --------------------------------------------------------------

def merge_into(src, dst):
    """Moves the contents of directory src into dst (both real
    directories), as a merged-/usr system would have them."""
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if os.path.isdir(s) and not os.path.islink(s) and os.path.isdir(d) and not os.path.islink(d):
            merge_into(s, d)
        elif os.path.lexists(d):
            raise NetvmError("package disk: %s and %s both exist" % (s, d))
        else:
            os.rename(s, d)
    os.rmdir(src)


def alternatives(deb):
    """(link, name, path, priority, [(slave link, name, path)]) of every
    update-alternatives --install in the package's postinst."""
    r = subprocess.run(["dpkg-deb", "-I", deb, "postinst"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    if r.returncode != 0:
        return []
    text = r.stdout.replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        if "update-alternatives" not in line or "--install" not in line:
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        if "--install" not in words:
            continue
        i = words.index("--install")
        link, name, path, prio = words[i + 1:i + 5]
        if "$" in link + name + path + prio:
            continue  # computed by the script: not for us
        slaves = []
        j = i + 5
        while j + 3 < len(words) and words[j] == "--slave":
            slaves.append((words[j + 1], words[j + 2], words[j + 3]))
            j += 4
        out.append((link, name, path, int(prio), slaves))
    return out


def tree_path(p):
    """Where absolute guest path p is in the tree (after /usr/lib -> /lib)."""
    p = p.lstrip("/")
    if p.startswith("usr/lib/"):
        p = p[len("usr/"):]
    return os.path.join(TREE, p)


def set_alternatives(debs):
    """The links update-alternatives would make, highest priority first
    (a slave only if its target exists, as update-alternatives does)."""
    best = {}
    for deb in debs:
        for link, name, path, prio, slaves in alternatives(deb):
            if not os.path.lexists(tree_path(path)):
                continue
            if name not in best or prio > best[name][2]:
                best[name] = (link, path, prio, slaves)
    made = []
    for name, (link, path, prio, slaves) in sorted(best.items()):
        for lk, nm, target in [(link, name, path)] + slaves:
            if not os.path.lexists(tree_path(target)):
                continue
            alt = "/etc/alternatives/" + nm
            os.makedirs(os.path.dirname(tree_path(alt)), exist_ok=True)
            for p in (tree_path(alt), tree_path(lk)):
                if os.path.lexists(p):
                    os.unlink(p)
            os.symlink(target, tree_path(alt))
            os.makedirs(os.path.dirname(tree_path(lk)), exist_ok=True)
            os.symlink(alt, tree_path(lk))
        made.append("%s=%s" % (name, path))
    return made


def add_modules(abi):
    """rdma_rxe and friends, with their dependencies, from the guest
    kernel's package, and modules.dep for them (depmod -b)."""
    src = os.path.join(KERNEL_ROOT, "lib", "modules", abi)
    deps = {}
    with open(os.path.join(src, "modules.dep")) as f:
        for line in f:
            mod, _, rest = line.partition(":")
            deps[mod] = rest.split()
    byname = {re.sub(r"\.ko(\.\w+)?$", "", os.path.basename(m)).replace("-", "_"): m
              for m in deps}
    want = set()
    for name in RDMA_MODULES:
        if name not in byname:
            raise NetvmError("kernel module %s not in %s" % (name, rel(src)))
        want.add(byname[name])
        want.update(deps[byname[name]])
    dst = os.path.join(TREE, "lib", "modules", abi)
    for m in sorted(want):
        os.makedirs(os.path.dirname(os.path.join(dst, m)), exist_ok=True)
        shutil.copyfile(os.path.join(src, m), os.path.join(dst, m))
    for f in ("modules.builtin", "modules.builtin.modinfo", "modules.order"):
        if os.path.exists(os.path.join(src, f)):
            shutil.copyfile(os.path.join(src, f), os.path.join(dst, f))
    if subprocess.call(["depmod", "-b", TREE, abi]) != 0:
        raise NetvmError("depmod -b %s %s failed" % (rel(TREE), abi))
    return len(want)


def make_tree(debs, abi):
    shutil.rmtree(TREE, ignore_errors=True)
    os.makedirs(TREE)
    for deb in debs:
        if subprocess.call(["dpkg-deb", "-x", deb, TREE]) != 0:
            raise NetvmError("dpkg-deb -x %s failed" % rel(deb))
    # the guest's /usr/lib is a link to /lib (images/mkimage.py)
    if os.path.isdir(os.path.join(TREE, "usr", "lib")):
        merge_into(os.path.join(TREE, "usr", "lib"), os.path.join(TREE, "lib"))
    os.symlink("../lib", os.path.join(TREE, "usr", "lib"))
    alts = set_alternatives(debs)
    nmods = add_modules(abi)
    # ldconfig's trigger: the cache over the tree's own ld.so.conf
    conf = os.path.join(TREE, "etc", "ld.so.conf")
    if not os.path.exists(conf):
        with open(conf, "w") as f:
            f.write("include /etc/ld.so.conf.d/*.conf\n")
    if subprocess.call(["ldconfig", "-r", TREE]) != 0:
        raise NetvmError("ldconfig -r %s failed" % rel(TREE))
    return alts, nmods


def make_image():
    tmp = PKGDISK + ".tmp"
    if os.path.exists(tmp):
        os.unlink(tmp)
    log = os.path.join(LOGS, "pkgdisk-mksquashfs.log")
    # zstd at a low level: quick to make, quick for a TCG guest to read
    if run(["mksquashfs", TREE, tmp, "-noappend", "-all-root", "-no-progress",
            "-comp", "zstd", "-Xcompression-level", "3"], log=log) != 0:
        raise NetvmError("mksquashfs failed (log: %s; is squashfs-tools installed? "
                         "sh ci/install-deps.sh)" % rel(log))
    os.replace(tmp, PKGDISK)


def step_pkgdisk(abi):
    key = cache_key(abi)
    if os.path.exists(PKGDISK) and os.path.exists(KEY_FILE):
        with open(KEY_FILE) as f:
            if f.read().strip() == key:
                return "up to date"
    resolved = resolve(wanted_packages())
    listing = "".join("%s=%s\n" % nv for nv in resolved) + "abi=%s\nrecipe=%s\n" % (abi, recipe())
    old = None
    if os.path.exists(RESOLVED_FILE):
        with open(RESOLVED_FILE) as f:
            old = f.read()
    if old == listing and os.path.exists(PKGDISK):
        detail = "up to date (%d packages)" % len(resolved)
    else:
        debs = download(resolved)
        say("unpacking %d packages into %s" % (len(debs), rel(TREE)))
        alts, nmods = make_tree(debs, abi)
        make_image()
        with open(RESOLVED_FILE, "w") as f:
            f.write(listing)
        detail = "%s: %d packages, %d kernel modules, alternatives %s, %d MiB" % (
            rel(PKGDISK), len(resolved), nmods, " ".join(alts),
            os.path.getsize(PKGDISK) >> 20)
    with open(KEY_FILE, "w") as f:
        f.write(key + "\n")
    return detail


def drive_args():
    """QEMU arguments attaching the package disk read-only (none if it was
    not built).  One file for every node: read-only, so shared locks."""
    if not os.path.exists(PKGDISK):
        return []
    return ["-drive", "file=%s,if=none,id=pkgs,format=raw,readonly=on" % PKGDISK,
            "-device", "virtio-blk-pci,drive=pkgs,serial=%s,romfile=" % SERIAL]


def signature():
    """What identifies the disk a boot template saw (fastboot.py)."""
    try:
        st = os.stat(PKGDISK)
    except OSError:
        return [PKGDISK, None]
    return [PKGDISK, st.st_size, st.st_mtime_ns]
