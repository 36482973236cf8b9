#!/bin/sh
# Build qemu-system-x86_64 with the LANai device, from Debian's QEMU source.
#
#   qemu-device/build-qemu.sh [--asan] [--force-configure]
#
# --asan: a second build, for the device fuzzer (tests/devfuzz), in
# build/qemu-asan: AddressSanitizer and UBSan, x86_64 with KVM only (the
# fuzzer and the qtests run QEMU under the qtest accelerator; no TCG to
# compile), and no device but the pc machine's and lanai
# (qemu-device/asan-devices.mak).  Same source tree, own object dir,
# through ccache too.
#
# 1. fetch Debian's QEMU orig tarball (bookworm-backports) into
#    build/downloads and check its SHA-256 against apt's Sources index;
# 2. unpack it into build/qemu-src (once per tarball);
# 3. overlay: symlink qemu-device/ as hw/misc/lanai and our qtest into
#    tests/qtest, plus five one-line edits to QEMU's own build files
#    and one to net/stream.c (a non-blocking accepted socket);
# 4. configure build/qemu for x86_64-softmmu only (once, or when the
#    configure line changes) and build the emulator and our qtest.
# Editing a file in qemu-device/ then rebuilds one object and relinks.
set -eu

ASAN=
FORCE=
for arg in "$@"; do
	case "$arg" in
	--asan) ASAN=1 ;;
	--force-configure) FORCE=1 ;;
	*) echo "build-qemu: unknown option $arg" >&2; exit 2 ;;
	esac
done

REPO="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$REPO/build"
DL="$BUILD/downloads"
SRC="$BUILD/qemu-src"
OBJ="$BUILD/qemu${ASAN:+-asan}"
QEMU_SERIES="10.0"		# upstream series we build against

say() { echo "build-qemu: $*"; }
die() { echo "build-qemu: error: $*" >&2; exit 1; }

mkdir -p "$DL"

# --- 1. fetch -----------------------------------------------------------
expected_sum() {
	# "<sha256> <file>" for the newest qemu $QEMU_SERIES orig tarball apt knows
	apt-cache showsrc qemu 2>/dev/null | awk -v s="qemu_$QEMU_SERIES" '
		/^Checksums-Sha256:/ { f = 1; next }
		/^[^ ]/ { f = 0 }
		f && index($3, s) == 1 && $3 ~ /orig\.tar/ { print $1, $3 }' | sort -k2 -V | tail -n 1
}
line="$(expected_sum)"
[ -n "$line" ] || die "apt knows no qemu $QEMU_SERIES source: run 'sh ci/install-deps.sh' as root (adds deb-src and bookworm-backports)"
sum="${line%% *}"
tarball="${line#* }"
if [ ! -f "$DL/$tarball" ]; then
	say "fetching Debian's QEMU source ($tarball)"
	(cd "$DL" && apt-get source -qq --download-only --tar-only qemu/bookworm-backports >/dev/null 2>&1) ||
		die "apt-get source qemu/bookworm-backports failed: is the Debian archive reachable?"
fi
if [ ! -f "$DL/$tarball.ok" ]; then
	echo "$sum  $DL/$tarball" | sha256sum -c --quiet - ||
		{ rm -f "$DL/$tarball"; die "$tarball: checksum mismatch, removed; run again"; }
	touch "$DL/$tarball.ok"
fi

# --- 2. unpack ----------------------------------------------------------
if [ "$(cat "$SRC/.netvm-tarball" 2>/dev/null || true)" != "$tarball" ]; then
	say "unpacking $tarball"
	rm -rf "$SRC" "$OBJ"
	mkdir -p "$SRC"
	tar -xJf "$DL/$tarball" -C "$SRC" --strip-components=1
	echo "$tarball" > "$SRC/.netvm-tarball"
fi

