#!/bin/sh
# Lint gate: netvm.ko builds warning-free (W=1, warnings are errors) against
# Debian's 6.1 headers (the guest's kernel) and against the newest
# linux-headers-6.12.*+deb12-amd64, unpacked by ci/fetch-kheaders.sh into
# build/kheaders.  Each build happens in a copy of guest-driver/ under
# build/driver-build/, so the guest's netvm.ko is left alone.
set -eu
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
which="$1"
case "$which" in
6.1) kdir="$(ls -d /usr/src/linux-headers-6.1.*-amd64 2>/dev/null | sort -V | tail -n 1)" ;;
6.12) kdir="$(sh "$REPO/ci/fetch-kheaders.sh" "$REPO/build/kheaders")" ;;
*) echo "usage: build-kernels.sh 6.1|6.12" >&2; exit 2 ;;
esac
[ -n "$kdir" ] && [ -f "$kdir/Makefile" ] || { echo "no $which headers" >&2; exit 1; }
out="$REPO/build/driver-build/$which"
rm -rf "$out"
mkdir -p "$out"
cp "$REPO"/guest-driver/*.c "$REPO"/guest-driver/*.h "$REPO"/guest-driver/Kbuild \
	"$REPO"/guest-driver/Makefile "$out/"
# through ccache when there is one: most runs build the same sources, and
# ccache replays a cached compile's warnings, which is what this checks
ccache=""
command -v ccache >/dev/null 2>&1 && ccache=yes
# BTF needs pahole and is not what this checks
if ! make -C "$out" KDIR="$kdir" ${ccache:+"CC=ccache gcc"} W=1 NETVM_INCLUDE="$REPO/include" \
	KCFLAGS=-Werror CONFIG_DEBUG_INFO_BTF_MODULES= >"$out/build.log" 2>&1; then
	cat "$out/build.log"
	echo "netvm.ko does not build against $kdir" >&2
	exit 1
fi
if grep -q "warning:" "$out/build.log"; then
	grep "warning:" "$out/build.log"
	exit 1
fi
echo "netvm.ko builds warning-free against $(basename "$kdir")"
