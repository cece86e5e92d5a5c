#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every public header compiles on its own, twice included, as C11 -pedantic
and as C++11 -pedantic, with warnings as errors.

usage: headertest.py --cc 'CC...' --cxx 'CXX...' -I DIR [-I DIR ...] HEADER_DIR...

The headers are found by listing the HEADER_DIRs (the source folder and the
build folder that holds the generated version.h), so a new header is covered
without editing this test.
"""
import argparse
import os
import shlex
import subprocess
import sys
import tempfile

C_FLAGS = ["-std=c11", "-pedantic", "-Wall", "-Wextra", "-Werror",
           "-Wstrict-prototypes", "-Wmissing-prototypes", "-Wshadow",
           "-Wundef", "-Wconversion"]
CXX_FLAGS = ["-std=c++11", "-pedantic", "-Wall", "-Wextra", "-Werror",
             "-Wshadow", "-Wundef", "-Wold-style-cast"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", required=True)
    ap.add_argument("--cxx", default="")
    ap.add_argument("-I", dest="incs", action="append", default=[])
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()

    headers = sorted({f for d in a.dirs if os.path.isdir(d)
                      for f in os.listdir(d) if f.endswith(".h")})
    if not headers:
        print("no headers found in", a.dirs)
        return 1
    inc = [f"-I{d}" for d in a.incs]
    cc = shlex.split(a.cc)
    cxx = shlex.split(a.cxx) if a.cxx else []
    passed = failed = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        for h in headers:
            # Included twice: the include guard must hold. main() uses
            # nothing, so the header alone must declare what it needs.
            body = (f"#include <probemcp/{h}>\n#include <probemcp/{h}>\n"
                    "int main(void) { return 0; }\n")
            for lang, comp, flags, ext in (("C11", cc, C_FLAGS, "c"),
                                           ("C++11", cxx, CXX_FLAGS, "cpp")):
                if not comp:
                    print(f"SKIP {h} as {lang}: no compiler")
                    skipped += 1
                    continue
                src = os.path.join(tmp, f"t.{ext}")
                if ext == "cpp":
                    body_x = body.replace("int main(void)", "int main()")
                else:
                    body_x = body
                with open(src, "w") as f:
                    f.write(body_x)
                cmd = comp + flags + inc + ["-fsyntax-only", src]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode == 0:
                    print(f"ok   {h} as {lang}")
                    passed += 1
                else:
                    print(f"FAIL {h} as {lang}:\n{r.stderr}")
                    failed += 1
    print(f"{passed} passed, {failed} failed" +
          (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
