#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pmcp_json_string_decode() against Python's json module as the truth.

Random string literals (ASCII, control characters, quotes, backslashes,
BMP and astral characters, each written raw or escaped in every way JSON
allows, upper- and lowercase hex, surrogate pairs) followed by other
bytes: the decoder must consume exactly the literal and give the UTF-8 of
what json.loads makes of it, measuring (out NULL), into a buffer and in
place. Broken literals (cut short, a raw control character, unknown
escapes, short hex, lone surrogates, which json.loads lets through but
RFC 8259 text cannot hold as UTF-8) are refused at the offending byte.
The library is named by $PROBEMCP_LIB."""
import ctypes as C
import json
import os
import random
import sys

lib = C.CDLL(os.environ["PROBEMCP_LIB"])
dec = lib.pmcp_json_string_decode
dec.restype = C.c_int
dec.argtypes = [C.c_char_p, C.c_size_t, C.c_uint, C.c_void_p, C.POINTER(C.c_size_t),
                C.POINTER(C.c_size_t), C.POINTER(C.c_char_p)]
NO_NUL = 1
rnd = random.Random(11)
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        if len(fails) < 20:
            print("FAIL:", what, file=sys.stderr)


def call(data, flags=0, out=None, in_place=False):
    """(rc, used, out_len, expected, text) for bytes @data."""
    buf = C.create_string_buffer(data, len(data) + 1)
    used, n, what = C.c_size_t(7777), C.c_size_t(7777), C.c_char_p()
    if in_place:
        dst = C.addressof(buf) + 1
    elif out:
        dst = C.addressof(out)
    else:
        dst = None
    rc = dec(C.cast(buf, C.c_char_p), len(data), flags, dst, C.byref(used), C.byref(n),
             C.byref(what))
    text = None
    if rc == 0 and dst is not None:
        text = C.string_at(dst, n.value + 1)
    return rc, used.value, n.value, what.value, text


def escape(cp):
    """One spelling of code point @cp inside a literal."""
    short = {0x22: '\\"', 0x5C: "\\\\", 0x2F: "\\/", 8: "\\b", 12: "\\f", 10: "\\n",
             13: "\\r", 9: "\\t"}
    k = rnd.randrange(4)
    must = cp < 0x20 or cp in (0x22, 0x5C)
    if k == 0 and cp in short:
        return short[cp]
    if k == 1 and not must:
        return chr(cp)
    if cp >= 0x10000:
        v = cp - 0x10000
        hi, lo = 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF)
        f = "\\u%04x\\u%04X" if rnd.random() < 0.5 else "\\u%04X\\u%04x"
        return f % (hi, lo)
    if k == 2 and not must:
        return chr(cp)
    return ("\\u%04x" if rnd.random() < 0.5 else "\\u%04X") % cp


def random_cp():
    r = rnd.random()
    if r < 0.5:
        return rnd.randrange(0x20, 0x7F)
    if r < 0.6:
        return rnd.choice([0x22, 0x5C, 0x2F, 8, 9, 10, 12, 13, rnd.randrange(1, 0x20)])
    if r < 0.8:
        cp = rnd.randrange(0x80, 0x10000)
        return cp if not 0xD800 <= cp <= 0xDFFF else 0xE000
    return rnd.randrange(0x10000, 0x110000)


literals = 0
for i in range(20000):
    cps = [random_cp() for _ in range(rnd.randrange(0, 40))]
    lit = '"' + "".join(escape(cp) for cp in cps) + '"'
    if rnd.random() < 0.3:  # long plain runs take the eight-byte path
        lit = lit[:-1] + "x" * rnd.randrange(1, 50) + '"'
    raw = lit.encode("utf-8")
    tail = rnd.choice([b"", b",", b'"more"', b"}\n", b"\\u00"])
    want = json.loads(lit).encode("utf-8")
    rc, used, n, _, _ = call(raw + tail)
    check(rc == 0 and used == len(raw) and n == len(want),
          f"measure {lit!r}: rc {rc} used {used}/{len(raw)} len {n}/{len(want)}")
    check((n + 2 == used) == ("\\" not in lit), f"no escape <=> len + 2 == used: {lit!r}")
    out = C.create_string_buffer(len(raw) + len(tail) + 1)
    rc, used, n, _, text = call(raw + tail, out=out)
    check(rc == 0 and text == want + b"\0", f"decode {lit!r}: {text!r} want {want!r}")
    rc, used, n, _, text = call(raw + tail, in_place=True)
    check(rc == 0 and text == want + b"\0", f"in place {lit!r}: {text!r} want {want!r}")
    literals += 1

# \u0000: decoded (counted in the length), or refused with PMCP_JSON_NO_NUL
rc, used, n, _, text = call(b'"a\\u0000b"', out=C.create_string_buffer(16))
check(rc == 0 and n == 3 and text == b"a\0b\0", f"\\u0000 decoded: {rc} {n} {text!r}")
rc, used, _, what, _ = call(b'"a\\u0000b"', flags=NO_NUL)
check(rc != 0 and used == 2 and b"\\u0000" in what, f"\\u0000 refused: {rc} {used} {what}")

# Broken literals: refused, at the byte named.
bad = [
    (b"", 0), (b"abc", 0), (b'"abc', 4), (b'"ab\x01c"', 3), (b'"ab\nc"', 3),
    (b'"a\\', 3), (b'"a\\x"', 3), (b'"a\\u12"', 4), (b'"a\\u12g4"', 4), (b'"\\uD800"', 7),
    (b'"\\ud800\\n"', 7), (b'"\\ud800\\ud800"', 7), (b'"\\udc00"', 1), (b'"x\\uDFFFy"', 2),
    (b'"\\U0041"', 2), (b'"\\\'"', 2),
]
for data, at in bad:
    rc, used, _, what, _ = call(data)
    check(rc != 0 and used == at and what, f"{data!r}: rc {rc}, at {used} (want {at}), {what}")
    try:
        s = json.loads(data.decode("utf-8", "replace"))
        lone = any(0xD800 <= ord(c) <= 0xDFFF for c in s)
        check(lone, f"{data!r}: json.loads accepts it")  # only lone surrogates get through
    except ValueError:
        pass
# random corruptions of valid literals: the decoder refuses exactly what
# json.loads refuses, and also what holds a lone surrogate
for i in range(20000):
    cps = [random_cp() for _ in range(rnd.randrange(1, 12))]
    lit = '"' + "".join(escape(cp) for cp in cps) + '"'
    k, pos = rnd.randrange(5), rnd.randrange(1, len(lit))
    if k == 0:
        lit = lit[:pos]  # cut short
    elif k == 1:
        lit = lit[:pos] + chr(rnd.randrange(0, 0x20)) + lit[pos:]
    elif k == 2:
        lit = lit[:pos] + "\\" + rnd.choice("xuU0a'\"/") + lit[pos:]
    elif k == 3:
        lit = lit[:pos] + "\\u" + "".join(rnd.choice("0123456789abcdefABCDEFg") for _ in
                                          range(rnd.randrange(5))) + lit[pos:]
    else:
        lit = lit[:pos] + rnd.choice(["\\ud800", "\\udbff", "\\udc00", "\\uDFFF"]) + lit[pos:]
    raw = lit.encode("utf-8", "surrogatepass")
    try:
        s = json.loads(lit)
        ok = isinstance(s, str) and not any(0xD800 <= ord(c) <= 0xDFFF for c in s)
    except ValueError:
        ok = False
    rc, used, n, _, _ = call(raw)
    if ok:
        check(rc == 0 and used == len(raw) and n == len(s.encode("utf-8")),
              f"valid {lit!r} refused ({rc})")
    else:
        # a refused literal may be a valid one followed by more bytes
        if rc == 0:
            try:
                s2 = json.loads(raw[:used].decode("utf-8"))
                good = not any(0xD800 <= ord(c) <= 0xDFFF for c in s2) and used < len(raw)
            except ValueError:
                good = False
            check(good, f"broken {lit!r} accepted")
        else:
            check(used <= len(raw), f"{lit!r}: offset {used} past the end")

if fails:
    sys.exit(f"{len(fails)} checks failed")
print(f"ok: {literals} literals decoded three ways, {len(bad)} + 20000 broken ones")
