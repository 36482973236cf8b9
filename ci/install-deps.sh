#!/bin/sh
# Install (as root) or list (otherwise) the Debian packages netvm needs.
# Idempotent: quick when everything is already present.
set -eu

# Host packages, by role.  Keep in step with docs/build.md.
PKGS_BUILD="build-essential pkg-config ninja-build ccache dpkg-dev xz-utils zstd cpio git python3"
PKGS_QEMU="libglib2.0-dev libpixman-1-dev libfdt-dev libslirp-dev libattr1-dev libcap-ng-dev zlib1g-dev python3-venv"
PKGS_BACKPORTS="meson python3-pycotap"
PKGS_GUEST="busybox-static seabios qemu-system-data kmod squashfs-tools"
PKGS_TEST="check tshark clang libclang-rt-14-dev iproute2 libfabric-dev"	# iproute2: guest-multihost's namespaces; libfabric-dev: the netvm provider (docs/libfabric.md)
PKGS_BENCH="gnuplot-nox"	# ./netvm bench draws its PNG plots with it
PKGS_LIBVIRT="libvirt-daemon-system libvirt-clients openssh-server"	# ./netvm up --libvirt, guest-libvirt; openssh-server: guest-libvirt-ssh's "remote host"

want_missing() {
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || echo "$p"
	done
}

# What netvm adds to apt (deb-src, backports) is derived from the
# machine's own sources by apt-sources.py: same archive, same key, only
# what is missing.
SRC=/etc/apt/sources.list.d/netvm.sources
want_src="$(/usr/bin/python3 "$(dirname "$0")/apt-sources.py")" || exit 1
need_sources=0
[ "$want_src" = "$(cat "$SRC" 2>/dev/null || true)" ] || need_sources=1

ABI_HDR=""
missing="$(want_missing $PKGS_BUILD $PKGS_QEMU $PKGS_GUEST $PKGS_TEST $PKGS_BENCH $PKGS_LIBVIRT | tr '\n' ' ')"
meson_ok=0
if command -v meson >/dev/null 2>&1; then
	v="$(meson --version)"
	case "$v" in 0.*|1.[0-4].*) ;; *) meson_ok=1 ;; esac
fi
pycotap_ok=0
dpkg-query -W -f='${Status}\n' python3-pycotap 2>/dev/null | grep -q 'ok installed' && pycotap_ok=1

# The 6.12 kernel headers (linux-headers-6.12.*+deb12-amd64) for the lint
# test build-kernel-6.12: unpacked into build/kheaders, not installed (the
# package would pull in its kernel image).  Quick when already there.
if [ $need_sources = 0 ]; then
	sh "$(dirname "$0")/fetch-kheaders.sh" >/dev/null ||
		echo "netvm: the 6.12 headers were not fetched; the lint test build-kernel-6.12 will try again" >&2
fi

if [ -z "$missing" ] && [ $meson_ok = 1 ] && [ $pycotap_ok = 1 ] && [ $need_sources = 0 ]; then
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "netvm: missing packages: $missing meson(>=1.5) python3-pycotap" >&2
	echo "netvm: as root, run: sh ci/install-deps.sh   (adds the deb-src and backports it lacks, then:)" >&2
	echo "  apt-get install -y $missing && apt-get install -y -t bookworm-backports $PKGS_BACKPORTS" >&2
	exit 1
fi

if [ $need_sources = 1 ]; then
	echo "netvm: adding to apt ($SRC), from this machine's own sources:" \
		"$(printf '%s\n' "$want_src" | sed -n 's/^Types: \(.*\)/\1/p;s/^Suites: \(.*\)/for \1;/p' | tr '\n' ' ')"
	rc=0
	/usr/bin/python3 "$(dirname "$0")/apt-sources.py" --write "$SRC" || rc=$?
	[ $rc = 0 ] || [ $rc = 3 ] || exit 1
fi
echo "netvm: apt-get update"
apt-get update -qq || { echo "netvm: apt-get update failed: is the Debian archive reachable?" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
if [ -n "$missing" ]; then
	echo "netvm: installing $missing"
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
echo "netvm: installing from bookworm-backports: $PKGS_BACKPORTS"
apt-get install -y -qq --no-install-recommends -t bookworm-backports $PKGS_BACKPORTS >/dev/null

# after a first run that added the sources: the 6.12 headers as above
sh "$(dirname "$0")/fetch-kheaders.sh" >/dev/null ||
	echo "netvm: the 6.12 headers were not fetched; the lint test build-kernel-6.12 will try again" >&2
