#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`probe import` / `probe papers import` end to end, checked against an
independent reading of the inputs (check-import.py's readers) and an
independent reading of the resulting SQLite store (python3's sqlite3):

  check-store.py PROBE DATA_DIR

For each data set: a fresh store, one import; the reported counts, the
runs, experiments, attributes, per-series aggregates (count, steps,
first/last, min/max/sum over finite values), histogram buckets (decoded
from the stored little-endian doubles), artifacts (SHA-256), checkpoints
and papers must match the source files. Then the same import again must
add nothing (idempotent), and two imports into one store at the same time
must both land (concurrent writers).
"""
import hashlib
import importlib.util
import json
import math
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ci", os.path.join(HERE, "check-import.py"))
ci = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ci)

errors = []


def err(msg):
    errors.append(msg)
    print("MISMATCH:", msg)


def sanitize(s):
    return "".join(c if c.isalnum() and c.isascii() or c in "._-" else "-" for c in s)


def run_id(key):
    prefix, _, rest = key.partition(":")
    prefix = prefix[:16]
    if len(rest) <= 40:
        return sanitize(prefix + "-" + rest)
    h = hashlib.sha256(rest.encode()).hexdigest()[:32]
    return sanitize(("tb" if prefix == "tensorboard" else prefix) + "-" + h)


def probe(tool, store, args):
    cmd = [tool, "--store", store, "--quiet"] + args + ["--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        err("%s failed: %s" % (" ".join(args), r.stderr.strip()))
        return None
    return json.loads(r.stdout)


def snapshot(store):
    con = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
    out = {}
    for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table' "
                               "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%fts%'"):
        out[name] = con.execute('SELECT count(*) FROM "%s"' % name).fetchone()[0]
    con.close()
    return out


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def check_runs(con, exp, kind, project):
    prefix = {"param": "params/", "tag": "tags/", "attr": "", "config": "config/"}
    for key, e in exp["runs"].items():
        rid = run_id(key)
        row = con.execute("SELECT r.id, r.name, r.deleted, r.status, r.started, r.ended, "
                          "x.name, x.deleted, r.git_commit FROM runs r "
                          "LEFT JOIN experiments x ON x.id = r.experiment_id WHERE r.slug=?",
                          (rid,)).fetchone()
        if not row:
            err("run %s (%s) not in the store" % (rid, key))
            continue
        dbid, name, deleted, status, started, ended, xname, xdel, commit = row
        if name != e["name"]:
            err("run %s: name %r, expected %r" % (rid, name, e["name"]))
        if bool(deleted) != e["deleted"]:
            err("run %s: deleted %r, expected %r" % (rid, deleted, e["deleted"]))
        if kind == "mlflow":
            if status != e["status"]:
                err("run %s: status %r, expected %r" % (rid, status, e["status"]))
            if started != e["start_ms"] or ended != e["end_ms"]:
                err("run %s: times %r-%r, expected %r-%r" % (rid, started, ended, e["start_ms"], e["end_ms"]))
            ex = exp["experiments"][e["experiment"]]
            if xname != ex["name"] or bool(xdel) != ex["deleted"]:
                err("run %s: experiment %r (deleted %r), expected %r (%r)" % (rid, xname, xdel, ex["name"], ex["deleted"]))
            xdesc = con.execute("SELECT x.description FROM runs r JOIN experiments x "
                                "ON x.id = r.experiment_id WHERE r.slug=?", (rid,)).fetchone()[0]
            if xdesc != ex["description"]:
                err("run %s: experiment description %r, expected %r" % (rid, xdesc, ex["description"]))
            tag = e["attrs"].get(("tag", "mlflow.source.git.commit"))
            if tag and commit != tag[1]:
                err("run %s: git commit %r, expected %r" % (rid, commit, tag[1]))
        # attributes
        attrs = {}
        for path, typ, vt, vi, vr in con.execute(
                "SELECT path, type, v_text, v_int, v_real FROM attributes "
                "WHERE owner_kind='run' AND owner_id=?", (dbid,)):
            attrs[path] = (typ, vt if typ == "string" else vi if typ in ("int", "bool") else vr)
        for (k, p), (t, v) in e["attrs"].items():
            path = prefix[k] + p
            got = attrs.get(path)
            want = {"int": ("int", v), "float": ("float", v), "bool": ("bool", int(bool(v))),
                    "str": ("string", v), "null": ("string", ""), "json": ("string", v)}[t]
            if got is None:
                err("run %s: attribute %s missing" % (rid, path))
            elif got[0] != want[0] or not ci.same(got[1], want[1]):
                err("run %s: attribute %s = %r, expected %r" % (rid, path, got, want))
        # scalar series: aggregates
        by_key = {}
        for (k, step, wall, value) in e["scalars"]:
            by_key.setdefault(k, []).append((step, wall, value))
        # histogram summaries: float series labelled stat=min|max|num|sum|sum_squares
        for (k, step, wall, h) in e["hists"]:
            if not h["limits"]:
                continue
            for st in ("min", "max", "num", "sum", "sum_squares"):
                if not math.isnan(h[st]):
                    by_key.setdefault('%s{"stat":"%s"}' % (k, st), []).append((step, wall, h[st]))
        stored = {}
        for row2 in con.execute("SELECT key, labels, count, nonfinite, step_min, step_max, first, last, "
                                "vmin, vmax, vsum FROM series WHERE run_id=? AND kind='float'", (dbid,)):
            stored[row2[0] + (row2[1] if row2[1] != "{}" else "")] = row2[2:]
        if set(stored) != set(by_key):
            err("run %s: series %s, expected %s" % (rid, sorted(stored), sorted(by_key)))
        for k, pts in by_key.items():
            if k not in stored:
                continue
            count, nonfinite, smin, smax, first, last, vmin, vmax, vsum = stored[k]
            fin = [v for _, _, v in pts if math.isfinite(v)]
            want = (len(pts), len(pts) - len(fin), min(p[0] for p in pts), max(p[0] for p in pts))
            if (count, nonfinite, smin, smax) != want:
                err("run %s series %s: count/nonfinite/steps %r, expected %r" % (
                    rid, k, (count, nonfinite, smin, smax), want))
            if fin and not (close(vmin, min(fin)) and close(vmax, max(fin)) and close(vsum, math.fsum(fin))):
                err("run %s series %s: min/max/sum %r, expected %r" % (
                    rid, k, (vmin, vmax, vsum), (min(fin), max(fin), math.fsum(fin))))
            fv, lv = pts[0][2], pts[-1][2]
            if math.isfinite(fv) and not ci.same(first, fv):
                err("run %s series %s: first %r, expected %r" % (rid, k, first, fv))
            if math.isfinite(lv) and not ci.same(last, lv):
                err("run %s series %s: last %r, expected %r" % (rid, k, last, lv))
        # histograms
        hists = {}
        for (k, step, wall, h) in e["hists"]:
            if h["limits"]:
                hists.setdefault(k, []).append((step, h))
        for k, hs in hists.items():
            sets = con.execute("SELECT m.step, m.n, m.a, m.b FROM metric_sets m JOIN series s "
                               "ON s.id=m.series_id WHERE s.run_id=? AND s.key=? AND s.kind='histogram' "
                               "ORDER BY m.id", (dbid, k)).fetchall()
            if len(sets) != len(hs):
                err("run %s histogram %s: %d stored, expected %d" % (rid, k, len(sets), len(hs)))
                continue
            for (step, n, a, b), (wstep, h) in zip(sets, hs):
                edges = struct.unpack("<%dd" % (n + 1), a)
                counts = struct.unpack("<%dd" % n, b)
                if step != wstep or list(edges[1:]) != h["limits"] or list(counts) != h["counts"]:
                    err("run %s histogram %s step %d: stored %r/%r, expected %r/%r" % (
                        rid, k, step, edges[1:], counts, h["limits"], h["counts"]))
        # artifacts and checkpoints
        arts = dict(con.execute("SELECT a.name, v.sha256 FROM artifacts a JOIN artifact_versions v "
                                "ON v.artifact_id=a.id WHERE a.owner_kind='run' AND a.owner_id=?",
                                (dbid,)).fetchall())
        if arts != e["artifacts"]:
            err("run %s: artifacts %r, expected %r" % (rid, arts, e["artifacts"]))
        cps = [(s, b, v) for s, b, v in con.execute("SELECT step, best, value FROM checkpoints WHERE run_id=?", (dbid,))]
        want = [(s, b, v if math.isfinite(v) else None) for _, s, b, v in e["checkpoints"] if s >= 0]
        if sorted(cps) != sorted(want):
            err("run %s: checkpoints %r, expected %r" % (rid, cps, want))


def check_papers(con, exp):
    rows = {r[0]: r for r in con.execute(
        "SELECT arxiv_id, title, abstract, authors, categories, published, updated, doi, "
        "journal_ref, comments FROM papers")}
    if set(rows) != set(exp["papers"]):
        err("papers: %d stored, expected %d" % (len(rows), len(exp["papers"])))
    for pid, p in exp["papers"].items():
        r = rows.get(pid)
        if not r:
            continue
        want = (pid, p["title"], p["abstract"],
                ", ".join(p["author_list"]) if p["author_list"] else p["authors"],
                p["categories"], (p["published"] or "")[:10] or None,
                (p["updated"] or "")[:10] or None, p["doi"], p["journal_ref"], p["comments"])
        if tuple(r) != want:
            diff = [i for i in range(len(want)) if r[i] != want[i]]
            err("paper %s: fields %s differ: %r vs %r" % (pid, diff, [r[i] for i in diff], [want[i] for i in diff]))


def main():
    tool, data = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="pmcp-store-")
    tb_synth = os.path.join(tmp, "tb")
    subprocess.run([sys.executable, os.path.join(HERE, "gen-tb.py"), tb_synth], check=True)
    # an MLflow store with a deleted experiment under .trash/
    ml = os.path.join(tmp, "kym", "mlruns")
    shutil.copytree(os.path.join(data, "mlflow-kymatio", "mlruns"), ml)
    os.makedirs(os.path.join(ml, "1", "tags"))
    with open(os.path.join(ml, "1", "tags", "mlflow.note.content"), "w") as f:
        f.write("Baseline: a linear layer on scattering features.")
    os.makedirs(os.path.join(ml, ".trash"))
    os.rename(os.path.join(ml, "2"), os.path.join(ml, ".trash", "2"))
    sets = [
        ("mlflow", ml, ["import", "mlflow", ml, "--project", "kymatio"], "kymatio"),
        ("mlflow", os.path.join(data, "mlflow-kymatio", "mlruns"),
         ["import", "mlflow", os.path.join(data, "mlflow-kymatio", "mlruns")], "mlflow-kymatio"),
        ("tensorboard", os.path.join(data, "tensorboard-reducer", "runs"),
         ["import", "tensorboard", os.path.join(data, "tensorboard-reducer", "runs")], None),
        ("tensorboard", os.path.join(tb_synth, "synth"),
         ["import", "tensorboard", os.path.join(tb_synth, "synth"), "--project", "p", "--experiment", "e"], None),
        ("csv", os.path.join(data, "lightning-genrisk", "lightning_logs"),
         ["import", "csv", os.path.join(data, "lightning-genrisk", "lightning_logs")], None),
        ("csv", os.path.join(data, "csv-synthetic", "lightning_logs"),
         ["import", "csv", os.path.join(data, "csv-synthetic", "lightning_logs")], None),
        ("csv", os.path.join(data, "csv-synthetic", "long-metrics.csv"),
         ["import", "csv", os.path.join(data, "csv-synthetic", "long-metrics.csv"), "--name", "long"], None),
        ("hf", os.path.join(data, "hf-whisper", "trainer_state.json"),
         ["import", "hf", os.path.join(data, "hf-whisper", "trainer_state.json")], None),
        ("arxiv", os.path.join(data, "arxiv-sample", "arxiv-metadata-sample-200.jsonl"),
         ["papers", "import", os.path.join(data, "arxiv-sample", "arxiv-metadata-sample-200.jsonl")], None),
    ]
    for i, (kind, path, args, project) in enumerate(sets):
        store = os.path.join(tmp, "s%d.db" % i)
        exp = ci.expected(kind, path, project or "")
        if "--name" in args:
            for r in exp["runs"].values():
                r["name"] = args[args.index("--name") + 1]
        want = ci.counts_of(exp)
        got = probe(tool, store, args)
        if got is None:
            continue
        for k in ("experiments", "runs", "deleted_runs", "points", "artifacts", "checkpoints", "papers"):
            if got[k] != want[k]:
                err("%s %s: reported %s=%d, expected %d" % (kind, path, k, got[k], want[k]))
        want_h = sum(1 for r in exp["runs"].values() for h in r["hists"] if h[3]["limits"])
        if got["histograms"] != want_h:
            err("%s: reported %d histograms, expected %d" % (kind, got["histograms"], want_h))
        con = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
        if kind == "arxiv":
            check_papers(con, exp)
        else:
            check_runs(con, exp, kind, project)
        con.close()
        before = snapshot(store)
        again = probe(tool, store, args)
        if again is not None:
            added = {k: again[k] for k in ("experiments", "runs", "points", "histograms", "artifacts",
                                           "papers", "attributes") if again[k]}
            if added:
                err("%s: a second import added %r" % (kind, added))
            skipped = again["runs_skipped"] + again["papers_skipped"]
            if skipped != want["runs"] + want["papers"]:
                err("%s: a second import skipped %d, expected %d" % (kind, skipped, want["runs"] + want["papers"]))
        if snapshot(store) != before:
            err("%s: the store changed on the second import" % kind)
        print("ok   %s %s: %s" % (kind, os.path.relpath(path, data) if path.startswith(data) else "(generated)", json.dumps(want)))

    # two writers at once
    store = os.path.join(tmp, "concurrent.db")
    subprocess.run([tool, "--store", store, "--quiet", "papers", "import", "--dry-run",
                    sets[-1][1]], capture_output=True)
    procs = [subprocess.Popen([tool, "--store", store, "--quiet"] + s[2] + ["--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for s in (sets[2], sets[4], sets[7])]
    outs = [p.communicate() for p in procs]
    for p, (o, e) in zip(procs, outs):
        if p.returncode != 0:
            err("concurrent import failed: %s" % e.strip())
    con = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
    nruns = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    con.close()
    want = sum(ci.counts_of(ci.expected(s[0], s[1], ""))["runs"] for s in (sets[2], sets[4], sets[7]))
    if nruns != want:
        err("concurrent imports: %d runs stored, expected %d" % (nruns, want))
    else:
        print("ok   three concurrent imports: %d runs" % nruns)
    shutil.rmtree(tmp)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
