#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Filters and sorts over every attribute type of real runs, checked
against the raw files: the MLflow samples of tests/data (parameters of
ints, floats, strings, and a float parameter with MLflow's "None" among
its numbers; meta.yaml's start and end times), a datetime attribute per
run taken from the raw model-log tag (utc_time_created, microseconds,
cut to milliseconds), and the system attributes (sys/start_time,
sys/end_time, sys/creation_time with milliseconds, sys/duration_ms,
sys/name, sys/state, sys/project, sys/id).

The expected runs of every condition are computed here from the files
with the filter language's rules (filter.h): comparisons need matching
types (numbers with numbers, strings with strings); a datetime compares
as an instant with ISO 8601 text in any spelling or epoch milliseconds,
a date alone being its midnight, or its whole day for eq / ne / in /
not_in; a condition on a missing attribute fails. With
PMCP_TEST_STORE=pg the same runs on a new schema of the test cluster
(PROBE_TEST_PG_URL; skipped without one).

usage: tracking_attrs.py PROBE_CLI PROBE_MCP_STDIO
"""
import datetime
import json
import re
import os
import subprocess
import sys
import tempfile

PROBE, STDIO = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tracking_server import Server, pg_drop, pg_store  # noqa: E402
DATA = os.path.join(HERE, "..", "data")
SETS = [("kym", os.path.join(DATA, "mlflow-kymatio", "mlruns")),
        ("adamw", os.path.join(DATA, "mlflow-adamw", "mlruns"))]
DAY = 86400000
failures = []


def fail(msg):
    failures.append(msg)
    if len(failures) <= 40:
        print("FAIL:", msg)


def typed(text):
    """A parameter's value as the importer types it."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def iso(ms):
    d = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + \
        datetime.timedelta(milliseconds=ms)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def raw_runs(mlruns):
    """Active runs of an MLflow file store: {run uuid: {path: value}} with
    datetimes as ("t", ms)."""
    runs = {}
    for exp in sorted(os.listdir(mlruns)):
        ed = os.path.join(mlruns, exp)
        if not os.path.isdir(ed):
            continue
        for rid in sorted(os.listdir(ed)):
            rd = os.path.join(ed, rid)
            if not os.path.isfile(os.path.join(rd, "meta.yaml")):
                continue
            meta = dict(l.split(": ", 1) for l in open(os.path.join(rd, "meta.yaml")).read()
                        .splitlines() if ": " in l)
            if meta.get("lifecycle_stage") == "deleted":
                continue
            a = {}
            for p in os.listdir(os.path.join(rd, "params")):
                a["params/" + p] = typed(open(os.path.join(rd, "params", p)).read().strip())
            start, end = int(meta["start_time"]), int(meta.get("end_time") or 0)
            a["sys/start_time"] = ("t", start)
            a["sys/creation_time"] = ("t", start)
            if end:
                a["sys/end_time"] = ("t", end)
                a["sys/duration_ms"] = end - start
            a["sys/name"] = rid
            a["sys/id"] = "mlflow-" + rid
            hist = os.path.join(rd, "tags", "mlflow.log-model.history")
            if os.path.exists(hist):
                created = json.load(open(hist))[0]["utc_time_created"]
                d = datetime.datetime.strptime(created, "%Y-%m-%d %H:%M:%S.%f")
                ms = int((d - datetime.datetime(1970, 1, 1)).total_seconds() * 1000 // 1)
                # exact: microseconds to milliseconds, cut
                ms = (int((d - datetime.datetime(1970, 1, 1)).days) * DAY +
                      ((d.hour * 60 + d.minute) * 60 + d.second) * 1000 + d.microsecond // 1000)
                a["model/created"] = ("t", ms)
            # a boolean and a string set, from the raw files too
            if "params/mode" in a:
                a["derived/dif"] = a["params/mode"].endswith("_dif")
            tags = sorted(t for t in os.listdir(os.path.join(rd, "tags"))
                          if t.startswith("mlflow.source"))
            if tags:
                a["derived/sources"] = tags
            runs[rid] = a
    return runs


def parse_time(w):
    """(ms, date_only) of a condition value, or None when it is no time."""
    if isinstance(w, bool):
        return None
    if isinstance(w, (int, float)):
        return (w, False)
    if not isinstance(w, str):
        return None
    s = w.replace("Z", "+00:00").replace(" ", "T")
    try:
        if len(s) == 10:
            d = datetime.datetime.strptime(s, "%Y-%m-%d").replace(tzinfo=datetime.timezone.utc)
            return (int(d.timestamp()) * 1000, True)
        d = datetime.datetime.fromisoformat(s)
    except ValueError:
        return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=datetime.timezone.utc)
    base = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    delta = d - base
    return (delta.days * DAY + delta.seconds * 1000 + delta.microseconds // 1000, False)


def holds(v, op, w):
    """filter.h's rules for one attribute value (None: missing)."""
    if op == "exists":
        return (v is not None) == w
    if v is None:
        return False
    if isinstance(v, tuple):  # a datetime
        t = v[1]

        def cmp(x, whole):
            p = parse_time(x)
            if p is None:
                return 2
            ms, date_only = p
            if whole and date_only:
                return -1 if t < ms else 1 if t >= ms + DAY else 0
            return (t > ms) - (t < ms)
        if op in ("eq", "ne"):
            e = cmp(w, True) == 0
            return e if op == "eq" else not e
        if op in ("in", "not_in"):
            f = any(cmp(x, True) == 0 for x in w)
            return f if op == "in" else not f
        k = cmp(w, False)
        return k != 2 and {"gt": k > 0, "gte": k >= 0, "lt": k < 0, "lte": k <= 0}[op]

    def same(a, b):
        num = (int, float)
        if isinstance(a, bool) or isinstance(b, bool):
            return type(a) == type(b) and a == b
        if isinstance(a, num) and isinstance(b, num):
            return a == b
        if isinstance(a, str) and isinstance(b, str):
            return a == b
        return None
    if op in ("eq", "ne"):
        e = same(v, w)
        return bool(e) if op == "eq" else not e
    if op in ("in", "not_in"):
        f = any(same(v, x) for x in w)
        return f if op == "in" else not f
    if isinstance(v, list):  # a string set
        if op == "matches":
            return any(re.search(w, x) for x in v)
        if op == "contains":
            return w in v
        if op == "contains_any":
            return any(x in v for x in w)
        if op == "contains_all":
            return all(x in v for x in w)
        return op in ("ne", "not_in")  # a set equals no scalar
    if op == "contains":
        return isinstance(v, str) and w in v
    num = (int, float)
    if isinstance(v, num) and isinstance(w, num) and not isinstance(v, bool):
        c = (v > w) - (v < w)
    elif isinstance(v, str) and isinstance(w, str):
        a, b = v.encode(), w.encode()
        c = (a > b) - (a < b)
    else:
        return False
    return {"gt": c > 0, "gte": c >= 0, "lt": c < 0, "lte": c <= 0}[op]


def shown(v):
    return iso(v[1]) if isinstance(v, tuple) else v


def conditions(runs):
    """(path, op, value) cases from the values the runs hold."""
    paths = sorted({p for a in runs.values() for p in a})
    cases = []
    for path in paths:
        vals = [a[path] for a in runs.values() if path in a]
        cases.append((path, "exists", True))
        cases.append((path, "exists", False))
        if path.startswith("params/"):
            # the value's own type, and the other type (never equal)
            for v in sorted({json.dumps(x) for x in vals}):
                v = json.loads(v)
                for op in ("eq", "ne", "gt", "gte", "lt", "lte"):
                    cases.append((path, op, v))
                cases.append((path, "eq", str(v) if not isinstance(v, str) else 1))
            nums = sorted(x for x in vals if isinstance(x, (int, float)))
            if len(nums) > 1:
                mid = (nums[0] + nums[-1]) / 2
                cases += [(path, "gt", mid), (path, "lt", mid), (path, "in", nums[:2] + ["None"]),
                          (path, "not_in", nums[:1])]
            strs = sorted(x for x in vals if isinstance(x, str))
            if strs:
                cases += [(path, "in", strs[:1]), (path, "not_in", strs[:1] + [0.1]),
                          (path, "contains", strs[0][1:3] or strs[0])]
        elif isinstance(vals[0], tuple):
            for t in sorted({x[1] for x in vals}):
                date = iso(t)[:10]
                off = datetime.datetime.fromtimestamp(t / 1000, datetime.timezone(
                    datetime.timedelta(hours=2))).isoformat(timespec="milliseconds")
                for op in ("eq", "ne", "gt", "gte", "lt", "lte"):
                    cases += [(path, op, iso(t)), (path, op, off), (path, op, t),
                              (path, op, date), (path, op, iso(t)[:19])]
                cases += [(path, "in", [date]), (path, "not_in", [iso(t)]),
                          (path, "in", [t + 1, off]), (path, "eq", "yesterday"),
                          (path, "gt", "not a time"), (path, "gt", t - 1),
                          (path, "lte", iso(t + 1)[:-1] + "+00:00")]
        elif isinstance(vals[0], bool):
            for v in (True, False):
                cases += [(path, "eq", v), (path, "ne", v), (path, "in", [v]),
                          (path, "eq", "true"), (path, "gt", 0)]
        elif isinstance(vals[0], list):
            items = sorted({x for v in vals for x in v})
            for x in items:
                cases += [(path, "contains", x), (path, "contains_any", [x, "nope"]),
                          (path, "contains_all", [x, items[0]]), (path, "eq", x),
                          (path, "matches", "git")]
        elif path == "sys/duration_ms":
            for v in sorted(set(vals)):
                cases += [(path, op, v) for op in ("eq", "gt", "gte", "lt", "lte")]
            cases.append((path, "gt", 45 * 60 * 1000))
        elif path in ("sys/name", "sys/id"):
            v = sorted(vals)[len(vals) // 2]
            cases += [(path, "eq", v), (path, "ne", v), (path, "gt", v), (path, "in", [v])]
    return cases


def main():
    with tempfile.TemporaryDirectory() as tmp:
        store, schema = pg_store("attrs")
        store = store or os.path.join(tmp, "store.db")
        subprocess.run([PROBE, "--store", store, "--quiet", "init"], check=True,
                       stdout=subprocess.DEVNULL)
        truths = {}
        for proj, path in SETS:
            subprocess.run([PROBE, "--store", store, "--quiet", "import", "mlflow", path,
                            "--project", proj], check=True)
            truths[proj] = raw_runs(path)
            for k, (rid, a) in enumerate(sorted(truths[proj].items())):
                extra = []
                if "derived/dif" in a:
                    extra += ["derived/dif=%s" % ("true" if a["derived/dif"] else "false")]
                if "derived/sources" in a:
                    extra += ["--set", "derived/sources=" + ",".join(a["derived/sources"])]
                if extra:
                    subprocess.run([PROBE, "--store", store, "--quiet", "set", "run:mlflow-" + rid]
                                   + extra, check=True)
                if "model/created" in a:
                    # as epoch ms, or as ISO 8601 two hours east of UTC with a space
                    ms = a["model/created"][1]
                    when = "%d" % ms if k % 2 else datetime.datetime.fromtimestamp(
                        ms / 1000, datetime.timezone(datetime.timedelta(hours=2))).isoformat(
                        sep=" ", timespec="milliseconds")
                    subprocess.run([PROBE, "--store", store, "--quiet", "set", "run:mlflow-" + rid,
                                    "--datetime", "model/created=" + when], check=True)
        srv = Server(STDIO, store)
        n_cases = n_proper = 0
        for proj, runs in truths.items():
            # what is shown: each value with its type, datetimes as ISO 8601 with ms
            for rid, a in runs.items():
                out, err = srv.call("get_run_attributes", {"run": rid, "limit": 100})
                got = {x["path"]: x for x in out.get("attributes", [])}
                for path, v in a.items():
                    g = got.get(path)
                    if g is None or g["value"] != shown(v):
                        fail("%s %s: shown %s, raw %s" % (rid, path, g, shown(v)))
                    elif isinstance(v, tuple) and g.get("type") != "datetime":
                        fail("%s %s: type %s" % (rid, path, g))
            defs, err = srv.call("list_attribute_definitions", {"project": proj, "limit": 100})
            types = {d["path"]: d for d in defs.get("attributes", [])}
            for path in {p for a in runs.values() for p in a}:
                kinds = {("datetime" if isinstance(a[path], tuple) else
                          "bool" if isinstance(a[path], bool) else
                          "string_set" if isinstance(a[path], list) else
                          "int" if isinstance(a[path], int) else
                          "float" if isinstance(a[path], float) else "string")
                         for a in runs.values() if path in a}
                d = types.get(path, {})
                want = kinds.pop() if len(kinds) == 1 else "mixed"
                if d.get("type") != want:
                    fail("%s definitions: %s, raw types %s" % (path, d, want))
            # every condition, alone and inside an any_of group
            for path, op, w in conditions(runs):
                want = sorted("mlflow-" + r for r, a in runs.items() if holds(a.get(path), op, w))
                n_proper += 0 < len(want) < len(runs)
                cond = {"attr": path, "op": op, "value": w}
                for filt in ([cond], [{"any_of": [cond, {"attr": "nope/x", "op": "exists"}]}]):
                    out, err = srv.call("list_runs", {"project": proj, "filter": filt,
                                                      "limit": 100})
                    n_cases += 1
                    got = sorted(r["run"] for r in out.get("rows", [])) if not err else out
                    if got != want or (not err and out.get("total_count") != len(want)):
                        fail("%s %s %s %r: got %s, want %s" % (proj, path, op, w, got, want))
            # sorts over datetimes and system attributes, both directions
            for path in ("model/created", "sys/start_time", "sys/duration_ms", "params/lr"):
                for direction in ("asc", "desc"):
                    have = [r for r, a in runs.items() if path in a]
                    key = lambda r: (runs[r][path][1] if isinstance(runs[r][path], tuple)
                                     else runs[r][path])
                    want = ["mlflow-" + r for r in sorted(have, key=key,
                                                          reverse=direction == "desc")]
                    out, err = srv.call("list_runs", {"project": proj, "limit": 100,
                                                      "filter": [{"attr": path, "op": "exists"}],
                                                      "sort": {"attr": path,
                                                               "direction": direction}})
                    got = [r["run"] for r in out.get("rows", [])]
                    vals = [key(r) for r in have]
                    if len(set(vals)) == len(vals) and got != want:
                        fail("%s sort %s %s: %s, want %s" % (proj, path, direction, got, want))
                    elif sorted(got) != sorted(want):
                        fail("%s sort %s %s: runs %s, want %s" % (proj, path, direction,
                                                                  got, want))
        srv.close()
        print("%d filter cases over %d runs" % (n_cases, sum(len(r) for r in truths.values())))
        if n_cases < 500 or n_proper * 5 < n_cases // 2:
            fail("only %d cases, %d selecting a proper subset" % (n_cases, n_proper))
        if schema:
            pg_drop(schema)
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok")


main()
