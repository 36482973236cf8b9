#!/bin/sh
# Run the lanai qtest built inside QEMU's tree against the QEMU built
# there, or against LANAI_QTEST_QEMU (the ASan build, test lanai-asan).
# Usage: run-qtest.sh QEMU_BUILD_DIR [qtest args...]
set -eu
qemu_build="$1"
shift
test_bin="$qemu_build/tests/qtest/lanai-test"
qemu="${LANAI_QTEST_QEMU:-$qemu_build/qemu-system-x86_64}"
if [ ! -x "$test_bin" ] || [ ! -x "$qemu" ]; then
	echo "Bail out! $test_bin or $qemu not built: run ./netvm build" >&2
	exit 1
fi
cd "$qemu_build"
QTEST_QEMU_BINARY="$qemu" exec "$test_bin" --tap -k "$@"
