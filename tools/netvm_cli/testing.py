"""./netvm test (meson's test suites, or mutation testing) and ./netvm fuzz
(the device fuzzer); docs/testing.md."""
import os
import signal
import subprocess
import sys
import time

from . import build as buildmod
from .command import Command
from .common import MESON_BUILD, REPO, say


def meson_test_cmd(suites, meson_args, env=None, cpus=None):
    """meson test's command line: every suite when none is named; one test
    more than there are CPUs at a time, unless MESON_TESTTHREADS or the
    arguments say (docs/testing.md, "How the suites share the machine")."""
    env = os.environ if env is None else env
    cmd = ["meson", "test", "-C", MESON_BUILD, "--print-errorlogs"]
    for s in suites:
        cmd += ["--suite", s]
    told = "MESON_TESTTHREADS" in env or any(
        a == "--num-processes" or a.startswith(("-j", "--num-processes="))
        for a in meson_args)
    if not told:
        cmd += ["--num-processes", str((cpus or os.cpu_count() or 1) + 1)]
    return cmd + list(meson_args)


def test(a, c):
    if not a.no_build:
        buildmod.build()
    if a.mutants:
        # each mutant is rebuilt and tested on its own (docs/testing.md)
        # Ctrl-C reaches the runner too, which restores the source; wait
        # for it (subprocess.call would kill it mid-restore)
        p = subprocess.Popen([sys.executable, os.path.join(REPO, "tests", "mutants",
                                                           "run-mutants.py")] + a.meson_args, cwd=REPO)
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            return p.wait()
        finally:
            signal.signal(signal.SIGINT, old)
    cmd = meson_test_cmd(a.suite, a.meson_args)
    say("running: %s" % " ".join(cmd))
    return subprocess.call(cmd, cwd=REPO, stdin=subprocess.DEVNULL)


def fuzz(a, c):
    """The device fuzzer (tests/devfuzz) for --minutes, from the seed
    corpus; crash reproducers in build/devfuzz/."""
    if not a.no_build:
        buildmod.build(skip=["kernel", "driver", "meson", "image"])
    seed = a.seed if a.seed is not None else int(time.time())
    work = os.path.join(REPO, "build", "devfuzz")
    cmd = [sys.executable, os.path.join(REPO, "tests", "devfuzz", "devfuzz.py"),
           "--qemu", os.path.join(REPO, "build", "qemu-asan", "qemu-system-x86_64"),
           "--seconds", str(int(a.minutes * 60)), "--seed", str(seed),
           "--corpus", os.path.join(REPO, "tests", "devfuzz", "corpus"), "--work", work]
    if a.keep_going:
        cmd.append("--keep-going")
    say("running: %s" % " ".join(cmd))
    return subprocess.call(cmd, cwd=REPO, stdin=subprocess.DEVNULL)


def add_fuzz_args(sp):
    sp.add_argument("--minutes", type=float, default=10, help="how long (default 10)")
    sp.add_argument("--seed", type=int, default=None, help="random seed (default: from the clock)")
    sp.add_argument("--keep-going", action="store_true", help="go on after a crash")
    sp.add_argument("--no-build", action="store_true", help="use what is built")
    sp.set_defaults(func=fuzz)


def add_test_args(sp):
    sp.add_argument("--suite", action="append", default=[], metavar="SUITE",
                    help="run only this suite (unit, cli, qtest, fabric, guest, lint, fuzz, devfuzz); "
                    "repeatable")
    sp.add_argument("--no-build", action="store_true", help="use what is built")
    sp.add_argument("--mutants", action="store_true",
                    help="mutation testing instead (tests/mutants/run-mutants.py; after --: "
                    "mutant names or prefixes, --list, --keep-going)")
    sp.add_argument("meson_args", nargs="*", metavar="MESON_TEST_ARG",
                    help="more arguments for meson test (after --)")
    sp.set_defaults(func=test)


COMMANDS = [
    Command("fuzz", "fuzz the lanai device (ASan/UBSan QEMU) and print executions and coverage",
            add_fuzz_args),
    Command("test", "build, then run the test suites (meson test)", add_test_args),
]
