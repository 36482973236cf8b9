#!/usr/bin/python3
"""Mutation testing: apply each small, named breakage of mutants.py to the
source, rebuild only what it touches, run only the tests that should catch
it, and report which mutants were killed (by which test, in what time) and
which survived.  `./netvm test --mutants [NAME...]` runs it (docs/testing.md).

The source is restored whatever happens: after each mutant, on an exception
or Ctrl-C (SIGINT) or SIGTERM, and, should this process be killed outright,
at the start of the next run (the original text waits in
build/mutants/restore.json until then).

  run-mutants.py [--list] [--keep-going] [NAME_OR_PREFIX...]
Exit 0 when every mutant selected was killed, 1 otherwise.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from mutants import MUTANTS  # noqa: E402

BUILD = os.path.join(REPO, "build")
MESON_BUILD = os.path.join(BUILD, "meson")
QEMU_BUILD = os.path.join(BUILD, "qemu")
STATE = os.path.join(BUILD, "mutants")
JOURNAL = os.path.join(STATE, "restore.json")
NETVM = os.path.join(REPO, "netvm")


def say(msg):
    print("mutants: " + msg, flush=True)


# ---- the source: mutate, and always put it back ----

def journal_restore():
    """Put back what a run killed outright left mutated."""
    if not os.path.exists(JOURNAL):
        return
    with open(JOURNAL) as f:
        j = json.load(f)
    with open(os.path.join(REPO, j["file"]), "w") as f:
        f.write(j["text"])
    os.unlink(JOURNAL)
    say("restored %s (left mutated by an interrupted run)" % j["file"])


class Mutated:
    """with Mutated(m): the file holds the mutant inside the block only."""

    def __init__(self, m):
        self.m = m
        self.path = os.path.join(REPO, m["file"])

    def __enter__(self):
        with open(self.path) as f:
            self.text = f.read()
        n = self.text.count(self.m["orig"])
        if n != 1:
            raise RuntimeError("%s: the original text occurs %d times in %s (stale mutant?)"
                               % (self.m["name"], n, self.m["file"]))
        os.makedirs(STATE, exist_ok=True)
        with open(JOURNAL, "w") as f:
            json.dump({"file": self.m["file"], "text": self.text}, f)
        with open(self.path, "w") as f:
            f.write(self.text.replace(self.m["orig"], self.m["repl"]))
        return self

    def __exit__(self, *exc):
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)   # a second Ctrl-C waits
        try:
            with open(self.path, "w") as f:
                f.write(self.text)
            os.unlink(JOURNAL)
        finally:
            signal.signal(signal.SIGINT, old)
        return False


def on_sigterm(signum, frame):
    raise KeyboardInterrupt


# ---- rebuilding what a file feeds ----

def parts_of(m):
    """What to rebuild for m's file, for the tests that should kill it:
    'meson' (firmware library, libnetvm, tools, unit tests), 'qemu' (the
    device with the firmware in it, and the qtest), 'driver' (netvm.ko,
    insmod'ed by the guests from the repository), 'image' (libnetvm is
    copied into the guest image)."""
    f, tests = m["file"], m["kills"]
    guest = any(t.startswith("guest-") for t in tests)
    qemu_tests = guest or "lanai" in tests
    parts = []
    if f.startswith("firmware-interp/"):
        parts = ["meson"] + (["qemu"] if qemu_tests else [])
    elif f.startswith("qemu-device/"):
        parts = ["qemu"]
    elif f.startswith("guest-driver/"):
        parts = ["driver"]
    elif f.startswith("guest-lib/"):
        parts = ["meson"] + (["image"] if guest else [])
    elif f.startswith("fabric/"):
        parts = ["meson"]       # netvm-switch, run from build/meson
    elif f.startswith("include/"):
        # the ABI headers feed the firmware, the device, the driver and
        # libnetvm alike: rebuild whatever the killing tests run
        parts = ["meson"] + (["qemu"] if qemu_tests else []) + (
            ["driver", "image"] if guest else [])
    elif not f.startswith(("tools/", "tests/guest/", "ci/")) or not f.endswith(".py"):
        # Python, run from the checkout (the front door, the guest tests' harness)
        raise RuntimeError("%s: no rule says what %s feeds (run-mutants.py, parts_of)"
                           % (m["name"], f))
    return parts


def rebuild(parts, log):
    cmds = {
        "meson": ["ninja", "-C", MESON_BUILD],
        "qemu": ["ninja", "-C", QEMU_BUILD, "qemu-system-x86_64", "tests/qtest/lanai-test"],
        "driver": [NETVM, "build", "--skip", "deps,qemu,kernel,meson,image"],
        "image": [NETVM, "build", "--skip", "deps,qemu,kernel,driver,meson"],
    }
    for p in parts:
        with open(log, "a") as f:
            f.write("\n$ %s\n" % " ".join(cmds[p]))
            f.flush()
            rc = subprocess.call(cmds[p], stdout=f, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, cwd=REPO)
        if rc != 0:
            return p
    return None


def run_test(name, log):
    """One meson test by name, without rebuilding: True if it passed."""
    with open(log, "a") as f:
        f.write("\n$ meson test %s\n" % name)
        f.flush()
        rc = subprocess.call(["meson", "test", "-C", MESON_BUILD, "--no-rebuild",
                              "--print-errorlogs", name],
                             stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=REPO)
    return rc == 0


def one(m, keep_going):
    """Run mutant m: (verdict, killer, seconds); verdict killed / survived /
    broken (did not build: a mutant must compile to mean anything)."""
    log = os.path.join(STATE, m["name"] + ".log")
    if os.path.exists(log):
        os.unlink(log)
    t0 = time.monotonic()
    parts = parts_of(m)
    verdict, killer = "survived", ""
    with Mutated(m):
        failed = rebuild(parts, log)
        if failed:
            verdict, killer = "broken", "build (%s)" % failed
        else:
            for t in m["kills"]:
                if not run_test(t, log):
                    verdict, killer = "killed", t
                    if not keep_going:
                        break
    dt = time.monotonic() - t0
    failed = rebuild(parts, log)    # the original again, for the next mutant
    if failed:
        raise RuntimeError("rebuilding the original source failed (%s; log %s)" % (failed, log))
    return verdict, killer, dt


def check_originals(sel):
    """0 if every mutant's original text occurs exactly once in its file."""
    stale = 0
    for m in sel:
        with open(os.path.join(REPO, m["file"])) as f:
            n = f.read().count(m["orig"])
        if n != 1:
            say("%s: the original text occurs %d times in %s (stale mutant)" % (m["name"], n, m["file"]))
            stale += 1
            continue
        try:
            parts_of(m)
        except RuntimeError as e:
            say(str(e))
            stale += 1
    say("%d of %d mutants match their source exactly once" % (len(sel) - stale, len(sel)))
    return 1 if stale else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="mutants to run (name or prefix); default all")
    ap.add_argument("--list", action="store_true", help="list the mutants and their killers")
    ap.add_argument("--check", action="store_true",
                    help="only check that each mutant's original text occurs exactly once "
                         "(a stale mutant would otherwise surface in the middle of a run)")
    ap.add_argument("--keep-going", action="store_true",
                    help="run every listed test, even after one killed the mutant")
    a = ap.parse_args()
    sel = [m for m in MUTANTS if not a.names or any(m["name"].startswith(n) for n in a.names)]
    if a.list:
        for m in sel:
            print("%-32s %-40s %s" % (m["name"], m["file"], " ".join(m["kills"])))
        return 0
    if a.check:
        return check_originals(sel)
    if not sel:
        say("no mutant matches %s" % " ".join(a.names))
        return 2
    signal.signal(signal.SIGTERM, on_sigterm)
    os.makedirs(STATE, exist_ok=True)
    journal_restore()
    rows, t0 = [], time.monotonic()
    try:
        for m in sel:
            say("%s (%s) ..." % (m["name"], m["file"]))
            verdict, killer, dt = one(m, a.keep_going)
            rows.append((m["name"], verdict, killer, dt))
            say("%s: %s%s in %.0f s" % (m["name"], verdict, " by " + killer if killer else "", dt))
    except KeyboardInterrupt:
        say("interrupted: the source is restored; rebuild with ./netvm build")
        return 130
    total = time.monotonic() - t0
    print()
    print("| mutant | verdict | killed by | time |")
    print("| --- | --- | --- | --- |")
    for name, verdict, killer, dt in rows:
        print("| %s | %s | %s | %.0f s |" % (name, verdict, killer or "-", dt))
    killed = sum(1 for r in rows if r[1] == "killed")
    print("\n%d of %d mutants killed in %.0f s (logs in %s)"
          % (killed, len(rows), total, os.path.relpath(STATE, REPO)))
    return 0 if killed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
