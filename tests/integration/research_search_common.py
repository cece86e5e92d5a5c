#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""search by a name whose words are common and rare: the ranking of
FTS5's bm25() over every match, page by page.

A generated MLflow lab of 2,400 runs named trial-gNN-... (trial in every
run, past the count the store scores exactly; gNN in 60, g0042x in 3) with
names of several lengths (ties and distinct scores), some runs deleted.
For a query of both words the store scores only the runs holding the rare
one while their scores stay above what the common word alone can give,
and ranks every match otherwise. The truth is computed here from the
store's own index (sqlite3: bm25(search_fts, 2.0, 1.0) over the whole
query, ties by row id): every page at limits 10 and 7 (across the point
where the pass changes) shows exactly the live runs of that ranking in
order, each once, scores equal to 4 places; the keyword count is marked
an estimate and is near the true count of matches. A query whose rare
word holds fewer runs than a page (g0042x) gives the same ranking too.

usage: research_search_common.py PROBE_CLI PROBE_MCP_STDIO
"""
import os
import sqlite3
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import research_deleted as rd  # noqa: E402
from research_deleted import Server, check, probe  # noqa: E402

N_RUNS = 2400


def mlruns(tmp):
    root = os.path.join(tmp, "mlruns-common")
    os.makedirs(os.path.join(root, "1"))
    with open(os.path.join(root, "1", "meta.yaml"), "w") as f:
        f.write("artifact_location: file:///tmp/mlruns/1\nexperiment_id: '1'\n"
                "lifecycle_stage: active\nname: common-sweep\n")
    for i in range(N_RUNS):
        rid = "%032x" % (0xc0000 + i)
        d = os.path.join(root, "1", rid)
        os.makedirs(d)
        # lengths vary with i: the same word scores apart in longer names
        name = "trial-g%02d-%05d" % (i % 40, i) + " x" * (i % 3)
        if i % 800 == 42:
            name += " g0042x"
        dead = i % 13 == 5
        with open(os.path.join(d, "meta.yaml"), "w") as f:
            f.write("artifact_uri: file:///tmp/x\nend_time: 1700000900000\n"
                    "experiment_id: '1'\nlifecycle_stage: %s\nrun_id: %s\nrun_uuid: %s\n"
                    "run_name: %s\nstart_time: %d\nstatus: 3\nuser_id: r\n" %
                    ("deleted" if dead else "active", rid, rid, name, 1700000000000 + i))
    return root


def truth(store, match):
    """(ref, score) of every match of @match, bm25() over the whole query."""
    db = sqlite3.connect(store)
    try:
        return db.execute(
            "SELECT d.ref, -bm25(search_fts, 2.0, 1.0) AS sc FROM search_fts"
            " JOIN search_docs d ON d.id=search_fts.rowid WHERE search_fts MATCH ?"
            " ORDER BY sc DESC, search_fts.rowid", (match,)).fetchall()
    finally:
        db.close()


def pages(srv, q, lim, n_pages):
    return rd.search_pages(srv, q, lim, n_pages, to_the_end=False)


def check_query(srv, store, q, match, dead, n_pages):
    want = [(ref, round(sc, 4)) for ref, sc in truth(store, match)
            if ref.split(":", 1)[1] not in dead]
    for lim in (10, 7):
        got, first = pages(srv, q, lim, n_pages)
        seen = [(h["ref"], h.get("score")) for h in got]
        n = len(seen)
        check(n >= min(len(want), lim * n_pages // 2),
              "%r limit %d: %d hits over %d pages" % (q, lim, n, n_pages))
        check([r for r, _ in seen] == [r for r, _ in want[:n]],
              "%r limit %d: ranking %s, bm25 over every match %s" %
              (q, lim, [r for r, _ in seen][:12], [r for r, _ in want[:12]]))
        bad = [(a, b) for a, b in zip(seen, want) if abs(a[1] - b[1]) > 1e-4]
        check(not bad, "%r limit %d: scores differ from bm25(): %s" % (q, lim, bad[:3]))
        ch = first.get("channels", {}) if first else {}
        total = len(truth(store, match))
        check(ch.get("keyword_estimated") is True,
              "%r: a count past the exact one is not marked an estimate: %s" % (q, ch))
        check(abs(ch.get("keyword", 0) - total) <= total // 5,
              "%r: keyword count %s, %d match" % (q, ch.get("keyword"), total))


def check_to_the_end(srv, store, q, match, dead):
    """Every page followed to the last: the pages end (no position that
    shows nothing handed out again and again) and hold every live match
    once."""
    live = {ref for ref, _ in truth(store, match) if ref.split(":", 1)[1] not in dead}
    got, _ = rd.search_pages(srv, q, 50)
    refs = [h["ref"] for h in got]
    check(len(refs) == len(set(refs)), "%r: a hit shown twice over the pages" % q)
    check(set(refs) == live,
          "%r: the pages held %d of %d live matches (pages still going: %s)" %
          (q, len(set(refs) & live), len(live), len(refs) > len(live)))


def main():
    rd.pg_skip()
    if rd.PG:
        print("SQLite's ranking (FTS5); PostgreSQL ranks with ts_rank: skipped")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        store = rd.new_store(tmp, "common")
        probe(store, "init")
        probe(store, "import", "mlflow", mlruns(tmp))
        rows = rd.store_rows(store, "SELECT slug, deleted FROM runs")
        dead = {s for s, d in rows if d}
        check(len(rows) == N_RUNS and len(dead) > 100,
              "lab: %d runs, %d deleted" % (len(rows), len(dead)))
        srv = Server(store)
        try:
            # the rare word's 60 runs fill the first pages; later ones rank
            # runs holding only the common word
            check_query(srv, store, "trial-g07", '"trial" OR "g07"', dead, 12)
            check_query(srv, store, "g0042x trial", '"g0042x" OR "trial"', dead, 3)
            check_query(srv, store, "trial g07 trial", '"trial" OR "g07" OR "trial"', dead, 9)
            check_to_the_end(srv, store, "g0042x trial", '"g0042x" OR "trial"', dead)
        finally:
            srv.close()
    rd.finish()


if __name__ == "__main__":
    main()