# --- 3. overlay ---------------------------------------------------------
# Each edit is one line, applied only if absent, so re-running is harmless.
append_once() { # file line
	grep -qxF "$2" "$1" || printf '%s\n' "$2" >> "$1"
}
ln -sfn "$REPO/qemu-device" "$SRC/hw/misc/lanai"
ln -sfn "$REPO/tests/qtest/lanai-test.c" "$SRC/tests/qtest/lanai-test.c"
append_once "$SRC/hw/misc/meson.build" "subdir('lanai')  # netvm"
append_once "$SRC/hw/misc/Kconfig" "source lanai/Kconfig"
grep -q "'hw/misc/lanai'," "$SRC/meson.build" ||
	sed -i "s|^    'hw/misc',\$|    'hw/misc',\n    'hw/misc/lanai',  # netvm|" "$SRC/meson.build"
# The +ds tarball ships no edk2 blobs; Debian's seabios and
# qemu-system-data provide firmware at run time (-L).
sed -i 's/^    unpack_edk2_blobs = bzip2.found()$/    unpack_edk2_blobs = false  # netvm/' "$SRC/meson.build"
# net/stream.c leaves the socket it accepts (server=on) blocking: when the
# peer stops reading, sendmsg() blocks QEMU's main loop and the whole VM
# freezes.  Non-blocking, the net layer queues the frame and the NIC sees
# back-pressure, as on the client side.
grep -q 'netvm: non-blocking' "$SRC/net/stream.c" ||
	sed -i 's|^    s->ioc = QIO_CHANNEL(cioc);$|&\n    qio_channel_set_blocking(s->ioc, false, NULL); /* netvm: non-blocking */|' \
		"$SRC/net/stream.c"
# net/stream.c reads the link from a glib watch.  glib blocks a source that
# cannot recurse while it dispatches it: it takes the socket out of the
# poll set and puts it back, and each of those signals the main context's
# wakeup eventfd, so every frame cost the main loop two eventfd writes and
# one more iteration (a poll of every descriptor, the eventfd read) before
# it slept and the vCPU on its host CPU ran again (docs/bench.md, "Where a
# write round trip goes").  QEMU's own AioContext sources recurse (util/
# async.c), as this one now does; its callback reads the socket once and
# runs no nested main loop.
grep -q 'netvm: no wakeup' "$SRC/net/stream.c" ||
	sed -i '/s->ioc_read_tag = qio_channel_add_watch(s->ioc, G_IO_IN/{n;a\
    g_source_set_can_recurse(g_main_context_find_source_by_id(NULL, s->ioc_read_tag), TRUE); /* netvm: no wakeup per frame */
}' "$SRC/net/stream.c"
# the ASan build's device set (--with-devices-x86_64=netvm-asan)
ln -sfn "$REPO/qemu-device/asan-devices.mak" \
	"$SRC/configs/devices/x86_64-softmmu/netvm-asan.mak"
grep -q "'lanai-test'" "$SRC/tests/qtest/meson.build" ||
	sed -i "s|^qtest_executables = {}\$|qtests_x86_64 += ['lanai-test']  # netvm\nqtest_executables = {}|" \
		"$SRC/tests/qtest/meson.build"

# --- 4. configure and build ---------------------------------------------
# ccache through its masquerade directory: configure records
# /usr/lib/ccache/cc as the compiler.  Paths under the repository are
# hashed relative to it, so another clone or worktree (CI's fresh clone)
# reuses the objects.
if [ -x /usr/lib/ccache/cc ]; then
	PATH="/usr/lib/ccache:$PATH"
	CCACHE_BASEDIR="$REPO"
	CCACHE_NOHASHDIR=1
	export PATH CCACHE_BASEDIR CCACHE_NOHASHDIR
