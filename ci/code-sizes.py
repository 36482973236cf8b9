#!/usr/bin/env python3
"""Largest C files and functions of a git revision (default HEAD).

    ci/code-sizes.py [REV [TOP]]     (run from the repository's top)

The firmware, driver, switch, device and agent sources, read from git
(not the work tree), so any two revisions compare with one script.

A function is a definition whose body opens with "{" alone at column 0
and closes with "}" at column 0 (kernel and QEMU style); its length runs
from the first line of its signature to the closing brace.
"""
import re, subprocess, sys

DIRS = ("firmware-interp/", "guest-driver/", "fabric/", "qemu-device/lanai",
        "images/agent/")
rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
git = lambda *a: subprocess.run(("git",) + a, check=True, capture_output=True,
                                text=True).stdout
paths = [p for p in git("ls-tree", "-r", "--name-only", rev).split()
         if p.startswith(DIRS) and p.endswith((".c", ".h"))]
files, funcs = [], []
for p in paths:
    lines = git("show", f"{rev}:{p}").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    files.append((len(lines), p))
    sig = None
    for i, l in enumerate(lines):
        if re.match(r"[A-Za-z_]", l) and "(" in l and not l.rstrip().endswith(";"):
            sig = i
        elif l == "{" and sig is not None:
            m = re.search(r"([A-Za-z_]\w*)\s*\(", " ".join(lines[sig:i]))
            end = next((j for j in range(i, len(lines)) if lines[j] == "}"), i)
            funcs.append((end - sig + 1, f"{p}:{m.group(1) if m else '?'}"))
            sig = None
        elif l == "}" or l.rstrip().endswith(";") and not l.startswith((" ", "\t")):
            sig = None
files.sort(reverse=True)
funcs.sort(reverse=True)
print(f"== {rev}: {len(paths)} files, {sum(n for n, _ in files)} lines; "
      f"functions over 120 lines: {sum(1 for n, _ in funcs if n > 120)}")
print("-- largest files")
for n, p in files[:top]:
    print(f"{n:6d}  {p}")
print("-- largest functions")
for n, f in funcs[:top]:
    print(f"{n:6d}  {f}")
