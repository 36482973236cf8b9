"""Shared pieces of the guest test scripts: TAP output and paths.

Each script boots its own cluster through ./netvm and prints TAP (meson's
protocol 'tap'); diagnostics of a failed check go to stderr, which
`meson test --print-errorlogs` shows.
"""
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NETVM = os.environ.get("NETVM", os.path.join(REPO, "netvm"))
BOOT_TIMEOUT = os.environ.get("NETVM_TEST_BOOT_TIMEOUT", "300")


class Tap:
    """Numbered TAP results; call plan() at the end."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc, diag=""):
        self.n += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, desc), flush=True)
        if not cond:
            self.failed += 1
            print("--- not ok %d - %s" % (self.n, desc), file=sys.stderr)
            for line in str(diag).splitlines():
                print("    " + line, file=sys.stderr)
            sys.stderr.flush()
        return cond

    def note(self, msg):
        for line in str(msg).splitlines():
            print("# " + line, flush=True)

    def plan(self):
        print("1..%d" % self.n, flush=True)
