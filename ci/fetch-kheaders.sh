#!/bin/sh
# Unpack the newest Debian linux-headers-6.12.*+deb12-amd64 (bookworm
# security / backports) into DEST (default build/kheaders), without
# installing it: the package depends on its kernel image, which a build
# host does not need.  apt-get download works as any user; the three
# packages (headers, common headers, kbuild) are unpacked side by side so
# their relative symlinks hold, and the one absolute include in the
# headers' Makefile is pointed at the unpacked common tree.
#
#   sh ci/fetch-kheaders.sh [DEST]      prints the KDIR to build against
#
# Quick when already unpacked.  Used by ci/install-deps.sh and the lint
# test driver-6.12 (tests/lint/build-kernels.sh).
set -eu
DEST="${1:-$(dirname "$0")/../build/kheaders}"
mkdir -p "$DEST"
DEST="$(cd "$DEST" && pwd)"

have="$(ls -d "$DEST"/usr/src/linux-headers-6.12.*-amd64 2>/dev/null | sort -V | tail -n 1)"
if [ -n "$have" ] && [ -f "$have/.netvm-ok" ]; then
	echo "$have"
	exit 0
fi

pkg="$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' | awk '{print $1}' | sort -V | tail -n 1)"
if [ -z "$pkg" ]; then
	echo "netvm: no linux-headers-6.12.*+deb12-amd64 in apt (is bookworm-security or bookworm-backports in the sources? run ci/install-deps.sh as root)" >&2
	exit 1
fi
ver="${pkg#linux-headers-}"
ver="${ver%-amd64}"			# 6.12.117+deb12
dl="$DEST/debs"
mkdir -p "$dl"
(cd "$dl" && apt-get download -qq "$pkg" "linux-headers-$ver-common" "linux-kbuild-$ver" >/dev/null 2>"$DEST/apt.log") || {
	cat "$DEST/apt.log" >&2
	echo "netvm: apt-get download of $pkg failed (network? apt-get update?)" >&2
	exit 1
}
for d in "$dl"/*.deb; do
	dpkg-deb -x "$d" "$DEST"
done
kdir="$DEST/usr/src/$pkg"
sed -i "s|^include /usr/src/|include $DEST/usr/src/|" "$kdir/Makefile"
rm -rf "$dl"
touch "$kdir/.netvm-ok"
echo "$kdir"
