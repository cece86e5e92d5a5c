#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""content, record, series smoothing and grouped defaults against the truth.

A store made here: a 500-line training log stored as an artifact in two
versions, a checkpoint whose metric value has 16 significant figures, and
a run logging 3000 noisy points of one key (a NaN among them).
- content grep on a term of every line pages at every budget, its blocks
  split at line boundaries: the lines read back are the file's, every
  matching line named once;
- content pages are whole 40-line sections, bigger at a bigger budget, and
  read back the file; view_options.version reads the older version;
- the record view is the stored record, not six figures;
- metrics series smoothing at each kept point equals TensorBoard's EMA
  computed here over the raw points, whatever max_points;
- metrics grouped with every default fits the default budget; a max_rows
  that cannot fit names one that does;
- tools/list costs under 3,000 tokens and browse's limit maximum holds
  in every mode.

usage: research_views.py PROBE_CLI PROBE_MCP_STDIO
"""
import hashlib
import json
import math
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import research_deleted  # noqa: E402
from research_deleted import Server  # noqa: E402

PROBE, STDIO = sys.argv[1], sys.argv[2]
research_deleted.PROBE, research_deleted.STDIO = PROBE, STDIO
probe = research_deleted.probe
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def content_pages(srv, ref, opts, budget):
    out, cur, n = [], None, 0
    while True:
        a = {"refs": [ref], "view": "content", "view_options": opts, "token_budget": budget}
        if cur:
            a = {"refs": [ref], "view": "content", "view_options": opts,
                 "token_budget": budget, "cursor": cur}
        r, err = srv.call("entity", a)
        if err:
            return None, r
        out.append(r)
        cur = r.get("next_cursor")
        n += 1
        if not cur or n > 400:
            return out, None


def tb_ema(values, w):
    out, last, n = [], 0.0, 0
    for v in values:
        if not math.isfinite(v):
            out.append(v)
            continue
        last = last * w + (1 - w) * v
        n += 1
        out.append(last / (1 - w ** n))
    return out


def close(a, b):
    return abs(a - b) <= 1e-5 * max(abs(a), abs(b), 1e-12)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "s.db")
        probe(store, "init")
        R = probe(store, "run", "create", "train").splitlines()[-1].split()[0]
        rnd = random.Random(7)
        log1 = "".join("step %d loss %.6f lr %.2e\n" % (i, 2.0 / (i + 1) + rnd.random(), 1e-3)
                       for i in range(500))
        log2 = "".join("epoch %d accuracy %.4f\n" % (i, rnd.random()) for i in range(90))
        f = os.path.join(tmp, "train.log")
        open(f, "w").write(log1)
        A = probe(store, "artifact", "add", f, "--on", R).splitlines()[-1].split()[0]
        open(f, "w").write(log2)
        probe(store, "artifact", "add", f, "--on", R)
        base = A.split("@")[0]
        # lines longer than a page: one of hex and CJK (about a token a
        # character), one of words, between short lines
        dense = "".join(rnd.choice("0123456789abcdef\u4e2d\u6587\u5b57") for _ in range(30000))
        wordy = " ".join(rnd.choice(["loss", "train", "model", "the"]) for _ in range(20000))
        longf = os.path.join(tmp, "long.txt")
        long_text = "head\n" + dense + "\nmiddle\n" + wordy + "\ntail\n"
        open(longf, "w", encoding="utf-8").write(long_text)
        LONG = probe(store, "artifact", "add", longf, "--on", R).splitlines()[-1].split()[0]
        LONG = LONG.split("@")[0]
        probe(store, "put", "checkpoint", json.dumps({"run": R, "step": 7, "metric": "acc",
                                                      "value": 0.7431560204762965}))
        pts, raw = [], []
        for i in range(3000):
            v = float("nan") if i == 1234 else math.exp(-i / 800.0) + rnd.gauss(0, 0.05)
            raw.append((i * 3, v))
            pts.append(json.dumps({"key": "loss", "step": i * 3,
                                   "value": "NaN" if v != v else v}))
        probe(store, "log", R, stdin=("\n".join(pts) + "\n").encode())
        srv = Server(store)
        try:
            lines1 = log1.splitlines()
            # content grep: every line matches
            for budget in (800, 2000, 8000):
                pages, err = content_pages(srv, base, {"grep": "loss", "context_lines": 2,
                                                        "version": 1}, budget)
                check(pages is not None, "grep at budget %d refused: %s" % (budget, err))
                if not pages:
                    continue
                got, matches = [], []
                for p in pages:
                    for b in p.get("matches", []):
                        check(b["start_line"] == len(got) + 1,
                              "grep %d: block starts at %d after %d lines"
                              % (budget, b["start_line"], len(got)))
                        got += b["lines"]
                        matches += b["match_lines"]
                check(got == lines1, "grep %d: lines read back differ (%d of %d)"
                      % (budget, len(got), len(lines1)))
                check(matches == list(range(1, 501)), "grep %d: match_lines" % budget)
                check(pages[0].get("match_count") == 500, "grep %d: match_count" % budget)
            # a line longer than a page is read in parts sized by tokens:
            # the pages join back to the file at every budget, fewer at more
            count = {}
            for budget in (512, 2000, 8000):
                pages, err = content_pages(srv, LONG, {}, budget)
                check(pages is not None, "long lines at %d refused: %s" % (budget, err))
                if not pages:
                    continue
                check("".join(p["text"] for p in pages) == long_text,
                      "long lines at %d: the pages do not join back to the file" % budget)
                count[budget] = len(pages)
            check(count.get(512, 0) > count.get(2000, 0) > count.get(8000, 0) > 0,
                  "long lines: pages per budget %s" % count)
            # grep on such lines: answered, the line's part that fits named
            # by its bytes (from the match), the rest in view=content
            long_lines = long_text.split("\n")
            for pat, ln in (("model", 4), ("\u6587", 2), ("middle", 3)):
                for budget in (800, 2000, 8000):
                    pages, err = content_pages(srv, LONG, {"grep": pat, "context_lines": 1},
                                               budget)
                    check(pages is not None, "grep %r on long lines at %d: %s" %
                          (pat, budget, err))
                    if not pages:
                        continue
                    blocks = [b for p in pages for b in p.get("matches", [])]
                    check(any(ln in b["match_lines"] for b in blocks),
                          "grep %r at %d: line %d is not a match" % (pat, budget, ln))
                    for b in blocks:
                        cut = {c["line"]: c for c in b.get("cut_lines", [])}
                        for k, text in enumerate(b["lines"]):
                            n = b["start_line"] + k
                            whole = long_lines[n - 1].encode()
                            if n in cut:
                                c = cut[n]
                                want = whole[c["from_byte"]:c["from_byte"] + c["bytes"]]
                                check(c["line_bytes"] == len(whole) and
                                      text.encode() == want and len(want) < len(whole),
                                      "grep %r at %d: cut line %d is not its bytes %s" %
                                      (pat, budget, n, c))
                            else:
                                check(text.encode() == whole, "grep %r at %d: line %d differs"
                                      % (pat, budget, n))
                        for m in b["match_lines"]:
                            k = m - b["start_line"]
                            check(pat in b["lines"][k], "grep %r at %d: the match line %d's "
                                  "part holds no match" % (pat, budget, m))
            # content pages: whole sections, bigger at a bigger budget
            ends = {}
            for budget in (1200, 2000, 8000):
                pages, err = content_pages(srv, base, {"version": 1}, budget)
                check(pages is not None, "content at %d refused: %s" % (budget, err))
                if not pages:
                    continue
                text = "".join(p["text"] for p in pages)
                check(text == log1, "content %d: text read back differs" % budget)
                for p in pages[:-1]:
                    check((p["end_line"] - p["start_line"] + 1) % 40 == 0,
                          "content %d: page %d..%d is not whole sections"
                          % (budget, p["start_line"], p["end_line"]))
                ends[budget] = pages[0]["end_line"]
                check(all(p.get("sha256") == hashlib.sha256(log1.encode()).hexdigest()
                          for p in pages), "content %d: sha256" % budget)
            check(ends.get(8000, 0) > ends.get(2000, 0) >= 40,
                  "a bigger budget gives bigger pages: %s" % ends)
            # an older version by view_options.version; the latest without
            pages, err = content_pages(srv, base, {"version": 1}, 8000)
            check(pages and "".join(p["text"] for p in pages) == log1,
                  "view_options.version 1: %s" % (err or ""))
            pages, err = content_pages(srv, base, {}, 8000)
            check(pages and "".join(p["text"] for p in pages) == log2, "latest version: %s" % err)
            pages, err = content_pages(srv, base, {"version": 9}, 2000)
            check(pages is None, "a version that does not exist is refused")
            # the record is the stored record
            r, err = srv.call("entity", {"refs": ["checkpoint:%s@step7" % R[4:]],
                                         "view": "record"})
            val = r.get("data", {}).get("value") if not err else None
            check(val == 0.7431560204762965,
                  "record value %r, want 0.7431560204762965" % val)
            # series smoothing over the raw points
            steps = [s for s, _ in raw]
            want = dict(zip(steps, tb_ema([v for _, v in raw], 0.6)))
            for mp in (50, 150, 300):
                r, err = srv.call("metrics", {"mode": "series", "run_ids": [R], "keys": ["loss"],
                                              "max_points": mp, "smoothing": 0.6,
                                              "token_budget": 8000})
                check(not err, "series max_points %d: %s" % (mp, r))
                if err:
                    continue
                row = r["series"][0] if "series" in r else r["rows"][0]
                bad = [(s, sm, want[s]) for s, sm in zip(row["step"], row["smoothed"])
                       if not close(sm, want[s])]
                check(not bad, "series max_points %d: smoothed off TensorBoard's EMA at %d "
                      "points, e.g. %s" % (mp, len(bad), bad[:3]))
            # grouped: defaults fit; a max_rows too big names one that fits
            r, err = srv.call("metrics", {"mode": "grouped", "run_id": R, "key": "loss"})
            check(not err, "grouped with defaults: %s" % r)
            r, err = srv.call("metrics", {"mode": "grouped", "run_id": R, "key": "loss",
                                          "max_rows": 1000})
            check(err, "grouped max_rows 1000 fits the default budget?")
            msg = json.dumps(r)
            import re
            m = re.search(r"max_rows (\d+) fits", msg)
            check(m, "the refusal names a max_rows that fits: %s" % msg)
            if m:
                r, err = srv.call("metrics", {"mode": "grouped", "run_id": R, "key": "loss",
                                              "max_rows": int(m.group(1))})
                check(not err, "the max_rows named fits: %s" % r)
            # at every budget, with a step_bucket of the caller's too: what a
            # refusal names (max_rows, with its step_bucket) is answered
            for budget in (512, 1000, 2000, 8000):
                for extra in ({}, {"step_bucket": 1}, {"step_bucket": 3}):
                    for rows in (1000, 3):
                        a = dict({"mode": "grouped", "run_id": R, "key": "loss",
                                  "max_rows": rows, "token_budget": budget}, **extra)
                        r, err = srv.call("metrics", a)
                        if not err:
                            continue
                        msg = r.get("message", "")
                        b = dict(a)
                        m1 = re.search(r"max_rows (\d+) fits it \(the default\)"
                                       r"(?: with step_bucket (\d+))?", msg)
                        m2 = re.search(r"step_bucket (\d+) with max_rows (\d+) fits", msg)
                        m3 = re.search(r"step_bucket (\d+) makes at most", msg)
                        if m1:
                            b["max_rows"] = int(m1.group(1))
                            if m1.group(2):
                                b["step_bucket"] = int(m1.group(2))
                        elif m2:
                            b["step_bucket"], b["max_rows"] = int(m2.group(1)), int(m2.group(2))
                        elif m3:
                            b["step_bucket"] = int(m3.group(1))
                        check(m1 or m2 or m3, "grouped %s: the refusal names what fits: %s" %
                              (a, msg))
                        if not (m1 or m2 or m3):
                            continue
                        r2, err2 = srv.call("metrics", b)
                        check(not err2, "grouped %s, as %r says: %s" % (b, msg, r2))
            # tools/list: the six tools under 3,000 o200k tokens; browse's limit
            # maximum is accepted by every mode
            tools = srv.rpc("tools/list", {})["result"]["tools"]
            text = json.dumps(tools, separators=(",", ":"))
            import subprocess
            n = int(subprocess.run([PROBE, "tokens", "count"], input=text.encode(),
                                   capture_output=True).stdout.decode().split()[0])
            check(n < 3000, "tools/list of the research tools costs %d tokens" % n)
            br = [t for t in tools if t["name"] == "browse"][0]["inputSchema"]["properties"]
            top = br["limit"]["maximum"]
            for mode in br["mode"]["enum"]:
                r, err = srv.call("browse", {"mode": mode, "limit": top})
                check(not err, "browse %s limit %d (the schema's maximum): %s" % (mode, top, r))
        finally:
            srv.close()
    if failures:
        print("%d failure(s)" % failures)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