fi
CONFIGURE="--target-list=x86_64-softmmu --python=/usr/bin/python3 \
--without-default-features --disable-docs --disable-install-blobs --enable-slirp --enable-attr --enable-virtfs \
--enable-fdt=system --enable-tcg --enable-kvm --enable-trace-backends=log \
--firmwarepath=/usr/share/seabios:/usr/share/qemu"
TARGETS="qemu-system-x86_64 tests/qtest/lanai-test"
if [ -n "$ASAN" ]; then
	CONFIGURE="--target-list=x86_64-softmmu --python=/usr/bin/python3 \
--without-default-features --without-default-devices --with-devices-x86_64=netvm-asan \
--disable-docs --disable-install-blobs --disable-tcg --enable-kvm \
--enable-asan --enable-ubsan --enable-trace-backends=log \
--firmwarepath=/usr/share/seabios:/usr/share/qemu"
	TARGETS="qemu-system-x86_64"
fi
CONFIGURE_ID="$CONFIGURE cc=$(command -v cc)"
if [ -n "$FORCE" ] || [ ! -f "$OBJ/build.ninja" ] ||
   [ "$(cat "$OBJ/.netvm-configure" 2>/dev/null || true)" != "$CONFIGURE_ID" ]; then
	say "configuring QEMU in $OBJ"
	rm -rf "$OBJ"
	mkdir -p "$OBJ"
	# shellcheck disable=SC2086
	(cd "$OBJ" && "$SRC/configure" $CONFIGURE > configure.log 2>&1) ||
		{ tail -n 20 "$OBJ/configure.log" >&2; die "configure failed (log: $OBJ/configure.log)"; }
	echo "$CONFIGURE_ID" > "$OBJ/.netvm-configure"
fi
# ninja's own N/M count, as one updating line on a terminal and a line
# every 30 s otherwise, with an estimate of what is left: a first build
# takes minutes and should not look hung.
ninja_with_progress() { # LOG TARGET...
	log="$1"
	shift
	ninja -C "$OBJ" "$@" > "$log" 2>&1 &
	pid=$!
	t0=$(date +%s)
	last=0
	while kill -0 "$pid" 2>/dev/null; do
		sleep 2
		nm="$(tail -c 4096 "$log" | grep -o '^\[[0-9]*/[0-9]*\]' | tail -n 1 | tr -d '[]')"
		[ -n "$nm" ] || continue
		n=${nm%/*}
		m=${nm#*/}
		el=$(( $(date +%s) - t0 ))
		left=""
		[ "$n" -gt 0 ] && [ "$el" -ge 10 ] && left=", about $(( el * (m - n) / n )) s left"
		if [ -t 1 ]; then
			printf '\rbuild-qemu: %s/%s steps, %s s%s    ' "$n" "$m" "$el" "$left"
		elif [ $(( el - last )) -ge 30 ]; then
			say "$n/$m steps, $el s$left"
			last=$el
		fi
	done
	[ ! -t 1 ] || printf '\n'
	wait "$pid"
}
say "building $TARGETS in $OBJ"
# shellcheck disable=SC2086
ninja_with_progress "$OBJ/ninja.log" $TARGETS ||
	{ grep -E 'error|Error|FAILED' "$OBJ/ninja.log" | head -n 30 >&2; die "build failed (log: $OBJ/ninja.log)"; }
# QEMU's tree is not built with -Werror; our own files must be warning-free.
if grep -E '(hw/misc/lanai|tests/qtest/lanai)[^ ]*: (warning|error)' "$OBJ/ninja.log" >&2; then
	die "warnings in the lanai device or its qtest (log: $OBJ/ninja.log)"
fi
"$OBJ/qemu-system-x86_64" -device help 2>/dev/null | grep -q '"lanai"' ||
	die "built QEMU has no lanai device"
# Run from the build tree, QEMU looks for the firmware path inside
# qemu-bundle/: point those directories at Debian's.
mkdir -p "$OBJ/qemu-bundle/usr/share"
for d in seabios qemu; do
	[ -e "$OBJ/qemu-bundle/usr/share/$d" ] || ln -s "/usr/share/$d" "$OBJ/qemu-bundle/usr/share/$d"
done
say "ok: $OBJ/qemu-system-x86_64"
