#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Lineage and lookups resolve every ref form to the entity.

A store made here: a run R with checkpoints (best at step 100), a shared
artifact exported from checkpoint:R@best, a source at a version and a
dataset version R used. Then a new best checkpoint. Every form of each ref
(slug, shared name, @best / @latest / @stepN, source:ID@V, dataset
NAME@V) must find the same edges through entity view=lineage, and @best
must keep naming the checkpoint that was best when the export was
recorded. A source at a version it does not have is not found (read and
write). A name carried by two shared artifacts cannot be made through the
CLI, and where a store holds it anyway (written here with sqlite3) the
lookup is an error naming both. An edge recorded by an older version under
an artifact's name (written with sqlite3) is still found from its slug.

usage: research_lineage.py PROBE_CLI PROBE_MCP_STDIO
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from research_deleted import Server  # noqa: E402

PROBE, STDIO = sys.argv[1], sys.argv[2]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def probe(store, *args, ok=True):
    r = subprocess.run([PROBE, "--store", store, "--quiet", *args], capture_output=True)
    if ok and r.returncode != 0:
        raise RuntimeError("probe %s: %s" % (args, r.stderr.decode()))
    return r


def edges(srv, ref, direction):
    out, err = srv.call("entity", {"refs": [ref], "view": "lineage",
                                   "view_options": {"direction": direction, "depth": 2}})
    if err:
        return None, out
    return sorted((e["from"], e["to"]) for e in out.get("edges", [])), out


