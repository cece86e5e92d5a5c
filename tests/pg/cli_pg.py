#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The probe CLI and every importer on PostgreSQL, unchanged, compared with
the same commands on SQLite:

  cli_pg.py PROBE PROBE_MCP_STDIO DATA_DIR

The same sequence runs once on a SQLite file and once on a fresh schema of
the test cluster (PROBE_TEST_PG_URL, tests/pg/pgctl.sh):
  - `probe demo` (the store named by PROBE_STORE, not --store);
  - `probe import FORMAT` for every format `probe import --help` lists,
    on the data in tests/data/, and `probe papers import`; each twice (the
    second adds nothing);
  - `probe key create/list/revoke`, `probe user create/set-role/list/
    disable/enable`, `probe audit`, `probe tokens count`.
Then both stores are read back through the CLI (`probe list`, `probe show`
of every record) and through probe-mcp-stdio's tools (browse, entity,
list_runs, list_series, fetch_series_summaries, metrics summaries and
series, buckets...): the answers must be the same on both backends, up to
the times the commands themselves stamped ("now"), ids made at random
(keys, users) and opaque cursors. Skips (77) without PROBE_TEST_PG_URL
unless PMCP_TEST_STRICT is set."""
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

PROBE, STDIO, DATA = sys.argv[1], sys.argv[2], sys.argv[3]
OWNER = os.environ.get("PROBE_TEST_PG_URL")
if not OWNER:
    if os.environ.get("PMCP_TEST_STRICT", "0") not in ("", "0"):
        print("PMCP_TEST_STRICT is set but PROBE_TEST_PG_URL is not")
        sys.exit(1)
    sys.exit(77)

T0 = time.time() * 1000
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def psql(sql):
    r = subprocess.run(["psql", OWNER, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
                        "SET client_min_messages=warning; " + sql],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise SystemExit("psql: " + r.stderr)
    return r.stdout


def with_schema(url, schema):
    return url + ("&" if "?" in url else "?") + "options=-csearch_path%3D" + schema


def probe(store, *args, stdin=None, env_store=False):
    """Runs probe on @store (--store, or PROBE_STORE when env_store)."""
    env = dict(os.environ)
    env.pop("PROBE_STORE", None)
    cmd = [PROBE, "--quiet"]
    if env_store:
        env["PROBE_STORE"] = store
    else:
        cmd += ["--store", store]
    r = subprocess.run(cmd + list(args), input=stdin, capture_output=True, text=True,
                       env=env, timeout=300)
    return r.returncode, r.stdout, r.stderr


def ok(store, *args, **kw):
    rc, out, err = probe(store, *args, **kw)
    if rc != 0:
        check(False, "probe %s -> %d: %s" % (" ".join(args), rc, err.strip()))
    return out


def jok(store, *args, **kw):
    out = ok(store, *args, **kw)
    try:
        return json.loads(out)
    except ValueError:
        check(False, "probe %s printed no JSON: %r" % (" ".join(args), out[:200]))
        return None


def norm(o):
    """Numbers as floats (SQLite prints 1.0 where PostgreSQL prints 1, the
    same JSON number), times stamped by this run as "<now>", cursors
    dropped."""
    if isinstance(o, dict):
        return {k: norm(v) for k, v in o.items() if k not in ("next_cursor", "cursor")}
    if isinstance(o, list):
        return [norm(v) for v in o]
    if isinstance(o, str):
        if ISO.match(o):
            t = datetime.strptime(o[:19], "%Y-%m-%dT%H:%M:%S").replace(
                tzinfo=timezone.utc).timestamp() * 1000
            if T0 - 61e3 < t < time.time() * 1000 + 60e3:
                return "<now>"
        return o
    if isinstance(o, bool) or o is None:
        return o
    if isinstance(o, (int, float)):
        if T0 - 60e3 < o < time.time() * 1000 + 60e3:
            return "<now>"
        return float(o)
    return o


def first_diff(a, b, path="$"):
    """Where two normalized JSON values first differ (for the message)."""
    if type(a) != type(b):
        return "%s: %s vs %s" % (path, json.dumps(a)[:150], json.dumps(b)[:150])
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s only on %s" % (path, k, "SQLite" if k in a else "PostgreSQL")
            d = first_diff(a[k], b[k], path + "." + k)
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d vs %d items" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    if isinstance(a, float) and isinstance(b, float):
        if a == b or (a != a and b != b):
            return None
        return "%s: %r vs %r" % (path, a, b)
    return None if a == b else "%s: %s vs %s" % (path, json.dumps(a)[:150], json.dumps(b)[:150])


def same(what, a, b):
    d = first_diff(norm(a), norm(b))
    return check(d is None, "%s: the same on both backends%s" % (what, "" if d is None else
                                                                   " (" + d + ")"))


class Stdio:
    """One probe-mcp-stdio (all toolsets) on a store."""

    def __init__(self, store):
        env = dict(os.environ)
        env.pop("PROBE_STORE", None)
        env.pop("PROBE_WORKSPACE", None)
        env.pop("PROBE_PROJECT", None)
        self.p = subprocess.Popen([STDIO, "--store", store, "--toolset", "all"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env)
        self.n = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "cli_pg.py", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0",
                                       "method": "notifications/initialized"}) + "\n")
        self.p.stdin.flush()

    def rpc(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise SystemExit("probe-mcp-stdio ended: " + self.p.stderr.read())
        return json.loads(line)

    def call(self, tool, args):
        r = self.rpc("tools/call", {"name": tool, "arguments": args})
        if "error" in r:
            return {"rpc_error": r["error"].get("message")}
        res = r["result"]
        text = res["content"][0]["text"] if res.get("content") else ""
        try:
            body = json.loads(text)
        except ValueError:
            body = text
        return {"error": bool(res.get("isError")), "body": body}

    def hits(self, tool, args, items, key):
        """Every page of a ranked answer: the sorted set of what it found."""
        found, cur = [], None
        for _ in range(50):
            r = self.call(tool, dict(args, **({"cursor": cur} if cur else {})))
            if r.get("error") or r.get("rpc_error") or not isinstance(r["body"], dict):
                return r
            found += [str(x.get(key)) for x in r["body"].get(items, [])]
            cur = r["body"].get("next_cursor")
            if not cur:
                break
        return {"error": False, "found": sorted(found)}

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()


# --- the same commands on both backends --------------------------------------

def import_jobs():
    """Every format the CLI lists, each with the test data it reads."""
    rc, out, err = probe("unused.db", "import", "--help")
    formats = re.findall(r"^  (\S+)\s+\1 ", out, re.M)
    check(rc == 0 and formats, "probe import --help lists the formats (%s)" % formats)
    data = {
        "mlflow": [["mlflow-kymatio/mlruns", "--project", "kymatio"], ["mlflow-adamw/mlruns"]],
        "tensorboard": [["tensorboard-reducer/runs"]],
        "csv": [["lightning-genrisk/lightning_logs"], ["csv-synthetic/lightning_logs"],
                ["csv-synthetic/long-metrics.csv", "--project", "long", "--name", "long"]],
        "hf": [["hf-whisper/trainer_state.json", "--project", "whisper"],
               ["hf-whisper/last-checkpoint/trainer_state.json", "--project", "whisper",
                "--name", "whisper-last"]],
    }
    for f in formats:
        check(f in data, "the test has data for the importer '%s'" % f)
    jobs = []
    for f in formats:
        for spec in data.get(f, []):
            jobs.append(["import", f, os.path.join(DATA, spec[0])] + spec[1:] + ["--json"])
    jobs.append(["papers", "import", os.path.join(DATA, "arxiv-sample",
                                                 "arxiv-metadata-sample-200.jsonl"), "--json"])
    return jobs


def fill(demo, lab):
    """The commands, on one backend; what they printed, for comparing."""
    out = {}
    # probe demo through PROBE_STORE (no --store).
    rc, o, err = probe(demo, "demo", env_store=True)
    check(rc == 0, "probe demo via PROBE_STORE: " + err.strip())
    out["demo list project (PROBE_STORE)"] = json.loads(
        ok(demo, "list", "project", "--limit", "100", env_store=True) or "null")
    ok(lab, "init")
    for job in import_jobs():
        first = jok(lab, *job)
        again = jok(lab, *job)
        out[" ".join(job[:2])] = out.get(" ".join(job[:2]), []) + [first]
        if first is not None and again is not None:
            added = {k: v for k, v in again.items()
                     if isinstance(v, int) and v and k not in ("runs_skipped", "papers_skipped",
                                                             "artifacts_skipped", "files")}
            check(not added, "%s again adds nothing %s" % (" ".join(job[:3]), added or ""))
    # Keys, users, audit: the service tables.
    key = jok(lab, "key", "create", "--name", "ci", "--scope", "write", "--json")
    keys = jok(lab, "key", "list", "--json")
    check(key is not None and keys and any(k.get("id") == key.get("id") for k in keys),
          "probe key list shows the new key")
    ok(lab, "user", "create", "ada", "--display-name", "Ada L", stdin="correct horse 42\n")
    ok(lab, "user", "set-role", "ada", "--workspace", "default", "--role", "editor")
    ok(lab, "user", "disable", "ada")
    ok(lab, "user", "enable", "ada")
    rc, _, err = probe(lab, "user", "create", "ada", stdin="other pass 123\n")
    check(rc != 0 and "ada" in err, "probe user create refuses an existing name: " + err.strip())
    out["user list"] = jok(lab, "user", "list", "--json")
    if key:
        ok(lab, "key", "revoke", key["id"])
        rc, _, err = probe(lab, "key", "revoke", key["id"])
        out["key revoke again"] = rc
    out["key list"] = jok(lab, "key", "list", "--json")
    audit = jok(lab, "audit", "--json") or []
    out["audit"] = sorted((e.get("action"), e.get("via"), e.get("workspace")) for e in audit)
    out["audit filtered"] = len(jok(lab, "audit", "--action", "user.", "--json") or [])
    sample = os.path.join(DATA, "arxiv-sample", "NOTE.md")
    out["tokens count"] = ok(lab, "tokens", "count", sample).strip()
    return out


def scrub_service(out):
    """Ids, key secrets and prefixes are random per store."""
    for k in out.get("key list") or []:
        for f in ("id", "prefix", "secret"):
            k.pop(f, None)
    for u in out.get("user list") or []:
        u.pop("id", None)
    return out


def cli_dump(store, per_run_lists):
    """probe list of every kind and probe show of every record; with
    @per_run_lists also each run's series and attribute listings (the tools
    read those too: kept to the imported store, to bound the time)."""
    d = {}
    kinds = ["workspace", "project", "experiment", "run", "note", "artifact", "dataset",
             "checkpoint", "source", "lineage", "group", "trial", "session", "file", "paper"]
    for k in kinds:
        d["list " + k] = jok(store, "list", k, "--limit", "1000", "--deleted")
    for it in (d["list run"] or {}).get("items", []):
        ref = it["ref"]
        d["show " + ref] = jok(store, "show", ref)
        for sub in ("series", "attribute") if per_run_lists else ():
            d["list %s %s" % (sub, ref)] = jok(store, "list", sub, "--parent", ref, "--limit", "1000")
    for k in ("project", "experiment", "artifact", "note", "dataset", "group", "session"):
        for it in (d["list " + k] or {}).get("items", []):
            d["show " + it["ref"]] = jok(store, "show", it["ref"])
    return d


def tool_dump(store, cli):
    """The tools' answers on @store; @cli: its CLI dump (for the refs)."""
    s = Stdio(store)
    d = {}
    try:
        runs = [it["ref"] for it in cli["list run"]["items"]]
        projects = [it["ref"] for it in cli["list project"]["items"]]
        for mode in ("tree", "runs", "workspaces", "notes", "files", "datasets",
                     "checkpoints", "sources"):
            d["browse " + mode] = s.call("browse", {"mode": mode, "limit": 200,
                                                    "token_budget": 8000,
                                                    "include_deleted": mode in ("tree", "runs")}
                                         if mode in ("tree", "runs") else
                                         {"mode": mode, "limit": 200, "token_budget": 8000})
        d["list_workspaces"] = s.call("list_workspaces", {})
        for p in projects:
            d["browse tree " + p] = s.call("browse", {"mode": "tree", "ref": p, "depth": 3,
                                                      "limit": 200, "token_budget": 8000})
            for t in ("list_experiments", "list_attribute_definitions", "list_metrics"):
                d[t + " " + p] = s.call(t, {"project": p, "limit": 100, "token_budget": 8000})
            d["list_runs " + p] = s.call("list_runs", {"project": p, "limit": 100,
                                                       "token_budget": 8000})
        for r in runs:
            d["list_series " + r] = s.call("list_series", {"runs": [r], "token_budget": 8000})
            body = d["list_series " + r].get("body")
            ser = [x["series"] for x in body.get("series", [])] if isinstance(body, dict) else []
            keys = sorted(set(ser))[:20]
            d["entity " + r] = s.call("entity", {"refs": [r], "view": "card",
                                                 "token_budget": 8000})
            d["entity summary " + r] = s.call("entity", {"refs": [r], "view": "metrics",
                                                         "token_budget": 8000})
            d["metrics coordinates " + r] = s.call("metrics", {"mode": "coordinates",
                                                               "run_id": r,
                                                               "token_budget": 8000})
            d["get_run_attributes " + r] = s.call("get_run_attributes", {"run": r,
                                                                         "token_budget": 8000})
            if keys:
                d["metrics summaries " + r] = s.call("metrics", {"mode": "summaries",
                                                                 "run_ids": [r], "keys": keys,
                                                                 "token_budget": 8000})
                d["metrics series " + r] = s.call("metrics", {"mode": "series", "run_ids": [r],
                                                              "keys": keys[:5],
                                                              "max_points": 50,
                                                              "token_budget": 8000})
                d["fetch_series_summaries " + r] = s.call(
                    "fetch_series_summaries", {"runs": [r], "series": keys,
                                               "token_budget": 8000})
                d["fetch_float_series_buckets " + r] = s.call(
                    "fetch_float_series_buckets", {"runs": [r], "series": keys[:5],
                                                   "buckets": 20, "token_budget": 8000})
                d["metrics grouped " + r] = s.call("metrics", {"mode": "grouped", "run_id": r,
                                                               "key": keys[0], "max_rows": 20,
                                                               "token_budget": 8000})
                d["metrics points " + r] = s.call("metrics", {"mode": "points", "run_id": r,
                                                              "key": keys[0], "limit": 50,
                                                              "token_budget": 8000})
        # Keyword ranking is each engine's own (FTS5's BM25, ts_rank): the
        # same documents must match, in whatever order.
        for q in ("resnet", "loss", "transformer", "lr 1.0", "train/loss", "quantum"):
            d["search " + q] = s.hits("search", {"query": q, "token_budget": 8000},
                                      "results", "ref")
        for q in ("neural network", "superconductivity", "black holes", "graphene spin"):
            d["find_papers " + q] = s.hits("find_papers", {"mode": "search", "query": q,
                                                           "token_budget": 8000},
                                           "papers", "ref")
        d["query_sql"] = s.call("query_sql", {"sql": "SELECT slug, status, deleted FROM runs"
                                                     " ORDER BY slug"})
    finally:
        s.close()
    return d


