#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The record view is the stored record: every double exactly as the files.

Each importer's data in tests/data is imported into a store of its own
(SQLite, or with PMCP_TEST_STORE=pg a new schema of the test cluster), and
the files are read again here with tests/import/check-import.py's readers
(stdlib only, no code shared with the C importers). Then, through
probe-mcp-stdio:
- every run's `record` holds each parameter, tag, config value and
  trainer attribute of its files, numbers equal to the file's double (not
  to 15 or 6 significant figures), types as the files give them;
- `reproduce` carries the same parameters, exactly;
- a checkpoint the files name (Trainer's best) has the file's best_metric;
- checkpoints and trials recorded here with values taken from the files'
  metric points (those with the most digits), and with awkward doubles
  (the smallest subnormal, the largest double, 0.1 + 0.2), read back in
  their records as those doubles.
Equality is of doubles (Python's json reads the shortest exact text back to
the same double), so a value cut to 15 digits fails.

usage: research_records.py PROBE_CLI PROBE_MCP_STDIO
"""
import importlib.util
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import research_deleted as rd  # noqa: E402
from research_deleted import Server, check, probe  # noqa: E402

DATA = os.path.join(HERE, "..", "data")
spec = importlib.util.spec_from_file_location(
    "check_import", os.path.join(HERE, "..", "import", "check-import.py"))
ci = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ci)

AWKWARD = [5e-324, 1.7976931348623157e308, 0.1 + 0.2, -2.2250738585072014e-308,
           0.7431560204762965, 1 / 3, 123456789.12345679]


def digits(v):
    """Significant digits of the shortest text of @v."""
    m = repr(float(v)).lower().split("e")[0].replace("-", "").replace(".", "").lstrip("0")
    return len(m)


def at_path(tree, path):
    node = tree
    for seg in path.split("/"):
        if not isinstance(node, dict) or seg not in node:
            return KeyError
        node = node[seg]
    return node


def same(kind, want, got):
    if kind == "float":
        return isinstance(got, float) and got == want or \
            (isinstance(got, int) and not isinstance(got, bool) and float(got) == want)
    if kind == "int":
        return isinstance(got, int) and not isinstance(got, bool) and got == want
    if kind == "bool":
        return got is want
    if kind == "str":
        return got == want
    if kind == "null":
        return got is None or got == ""
    return True  # JSON-valued attributes: compared elsewhere


def record(srv, ref, **extra):
    r, err = srv.call("entity", dict({"refs": [ref], "view": "record",
                                      "token_budget": 8000}, **extra))
    check(not err, "record of %s: %s" % (ref, json.dumps(r)[:300]))
    return (r.get("data") or {}) if not err else {}


def store_runs(srv):
    runs = srv.pages("browse", {"mode": "runs", "limit": 100, "include_deleted": True}, "runs")
    return {r["ref"]: r for r in runs}


def where(cat, key):
    return {"param": "params/", "tag": "tags/", "config": "config/"}.get(cat, "") + key


def check_runs(label, srv, model):
    """Each model run's attributes in its record and reproduce view."""
    runs = store_runs(srv)
    by_name = {}
    for ref, r in runs.items():
        by_name.setdefault(r.get("name"), []).append(ref)
    compared = long = 0
    for key, mr in model["runs"].items():
        if key.startswith("mlflow:"):
            ref = "run:mlflow-" + key.split(":", 1)[1]
        else:
            refs = by_name.get(mr["name"], [])
            check(len(refs) == 1, "%s: one store run named %r: %s" % (label, mr["name"], refs))
            if len(refs) != 1:
                continue
            ref = refs[0]
        check(ref in runs, "%s: %s is in the store" % (label, ref))
        rec = record(srv, ref)
        attrs = rec.get("attributes") or {}
        params = {}
        for (cat, k), (kind, want) in mr["attrs"].items():
            got = at_path(attrs, where(cat, k))
            check(got is not KeyError, "%s: %s has %s %s" % (label, ref, cat, k))
            if got is KeyError:
                continue
            check(same(kind, want, got), "%s: %s %s %s is %r, the files say %r (%s)" %
                  (label, ref, cat, k, got, want, kind))
            compared += 1
            if kind == "float":
                long += digits(want) >= 16
            if cat == "param":
                params[k] = (kind, want)
        if params and not mr.get("deleted"):
            rp, err = srv.call("entity", {"refs": [ref], "view": "reproduce",
                                          "token_budget": 8000})
            got = (rp.get("params") or {}) if not err else {}
            for k, (kind, want) in params.items():
                g = at_path(got, k)
                check(g is not KeyError and same(kind, want, g),
                      "%s: reproduce %s param %s is %r, the files say %r" %
                      (label, ref, k, g, want))
        for name, step, best, value in mr["checkpoints"]:
            cr = record(srv, "checkpoint:%s@step%d" % (ref[4:], step))
            check(same("float", value, cr.get("value")),
                  "%s: checkpoint %s of %s: value %r, the files say %r" %
                  (label, name, ref, cr.get("value"), value))
            compared += 1
            long += digits(value) >= 16
    return ref if model["runs"] else None, compared, long


def check_recorded(label, srv_of, store, model):
    """Checkpoints and trials recorded with the files' values and awkward
    doubles read back exactly."""
    live = [k for k, r in model["runs"].items() if not r.get("deleted")]
    done = 0
    srv = srv_of()
    try:
        runs = store_runs(srv)
    finally:
        srv.close()
    names = {r.get("name"): ref for ref, r in runs.items()}
    wants = []
    for key in live[:3]:
        mr = model["runs"][key]
        ref = "run:mlflow-" + key.split(":", 1)[1] if key.startswith("mlflow:") \
            else names.get(mr["name"])
        if not ref:
            continue
        pts = sorted((p for p in mr["scalars"] if isinstance(p[3], float) and p[3] == p[3]
                      and abs(p[3]) != float("inf")), key=lambda p: -digits(p[3]))
        used = {c[1] for c in mr["checkpoints"]}
        vals = []
        for p in pts:
            if p[1] not in used and len(vals) < 2:
                used.add(p[1])
                vals.append(p)
        step = 10 ** 9
        for p in vals:
            probe(store, "checkpoint", "add", ref, str(p[1]), "--metric", p[0],
                  "--value", repr(p[3]))
            wants.append(("checkpoint:%s@step%d" % (ref[4:], p[1]), "value", p[3]))
        for i, v in enumerate(AWKWARD):
            probe(store, "checkpoint", "add", ref, str(step + i), "--value", repr(v))
            wants.append(("checkpoint:%s@step%d" % (ref[4:], step + i), "value", v))
        score = vals[0][3] if vals else AWKWARD[2]
        tref = probe(store, "put", "trial", json.dumps(
            {"run": ref, "name": "exact-%d" % done, "score": score,
             "params": {"lr": AWKWARD[5], "tiny": AWKWARD[0]}, "trajectory": []}))
        tref = tref.splitlines()[-1].strip()
        wants.append((tref, "score", score))
        wants.append((tref, "params.lr", AWKWARD[5]))
        wants.append((tref, "params.tiny", AWKWARD[0]))
        done += 1
    srv = srv_of()
    try:
        for ref, field, want in wants:
            rec = record(srv, ref)
            got = rec
            for seg in field.split("."):
                got = got.get(seg) if isinstance(got, dict) else None
            check(same("float", want, got),
                  "%s: %s %s is %r, recorded %r" % (label, ref, field, got, want))
    finally:
        srv.close()
    return len(wants)


def main():
    rd.pg_skip()
    hf = os.path.join(DATA, "hf-whisper")
    cases = [
        ("mlflow-kymatio", ["import", "mlflow", os.path.join(DATA, "mlflow-kymatio", "mlruns"),
                            "--project", "kymatio"],
         lambda: ci.read_mlflow(os.path.join(DATA, "mlflow-kymatio", "mlruns"), "kymatio")),
        ("mlflow-adamw", ["import", "mlflow", os.path.join(DATA, "mlflow-adamw", "mlruns")],
         lambda: ci.read_mlflow(os.path.join(DATA, "mlflow-adamw", "mlruns"), "mlflow-adamw")),
        ("tensorboard", ["import", "tensorboard", os.path.join(DATA, "tensorboard-reducer", "runs")],
         lambda: ci.read_tb(os.path.join(DATA, "tensorboard-reducer", "runs"))),
        ("csv", ["import", "csv", os.path.join(DATA, "lightning-genrisk", "lightning_logs")],
         lambda: ci.read_csv_model(os.path.join(DATA, "lightning-genrisk", "lightning_logs"))),
        ("csv-synthetic", ["import", "csv", os.path.join(DATA, "csv-synthetic", "lightning_logs")],
         lambda: ci.read_csv_model(os.path.join(DATA, "csv-synthetic", "lightning_logs"))),
        ("hf", ["import", "hf", os.path.join(hf, "trainer_state.json")],
         lambda: ci.read_hf(os.path.join(hf, "trainer_state.json"))),
        ("hf-last", ["import", "hf", os.path.join(hf, "last-checkpoint", "trainer_state.json")],
         lambda: ci.read_hf(os.path.join(hf, "last-checkpoint", "trainer_state.json"))),
    ]
    long_total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for label, cmd, read in cases:
            store = rd.new_store(tmp, label)
            try:
                probe(store, "init")
                probe(store, *cmd)
                model = read()
                check(model["runs"], "%s: the files hold runs" % label)
                srv = Server(store)
                try:
                    _, compared, long = check_runs(label, srv, model)
                finally:
                    srv.close()
                n = check_recorded(label, lambda: Server(store), store, model)
                check(n > 0, "%s: values were recorded and read back" % label)
                long_total += long
                print("%s: %d attribute values and %d recorded values compared, %d of them"
                      " with 16-17 digits" % (label, compared, n, long), flush=True)
            except RuntimeError as e:
                check(False, "%s: %s" % (label, e))
            finally:
                rd.drop_store(store)
    check(long_total > 0, "the files' own values include ones of 16-17 significant digits")
    rd.finish()


if __name__ == "__main__":
    main()