def main():
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "s.db")
        probe(store, "init")
        probe(store, "project", "create", "vision")
        run = probe(store, "run", "create", "resnet-train", "--project", "vision")
        R = run.stdout.decode().strip().splitlines()[-1].split()[0]
        check(R.startswith("run:"), "run ref: %s" % R)
        rid = R[4:]
        probe(store, "checkpoint", "add", R, "100", "--best", "--uri", "s3://ck/100")
        probe(store, "checkpoint", "add", R, "200", "--uri", "s3://ck/200")
        f = os.path.join(tmp, "model.txt")
        open(f, "w").write("weights")
        art = probe(store, "artifact", "add", f, "--name", "resnet18-cifar10")
        A = art.stdout.decode().strip().splitlines()[-1].split()[0]
        check(A.startswith("artifact:"), "artifact ref: %s" % A)
        probe(store, "put", "source", json.dumps({"id": "hf-cifar10", "provider": "hf",
                                                  "kind": "dataset", "uri": "hf://cifar10",
                                                  "version": "abc123"}))
        probe(store, "put", "dataset", json.dumps({"name": "cifar", "uri": "s3://cifar"}))
        probe(store, "put", "dataset-version", json.dumps({"dataset": "cifar", "version": "v1"}))
        # recorded with the short forms
        probe(store, "lineage", "add", "checkpoint:%s@best" % rid, "artifact:resnet18-cifar10",
              "--relation", "exported")
        probe(store, "lineage", "add", "source:hf-cifar10@abc123", R)
        probe(store, "lineage", "add", "dataset:cifar@v1", R)
        # a version the source does not have is refused
        r = probe(store, "lineage", "add", "source:hf-cifar10@deadbeef", R, ok=False)
        check(r.returncode != 0, "lineage from a source version that does not exist")
        # a new best: the export still came from step 100
        probe(store, "checkpoint", "add", R, "300", "--best", "--uri", "s3://ck/300")
        db = sqlite3.connect(store)
        stored = db.execute("SELECT from_ref, to_ref FROM lineage ORDER BY id").fetchall()
        aslug = A[len("artifact:"):]
        check(("checkpoint:%s@step100" % rid, A) in stored,
              "edges are recorded by entity (canonical refs): %s" % stored)
        check(("source:hf-cifar10", R) in stored, "source edge by entity: %s" % stored)
        # an edge written by an older version under the artifact's name
        db.execute("INSERT INTO lineage(tenant_id, from_ref, to_ref, relation, steps, created)"
                   " SELECT tenant_id, 'artifact:resnet18-cifar10', 'run:' || slug, 'used', NULL,"
                   " 1 FROM runs WHERE slug=?", (rid,))
        db.commit()
        srv = Server(store)
        try:
            up_art = [("checkpoint:%s@step100" % rid, A)]
            for ref in (A, "artifact:resnet18-cifar10", "artifact:" + aslug):
                got, out = edges(srv, ref, "upstream")
                check(got is not None and ("checkpoint:%s@step100" % rid, A) in got,
                      "%s upstream: %s" % (ref, out))
                got, out = edges(srv, ref, "downstream")
                check(got == [(A, R)], "%s downstream (the older name-form edge): %s" % (ref, out))
            for ref in ("checkpoint:%s@step100" % rid,):
                got, out = edges(srv, ref, "downstream")
                check(got is not None and (("checkpoint:%s@step100" % rid, A) in got),
                      "%s downstream: %s" % (ref, out))
            for ref in ("checkpoint:%s@best" % rid, "checkpoint:%s@latest" % rid,
                        "checkpoint:%s@step300" % rid):
                got, out = edges(srv, ref, "downstream")
                check(got == [], "%s (now step 300) claims the export: %s" % (ref, out))
            for ref in ("source:hf-cifar10", "source:hf-cifar10@abc123"):
                got, out = edges(srv, ref, "downstream")
                check(got is not None and ("source:hf-cifar10", R) in got,
                      "%s downstream: %s" % (ref, out))
            got, out = edges(srv, R, "upstream")
            check(got is not None and {("source:hf-cifar10", R), ("dataset:cifar@v1", R)} <=
                  set(got), "run upstream: %s" % out)
            for ref in ("dataset:cifar", "dataset:cifar@v1"):
                got, out = edges(srv, ref, "downstream")
                check(got is not None and ("dataset:cifar@v1", R) in got,
                      "%s downstream: %s" % (ref, out))
            # versions that do not exist are not found
            for ref in ("source:hf-cifar10@deadbeef", "dataset:cifar@v9"):
                out, err = srv.call("entity", {"refs": [ref]})
                check(err and out.get("error") == "not_found", "%s: %s" % (ref, out))
            out, err = srv.call("entity", {"refs": ["source:hf-cifar10@abc123"]})
            check(not err, "source at its version: %s" % out)
            # exact-channel hits carry the entity's kind
            for q, kind in (("hf://cifar10", "source"), ("s3://ck/100", "checkpoint"),
                            ("resnet18-cifar10", "artifact")):
                out, err = srv.call("search", {"query": q})
                hits = [h for h in out.get("results", []) if h.get("channel") == "exact"]
                check(hits and all(h.get("kind") == h.get("ref", "").split(":")[0] for h in hits)
                      and any(h.get("kind") == kind for h in hits),
                      "search %r: exact hits of kind %s: %s" % (q, kind, hits))
        finally:
            srv.close()
        # two shared artifacts with one name: refused, and handled when present
        g = os.path.join(tmp, "other.txt")
        open(g, "w").write("other")
        r = probe(store, "artifact", "add", g, "--name", "resnet18-cifar10", "--on", R)
        B = r.stdout.decode().strip().splitlines()[-1].split()[0]
        r = probe(store, "artifact", "promote", B, ok=False)
        check(r.returncode != 0, "promoting a second artifact of a shared name is refused")
        # a store where two shared artifacts carry one name (not an id)
        db.execute("UPDATE artifacts SET shared=1 WHERE slug=?", (B[len("artifact:"):],))
        db.execute("UPDATE artifacts SET name='shared-model' WHERE slug IN (?, ?)",
                   (A[len("artifact:"):], B[len("artifact:"):]))
        db.commit()
        db.close()
        srv = Server(store)
        try:
            out, err = srv.call("entity", {"refs": ["artifact:shared-model"]})
            msg = json.dumps(out)
            check(err and A[len("artifact:"):] in msg and B[len("artifact:"):] in msg,
                  "an ambiguous shared name names both artifacts: %s" % msg)
            out, err = srv.call("entity", {"refs": [A]})
            check(not err, "by its id the artifact is found: %s" % out)
        finally:
            srv.close()
    if failures:
        print("%d failure(s)" % failures)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
