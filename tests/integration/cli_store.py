#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The probe CLI's store commands, end to end: every command writes through
the store and reads back what it wrote; bad input gets a clear error and an
exit status of 1 (bad data) or 2 (bad usage) and leaves the store as it was.

usage: cli_store.py PATH/TO/probe

With PMCP_TEST_STORE=pg the same commands run on PostgreSQL: every store
is a new schema of the test cluster (PROBE_TEST_PG_URL, tests/pg/pgctl.sh),
named by --store or PROBE_STORE exactly as a file would be; skips (77)
without a cluster unless PMCP_TEST_STRICT is set."""
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile

PROBE = os.path.abspath(sys.argv[1])
failures = []
PG = os.environ.get("PMCP_TEST_STORE") == "pg"
PG_URL = os.environ.get("PROBE_TEST_PG_URL")
if PG and not PG_URL:
    sys.exit(1 if os.environ.get("PMCP_TEST_STRICT", "0") not in ("", "0") else 77)
schemas = []


def psql(sql):
    r = subprocess.run(["psql", PG_URL, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c",
                        "SET client_min_messages=warning; " + sql],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise SystemExit("psql: " + r.stderr)
    return r.stdout.strip()


def fresh(tmp, name):
    """A location for a new store: a file in tmp, or (pg) a new empty schema."""
    if not PG:
        return os.path.join(tmp, name + ".db") if name != "lab" else \
            os.path.join(tmp, "lab", "store.db")
    schema = "cli_%s_%s" % (name, secrets.token_hex(4))
    psql("CREATE SCHEMA " + schema)
    schemas.append(schema)
    return PG_URL + ("&" if "?" in PG_URL else "?") + "options=-csearch_path%3D" + schema


def exists(store):
    """Whether a store was made at @store."""
    if not PG:
        return os.path.exists(store)
    schema = store.rsplit("%3D", 1)[1]
    return psql("SELECT to_regclass('%s.meta') IS NOT NULL" % schema) == "t"


def run(*args, stdin=None, cwd=None, store=None):
    cmd = [PROBE]
    if store:
        cmd += ["--store", store]
    cmd += list(args)
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=cwd, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def ok(*args, **kw):
    rc, out, err = run(*args, **kw)
    check(rc == 0, "%s -> %d: %s" % (" ".join(args), rc, err.strip()))
    return out


def total(store, kind, *extra):
    out = ok("list", kind, "--limit", "1", *extra, store=store)
    return json.loads(out)["total"]


def main():
    tmp = tempfile.mkdtemp(prefix="probe-cli-")
    try:
        store = fresh(tmp, "lab")
        out = ok("init", store=store)
        check(store in out and exists(store), "init creates the store")
        # Resolution through $PROBE_STORE.
        env_store = fresh(tmp, "env")
        p = subprocess.run([PROBE, "init"], capture_output=True, text=True,
                           env=dict(os.environ, PROBE_STORE=env_store))
        check(p.returncode == 0 and exists(env_store), "init honours PROBE_STORE")

        check(ok("project", "create", "Vision Lab", store=store).strip() == "project:vision-lab",
              "project create prints its ref")
        ok("experiment", "create", "base", "--project", "vision-lab", "--config",
           '{"lr": 0.1, "optimizer": {"name": "sgd"}}', store=store)
        check(ok("run", "create", "r1", "--experiment", "base", "--command", "python t.py",
                 "--env", "GPU=A100", store=store).strip() == "run:r1", "run create")
        # --env: the object as given, a repeated key kept, strings escaped,
        # bytes that are not UTF-8 as U+FFFD
        ok("run", "create", "r-env", "--env", "A=1", "--env", 'B="x" \x01', "--env", "A=2",
           "--env", os.fsdecode(b"\xc3\xa9=\xff"), store=store)
        env = ok("show", "run:r-env", store=store)
        check('"environment":{"A":"1","B":"\\"x\\" \\u0001","A":"2","\u00e9":"\ufffd"}' in env,
              "run create --env: %s" % env)
        if shutil.which("git"):
            repo = os.path.join(tmp, "repo")
            os.makedirs(repo)
            g = lambda *a: subprocess.run(["git", "-C", repo] + list(a), capture_output=True)
            g("init", "-q", "-b", "main")
            with open(os.path.join(repo, "train.py"), "w") as f:
                f.write("lr = 1\n")
            g("add", "train.py")
            g("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x")
            g("remote", "add", "origin", "https://example.com/repo.git")
            with open(os.path.join(repo, "train.py"), "w") as f:
                f.write("lr = 2\n")
            ok("run", "create", "r-git", "--git", repo, store=store)
            rec = json.loads(ok("show", "run:r-git", store=store))
            code = rec["code"]
            check(len(code["commit"]) == 40 and code["branch"] == "main" and
                  code["remote"] == "https://example.com/repo.git" and code["dirty"] and
                  "+lr = 2" in code["diff"], "run create --git records the code state")
            rc, _, err = run("run", "create", "--git", tmp, store=store)
            check(rc == 1 and "not a Git checkout" in err, "--git on a plain folder is refused")

        # Metric points as JSON lines.
        lines = "\n".join(json.dumps(x) for x in [
            {"key": "loss", "step": 0, "value": 2.5, "time": 1700000000000},
            {"key": "loss", "step": 1, "value": "NaN"},
            {"step": 2, "values": {"loss": 1.5, "acc": 0.5}},
            {"key": "ret", "step": 3, "value": 10, "scale": "episode", "labels": {"env": "1"}},
            {"key": "w", "kind": "histogram", "step": 5, "edges": [0, 1, 2], "counts": [3, 4]},
            {"key": "e", "kind": "scatter", "step": 5, "x": [0.5], "y": [1.5]},
        ]) + "\n"
        ok("log", "r1", stdin=lines, store=store)
        series = json.loads(ok("list", "series", "--parent", "run:r1", store=store))["items"]
        by = {(s["key"], s["scale"]): s for s in series}
        check(by[("loss", "step")]["count"] == 3 and by[("loss", "step")]["nonfinite"] == 1,
              "log stores float points (NaN counted)")
        check(by[("ret", "episode")]["labels"] == {"env": "1"}, "labels and scales are kept")
        check(len(series) == 5, "five series (loss, acc, ret, w, e)")
        before = total(store, "series", "--parent", "run:r1")
        bad = '{"key":"new","step":1,"value":1}\n{"key":"new","step":"x","value":1}\n'
        rc, _, err = run("log", "r1", stdin=bad, store=store)
        check(rc == 1 and "line 2" in err and '"step"' in err, "log names the bad line")
        check(total(store, "series", "--parent", "run:r1") == before, "a failed log stores nothing")
        rc, _, err = run("log", "r1", stdin="not json\n", store=store)
        check(rc == 1 and "line 1" in err, "log refuses non-JSON")
        rc, _, err = run("log", "nope", stdin=lines, store=store)
        check(rc == 1 and "nope" in err, "log into a missing run names it")

        # set: typed values, tags.
        ok("set", "r1", "--config", "batch=64", "--config", "lr=0.01", "sys/name=hello",
           "--string", "code=007", "--datetime", "sys/start=2024-05-01T00:00:00Z",
           "--set", "sys/groups=a,b", "--config", "amp=true", "--tag", "best", store=store)
        rec = json.loads(ok("show", "run:r1", store=store))
        cfg, types = rec["config"], rec["attribute_types"]
        check(cfg["batch"] == 64 and types["config/batch"] == "int", "set guesses int")
        check(cfg["lr"] == 0.01 and types["config/lr"] == "float", "set guesses float")
        check(cfg["amp"] is True and rec["attributes"]["code"] == "007", "bool and --string")
        check(rec["attributes"]["sys"]["start"] == "2024-05-01T00:00:00.000Z", "datetime")
        check(rec["attributes"]["sys"]["groups"] == ["a", "b"], "string set")
        check(rec["inherited"]["optimizer"]["name"] == "sgd", "runs inherit experiment config")
        check(rec["tags"] == ["best"] and rec["environment"] == {"GPU": "A100"}, "tags, env")
        rc, _, err = run("set", "r1", "noequals", store=store)
        check(rc == 2 and "PATH=VALUE" in err, "set refuses a bare word")
        rc, _, err = run("set", "r1", "--datetime", "x=yesterday", store=store)
        check(rc == 2, "set refuses a bad time")

        # Notes: overview versions, summary block, team note.
        ok("note", "experiment:base", "--kind", "overview", "# v1", "--summary", "first",
           "--author", "ana", store=store)
        out = ok("note", "experiment:base", "--kind", "overview", "# v2", "--summary", "second",
                 "--author", "bot", "--via", "agent:x", store=store)
        check(out.strip().endswith("v2"), "overview gets version 2")
        ref = out.split()[0]
        v1 = json.loads(ok("show", ref + "@1", store=store))
        check(v1["summary"] == "first" and v1["author"] == "ana", "note@1 reads version 1")
        cur = json.loads(ok("show", ref, store=store))
        check(cur["via"] == "agent:x" and len(cur["history"]) == 2, "history: who and through what")
        ok("note", "--team", "Team rules", store=store)
        check(json.loads(ok("show", "team-note", store=store))["body"] == "Team rules", "team note")
        ok("note", "run:r1", store=store, stdin="from stdin\n")
        rc, _, err = run("note", "r1", "x", store=store)
        check(rc == 2 and "not a ref" in err, "note wants a ref")

        # Artifacts: content round trip, labels, promotion, references.
        blob = os.path.join(tmp, "weights.bin")
        with open(blob, "wb") as f:
            f.write(bytes(range(256)) * 10)
        out = ok("artifact", "add", blob, "--on", "run:r1", "--label", "best", store=store)
        aref = out.split()[0]
        dest = os.path.join(tmp, "out.bin")
        ok("artifact", "download", aref, dest, store=store)
        check(open(dest, "rb").read() == open(blob, "rb").read(), "download returns the bytes")
        ok("artifact", "add", blob, "--on", "run:r1", store=store)
        ok("artifact", "label", aref, "2", "best", store=store)
        rec = json.loads(ok("show", aref, store=store))
        check(rec["labels"] == {"best": 2} and rec["latest"] == 2, "labels move, versions count")
        ok("artifact", "promote", aref, store=store)
        check(json.loads(ok("show", "artifact:weights.bin", store=store))["shared"],
              "a promoted artifact resolves by name")
        ok("artifact", "ref", "s3://b/model.pt", "--name", "model", "--size", "123", store=store)
        rc, _, err = run("artifact", "download", "artifact:model", dest, store=store)
        check(rc == 1 and "reference" in err, "download refuses a reference")
        rc, _, err = run("artifact", "add", os.path.join(tmp, "missing"), store=store)
        check(rc == 1 and "missing" in err, "artifact add names a missing file")

        # The catalog.
        ok("dataset", "add", "cifar", "--uri", "s3://d", store=store)
        check(ok("dataset", "version", "cifar", "--rows", "10", store=store).strip() ==
              "dataset:cifar@1", "dataset versions count from 1")
        ok("checkpoint", "add", "r1", "100", "--best", "--uri", "s3://c/100", store=store)
        ok("checkpoint", "add", "r1", "200", store=store)
        check(json.loads(ok("show", "checkpoint:r1@best", store=store))["step"] == 100, "@best")
        check(json.loads(ok("show", "checkpoint:r1@latest", store=store))["step"] == 200, "@latest")
        # Numbers reach the store as exactly the double given (a printer that
        # rounds would make 0.30000000000000004 0.3), an argument that is not
        # UTF-8 as text with U+FFFD.
        ok("checkpoint", "add", "r1", "300", "--metric", "val/loss", "--value",
           "0.30000000000000004", "--size", "9007199254740993", "--uri",
           os.fsdecode(b"s3://c/a\xffb"), store=store)
        ck = json.loads(ok("show", "checkpoint:r1@step300", store=store))
        check(ck["value"] == 0.30000000000000004 and ck["size"] == 9007199254740992 and
              ck["step"] == 300 and ck["uri"] == "s3://c/a\ufffdb", "checkpoint numbers exact")
        ok("checkpoint", "add", "r1", "400", "--value", "5e-324", store=store)
        check(json.loads(ok("show", "checkpoint:r1@step400", store=store))["value"] == 5e-324,
              "a subnormal value is kept")
        src = ok("source", "add", "hf", "model", "hf://org/m", store=store).strip()
        ok("lineage", "add", "dataset:cifar@1", "run:r1", "--step", "tokenize:BPE", store=store)
        ok("lineage", "use", "r1", src, store=store)
        up = json.loads(ok("lineage", "list", "run:r1", "--filter", '{"direction":"upstream"}',
                           store=store))
        check(up["total"] == 2, "lineage upstream of the run")
        rc, _, err = run("checkpoint", "add", "r1", "x", store=store)
        check(rc == 2 and "STEP" in err, "checkpoint wants a numeric step")
        rc, _, err = run("lineage", "add", "run:r1", "dataset:none", store=store)
        check(rc == 1 and "none" in err, "lineage names a missing entity")

        # Each catalog option lands in its field: a repeated option counts
        # once (the first), a negated flag is false, steps keep their order
        # and text (quotes, controls, UTF-8).
        ok("dataset", "add", "gold", "--uri", "a", "--uri", "b", "--unregistered",
           "--unregistered", "--description", 'q "x" \\ \t\x01 \u00e9', store=store)
        ok("dataset", "version", "gold", "--size", "1000", "--rows", "7", "--sha256", "ab",
           "--version", "v1", store=store)
        d = json.loads(ok("show", "dataset:gold@v1", store=store))
        check({k: d[k] for k in ("name", "uri", "registered", "description")} ==
              {"name": "gold", "uri": "a", "registered": False,
               "description": 'q "x" \\ \t\x01 \u00e9'} and
              {k: d["version"][k] for k in ("version", "size", "rows", "sha256")} ==
              {"version": "v1", "size": 1000, "rows": 7, "sha256": "ab"},
              "dataset options in their fields: %s" % d)
        ok("checkpoint", "add", "r1", "12", "--not-stored", "--value", "0.1", "--metric", "m",
           "--size", "-3", "--uri", "s3://g", store=store)
        d = json.loads(ok("show", "checkpoint:r1@step12", store=store))
        check({k: d[k] for k in ("step", "stored", "value", "metric", "size", "best")} ==
              {"step": 12, "stored": False, "value": 0.1, "metric": "m", "size": -3,
               "best": False}, "checkpoint options in their fields: %s" % d)
        ok("source", "add", "hf", "model", "hf://o/gold", "--version", "v2", "--id", "gold",
           "--description", "d", store=store)
        d = json.loads(ok("show", "source:gold", store=store))
        check({k: d[k] for k in ("provider", "source_kind", "uri", "version", "description")} ==
              {"provider": "hf", "source_kind": "model", "uri": "hf://o/gold", "version": "v2",
               "description": "d"}, "source options in their fields: %s" % d)
        ok("lineage", "add", "dataset:gold@v1", "checkpoint:r1@step12", "--relation", "fed",
           "--step", 'a:b:"c"', "--step", "plain", store=store)
        d = json.loads(ok("lineage", "list", "checkpoint:r1@step12", store=store))["items"][0]
        check({k: d[k] for k in ("from", "to", "relation", "steps")} ==
              {"from": "dataset:gold@v1", "to": "checkpoint:r1@step12", "relation": "fed",
               "steps": [{"name": "a", "description": 'b:"c"'}, {"name": "plain"}]},
              "lineage options in their fields: %s" % d)
        # key create --json: its members in this order
        out = ok("key", "create", "--json", "--scope", "write", "--name", "k", store=store)
        k = json.loads(out)
        check(out == '{"id":"%s","secret":"%s","tenant":"default","workspace":"default",'
              '"scope":"write"}\n' % (k["id"], k["secret"]), "key create --json: %s" % out)

        # put: JSON lines, atomic.
        recs = os.path.join(tmp, "recs.jsonl")
        with open(recs, "w") as f:
            f.write('{"name":"g1","runs":["r1"]}\n{"name":5}\n')
        rc, _, err = run("put", "group", "@" + recs, store=store)
        check(rc == 1 and "line 2" in err, "put names the bad line")
        check(total(store, "group") == 0, "a failed put stores nothing")
        ok("put", "session", '{"title":"s","transcript":[{"role":"user","content":"hi"}]}',
           store=store)

        # Search and read-only listing.
        res = json.loads(ok("search", "Team rules", store=store))
        check(any(i["ref"] == "note:team-note" for i in res["items"]), "search finds the team note")

        # Usage: --help everywhere, unknown options, missing stores.
        for cmd in ["init", "project", "experiment", "run", "log", "set", "note", "artifact",
                    "dataset", "checkpoint", "source", "lineage", "put", "show", "list", "search",
                    "demo", "workspace"]:
            rc, out, _ = run(cmd, "--help", store=store)
            check(rc == 0 and "usage" in out, "%s --help" % cmd)
        rc, _, err = run("run", "create", "--bogus", store=store)
        check(rc == 2 and "--bogus" in err, "unknown options are named")
        rc, _, err = run("show", "run:r1", store=fresh(tmp, "none"))
        check(rc == 1 and "probe init" in err, "a missing store says how to create one")
        rc, _, err = run("show", "spaceship:x", store=store)
        check(rc == 1 and "spaceship" in err, "unknown ref kinds are named")

        # Two writers at once.
        procs = []
        for name in ["w1", "w2"]:
            ok("run", "create", name, store=store)
            pts = "".join('{"key":"x","step":%d,"value":%d}\n' % (i, i) for i in range(20000))
            procs.append(subprocess.Popen([PROBE, "--store", store, "log", name],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True))
            procs[-1].feed = pts
        outs = [p.communicate(p.feed, timeout=120) for p in procs]
        check(all(p.returncode == 0 for p in procs), "two concurrent logs succeed: %r" % (outs,))
        for name in ["w1", "w2"]:
            s = json.loads(ok("list", "series", "--parent", "run:" + name, store=store))["items"]
            check(s and s[0]["count"] == 20000, "all points of %s are kept" % name)

        # The demo, from an unrelated folder, into a fresh store.
        demo = fresh(tmp, "demo")
        ok("demo", store=demo, cwd="/")
        check(total(demo, "run") >= 40, "demo has dozens of runs")
        check(total(demo, "paper") == 1000, "demo has the arXiv records")
        for kind in ["note", "artifact", "dataset", "checkpoint", "source", "group", "trial",
                     "session", "file", "lineage --parent run:baseline-seed0"]:
            k = kind.split()
            check(total(demo, k[0], *k[1:]) > 0, "demo has %s" % kind)
        rc, _, err = run("demo", store=demo)
        check(rc == 1 and "fresh" in err, "demo refuses a store with runs")

        # An import whose every run is already stored creates nothing: no
        # empty project or experiment is left behind.
        imp = fresh(tmp, "imp")
        csv = os.path.join(tmp, "m.csv")
        with open(csv, "w") as f:
            f.write("step,key,value\n0,loss,1.0\n1,loss,0.5\n")
        ok("import", "csv", csv, "--project", "first", store=imp)
        before = total(imp, "project"), total(imp, "experiment")
        out = ok("import", "csv", csv, "--project", "second", "--experiment", "again",
                 store=imp)
        check("skipped 1 run" in out, "the second import skips the run: %r" % out)
        check((total(imp, "project"), total(imp, "experiment")) == before,
              "an import that skipped every run left no project or experiment")
        projects = json.loads(ok("list", "project", store=imp))["items"]
        check(not any(p.get("id") == "second" for p in projects), "no project 'second'")

        # --wait: a number of seconds.
        for bad in ["x", "-1", ""]:
            rc, _, err = run("--wait", bad, "list", "run", store=imp)
            check(rc == 2 and "--wait" in err, "--wait %r refused" % bad)
        check(run("--wait", "5", "list", "run", store=imp)[0] == 0, "--wait 5 accepted")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if schemas:
            psql("DROP SCHEMA IF EXISTS %s CASCADE" % ", ".join(
                s + x for s in schemas for x in ("", "_sql")))
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
