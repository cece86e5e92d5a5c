#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Lists, for `man FUNCTION` to find its page, every name a section-3
page documents (in its NAME section, or declared in its SYNOPSIS) that is
not a page of its own: one line "NAME PAGE" each (PAGE without its
section), in name order; a name two pages document goes to the first that
names it in NAME, else the first in name order.

usage: aliases.py MAN_DIR
"""
import os
import re
import sys


def names(path):
    """The names of a page's NAME section (before " - " if any)."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^# NAME\s*\n(.*?)(?:\n\s*\n|\n#)", text, re.S | re.M)
    if not m:
        return []
    para = m.group(1).split(" - ")[0]
    return [n for n in re.split(r"[\s,]+", para) if re.fullmatch(r"pmcp_\w+", n)]


def declared(path):
    """The functions the page's SYNOPSIS declares."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^# SYNOPSIS\s*\n(.*?)^# ", text, re.S | re.M)
    return re.findall(r"\b(pmcp_\w+)\(", m.group(1)) if m else []


def main():
    d = sys.argv[1]
    pages = {f[:-len(".3.scd")] for f in os.listdir(d) if f.endswith(".3.scd")}
    seen = {}
    for find in (names, declared):
        for page in sorted(pages):
            for n in find(os.path.join(d, page + ".3.scd")):
                if n not in pages and n not in seen:
                    seen[n] = page
    for n in sorted(seen):
        print(n, seen[n])


if __name__ == "__main__":
    main()
