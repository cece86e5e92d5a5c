#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""search: each entity once, the same ranking at every page size, the right
kind on every exact hit; NUL in a text argument refused by every tool.

On the demo lab and each importer's data: for a ref of every kind browse
lists (run, experiment, project, dataset, checkpoint, source, artifact,
file), search by its id, by its full ref and by its name. Every exact hit's
kind is the kind its ref names (a source is "source", never "model"); an
entity found by the exact and the keyword channel is shown once (as its
exact hit); paging with limit 1, 2, 3 and 7 gives the list limit 10 gives,
with no entity twice and the keyword ranking reachable after a page the
exact channel filled. On a generated lab where more matches on deleted runs
than the store gives one page (200) rank between live ones, every page
that read only hidden matches still continues (next_cursor after the last
one read): over all pages at small limits and budgets the live hits are
exactly the live runs the word names, each once, and include_deleted=true
shows every one. Then a text argument holding U+0000, at the top level
and nested (refs, view_options, params, run_ids), is refused by every tool
with an error naming the argument, never cut at the NUL.

usage: research_search_pages.py PROBE_CLI PROBE_MCP_STDIO
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import research_deleted as rd  # noqa: E402
from research_deleted import Server, check, probe  # noqa: E402

DATA = os.path.join(HERE, "..", "data")
MODES = {"runs": "runs", "checkpoints": "checkpoints", "datasets": "datasets",
         "sources": "sources", "files": "files"}


def search_pages(srv, q, lim):
    return rd.search_pages(srv, q, lim)[0]


def queries(srv):
    """(query, the ref it names) for one entity of each kind browse lists."""
    qs = []
    for mode, key in MODES.items():
        r, err = srv.call("browse", {"mode": mode, "limit": 3})
        for it in (r.get(key) or [])[:2] if not err else []:
            ref = it["ref"]
            qs.append((ref, ref))
            # the ref without its kind (an id, or a checkpoint's RUN@stepN)
            qs.append((ref.split(":", 1)[1], ref))
            if it.get("name") and len(it["name"]) > 3:
                qs.append((it["name"], None))
    tree, err = srv.call("browse", {"mode": "tree", "depth": 2, "limit": 3})
    for p in (tree.get("projects") or [])[:1] if not err else []:
        qs.append((p["ref"], p["ref"]))
        for e in (p.get("experiments") or [])[:1]:
            qs.append((e["ref"], e["ref"]))
    arts, err = srv.call("entity", {"refs": [qs[0][1]], "view": "artifacts"}) if qs else ({}, 1)
    for a in (arts.get("artifacts") or [])[:1] if not err else []:
        qs.append((a["ref"], a["ref"]))
        if a.get("name"):
            qs.append((a["name"], None))
    return qs


def check_search(label, srv):
    qs = queries(srv)
    check(len(qs) >= 6, "%s: refs of several kinds to search for: %s" % (label, qs))
    for q, ref in qs:
        full = search_pages(srv, q, 10)
        refs = [h["ref"] for h in full]
        check(len(refs) == len(set(refs)), "%s: search %r shows an entity twice: %s" %
              (label, q, sorted(r for r in refs if refs.count(r) > 1)[:4]))
        for h in full:
            if h.get("channel") == "exact":
                kind = h["ref"].split(":", 1)[0]
                check(h.get("kind") == kind, "%s: search %r: exact hit %s has kind %r" %
                      (label, q, h["ref"], h.get("kind")))
        if ref:
            check(ref in refs[:3], "%s: search %r finds %s at the top: %s" %
                  (label, q, ref, refs[:3]))
        for lim in (1, 2, 3, 7):
            got = [h["ref"] for h in search_pages(srv, q, lim)]
            check(got == refs, "%s: search %r limit %d pages %d results, limit 10 %d%s" %
                  (label, q, lim, len(got), len(refs),
                   "" if len(got) != len(refs) else " (in another order)"))


HIDDEN_WORD = "zorbfix"


