#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cursors survive a lab that is training.

A writer process logs metric points to one run W of the demo lab (one
`probe log` transaction after another) while a reader pages through the
research tools, waiting for at least one new point between any two pages.
Each paged answer must equal the same question asked in one call on a
quiet store (browse runs / notes / checkpoints, search, entity lineage,
metrics points and curves of another run, query_sql rows of the other runs), with
no page refused; a points
walk over W itself continues too (its new points land after the cursor)
and returns every point of W in order, once. A curve of W is refused (its
points changed), and so are query_sql rows that include W's counts, in the
one restart shape. Re-sending an argument at its
default value continues a cursor.

usage: research_live_cursors.py PROBE_CLI PROBE_MCP_STDIO
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from research_deleted import Server  # noqa: E402

PROBE, STDIO = sys.argv[1], sys.argv[2]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


WRITER = r'''
import subprocess, sys, time
probe, store, run, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
for i in range(n):
    line = '{"key":"live/loss","step":%d,"value":%r}\n' % (100000 + i, 1.0 / (i + 1))
    subprocess.run([probe, "--store", store, "--quiet", "log", run], input=line.encode(),
                   check=True)
    time.sleep(0.02)
'''


def points_now(db, run):
    return db.execute("SELECT coalesce(sum(s.count), 0) FROM series s JOIN runs r"
                      " ON r.id=s.run_id WHERE r.slug=?", (run,)).fetchone()[0]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "demo.db")
        subprocess.run([PROBE, "--store", store, "--quiet", "demo"], check=True)
        db = sqlite3.connect(store)
        runs = [r[0] for r in db.execute(
            "SELECT r.slug FROM runs r JOIN series s ON s.run_id=r.id WHERE r.deleted=0"
            " GROUP BY r.id HAVING count(*) > 0 ORDER BY r.id")]
        W, Y = runs[0], runs[1]
        ykey = db.execute("SELECT s.key FROM series s JOIN runs r ON r.id=s.run_id"
                          " WHERE r.slug=? AND s.kind='float' ORDER BY s.id LIMIT 1",
                          (Y,)).fetchone()[0]
        lin = db.execute("SELECT from_ref FROM lineage GROUP BY from_ref ORDER BY count(*) DESC"
                         " LIMIT 1").fetchone()
        srv = Server(store)
        # what a quiet store answers in one call
        questions = [
            ("browse", {"mode": "runs", "limit": 200}, {"mode": "runs", "limit": 2}, "runs"),
            ("browse", {"mode": "notes", "limit": 100}, {"mode": "notes", "limit": 2}, "notes"),
            ("browse", {"mode": "checkpoints", "limit": 100},
             {"mode": "checkpoints", "limit": 3}, "checkpoints"),
            ("search", {"query": "loss", "limit": 50}, {"query": "loss", "limit": 3}, "results"),
            ("metrics", {"mode": "points", "run_id": Y, "key": ykey, "token_budget": 8000},
             {"mode": "points", "run_id": Y, "key": ykey, "token_budget": 512}, "series"),
        ]
        q = "SELECT r.slug, r.name, s.key, s.count FROM runs r JOIN series s ON s.run_id=r.id" \
            " WHERE r.slug<>'%s' ORDER BY s.id" % W
        questions.append(("query_sql", {"sql": q, "token_budget": 8000},
                          {"sql": q, "token_budget": 512}, "rows"))
        if lin:
            questions.append(("entity", {"refs": [lin[0]], "view": "lineage", "token_budget": 8000,
                                         "view_options": {"direction": "downstream", "depth": 3}},
                              {"refs": [lin[0]], "view": "lineage", "token_budget": 512,
                               "view_options": {"direction": "downstream", "depth": 3}},
                              "edges"))
        whole = {}
        def flat(tool, items):
            """Points come in chunks that differ with the budget: compare the points."""
            if tool != "metrics":
                return items
            return [(st, v) for c in items for st, v in zip(c["step"], c["value"])]

        for i, (tool, one, paged, key) in enumerate(questions):
            whole[i] = flat(tool, srv.pages(tool, one, key))
        # the curve of Y, one page, for the restart check of W's below
        writer = subprocess.Popen([sys.executable, "-c", WRITER, PROBE, store, "run:" + W, "400"])
        try:
            def wait_point(seen=[None]):
                """Until the writer has stored one more point of W."""
                start = points_now(db, W) if seen[0] is None else seen[0]
                for _ in range(500):
                    n = points_now(db, W)
                    if n > start:
                        seen[0] = n
                        return
                    time.sleep(0.01)
                check(False, "the writer stopped writing")

            for i, (tool, one, paged, key) in enumerate(questions):
                got, cur, pages = [], None, 0
                while True:
                    a = dict(paged)
                    if cur:
                        a["cursor"] = cur
                        if pages == 1 and tool == "browse":
                            a["include_deleted"] = False  # its default: the same call
                    r, err = srv.call(tool, a)
                    if err:
                        check(False, "%s %s page %d refused while W logs: %s" %
                              (tool, paged, pages + 1, r))
                        break
                    got += r.get(key, [])
                    pages += 1
                    cur = r.get("next_cursor")
                    if not cur or pages > 300:
                        break
                    wait_point()
                check(pages > 1, "%s %s: more than one page (%d)" % (tool, paged, pages))
                got = flat(tool, got)
                check(got == whole[i], "%s %s: the pages are the one-call answer (%d vs %d items)"
                      % (tool, paged, len(got), len(whole[i])))
            # a points walk over W while W logs: appends land after the cursor
            wkey = "live/loss"
            wait_point()
            got, cur, pages = [], None, 0
            while True:
                a = {"mode": "points", "run_id": W, "key": wkey, "token_budget": 512}
                if cur:
                    a["cursor"] = cur
                r, err = srv.call("metrics", a)
                if err:
                    check(False, "points of the logging run refused: %s" % r)
                    break
                for p in r.get("series", []):
                    got += p.get("step", [])
                pages += 1
                cur = r.get("next_cursor")
                if not cur or pages > 300:
                    break
                wait_point()
            check(pages > 1, "points of W: several pages (%d)" % pages)
            check(got == sorted(set(got)) and len(got) > 0,
                  "points of W: in order, each once (%d steps)" % len(got))
            # rows that change between pages: refused, in the one shape
            q = "SELECT s.key, s.count, r.slug FROM series s JOIN runs r ON r.id=s.run_id" \
                " ORDER BY (r.slug='%s') DESC, s.id" % W
            r, err = srv.call("query_sql", {"sql": q, "token_budget": 512})
            cur = r.get("next_cursor")
            check(cur, "the rows of W take several pages")
            if cur:
                wait_point()
                r, err = srv.call("query_sql", {"sql": q, "token_budget": 512, "cursor": cur})
                check(err and r.get("error") == "invalid_cursor" and r.get("reason") == "stale"
                      and r.get("restart") is True,
                      "query_sql rows that changed are refused, one shape: %s" % r)
            # a curve of W: refused once W has new points, in the one shape
            wkeys = [k[0] for k in db.execute(
                "SELECT s.key FROM series s JOIN runs r ON r.id=s.run_id WHERE r.slug=?"
                " AND s.kind='float' ORDER BY s.id", (W,))]
            a = {"mode": "series", "run_ids": [W], "keys": wkeys, "max_points": 50,
                 "token_budget": 600}
            r, err = srv.call("metrics", a)
            cur = r.get("next_cursor")
            check(cur, "the curve of W takes several pages: %s" % json.dumps(r)[:300])
            if cur:
                wait_point()
                r, err = srv.call("metrics", dict(a, cursor=cur))
                check(err and r.get("error") == "invalid_cursor" and r.get("restart") is True
                      and r.get("reason") == "stale",
                      "the curve of the logging run is refused, one shape: %s" % r)
        finally:
            writer.kill()
            writer.wait()
            srv.close()
    if failures:
        print("%d failure(s)" % failures)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
