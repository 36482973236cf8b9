#!/usr/bin/python3
"""Derive the apt sources netvm needs from the machine's own configuration.

netvm needs, besides the machine's binary sources: the source indexes
(deb-src: QEMU's source package, the kernel headers) and the backports
suite (meson, pycotap, QEMU 10.0's source).  Rather than naming a mirror,
this reads the enabled sources (one-line .list files and deb822 .sources
files), takes the archive that serves the release suite (its URI and
signing key, so a local mirror or proxy keeps working) and writes, into
netvm's own file, only the (type, suite) pairs that are missing: every
pair already configured elsewhere is left out, so apt never warns that a
target is "configured multiple times".

    apt-sources.py [--write FILE] [--root DIR]

Without --write, prints the file's content (empty when nothing is
missing).  With --write, writes FILE (or removes it when nothing is
missing) and exits 0 if it changed, 3 if it was already right; 1 on
error (no source serves the release suite).
"""
import argparse
import glob
import os
import sys

WANT_TYPES = ("deb", "deb-src")


def release_codename(root):
    try:
        with open(os.path.join(root, "etc/os-release")) as f:
            for line in f:
                if line.startswith("VERSION_CODENAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return "bookworm"


def parse_one_line(path):
    """Entries of a one-line-style .list file."""
    out = []
    with open(path) as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            words = line.split()
            typ = words.pop(0)
            opts = {}
            if words and words[0].startswith("["):
                optw = []
                while words:
                    w = words.pop(0)
                    optw.append(w)
                    if w.endswith("]"):
                        break
                for o in " ".join(optw).strip("[]").split():
                    if "=" in o:
                        k, v = o.split("=", 1)
                        opts[k.lower()] = v
            if len(words) < 2 or typ not in WANT_TYPES:
                continue
            out.append({"types": [typ], "uris": [words[0]], "suites": [words[1]],
                        "components": words[2:], "signed-by": opts.get("signed-by", ""),
                        "enabled": True})
    return out


def parse_deb822(path):
    """Entries (stanzas) of a deb822 .sources file."""
    out = []
    stanza = {}
    key = None

    def flush():
        if stanza:
            out.append({"types": stanza.get("types", "").split(),
                        "uris": stanza.get("uris", "").split(),
                        "suites": stanza.get("suites", "").split(),
                        "components": stanza.get("components", "").split(),
                        "signed-by": stanza.get("signed-by", "").strip(),
                        "enabled": stanza.get("enabled", "yes").strip().lower() != "no"})
    with open(path) as f:
        for raw in f:
            if raw.startswith("#"):
                continue
            if not raw.strip():
                flush()
                stanza, key = {}, None
                continue
            if raw[0] in " \t" and key:
                stanza[key] += "\n" + raw.strip()
                continue
            if ":" in raw:
                key, val = raw.split(":", 1)
                key = key.strip().lower()
                stanza[key] = val.strip()
    flush()
    return out


def configured(root, skip):
    entries = []
    d = os.path.join(root, "etc/apt")
    files = [os.path.join(d, "sources.list")] + sorted(glob.glob(os.path.join(d, "sources.list.d/*")))
    for path in files:
        if os.path.abspath(path) == os.path.abspath(skip) or not os.path.isfile(path):
            continue
        if path.endswith(".list"):
            entries += parse_one_line(path)
        elif path.endswith(".sources"):
            entries += parse_deb822(path)
    return [e for e in entries if e["enabled"]]


def wanted_file(entries, codename):
    """The deb822 text of what is missing ("" if nothing), or None if no
    enabled source serves the release suite."""
    have = set()
    archive = None
    for e in entries:
        for t in e["types"]:
            for u in e["uris"]:
                for s in e["suites"]:
                    have.add((t, u.rstrip("/"), s))
        if archive is None and "deb" in e["types"] and codename in e["suites"] and e["uris"]:
            archive = e
    if archive is None:
        return None
    uri = archive["uris"][0].rstrip("/")
    release_suites = [s for s in archive["suites"] if s in (codename, codename + "-updates")]
    needs = {}       # suite -> [types missing]
    for s in release_suites + [codename + "-backports"]:
        types = WANT_TYPES if s.endswith("-backports") else ("deb-src",)
        for t in types:
            if (t, uri, s) not in have:
                needs.setdefault(s, []).append(t)
    # One stanza per distinct type list, suites in a stable order.
    groups = {}
    for s, types in needs.items():
        groups.setdefault(tuple(types), []).append(s)
    stanzas = []
    for types, suites in sorted(groups.items()):
        lines = ["Types: " + " ".join(types), "URIs: " + uri, "Suites: " + " ".join(suites),
                 "Components: main"]
        if archive["signed-by"] and "\n" not in archive["signed-by"]:
            lines.append("Signed-By: " + archive["signed-by"])
        stanzas.append("\n".join(lines) + "\n")
    if not stanzas:
        return ""
    return ("# Written by netvm's ci/apt-sources.py from this machine's own apt\n"
            "# sources: only the source indexes and backports it lacked.\n\n" + "\n".join(stanzas))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", metavar="FILE")
    ap.add_argument("--root", default="/")
    a = ap.parse_args(argv)
    target = a.write or os.path.join(a.root, "etc/apt/sources.list.d/netvm.sources")
    codename = release_codename(a.root)
    text = wanted_file(configured(a.root, target), codename)
    if text is None:
        print("apt-sources: no enabled apt source serves '%s' (deb): configure the Debian archive first"
              % codename, file=sys.stderr)
        return 1
    if not a.write:
        sys.stdout.write(text)
        return 0
    old = None
    if os.path.exists(target):
        with open(target) as f:
            old = f.read()
    if text == "":
        if old is None:
            return 3
        os.unlink(target)
        return 0
    if old == text:
        return 3
    with open(target, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
