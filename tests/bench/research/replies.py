#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Differential check of two builds' answers: the same few thousand tool
calls (research and tracking, over every run, experiment, project and
artifact of the store, at budgets that cut pages, with the cursors those
pages hand out) sent to each build's probe-mcp-stdio on one store, and
every answer compared byte for byte. Not a test: run by hand when a change
must not alter any answer.

    python3 tests/bench/research/replies.py BEFORE_BUILD AFTER_BUILD STORE
    # e.g. a store filled by `probe demo`; prints the differences, exits 1 on any
"""
import json
import subprocess
import sys

INIT = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "replies", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]


def serve(build, store, calls):
    """Answers of @calls (a list of (tool, args)) by id, as raw lines."""
    msgs = list(INIT)
    for i, (tool, args) in enumerate(calls, 1):
        msgs.append({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                     "params": {"name": tool, "arguments": args}})
    data = "".join(json.dumps(m, separators=(",", ":")) + "\n" for m in msgs)
    out = subprocess.run([build + "/frontends/stdio/probe-mcp-stdio", "--store", store,
                          "--toolset", "all", "--memory-tasks"],
                         input=data.encode(), capture_output=True, check=True).stdout
    by_id = {}
    for line in out.decode().splitlines():
        m = json.loads(line)
        if "id" in m:
            by_id[m["id"]] = line
    return by_id


def structured(line):
    r = json.loads(line).get("result", {})
    return r.get("structuredContent") or {}


def discover(build, store):
    """Refs of the store, read through the first build."""
    first = [("browse", {"mode": "runs", "limit": 50, "token_budget": 8000}),
             ("browse", {"depth": 2, "token_budget": 8000}),
             ("browse", {"mode": "notes", "limit": 50, "token_budget": 8000}),
             ("browse", {"mode": "datasets", "token_budget": 8000}),
             ("browse", {"mode": "checkpoints", "token_budget": 8000}),
             ("browse", {"mode": "sources", "token_budget": 8000}),
             ("search", {"query": "config", "limit": 50, "token_budget": 8000}),
             ("list_workspaces", {}),
             ("list_metrics", {"workspace": "vision", "project": "cifar-resnet"})]
    a = serve(build, store, first)
    refs = {"run": [], "experiment": [], "project": [], "other": []}
    for r in structured(a[1]).get("runs", []):
        refs["run"].append(r["ref"])
    for p in structured(a[2]).get("projects", []):
        refs["project"].append(p["ref"])
        for e in p.get("experiments", []):
            refs["experiment"].append(e["ref"])
    for k in (3, 4, 5, 6, 7):
        for v in structured(a[k]).values():
            if isinstance(v, list):
                for it in v:
                    if isinstance(it, dict) and isinstance(it.get("ref"), str):
                        refs["other"].append(it["ref"])
    workspaces = [w["workspace"] for w in structured(a[8]).get("workspaces", [])]
    keys = [m.get("name") or m.get("key") for m in structured(a[9]).get("metrics", [])]
    return refs, workspaces, [k for k in keys if k]


def calls_for(refs, workspaces, keys):
    c = []
    budgets = [None, 512, 900, 2000]
    for b in budgets:
        extra = {"token_budget": b} if b else {}
        c += [("browse", dict(extra)), ("browse", dict(depth=1, **extra)),
              ("browse", dict(depth=2, **extra)),
              ("browse", dict(mode="runs", **extra)),
              ("browse", dict(mode="runs", limit=3, **extra)),
              ("browse", dict(mode="runs", active=True, **extra)),
              ("browse", dict(mode="runs", include_deleted=True, **extra)),
              ("browse", dict(mode="notes", **extra)),
              ("browse", dict(mode="notes", query="warmup", **extra)),
              ("browse", dict(mode="datasets", **extra)),
              ("browse", dict(mode="checkpoints", best=True, **extra)),
              ("browse", dict(mode="sources", **extra)),
              ("browse", dict(mode="workspaces", **extra)),
              ("list_workspaces", dict(extra)),
              ("list_workspaces", dict(limit=1, offset=1, **extra))]
        for q in ("warmup", "lr sweep", "config.yaml", "baseline", "version_3", "ppo", "zzzz"):
            c.append(("search", dict(query=q, **extra)))
        for ws in workspaces:
            c += [("list_projects", dict(workspace=ws, **extra)),
                  ("browse", dict(mode="runs", workspace=ws, **extra))]
        for p in refs["project"]:
            c += [("browse", dict(ref=p, **extra)), ("browse", dict(mode="runs", project=p, **extra)),
                  ("entity", dict(refs=[p], **extra))]
        for e in refs["experiment"]:
            c += [("browse", dict(ref=e, **extra)),
                  ("browse", dict(mode="runs", experiment=e, **extra)),
                  ("entity", dict(refs=[e], **extra))]
        for r in refs["run"]:
            c += [("entity", dict(refs=[r], **extra)),
                  ("entity", dict(refs=[r], view="record", **extra)),
                  ("entity", dict(refs=[r], view="notes", **extra)),
                  ("entity", dict(refs=[r], view="lineage", **extra)),
                  ("entity", dict(refs=[r], view="metrics", **extra)),
                  ("entity", dict(refs=[r], view="artifacts", **extra))]
        for o in refs["other"]:
            c += [("entity", dict(refs=[o], **extra)),
                  ("entity", dict(refs=[o], view="record", **extra)),
                  ("entity", dict(refs=[o], view="versions", **extra))]
        if refs["run"]:
            c.append(("entity", dict(refs=refs["run"][:8], **extra)))
        run_ids = [r.split(":", 1)[1] for r in refs["run"][:6]]
        for k in keys[:6]:
            c += [("metrics", dict(mode="series", run_ids=run_ids[:2], keys=[k], max_points=50,
                                   **extra)),
                  ("metrics", dict(mode="series", run_ids=run_ids, keys=[k], **extra))]
    for ws in workspaces:
        c += [("list_projects", {"workspace": ws}), ("list_runs", {"workspace": ws}),
              ("list_experiments", {"workspace": ws})]
    return c


def compare(before, after, store, calls, width=400):
    """Both builds' answers to @calls; prints the first ten that differ
    (@width characters of each). Returns (the answers before, the number
    that differ)."""
    a = serve(before, store, calls)
    b = serve(after, store, calls)
    diffs = 0
    for i in range(1, len(calls) + 1):
        if a.get(i) != b.get(i):
            diffs += 1
            if diffs <= 10:
                print("differs: %s %s\n  before: %.*s\n  after:  %.*s" %
                      (calls[i - 1][0], json.dumps(calls[i - 1][1]), width, a.get(i),
                       width, b.get(i)))
    return a, diffs


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    before, after, store = sys.argv[1:]
    refs, workspaces, keys = discover(before, store)
    calls = calls_for(refs, workspaces, keys)
    a = serve(before, store, calls)
    # one more round: every next_cursor the first answers handed out
    more = []
    for i, (tool, args) in enumerate(calls, 1):
        cur = structured(a.get(i, "{}")).get("next_cursor") if i in a else None
        if cur:
            more.append((tool, dict(args, cursor=cur)))
    calls += more
    a, diffs = compare(before, after, store, calls)
    errors = sum(1 for v in a.values() if '"isError":true' in v)
    print("%d calls (%d with a cursor, %d answered with an error), %d refs; %d differences"
          % (len(calls), len(more), errors, sum(map(len, refs.values())), diffs))
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
