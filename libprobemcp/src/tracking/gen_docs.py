#!/usr/bin/env python3
"""Builds the tracking toolset's documentation into a C source file.

usage: gen_docs.py OUT.c README.md man/NAME.SECTION.scd ...
       gen_docs.py --list MAN_DIR      (prints the .scd pages, one a line)

Each man page (scdoc source, see scdoc(5)) is turned into markdown here, at
build time, so list_docs / get_doc serve the pages without any file at run
time; README.md is served as it is. The conversion covers what scdoc
knows: the preamble line, headings, bold and underline, backslash escapes,
indented blocks, bullet and numbered lists, literal blocks, tables, forced
line breaks and comments. Python 3 standard library only (no network).
"""
import os
import re
import sys


def unescape_inline(s):
    """scdoc inline text -> markdown: *bold* -> **bold**, _under_ -> *under*,
    \\x -> x (escaped again where markdown would read it)."""
    out = []
    i = 0
    bold = under = False
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            out.append("\\" + n if n in "*_`[]<>#|" else n)
            i += 2
            continue
        if c == "*":
            out.append("**")
            bold = not bold
        elif c == "_" and (not (i > 0 and s[i - 1].isalnum()) or
                           (under and not (i + 1 < len(s) and s[i + 1].isalnum()))):
            # scdoc's rule: _ after a letter or digit is a letter (snake_case)
            # unless it closes an underline before a non-word character
            out.append("*")
            under = not under
        elif c in "<>":
            out.append("\\" + c)
        else:
            out.append(c)
        i += 1
    if bold:
        out.append("**")
    if under:
        out.append("*")
    return "".join(out)


def unescape_literal(s):
    """Inside ``` blocks scdoc still reads backslash escapes."""
    return re.sub(r"\\(.)", r"\1", s)


