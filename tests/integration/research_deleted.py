#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every research tool hides deleted things unless asked (include_deleted).

On stores of several shapes: each importer's real data in tests/data (the
MLflow samples hold deleted runs), an MLflow store with a trashed
experiment made here, and the demo lab. On each, a deleted run D (the
data's own, else one deleted here with `probe run delete`) gets a note, a
checkpoint, an artifact, a lineage edge from a live run L and a place in a
group with L. Then every tool is asked about it: search (its name, its
note's words, its id), browse runs / notes / checkpoints / tree, entity
lineage downstream of L, the group's record, query_sql's tables. Each must
leave D and what hangs off it out by default, and show them marked
"deleted": true with include_deleted=true. Which runs are deleted is read
from the MLflow files themselves and, for the others, from what this test
deleted; query_sql's counts are checked against both.

With PMCP_TEST_STORE=pg every store is a new schema of the test cluster
(PROBE_TEST_PG_URL, tests/pg/pgctl.sh); without one the test skips (77),
or fails under PMCP_TEST_STRICT.

usage: research_deleted.py PROBE_CLI PROBE_MCP_STDIO
"""
import json
import os
import secrets
import shutil
import sqlite3
import subprocess
import sys
import tempfile

PROBE, STDIO = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
failures = 0
PG = os.environ.get("PMCP_TEST_STORE") == "pg"
PG_URL = os.environ.get("PROBE_TEST_PG_URL")


def finish():
    """Exit 1 with the count when a check failed, else say ok."""
    if failures:
        print("%d failure(s)" % failures)
        sys.exit(1)
    print("ok")


def pg_skip():
    """Without the test cluster a PostgreSQL run skips (fails when strict)."""
    if PG and not PG_URL:
        sys.exit(1 if os.environ.get("PMCP_TEST_STRICT", "0") not in ("", "0") else 77)


def psql(sql, schema=None):
    """Rows of @sql on the test cluster, fields split; in @schema, as its
    default tenant (the tables' row-level security reads probe.tenant)."""
    pre = ["-c", "SET client_min_messages=warning"]
    if schema:
        pre += ["-c", "SET search_path=%s" % schema, "-c",
                "SELECT set_config('probe.tenant', (SELECT id FROM tenants"
                " WHERE name='default')::text, false)"]
    r = subprocess.run(["psql", PG_URL, "-X", "-q", "-t", "-A", "-F", "\x1f",
                        "-v", "ON_ERROR_STOP=1", *pre, "-c", sql],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise RuntimeError("psql: " + r.stderr)
    lines = r.stdout.splitlines()[1 if schema else 0:]
    return [l.split("\x1f") for l in lines if l]


def new_store(tmp, label):
    """Where a new store goes: a file in @tmp or (PostgreSQL) a new schema."""
    if not PG:
        return os.path.join(tmp, label + ".db")
    schema = "rs_%s_%s" % (label.replace("-", "_"), secrets.token_hex(4))
    psql("CREATE SCHEMA " + schema)
    return PG_URL + ("&" if "?" in PG_URL else "?") + "options=-csearch_path%3D" + schema


def drop_store(store):
    if PG:
        schema = store.rsplit("%3D", 1)[1]
        psql("DROP SCHEMA IF EXISTS %s, %s_sql CASCADE" % (schema, schema))


def store_rows(store, sql):
    """Rows of a read of the store's own tables (sqlite3 or psql)."""
    if PG:
        rows = psql(sql, store.rsplit("%3D", 1)[1])
        return [tuple(int(x) if x.lstrip("-").isdigit() else x for x in r) for r in rows]
    db = sqlite3.connect(store)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def no_duplicates(pairs):
    """A JSON object whose keys are each there once (check-failing otherwise)."""
    keys = [k for k, _ in pairs]
    check(len(keys) == len(set(keys)), "a key twice in one object: %s" % keys)
    return dict(pairs)


def search_pages(srv, q, lim, n_pages=300, to_the_end=True):
    """The hits of `search` for @q at @lim a page, following next_cursor
    for at most @n_pages pages (a failure when @to_the_end and the pages
    go on past them), and the first page's answer."""
    out, cur, first = [], None, None
    for _ in range(n_pages):
        a = {"query": q, "limit": lim}
        if cur:
            a["cursor"] = cur
        r, err = srv.call("search", a)
        check(not err, "search %r limit %d: %s" % (q, lim, r))
        if err:
            return out, first
        first = first or r
        out += r.get("results", [])
        cur = r.get("next_cursor")
        if not cur:
            return out, first
    check(not to_the_end, "search %r limit %d: no end of pages" % (q, lim))
    return out, first


class Server:
    def __init__(self, store):
        self.p = subprocess.Popen([STDIO, "--store", store, "--toolset", "research"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.id = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "t", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def rpc(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("server ended: " + self.p.stderr.read().decode())
            m = json.loads(line)
            if m.get("id") == self.id:
                return m

    def call(self, name, args):
        r = self.rpc("tools/call", {"name": name, "arguments": args})["result"]
        return (json.loads(r["content"][0]["text"], object_pairs_hook=no_duplicates),
                r.get("isError", False))

    def pages(self, name, args, key):
        """Every item of list @key over all pages."""
        out, cur = [], None
        for _ in range(200):
            a = dict(args)
            if cur:
                a["cursor"] = cur
            r, err = self.call(name, a)
            if err:
                raise RuntimeError("%s %s: %s" % (name, args, r))
            out += r.get(key, [])
            cur = r.get("next_cursor")
            if not cur:
                return out
        raise RuntimeError("no end of pages")

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def probe(store, *args, stdin=None):
    r = subprocess.run([PROBE, "--store", store, "--quiet", *args], capture_output=True,
                       input=stdin)
    if r.returncode != 0:
        raise RuntimeError("probe %s: %s" % (args, r.stderr.decode()))
    return r.stdout.decode().strip()


def mlflow_deleted(mlruns):
    """(deleted run ids, trashed experiment names) from the MLflow files."""
    runs, exps = set(), set()
    for exp in os.listdir(mlruns):
        ed = os.path.join(mlruns, exp)
        if not os.path.isfile(os.path.join(ed, "meta.yaml")):
            continue
        emeta = open(os.path.join(ed, "meta.yaml")).read()
        trashed = "lifecycle_stage: deleted" in emeta
        if trashed:
            exps.add([l.split(":", 1)[1].strip() for l in emeta.splitlines()
                      if l.startswith("name:")][0])
        for rid in os.listdir(ed):
            mp = os.path.join(ed, rid, "meta.yaml")
            if os.path.isfile(mp) and (trashed or "lifecycle_stage: deleted" in open(mp).read()):
                runs.add(rid)
    return runs, exps


def trashed_copy(tmp):
    """The AdamW sample plus experiment 2, trashed, holding one run."""
    dst = os.path.join(tmp, "mlruns-trash")
    shutil.copytree(os.path.join(DATA, "mlflow-adamw", "mlruns"), dst)
    src = os.path.join(dst, "1", "5a1c0d9e2b7f4e06a3c1d2e3f4a5b601")
    os.makedirs(os.path.join(dst, "2"))
    with open(os.path.join(dst, "2", "meta.yaml"), "w") as f:
        f.write("artifact_location: file:///tmp/mlruns/2\nexperiment_id: '2'\n"
                "lifecycle_stage: deleted\nname: zanzibar-trashed-sweep\n"
                "creation_time: 1700000000000\nlast_update_time: 1700000000000\n")
    rd = os.path.join(dst, "2", "9f1c0d9e2b7f4e06a3c1d2e3f4a5b699")
    shutil.copytree(src, rd)
    meta = open(os.path.join(rd, "meta.yaml")).read()
    meta = meta.replace("5a1c0d9e2b7f4e06a3c1d2e3f4a5b601", "9f1c0d9e2b7f4e06a3c1d2e3f4a5b699")
    meta = meta.replace("experiment_id: '1'", "experiment_id: '2'")
    open(os.path.join(rd, "meta.yaml"), "w").write(meta)
    return dst


def store_runs(store):
    rows = store_rows(store, "SELECT slug, name, deleted, experiment_id FROM runs ORDER BY id")
    exps = store_rows(store, "SELECT slug, name, deleted FROM experiments")
    return rows, exps


def refs(items):
    return [i.get("ref") for i in items]


mlruns_of = {}


def check_store(label, store, deleted_names=None, trashed=None):
    rows, exps = store_runs(store)
    if deleted_names is not None:
        check(len([r for r in rows if r[2]]) == len(deleted_names),
              "%s: the store marks the data's %d deleted runs deleted" %
              (label, len(deleted_names)))
    live = [r for r in rows if not r[2]]
    dead = [r for r in rows if r[2]]
    if len(live) < 2:
        probe(store, "run", "create", "second-run")
        rows, exps = store_runs(store)
        live = [r for r in rows if not r[2]]
    if not dead:
        # a run deleted here
        probe(store, "run", "delete", "run:" + live[-1][0])
        rows, exps = store_runs(store)
        live = [r for r in rows if not r[2]]
        dead = [r for r in rows if r[2]]
    check(len(dead) > 0 and len(live) > 0, "%s: live and deleted runs" % label)
    L, D = "run:" + live[0][0], "run:" + dead[0][0]
    word = "quokkaword" + label.replace("-", "")
    probe(store, "note", D, "a %s note on the deleted run" % word)
    probe(store, "checkpoint", "add", D, "77", "--best")
    probe(store, "artifact", "ref", "s3://bucket/%s.bin" % word, "--name", word + "-art",
          "--on", D)
    probe(store, "lineage", "add", L, D)
    gref = probe(store, "put", "group", json.dumps({"name": word + "-group", "runs": [L, D]}))
    gref = gref.splitlines()[-1].strip()
    srv = Server(store)
    try:
        inc = {"include_deleted": True}
        # search: the deleted run's name and id, its note's words
        for q in (dead[0][1], dead[0][0], word):
            if not q:
                continue
            hits = srv.pages("search", {"query": q, "limit": 50}, "results")
            bad = [h for h in hits if h.get("deleted") or h.get("ref") == D or
                   (h.get("kind") in ("note", "artifact") and word in json.dumps(h))]
            check(not bad, "%s: search %r shows deleted things: %s" % (label, q, bad[:2]))
            hits = srv.pages("search", dict(inc, query=q, limit=50), "results")
            marked = [h for h in hits if h.get("deleted")]
            check(marked, "%s: search %r include_deleted shows them marked" % (label, q))
        for name in trashed or ():
            hits = srv.pages("search", {"query": name, "limit": 50}, "results")
            check(not [h for h in hits if h.get("kind") == "experiment" and
                       name in h.get("ref", "")],
                  "%s: search finds the trashed experiment %s" % (label, name))
            hits = srv.pages("search", dict(inc, query=name, limit=50), "results")
            check([h for h in hits if h.get("kind") == "experiment" and h.get("deleted") and
                   name in h.get("ref", "")],
                  "%s: include_deleted finds the trashed experiment, marked" % label)
            tree = json.dumps(srv.call("browse", {"mode": "tree", "depth": 3, "limit": 100})[0])
            check(name not in tree, "%s: the tree shows the trashed experiment" % label)
        # browse
        runs = srv.pages("browse", {"mode": "runs", "limit": 200}, "runs")
        check(set(refs(runs)) == {"run:" + r[0] for r in live},
              "%s: browse runs is the live runs" % label)
        runs = srv.pages("browse", dict(inc, mode="runs", limit=200), "runs")
        check(set(refs(runs)) == {"run:" + r[0] for r in rows} and
              all(bool(r.get("deleted")) == (r["ref"] in {"run:" + d[0] for d in dead})
                  for r in runs), "%s: browse runs include_deleted marks them" % label)
        notes = srv.pages("browse", {"mode": "notes", "limit": 100}, "notes")
        check(not [n for n in notes if n.get("on") == D or n.get("deleted")],
              "%s: browse notes shows the deleted run's note" % label)
        notes = srv.pages("browse", dict(inc, mode="notes", limit=100), "notes")
        check([n for n in notes if n.get("on") == D and n.get("deleted") is True],
              "%s: browse notes include_deleted shows it marked" % label)
        ck = srv.pages("browse", {"mode": "checkpoints", "limit": 100}, "checkpoints")
        check(not [c for c in ck if c.get("run") == D],
              "%s: browse checkpoints shows the deleted run's" % label)
        ck = srv.pages("browse", dict(inc, mode="checkpoints", limit=100), "checkpoints")
        check([c for c in ck if c.get("run") == D and c.get("deleted") is True],
              "%s: browse checkpoints include_deleted marks it" % label)
        # entity: lineage downstream of L, the group's record
        lin = {"refs": [L], "view": "lineage", "view_options": {"direction": "downstream"}}
        edges = srv.pages("entity", lin, "edges")
        check(not [e for e in edges if e.get("to") == D],
              "%s: downstream lineage shows the deleted run" % label)
        edges = srv.pages("entity", dict(lin, **inc), "edges")
        check([e for e in edges if e.get("to") == D and e.get("deleted") is True],
              "%s: lineage include_deleted shows the edge marked" % label)
        g, err = srv.call("entity", {"refs": [gref], "view": "record"})
        txt = json.dumps(g)
        check(not err and L in txt and D not in txt,
              "%s: the group's record shows the deleted run: %s" % (label, txt[:300]))
        g, err = srv.call("entity", {"refs": [gref], "view": "record", "include_deleted": True})
        check(not err and D in json.dumps(g), "%s: group record include_deleted" % label)
        # asked for by its ref, a deleted run's own notes are shown
        own = srv.pages("entity", {"refs": [D], "view": "notes"}, "notes")
        check([n for n in own if word in json.dumps(n)],
              "%s: entity notes of the deleted run itself" % label)
        # query_sql: counts of live and deleted rows
        def one(sql):
            r, err = srv.call("query_sql", {"sql": sql})
            check(not err, "%s: query_sql %s: %s" % (label, sql, r))
            return r["rows"][0][0] if not err else None
        check(one("SELECT count(*) FROM runs") == len(live),
              "%s: query_sql runs counts the live runs" % label)
        check(one("SELECT count(*) FROM deleted_runs") == len(dead),
              "%s: query_sql deleted_runs" % label)
        check(one("SELECT count(*) FROM checkpoints c WHERE c.run_id NOT IN"
                  " (SELECT id FROM runs)") == 0,
              "%s: query_sql checkpoints of deleted runs" % label)
        check(one("SELECT count(*) FROM notes WHERE owner_kind='run' AND owner_id IN"
                  " (SELECT id FROM deleted_runs)") == 0,
              "%s: query_sql notes of deleted runs" % label)
        n_exp = len([e for e in exps if not e[2]])
        check(one("SELECT count(*) FROM experiments") == n_exp,
              "%s: query_sql experiments counts the live ones" % label)
        if label.startswith("mlflow"):
            # reproduce carries the run's MLflow params, as in its params/ files
            rp, err = srv.call("entity", {"refs": [L], "view": "reproduce", "token_budget": 8000})
            check(not err and isinstance(rp.get("params"), dict) and rp["params"],
                  "%s: reproduce has the MLflow params: %s" % (label, json.dumps(rp)[:300]))
            rid = L.split("-")[-1]
            files = [os.path.join(mlruns_of[label], e, rid, "params") for e in
                     os.listdir(mlruns_of[label])]
            files = [f for f in files if os.path.isdir(f)]
            check(files, "%s: the MLflow params of %s are found" % (label, L))
            if files and not err:
                names = sorted(os.listdir(files[0]))
                got = rp.get("params") or {}
                check(sorted(got) == names, "%s: reproduce params %s vs files %s" %
                      (label, sorted(got), names))
                for n in names:
                    want = open(os.path.join(files[0], n)).read().strip()
                    v = got.get(n)
                    same = str(v) == want or (isinstance(v, (int, float)) and
                                              not isinstance(v, bool) and
                                              float(want) == float(v))
                    check(same, "%s: param %s is %r, the file says %r" % (label, n, v, want))
        listing, _ = srv.call("query_sql", {})
        check("deleted_runs" in listing.get("deleted", ""),
              "%s: query_sql's listing says how deleted rows are kept" % label)
    finally:
        srv.close()


def main():
    pg_skip()
    with tempfile.TemporaryDirectory() as tmp:
        trash = trashed_copy(tmp)
        cases = [
            ("mlflow-kymatio", ["import", "mlflow", os.path.join(DATA, "mlflow-kymatio", "mlruns"),
                                "--project", "kymatio"],
             os.path.join(DATA, "mlflow-kymatio", "mlruns")),
            ("mlflow-adamw", ["import", "mlflow", os.path.join(DATA, "mlflow-adamw", "mlruns")],
             os.path.join(DATA, "mlflow-adamw", "mlruns")),
            ("mlflow-trashed", ["import", "mlflow", trash], trash),
            ("tensorboard", ["import", "tensorboard",
                             os.path.join(DATA, "tensorboard-reducer", "runs")], None),
            ("csv", ["import", "csv", os.path.join(DATA, "lightning-genrisk", "lightning_logs")],
             None),
            ("csv-synthetic", ["import", "csv", os.path.join(DATA, "csv-synthetic")], None),
            ("hf", ["import", "hf", os.path.join(DATA, "hf-whisper", "trainer_state.json")], None),
            ("demo", ["demo"], None),
        ]
        for label, cmd, mlruns in cases:
            store = new_store(tmp, label)
            try:
                if cmd[0] != "demo":
                    probe(store, "init")
                probe(store, *cmd)
                dn, tr = mlflow_deleted(mlruns) if mlruns else (None, None)
                mlruns_of[label] = mlruns
                if mlruns:
                    check(len(dn) > 0, "%s: the sample has deleted runs" % label)
                check_store(label, store, dn, tr)
            except RuntimeError as e:
                check(False, "%s: %s" % (label, e))
            finally:
                drop_store(store)
    finish()


if __name__ == "__main__":
    main()
