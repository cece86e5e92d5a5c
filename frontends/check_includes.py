#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Frontends use the library's public API only: every #include "..." in
the C files of the frontends named on the command line is a public header
(probemcp/...) or a file of the frontend's own folder. Run by meson at
configure time; a private header fails the build, naming the line.

usage: check_includes.py [--stamp FILE] FRONTENDS_DIR NAME...
       (--stamp: written when the check passes, for a build step)
"""
import os
import re
import sys


def main():
    args = sys.argv[1:]
    stamp = None
    if args[:1] == ["--stamp"]:
        stamp, args = args[1], args[2:]
    root, names = args[0], args[1:]
    bad = []
    for name in names:
        d = os.path.join(root, name)
        for dirpath, _, files in os.walk(d):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                for n, line in enumerate(open(path, encoding="utf-8"), 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    inc = m.group(1)
                    if inc.startswith("probemcp/") and ".." not in inc:
                        continue
                    if ".." not in inc and (os.path.exists(os.path.join(dirpath, inc)) or
                                            os.path.exists(os.path.join(d, inc))):
                        continue
                    bad.append("%s:%d: #include \"%s\" is not a public header (probemcp/...)"
                               % (os.path.relpath(path, root), n, inc))
    for b in bad:
        print(b)
    if not bad and stamp:
        with open(stamp, "w") as f:
            f.write("frontends %s include public headers only\n" % " ".join(names))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
