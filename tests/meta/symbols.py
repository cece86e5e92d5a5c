#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The exported ABI agrees with the headers, the version map and the man pages.

usage: symbols.py --lib libprobemcp.so --map libprobemcp.map
                  --headers DIR --man DIR

Checks:
 1. every dynamic symbol libprobemcp.so defines is a pmcp_ function or
    object (never a pmcp__ internal, never a symbol of a dependency);
 2. every exported symbol is declared PMCP_API in a public header, and
    every PMCP_API function is exported (a header none of whose functions is
    exported yet is reported as not built, not failed);
 3. every exported symbol carries a version node of the map;
 4. every PMCP_API function of a header that has man pages is named in a
    man3 page (a header no page mentions yet is reported, not failed);
 5. every error code of error.h is listed in libprobemcp-errors(7), and
    every tool error code of tool_error.h (name and string) in
    pmcp_tool_errors(7);
 6. with --readme, README.md links every man page source.
"""
import argparse
import os
import re
import subprocess
import sys

results = []


def check(ok, what):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + what)


def note(what):
    print("note " + what)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def declared(headers_dir):
    """{header: [function names declared PMCP_API]}"""
    out = {}
    for h in sorted(os.listdir(headers_dir)):
        if not h.endswith(".h"):
            continue
        text = strip_comments(open(os.path.join(headers_dir, h)).read())
        # Drop the macro definitions of PMCP_API itself.
        text = re.sub(r"#\s*define[^\n]*", " ", text)
        names = re.findall(r"PMCP_API\b[^;{]*?\b(pmcp_\w+)\s*\(", text)
        if names:
            out[h] = names
    return out


def exported(lib):
    r = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                       text=True, check=True)
    syms = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        _, kind, name = parts
        base, _, version = name.partition("@")
        syms[base] = (kind, version.lstrip("@"))
    return syms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--map", required=True)
    ap.add_argument("--headers", required=True)
    ap.add_argument("--man", required=True)
    ap.add_argument("--readme")
    a = ap.parse_args()

    nodes = set(re.findall(r"^\s*(PMCP_[0-9.]+)\s*\{", open(a.map).read(), re.M))
    check(bool(nodes), f"the version map names its nodes: {sorted(nodes)}")
    syms = exported(a.lib)
    # Version-node markers are absolute symbols named after the node.
    funcs = {n: kv for n, kv in syms.items() if n not in nodes}

    bad = sorted(n for n in funcs if not n.startswith("pmcp_") or n.startswith("pmcp__"))
    check(not bad, "only pmcp_ symbols are exported" + (f": also {bad}" if bad else ""))
    unversioned = sorted(n for n, (_, v) in funcs.items() if v not in nodes)
    check(not unversioned, "every exported symbol has a version node"
          + (f": not {unversioned}" if unversioned else ""))

    decl = declared(a.headers)
    all_decl = {n for names in decl.values() for n in names}
    stray = sorted(n for n in funcs if n.startswith("pmcp_") and n not in all_decl)
    check(not stray, "every exported symbol is declared PMCP_API in a public header"
          + (f": not {stray}" if stray else ""))
    for h, names in decl.items():
        missing = [n for n in names if n not in funcs]
        if len(missing) == len(names):
            note(f"{h}: none of its {len(names)} functions is built yet")
            continue
        check(not missing, f"{h}: all {len(names)} PMCP_API functions are exported"
              + (f"; missing {missing}" if missing else ""))

    pages = {}
    for f in sorted(os.listdir(a.man)):
        if f.endswith(".scd"):
            pages[f] = open(os.path.join(a.man, f)).read()
    man3 = "\n".join(t for f, t in pages.items() if re.search(r"\.3\.scd$", f))
    for h, names in decl.items():
        named = [n for n in names if re.search(r"\b%s\b" % re.escape(n), man3)]
        if not named:
            note(f"{h}: no man page yet")
            continue
        undoc = [n for n in names if n not in named]
        check(not undoc, f"{h}: every function is named in a man3 page"
              + (f"; not {undoc}" if undoc else ""))

    errh = open(os.path.join(a.headers, "error.h")).read()
    codes = re.findall(r"^\s*X\((\w+),", errh, re.M)
    errpage = pages.get("libprobemcp-errors.7.scd", "")
    unlisted = [c for c in codes if f"PMCP_{c}" not in errpage]
    check(bool(codes) and not unlisted, f"libprobemcp-errors(7) lists all {len(codes)} codes"
          + (f"; not {unlisted}" if unlisted else ""))

    terrh = open(os.path.join(a.headers, "tool_error.h")).read()
    tcodes = re.findall(r"^\s*X\((\w+), \d+, \"(\w+)\"", terrh, re.M)
    tpage = pages.get("pmcp_tool_errors.7.scd", "")
    tunlisted = [c for c, s in tcodes
                 if f"PMCP_TERR_{c}" not in tpage or f":- {s}\n" not in tpage]
    check(bool(tcodes) and not tunlisted,
          f"pmcp_tool_errors(7) lists all {len(tcodes)} tool error codes"
          + (f"; not {tunlisted}" if tunlisted else ""))

    # every emitter takes its code from the table: no code spelled out in
    # the library's sources ("error":"x" in text, or an "error" member
    # added with a literal)
    src = os.path.normpath(os.path.join(a.headers, "..", "..", "src"))
    spelled = []
    for root, _, files in os.walk(src):
        for f in files:
            if f.endswith((".c", ".h")):
                text = strip_comments(open(os.path.join(root, f)).read())
                for m in re.finditer(r'\\"error\\":\\"[a-z]|"error",\s*"[a-z_]*"\s*\)', text):
                    spelled.append(f"{f}:{text.count(chr(10), 0, m.start()) + 1}")
    check(not spelled, "every tool error code comes from the table"
          + (f"; spelled out at {spelled}" if spelled else ""))

    if a.readme:
        readme = open(a.readme).read()
        unlinked = [f for f in pages if f"(man/{f})" not in readme]
        check(not unlinked, f"README.md links all {len(pages)} man pages"
              + (f"; not {unlinked}" if unlinked else ""))

    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