def table(rows):
    """rows: list of lists of cell text (inline scdoc) -> markdown lines."""
    width = max(len(r) for r in rows)
    cells = [[unescape_inline(c.strip()).replace("|", "\\|") for c in r] +
             [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(cells[0]) + " |",
             "|" + "---|" * width]
    for r in cells[1:]:
        lines.append("| " + " | ".join(r) + " |")
    return lines


def scd_to_markdown(text, name):
    """Returns (title, markdown) of one scdoc page."""
    lines = text.split("\n")
    # The preamble: "name(section) [footer ...]".
    while lines and not lines[0].strip():
        lines.pop(0)
    head = lines.pop(0).strip() if lines else name
    m = re.match(r"^(\S+?)\((\w+)\)", head)
    page = "%s(%s)" % (m.group(1), m.group(2)) if m else name
    out = ["# " + page, ""]
    title = page
    i = 0
    section = None
    in_literal = False
    last_term = False
    rows = None  # table rows being read
    while i < len(lines):
        raw = lines[i]
        i += 1
        if in_literal:
            if raw.strip() == "```":
                out.append("```")
                in_literal = False
            else:
                out.append(unescape_literal(raw.lstrip("\t")))
            continue
        if rows is not None:
            s = raw.lstrip()
            if s.startswith("|"):
                rows.append([s[1:]])
                continue
            if s[:2] in (":-", ":[", ":]", ": ", ":|") or s == ":":
                rows[-1].append(s[2:])
                continue
            if raw.startswith(" ") and s:
                rows[-1][-1] += " " + s  # a cell's text goes on
                continue
            out.extend(table(rows))
            rows = None
        if raw.startswith(";"):
            continue  # a comment
        s = raw.rstrip()
        if s.strip() == "```":
            out.append("```")
            in_literal = True
            continue
        if s.startswith("[[") or s.startswith("|[") or s.startswith("]["):
            rows = [[s[2:]]]
            continue
        hm = re.match(r"^(#+) (.*)$", s)
        if hm:
            level = len(hm.group(1)) + 1
            section = hm.group(2).strip()
            out.append("#" * level + " " + unescape_inline(section))
            last_term = False
            continue
        if not s.strip():
            out.append("")
            last_term = False
            continue
        depth = len(s) - len(s.lstrip("\t"))
        body = s.lstrip("\t")
        hard = body.endswith("++")
        if hard:
            body = body[:-2].rstrip()
        lm = re.match(r"^([-.]) (.*)$", body)
        if lm:
            marker = "-" if lm.group(1) == "-" else "1."
            text = unescape_inline(lm.group(2))
            line = "  " * depth + marker + " " + text
        elif depth:
            # An indented block: under a term line (a definition) it is the
            # item's text, else a quoted block.
            text = unescape_inline(body)
            line = ("  " * depth if last_term else "> " * depth) + text
        else:
            text = unescape_inline(body)
            nxt = lines[i] if i < len(lines) else ""
            prev = lines[i - 2] if i >= 2 else ""
            if (not prev.strip() or prev.startswith("\t")) and nxt.startswith("\t"):
                line = "- " + text  # a term: the indented text below explains it
                last_term = True
            else:
                line = text
        if section == "NAME" and not depth and " - " in body:
            title = page + ": " + body.split(" - ", 1)[1].strip()
        elif section == "NAME" and not depth and title != page:
            title += " " + body.strip()
        out.append(line + ("\\" if hard else ""))
    if rows is not None:
        out.extend(table(rows))
    md = "\n".join(out)
    md = re.sub(r"\n{3,}", "\n\n", md).strip() + "\n"
    return title, md


def c_string(s):
    """A short C string literal (names, titles, URLs)."""
    out = []
    for b in s.encode("utf-8"):
        ch = chr(b)
        if ch in "\\\"?":
            out.append("\\" + ch)
        elif 32 <= b < 127:
            out.append(ch)
        else:
            out.append("\\%03o" % b)
    return '"' + "".join(out) + '"'


def c_bytes(s):
    """A NUL-terminated char array initializer: C compilers need only take
    string literals of 4095 characters, and pages are longer."""
    data = s.encode("utf-8") + b"\0"
    rows = []
    for i in range(0, len(data), 24):
        rows.append("  " + ",".join(str(b) for b in data[i:i + 24]) + ",")
    return "{\n" + "\n".join(rows) + "\n}"


def main(argv):
    if len(argv) == 3 and argv[1] == "--list":
        for f in sorted(os.listdir(argv[2])):
            if f.endswith(".scd"):
                print(os.path.join(argv[2], f))
        return 0
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    out_path, inputs = argv[1], argv[2:]
    docs = []
    for path in inputs:
        base = os.path.basename(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if base.endswith(".scd"):
            name = base[:-4]  # NAME.SECTION
            title, md = scd_to_markdown(text, name)
            sec = name.rsplit(".", 1)
            url = "man:%s(%s)" % (sec[0], sec[1])
        else:
            name = base[:-3] if base.endswith(".md") else base
            m = re.search(r"^# (.+)$", text, re.M)
            title = m.group(1).strip() if m else name
            md = text
            url = base
        docs.append((name, title, url, md))
    # README first, then the pages by name.
    docs.sort(key=lambda d: (d[2].startswith("man:"), d[0]))
    with open(out_path, "w", encoding="ascii") as f:
        f.write("/* Generated by gen_docs.py from README.md and the man pages: do "
                "not edit. */\n#include \"tracking/docs.h\"\n\n")
        for k, (name, title, url, md) in enumerate(docs):
            f.write("static const unsigned char md%d[] = %s;\n\n" % (k, c_bytes(md)))
        f.write("const pmcp__trk_doc pmcp__trk_docs[] = {\n")
        for k, (name, title, url, md) in enumerate(docs):
            f.write("  {%s, %s, %s, (const char *)md%d, %d},\n" % (
                c_string(name), c_string(title), c_string(url), k,
                len(md.encode("utf-8"))))
        f.write("};\n\nconst size_t pmcp__trk_n_docs = %d;\n" % len(docs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
