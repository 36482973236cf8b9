#!/bin/sh
# Style gates, run by `meson test --suite lint`:
#   qemu    QEMU's scripts/checkpatch.pl on qemu-device/ and the qtest
#   kernel  the kernel's scripts/checkpatch.pl --strict on guest-driver/
# The kernel's checkpatch comes from Debian's linux-source-6.1 package,
# fetched once into build/tools/ (apt-get download; no root needed).
set -eu
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
which="$1"
# checkpatch judges some rules by path (tests/ may use g_assert_cmp*)
cd "$REPO"

case "$which" in
qemu)
	cp="$REPO/build/qemu-src/scripts/checkpatch.pl"
	[ -f "$cp" ] || { echo "no QEMU source tree: run ./netvm build" >&2; exit 1; }
	files="$(ls qemu-device/*.c qemu-device/*.h) tests/qtest/lanai-test.c"
	flags="--no-tree"
	;;
kernel)
	tools="$REPO/build/tools/linux-checkpatch"
	cp="$tools/scripts/checkpatch.pl"
	if [ ! -f "$cp" ]; then
		echo "fetching the kernel's checkpatch.pl (Debian linux-source-6.1)" >&2
		tmp="$(mktemp -d)"
		trap 'rm -rf "$tmp"' EXIT
		(cd "$tmp" && apt-get download -qq linux-source-6.1 >/dev/null 2>&1) ||
			{ echo "apt-get download linux-source-6.1 failed" >&2; exit 1; }
		dpkg-deb --fsys-tarfile "$tmp"/linux-source-6.1_*.deb |
			tar -x -C "$tmp" --wildcards './usr/src/linux-source-6.1.tar.xz'
		mkdir -p "$tools"
		tar -xJf "$tmp/usr/src/linux-source-6.1.tar.xz" -C "$tools" --strip-components=1 \
			linux-source-6.1/scripts/checkpatch.pl \
			linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch
	fi
	files="$(ls guest-driver/*.c guest-driver/*.h | grep -v '\.mod\.c$')"
	flags="--strict --no-tree --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG"
	;;
*)
	echo "usage: $0 qemu|kernel" >&2
	exit 2
	;;
esac

bad=0
for f in $files; do
	# shellcheck disable=SC2086
	if ! out="$(perl "$cp" $flags -f "$f" 2>&1)" || echo "$out" | grep -q '^\(ERROR\|WARNING\|CHECK\)'; then
		echo "$out"
		bad=$((bad + 1))
	fi
done
n=$(echo "$files" | wc -w)
echo "$((n - bad)) passed, $bad failed"
[ "$bad" = 0 ]