def hidden_mlruns(tmp, n_top=3, n_dead=450, n_tail=5):
    """An MLflow store whose run names hold HIDDEN_WORD: n_top live runs
    ranked first (the word most often), n_dead deleted runs after them,
    n_tail live runs ranked last (the word once, in longer names).
    Returns the directory and {run id: deleted}."""
    root = os.path.join(tmp, "mlruns-hidden")
    os.makedirs(os.path.join(root, "1"))
    with open(os.path.join(root, "1", "meta.yaml"), "w") as f:
        f.write("artifact_location: file:///tmp/mlruns/1\nexperiment_id: '1'\n"
                "lifecycle_stage: active\nname: hidden-sweep\n")
    made = {}
    w = HIDDEN_WORD

    def run(i, name, dead):
        rid = "%032x" % (0xabc000 + i)
        d = os.path.join(root, "1", rid)
        os.makedirs(d)
        with open(os.path.join(d, "meta.yaml"), "w") as f:
            f.write("artifact_uri: file:///tmp/x\nend_time: 1700000900000\n"
                    "experiment_id: '1'\nlifecycle_stage: %s\nrun_id: %s\nrun_uuid: %s\n"
                    "run_name: %s\nstart_time: %d\nstatus: 3\nuser_id: r\n" %
                    ("deleted" if dead else "active", rid, rid, name, 1700000000000 + i))
        made[rid] = dead

    for i in range(n_top):
        run(i, "-".join([w] * 4) + " top%d" % i, False)
    for i in range(n_dead):
        run(10 + i, "-".join([w] * 3) + " d%d" % i, True)
    for i in range(n_tail):
        run(1000 + i, "%s tail live run number %d with some more words" % (w, i), False)
    return root, made


def hidden_pages(srv, args):
    """Every page of search @args: (hits, pages, pages with no hit)."""
    out, cur, pages, empty = [], None, 0, 0
    for _ in range(600):
        a = dict(args)
        if cur:
            a["cursor"] = cur
        r, err = srv.call("search", a)
        check(not err, "hidden: search %s: %s" % (args, r))
        if err:
            return out, pages, empty
        pages += 1
        got = r.get("results", [])
        out += got
        cur = r.get("next_cursor")
        if not got and cur:
            empty += 1
            check("read" in r.get("channels", {}),
                  "hidden: search %s: a page with no hit does not say why: %s" % (args, r))
        if not cur:
            return out, pages, empty
    check(False, "hidden: search %s: no end of pages" % args)
    return out, pages, empty


def check_hidden(tmp):
    """Live matches after more than a store page of hidden ones are all
    reachable."""
    root, made = hidden_mlruns(tmp)
    store = rd.new_store(tmp, "hidden")
    try:
        probe(store, "init")
        probe(store, "import", "mlflow", root)
        # the truth: what was made, as the store holds it
        rows = rd.store_runs(store)[0]
        slug = {r[0]: r for r in rows if HIDDEN_WORD in (r[1] or "")}
        check(len(slug) == len(made), "hidden: %d runs imported, %d made" %
              (len(slug), len(made)))
        want_live = {"run:" + s for s, r in slug.items() if not r[2]}
        want_all = {"run:" + s for s in slug}
        check(len(want_live) == sum(1 for d in made.values() if not d) and
              all(any(s.endswith(rid) for s in slug) for rid in made),
              "hidden: the store's runs are the ones made: %s" % sorted(slug)[:3])
        srv = Server(store)
        try:
            # the lab is as meant: some live match ranks after more than
            # 200 hidden ones
            every, _, _ = hidden_pages(srv, {"query": HIDDEN_WORD, "limit": 50,
                                              "include_deleted": True})
            refs = [h["ref"] for h in every]
            run_refs = [r for r in refs if r.startswith("run:")]
            check(set(run_refs) == want_all and len(run_refs) == len(want_all),
                  "hidden: include_deleted shows %d of %d runs once each (%d shown)" %
                  (len(set(run_refs) & want_all), len(want_all), len(run_refs)))
            dead_marks = {h["ref"] for h in every if h.get("deleted")}
            check(dead_marks == want_all - want_live,
                  "hidden: include_deleted marks %d deleted, %d are" %
                  (len(dead_marks), len(want_all - want_live)))
            run_of = [r for r in run_refs if r in want_all]
            before = 0
            for r in run_of:
                if r in want_live and before > 200:
                    break
                before += r not in want_live
            check(before > 200, "hidden: no live match ranks after 200 hidden ones (%d)" %
                  before)
            for lim, budget in ((1, 512), (3, 600), (7, 1000), (50, 8000)):
                args = {"query": HIDDEN_WORD, "limit": lim, "token_budget": budget}
                hits, pages, empty = hidden_pages(srv, args)
                got = [h["ref"] for h in hits if h["ref"].startswith("run:")]
                check(len(got) == len(set(got)),
                      "hidden: limit %d budget %d shows a run twice" % (lim, budget))
                check(set(got) == want_live,
                      "hidden: limit %d budget %d: %d live runs over %d pages, %d match "
                      "(missing %s, extra %s)" %
                      (lim, budget, len(set(got)), pages, len(want_live),
                       sorted(want_live - set(got))[:2], sorted(set(got) - want_live)[:2]))
                check(not any(h.get("deleted") for h in hits),
                      "hidden: limit %d shows a deleted run" % lim)
                check(empty >= 1, "hidden: limit %d: no page read hidden matches only" % lim)
        finally:
            srv.close()
    finally:
        rd.drop_store(store)