def compare(a, b, what):
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b:
            check(False, "%s %s: made on one backend only" % (what, k))
            continue
        same("%s %s" % (what, k), a[k], b[k])


def main():
    tmp = tempfile.mkdtemp(prefix="probe-cli-pg-")
    tag = secrets.token_hex(4)
    schemas = ["clipg_demo_" + tag, "clipg_lab_" + tag]
    for sc in schemas:
        psql("CREATE SCHEMA %s" % sc)
    try:
        sq = (os.path.join(tmp, "demo.db"), os.path.join(tmp, "lab.db"))
        pg = tuple(with_schema(OWNER, sc) for sc in schemas)
        t = time.time()
        out_sq = scrub_service(fill(*sq))
        t_sq = time.time() - t
        t = time.time()
        out_pg = scrub_service(fill(*pg))
        t_pg = time.time() - t
        print("commands: SQLite %.1f s, PostgreSQL %.1f s" % (t_sq, t_pg))
        compare(out_sq, out_pg, "probe")
        for i, name in enumerate(("demo", "imports")):
            t = time.time()
            c_sq = cli_dump(sq[i], name == "imports")
            t1 = time.time()
            c_pg = cli_dump(pg[i], name == "imports")
            t2 = time.time()
            check(len(c_sq["list run"]["items"]) > 5, "%s: the store has runs" % name)
            compare(c_sq, c_pg, name + ": probe")
            t_sq = tool_dump(sq[i], c_sq)
            t3 = time.time()
            t_pg = tool_dump(pg[i], c_pg)
            print("%s: read back with probe: SQLite %.1f s, PostgreSQL %.1f s; with the tools:"
                  " SQLite %.1f s, PostgreSQL %.1f s" % (name, t1 - t, t2 - t1, t3 - t2,
                                                        time.time() - t3))
            errs = [k for k, v in t_pg.items() if v.get("error") or v.get("rpc_error")]
            check(not errs or all(t_sq[k].get("error") for k in errs),
                  "%s: the tools answer on PostgreSQL where they do on SQLite (%s)"
                  % (name, errs[:5]))
            compare(t_sq, t_pg, name + ": tool")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        psql("DROP SCHEMA IF EXISTS %s CASCADE" % ", ".join(
            s + x for s in schemas for x in ("", "_sql")))
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("the CLI and the importers give the same store on both backends")


main()
