#!/usr/bin/env python3
"""search: each entity once, the same ranking at every page size, the right
kind on every exact hit; NUL in a text argument refused by every tool.

On the demo lab and each importer's data: for a ref of every kind browse
lists (run, experiment, project, dataset, checkpoint, source, artifact,
file), search by its id, by its full ref and by its name. Every exact hit's
kind is the kind its ref names (a source is "source", never "model"); an
entity found by the exact and the keyword channel is shown once (as its
exact hit); paging with limit 1, 2, 3 and 7 gives the list limit 10 gives,
with no entity twice and the keyword ranking reachable after a page the
exact channel filled. Then a text argument holding U+0000, at the top level
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
    out, cur = [], None
    for _ in range(300):
        a = {"query": q, "limit": lim}
        if cur:
            a["cursor"] = cur
        r, err = srv.call("search", a)
        check(not err, "search %r limit %d: %s" % (q, lim, r))
        if err:
            return out
        out += r.get("results", [])
        cur = r.get("next_cursor")
        if not cur:
            return out
    check(False, "search %r limit %d: no end of pages" % (q, lim))
    return out


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