NUL_CALLS = [
    ("search", {"query": "warmup\u0000zzz"}, "query"),
    ("search", {"query": "loss", "kinds": ["run\u0000"]}, "kinds[0]"),
    ("browse", {"mode": "notes", "query": "a\u0000b"}, "query"),
    ("browse", {"mode": "tree", "ref": "project:x\u0000y"}, "ref"),
    ("entity", {"refs": ["run:a\u0000b"]}, "refs[0]"),
    ("entity", {"refs": ["run:a"], "view": "record", "view_options": {"field": "na\u0000me"}},
     "view_options.field"),
    ("entity", {"refs": ["run:a"], "view": "content", "view_options": {"grep": "lo\u0000ss"}},
     "view_options.grep"),
    ("metrics", {"mode": "series", "run_ids": ["run:a\u0000"], "keys": ["loss"]}, "run_ids[0]"),
    ("metrics", {"mode": "points", "run_id": "run:a", "key": "lo\u0000ss"}, "key"),
    ("query_sql", {"sql": "SELECT 1 -- \u0000 x"}, "sql"),
    ("query_sql", {"sql": "SELECT ?", "params": ["a\u0000b"]}, "params[0]"),
    ("find_papers", {"query": "adam\u0000optimizer"}, "query"),
    ("browse", {"mode": "runs", "cursor": "AXc\u0000x"}, "cursor"),
]


def check_nul(label, srv):
    for tool, args, name in NUL_CALLS:
        m = srv.rpc("tools/call", {"name": tool, "arguments": args})
        err = m.get("error") or {}
        res = m.get("result") or {}
        text = json.dumps(err) + json.dumps(res)
        refused = bool(err) or res.get("isError")
        check(refused and name in text and "NUL" in text,
              "%s: %s %s with U+0000 is not refused naming it: %s" %
              (label, tool, name, text[:300]))


def main():
    rd.pg_skip()
    cases = [
        ("demo", ["demo"]),
        ("mlflow-kymatio", ["import", "mlflow", os.path.join(DATA, "mlflow-kymatio", "mlruns"),
                            "--project", "kymatio"]),
        ("tensorboard", ["import", "tensorboard",
                         os.path.join(DATA, "tensorboard-reducer", "runs")]),
        ("hf", ["import", "hf", os.path.join(DATA, "hf-whisper", "trainer_state.json")]),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            check_hidden(tmp)
        except RuntimeError as e:
            check(False, "hidden: %s" % e)
        for label, cmd in cases:
            store = rd.new_store(tmp, label)
            try:
                if cmd[0] != "demo":
                    probe(store, "init")
                probe(store, *cmd)
                if cmd[0] != "demo":
                    # catalog entities beside the imported runs
                    runs = rd.store_runs(store)[0]
                    run = "run:" + runs[0][0]
                    probe(store, "source", "add", "hf", "dataset", "hf://acme/zebra-set",
                          "--id", "zebra-set", "--version", "abc123")
                    probe(store, "checkpoint", "add", run, "42", "--best")
                    probe(store, "artifact", "ref", "s3://bucket/zebra-model.bin",
                          "--name", "zebra-model", "--on", run)
                srv = Server(store)
                try:
                    check_search(label, srv)
                    check_nul(label, srv)
                finally:
                    srv.close()
            except RuntimeError as e:
                check(False, "%s: %s" % (label, e))
            finally:
                rd.drop_store(store)
    rd.finish()


if __name__ == "__main__":
    main()
