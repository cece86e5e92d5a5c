#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every source file of the project names its license in an SPDX line.

    spdx.py SOURCE_ROOT          check: list the files without one, exit 1
    spdx.py SOURCE_ROOT --fix    add `SPDX-License-Identifier: MIT` where missing

Sources are C, C++, headers, Python, shell (also scripts without an
extension, by their shebang, as in .ci/), JavaScript and meson files,
outside node_modules, build directories and test data. The line must be in
the first three lines (after a shebang, if any), in the file's own comment
syntax. Data under tests/data and the demo data keep the licenses named in
NOTICE beside them and are not sources.
"""
import os
import sys

TAG = "SPDX-License-Identifier: MIT"
STYLE = {
    ".c": "/* {} */", ".h": "/* {} */", ".cc": "// {}", ".cpp": "// {}",
    ".py": "# {}", ".sh": "# {}", ".mjs": "// {}", ".cjs": "// {}", ".js": "// {}",
    "meson.build": "# {}", "meson_options.txt": "# {}", "meson.options": "# {}",
}
SKIP_DIRS = {"node_modules", ".git", "subprojects", "data", "__pycache__"}


def kind(path):
    name = os.path.basename(path)
    if name in STYLE:
        return name
    ext = os.path.splitext(name)[1]
    if ext in STYLE:
        return ext
    if not ext:  # a script without an extension (.ci/run): by its shebang
        try:
            with open(path, "rb") as f:
                first = f.readline()
        except OSError:
            return None
        if first.startswith(b"#!") and (b"sh" in first or b"python" in first):
            return ".sh"
    return None


def sources(root):
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        top = rel.split(os.sep)[0]
        if rel != "." and (top.startswith("build") or (top.startswith(".") and top != ".ci")):
            dirs[:] = []
            continue
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")
                         and not (rel == "." and x.startswith(".") and x != ".ci"))
        for f in sorted(files):
            p = os.path.join(d, f)
            k = kind(p)
            if k:
                yield p, k


def has_tag(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        head = [f.readline() for _ in range(3)]
    return any("SPDX-License-Identifier:" in line for line in head)


def fix(path, k):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    line = STYLE[k].format(TAG) + "\n"
    if text.startswith("#!"):
        nl = text.index("\n") + 1
        text = text[:nl] + line + text[nl:]
    else:
        text = line + text
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    missing = [(p, k) for p, k in sources(root) if not has_tag(p)]
    if "--fix" in sys.argv[2:]:
        for p, k in missing:
            fix(p, k)
        print(f"added the SPDX line to {len(missing)} files")
        return 0
    for p, _ in missing:
        print(f"{os.path.relpath(p, root)}: no '{TAG}' line in its first three lines")
    if missing:
        print(f"{len(missing)} source files without a license line "
              f"(add one: python3 tests/meta/spdx.py . --fix)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
