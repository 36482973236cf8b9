#!/usr/bin/python3
"""How strong are the guest suite's checks?  Classifies every check call
site in tests/guest (T.ok / ok in the Python scripts, check / ok in the
guest programs) by what its condition and description show:

  data   verifies transferred bytes: the description says verified,
         intact, byte(s), in place, in its memory, or the condition calls a
         verifying helper (check, verify, memcmp, untouched, pattern ...)
  exact  compares with == against a specific value (an error code, a
         count, a string, a counter) other than a bare success status
  weak   the rest: success statuses only (rc == 0, !err), inequalities,
         substrings, truthiness

Static and per call site (a check inside a loop counts once), so the
figure does not depend on a run.  Prints the counts, the share of data or
exact checks, and with -v every weak one (docs/testing.md).
"""
import ast
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_WORDS = re.compile(r"verif|intact|byte|in place|in its memory|pattern|untouched|"
                        r"nothing written", re.I)
DATA_CALLS = re.compile(r"\b(check|verify|verified|memcmp|untouched|sh_check|seg_eq|"
                        r"pattern_check|sweep_verdict|sender_verdict|check_range)\w*\s*\(")
SUCCESS = re.compile(r"^\s*(rc|err|e2|r|wrc|src|brc|rc2|ret)\s*==\s*0\s*$")


def classify(cond, desc):
    if DATA_CALLS.search(cond) or DATA_WORDS.search(desc):
        return "data"
    for part in re.split(r"&&|\band\b|\|\||\bor\b", cond):
        if "==" in part and not SUCCESS.match(part.strip(" ()!")):
            return "exact"
        if re.search(r"!\s*str(n)?cmp\s*\(", part):
            return "exact"
    return "weak"


def py_sites(path):
    with open(path) as f:
        src = f.read()
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        fn = node.func
        name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
        if name != "ok":
            continue
        cond = ast.get_source_segment(src, node.args[0]) or ""
        desc = ast.get_source_segment(src, node.args[1]) if len(node.args) > 1 else ""
        yield node.lineno, cond, desc or ""


def c_args(text, start):
    """The top-level arguments of the call whose '(' is at start."""
    depth, args, cur, i, quote = 0, [], [], start, None
    while i < len(text):
        ch = text[i]
        if quote:
            cur.append(ch)
            if ch == "\\":
                cur.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            cur.append(ch)
        elif ch == "(":
            depth += 1
            if depth > 1:
                cur.append(ch)
        elif ch == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur))
                return args
            cur.append(ch)
        elif ch == "," and depth == 1:
            args.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    return args


def c_sites(path):
    """The TAP checks of a guest program: check() from guest_tap.h, or the
    program's own ok() (where check() is a data-checking helper)."""
    with open(path) as f:
        text = f.read()
    fn = "check" if "guest_tap.h" in text else "ok"
    for m in re.finditer(r"(?m)^\s*%s\s*\(" % fn, text):
        line = text.count("\n", 0, m.start()) + 1
        args = c_args(text, m.end() - 1)
        if len(args) >= 2:
            yield line, args[0].strip(), " ".join(args[1:])


def main():
    verbose = "-v" in sys.argv
    counts = {"data": 0, "exact": 0, "weak": 0}
    weak = []
    files = sorted(glob.glob(os.path.join(HERE, "*.py")) + glob.glob(os.path.join(HERE, "*.c")))
    for path in files:
        name = os.path.basename(path)
        if name.startswith("bench_") or name == os.path.basename(__file__):
            continue
        sites = py_sites(path) if path.endswith(".py") else c_sites(path)
        for line, cond, desc in sites:
            k = classify(cond, desc)
            counts[k] += 1
            if k == "weak":
                weak.append("%s:%d: %s" % (name, line, " ".join(cond.split())[:100]))
    total = sum(counts.values())
    strong = counts["data"] + counts["exact"]
    print("guest check sites: %d; data %d, exact value %d, weak %d; data or exact: %.0f%%"
          % (total, counts["data"], counts["exact"], counts["weak"], 100.0 * strong / max(total, 1)))
    if verbose:
        print("\n".join(weak))
    return 0


if __name__ == "__main__":
    sys.exit(main())
