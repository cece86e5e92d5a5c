#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Independent reading of importer inputs (python3 stdlib only), compared
with what the C importers produce.

  check-import.py dump KIND PATH DUMP [ARGS...]
      runs `DUMP KIND PATH ARGS...` (tests/import/import-dump: the parser's
      records as JSON lines) and compares every record and count with this
      script's own reading of PATH.
  check-import.py expect KIND PATH
      prints the expected counts as JSON (used by the store tests).

KIND is mlflow, tensorboard, csv, hf or arxiv. Exit 0 when equal, 1 with
the differences listed otherwise. The readers here share no code with the
C ones: TFRecord/CRC-32C/protobuf, CSV and JSON are decoded afresh.
"""
import hashlib
import json
import math
import os
import re
import struct
import subprocess
import sys


def infer(s):
    """How an untyped text (an MLflow param) is typed."""
    if re.fullmatch(r"-?[0-9]+", s) and len(s) < 20:
        return ("int", int(s))
    if s and s[-1].isdigit() and re.fullmatch(r"[-+]?[0-9.eE+-]+", s):
        try:
            return ("float", float(s))
        except ValueError:
            pass
    if s in ("True", "true"):
        return ("bool", True)
    if s in ("False", "false"):
        return ("bool", False)
    return ("str", s)


# ---------------------------------------------------------------- MLflow
def flat_yaml(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith(" ") or ":" not in line:
                continue
            k, _, v = line.partition(":")
            v = v.strip()
            if v.startswith("'") and v.endswith("'"):
                v = v[1:-1].replace("''", "'")
            elif v in ("null", "~", ""):
                v = None
            out[k.strip()] = v
    return out


def files_under(top):
    res = []
    if not os.path.isdir(top):
        return res
    for dp, dn, fn in os.walk(top):
        for n in fn:
            p = os.path.join(dp, n)
            res.append((os.path.relpath(p, top).replace(os.sep, "/"), p))
    return sorted(res)


STATUS = {"1": "running", "2": "scheduled", "3": "finished", "4": "failed",
          "5": "killed", "RUNNING": "running", "SCHEDULED": "scheduled",
          "FINISHED": "finished", "FAILED": "failed", "KILLED": "killed"}


def read_mlflow(root, project):
    model = {"experiments": {}, "runs": {}, "papers": {}}
    exps = []
    for base, trashed in ((root, False), (os.path.join(root, ".trash"), True)):
        if not os.path.isdir(base):
            continue
        for e in os.listdir(base):
            d = os.path.join(base, e)
            if e == ".trash" or not os.path.isfile(os.path.join(d, "meta.yaml")):
                continue
            exps.append((d, trashed))
    for d, trashed in exps:
        m = flat_yaml(os.path.join(d, "meta.yaml"))
        deleted = trashed or m.get("lifecycle_stage") == "deleted"
        ekey = "mlflow:%s/%s" % (project, m["name"])
        note = os.path.join(d, "tags", "mlflow.note.content")
        desc = open(note, encoding="utf-8").read() if os.path.isfile(note) else None
        model["experiments"][ekey] = {"name": m["name"], "deleted": deleted,
                                      "description": desc or None}
        for r in os.listdir(d):
            rd = os.path.join(d, r)
            if not os.path.isfile(os.path.join(rd, "meta.yaml")):
                continue
            rm = flat_yaml(os.path.join(rd, "meta.yaml"))
            uuid = rm.get("run_uuid") or rm.get("run_id")
            name = rm.get("run_name") or None
            tn = os.path.join(rd, "tags", "mlflow.runName")
            if not name and os.path.isfile(tn):
                name = open(tn, encoding="utf-8").read() or None
            name = name or rm.get("name") or uuid
            run = {"key": "mlflow:" + uuid, "name": name, "experiment": ekey,
                   "deleted": deleted or rm.get("lifecycle_stage") == "deleted",
                   "status": STATUS.get(rm.get("status") or ""),
                   "user": rm.get("user_id") or None,
                   "start_ms": int(rm["start_time"]) if rm.get("start_time") else -1,
                   "end_ms": int(rm["end_time"]) if rm.get("end_time") else -1,
                   "attrs": {}, "scalars": [], "hists": [], "artifacts": {},
                   "checkpoints": []}
            for k in ("source_name", "source_version", "entry_point_name",
                      "artifact_uri"):
                if rm.get(k):
                    run["attrs"][("attr", "mlflow/" + k)] = ("str", rm[k])
            for key, p in files_under(os.path.join(rd, "params")):
                run["attrs"][("param", key)] = infer(open(p, encoding="utf-8").read())
            for key, p in files_under(os.path.join(rd, "tags")):
                run["attrs"][("tag", key)] = ("str", open(p, encoding="utf-8").read())
            for key, p in files_under(os.path.join(rd, "metrics")):
                for line in open(p, encoding="utf-8"):
                    parts = line.split()
                    if not parts:
                        continue
                    step = int(parts[2]) if len(parts) > 2 else 0
                    run["scalars"].append((key, step, int(parts[0]) / 1000.0,
                                           float(parts[1])))
            for key, p in files_under(os.path.join(rd, "artifacts")):
                data = open(p, "rb").read()
                try:
                    ok = len(data) <= (1 << 20) and b"\0" not in data
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    ok = False
                if ok:
                    run["artifacts"][key] = hashlib.sha256(data).hexdigest()
            model["runs"][run["key"]] = run
    return model


# ----------------------------------------------------------- TensorBoard
def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecords(path):
    data = open(path, "rb").read()
    off = 0
    while off < len(data):
        (n,) = struct.unpack_from("<Q", data, off)
        (lc,) = struct.unpack_from("<I", data, off + 8)
        assert lc == masked(data[off:off + 8]), "length crc"
        body = data[off + 12:off + 12 + n]
        (dc,) = struct.unpack_from("<I", data, off + 12 + n)
        assert dc == masked(body), "data crc"
        yield body
        off += 12 + n + 4


def fields(buf):
    """(number, wire type, value) of each protobuf field."""
    i = 0
    out = []

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v
    while i < len(buf):
        key = varint()
        num, wt = key >> 3, key & 7
        if wt == 0:
            out.append((num, wt, varint()))
        elif wt == 1:
            out.append((num, wt, buf[i:i + 8]))
            i += 8
        elif wt == 5:
            out.append((num, wt, buf[i:i + 4]))
            i += 4
        elif wt == 2:
            n = varint()
            out.append((num, wt, buf[i:i + n]))
            i += n
        else:
            raise ValueError("wire type %d" % wt)
    return out


def f64(b):
    return struct.unpack("<d", b)[0]


def f32(b):
    return struct.unpack("<f", b)[0]


def half(bits):
    return struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]


def tensor_values(t):
    dtype = 0
    dims = []
    content = None
    vals = []
    for num, wt, v in fields(t):
        if num == 1:
            dtype = v
        elif num == 2:
            for n2, _, d in fields(v):
                if n2 == 2:
                    dims.append(dict((a, b) for a, _, b in fields(d)).get(1, 0))
        elif num == 4:
            content = v
        elif num in (5, 6, 7, 10, 11, 13) and not vals:
            if num == 5:
                vals = [f32(v[k:k + 4]) for k in range(0, len(v), 4)] if wt == 2 else [f32(v)]
            elif num == 6:
                vals = [f64(v[k:k + 8]) for k in range(0, len(v), 8)] if wt == 2 else [f64(v)]
            else:
                if wt == 2:
                    raw, ints = v, []
                    # a packed list of varints
                    j = 0
                    while j < len(raw):
                        x = shift = 0
                        while True:
                            b = raw[j]
                            j += 1
                            x |= (b & 0x7F) << shift
                            shift += 7
                            if not b & 0x80:
                                break
                        ints.append(x)
                else:
                    ints = [v]
                if num == 13:
                    vals = [half(x) if dtype == 19 else f32(struct.pack("<I", (x & 0xFFFF) << 16)) for x in ints]
                elif num == 11:
                    vals = [1.0 if x else 0.0 for x in ints]
                else:
                    vals = [float(x - (1 << 64) if x >= 1 << 63 else x) for x in ints]
    if content is not None:
        fmt = {1: "<f", 2: "<d", 3: "<i", 9: "<q", 10: "<?", 19: "<e"}.get(dtype)
        if fmt is None:
            return dtype, dims, None
        size = struct.calcsize(fmt)
        vals = [float(struct.unpack_from(fmt, content, k)[0])
                for k in range(0, len(content) - size + 1, size)]
    return dtype, dims, vals


def read_tb(path):
    files = []
    if os.path.isdir(path):
        for dp, dn, fn in os.walk(path):
            files += [os.path.join(dp, n) for n in fn if "tfevents" in n]
    else:
        files = [path]
    groups = {}
    for f in sorted(files):
        groups.setdefault(os.path.dirname(f), []).append(f)
    model = {"experiments": {}, "runs": {}, "papers": {}}
    for d, fs in sorted(groups.items()):
        fs.sort()
        run = {"key": "tensorboard:" + os.path.basename(fs[0]),
               "attrs": {}, "scalars": [], "hists": [], "artifacts": {},
               "checkpoints": [], "deleted": False}
        if os.path.isdir(path):
            rel = os.path.relpath(d, path)
            run["name"] = rel if rel != "." else os.path.basename(os.path.abspath(d))
        else:
            run["name"] = os.path.basename(os.path.abspath(d))
        hp = os.path.join(d, "hparams.expected.json")
        if os.path.isfile(hp):
            for k, (t, v) in json.load(open(hp)).items():
                run["attrs"][("config", k)] = (t, v)
        kinds = {}
        for f in fs:
            for rec in tfrecords(f):
                wall, step, summary = float("nan"), 0, None
                for num, wt, v in fields(rec):
                    if num == 1:
                        wall = f64(v)
                    elif num == 2:
                        step = v
                    elif num == 5:
                        summary = v
                if summary is None:
                    continue
                for num, wt, val in fields(summary):
                    if num != 1:
                        continue
                    fd = {}
                    for n2, w2, v2 in fields(val):
                        fd.setdefault(n2, v2)
                    tag = fd.get(1, fd.get(7, b"")).decode("utf-8")
                    if not tag:
                        continue
                    content = None
                    if 9 in fd:
                        plugin = None
                        for n3, _, v3 in fields(fd[9]):
                            if n3 == 1:
                                for n4, _, v4 in fields(v3):
                                    if n4 == 1:
                                        plugin = v4.decode()
                                    elif n4 == 2:
                                        content = v4
                        if plugin == "hparams":
                            for n5, _, v5 in fields(content or b""):
                                if n5 != 3:
                                    continue
                                for n6, _, entry in fields(v5):
                                    if n6 != 1:
                                        continue
                                    ent = dict((a, c) for a, _, c in fields(entry))
                                    name = ent[1].decode()
                                    val = ("null", None)
                                    skip = False
                                    for n7, w7, v7 in fields(ent.get(2, b"")):
                                        if n7 == 2:
                                            x = f64(v7)
                                            val = ("int", int(x)) if x == int(x) and abs(x) < 9e15 else ("float", x)
                                        elif n7 == 3:
                                            val = ("str", v7.decode())
                                        elif n7 == 4:
                                            val = ("bool", bool(v7))
                                        elif n7 in (5, 6):
                                            skip = True
                                    if not skip:
                                        run["attrs"][("param", name)] = val
                            continue
                        if plugin is not None:
                            kinds[tag] = plugin
                    kind = kinds.get(tag)
                    if 2 in fd:
                        run["scalars"].append((tag, step, wall, f32(fd[2])))
                    elif 5 in fd:
                        h = {"min": float("nan"), "max": float("nan"), "num": float("nan"),
                             "sum": float("nan"), "sum_squares": float("nan"),
                             "limits": [], "counts": []}
                        names = {1: "min", 2: "max", 3: "num", 4: "sum", 5: "sum_squares"}
                        for n3, w3, v3 in fields(fd[5]):
                            if n3 in names:
                                h[names[n3]] = f64(v3)
                            elif n3 in (6, 7):
                                lst = [f64(v3[k:k + 8]) for k in range(0, len(v3), 8)] if w3 == 2 else [f64(v3)]
                                h["limits" if n3 == 6 else "counts"] += lst
                        run["hists"].append((tag, step, wall, h))
                    elif 8 in fd and kind in (None, "scalars", "histograms"):
                        dtype, dims, vals = tensor_values(fd[8])
                        if kind == "histograms" and dtype not in (1, 2):
                            pass  # only float32 / float64 histograms are read
                        elif kind == "histograms":
                            k = dims[0] if dims else 0
                            rows = [vals[3 * i:3 * i + 3] for i in range(k)]
                            h = {"min": rows[0][0] if rows else float("nan"),
                                 "max": rows[-1][1] if rows else float("nan"),
                                 "num": float(sum(r[2] for r in rows)),
                                 "sum": float("nan"), "sum_squares": float("nan"),
                                 "limits": [r[1] for r in rows],
                                 "counts": [r[2] for r in rows]}
                            run["hists"].append((tag, step, wall, h))
                        elif vals and all(x == 1 for x in dims):
                            run["scalars"].append((tag, step, wall, vals[0]))
        model["runs"][run["key"]] = run
    return model


# ------------------------------------------------------------------ CSV
def read_csv_model(path):
    import csv
    files = []
    if os.path.isdir(path):
        for dp, dn, fn in os.walk(path):
            dn[:] = [x for x in dn if not x.startswith(".")]
            files += [os.path.join(dp, n) for n in fn if n == "metrics.csv"]
    else:
        files = [path]
    model = {"experiments": {}, "runs": {}, "papers": {}}
    for f in sorted(files):
        data = open(f, "rb").read()
        rows = [r for r in csv.reader(data.decode("utf-8").splitlines()) if r]
        head = rows[0]
        base = os.path.basename(f)
        name = os.path.basename(os.path.dirname(os.path.abspath(f))) if base == "metrics.csv" else re.sub(r"\.csv$", "", base)
        run = {"key": "csv:" + hashlib.sha256(data).hexdigest()[:32], "name": name,
               "attrs": {}, "scalars": [], "hists": [], "artifacts": {},
               "checkpoints": [], "deleted": False}
        hp = os.path.join(os.path.dirname(f), "hparams.expected.json")
        if os.path.isfile(hp) and base == "metrics.csv":
            for k, (t, v) in json.load(open(hp)).items():
                run["attrs"][("config", k)] = (t, v)
        cols = {c: i for i, c in enumerate(head)}
        keycol = next((cols[c] for c in ("key", "name", "metric") if c in cols), None)
        timecol = next((cols[c] for c in ("timestamp", "wall_time", "time") if c in cols), None)
        longform = "step" in cols and keycol is not None and "value" in cols and \
            len(head) == 3 + (timecol is not None)
        for r in rows[1:]:
            step = int(float(r[cols["step"]]))
            if longform:
                wall = float(r[timecol]) if timecol is not None and r[timecol] else float("nan")
                run["scalars"].append((r[keycol], step, wall, float(r[cols["value"]])))
                continue
            for i, c in enumerate(head):
                if c == "step" or r[i] == "":
                    continue
                run["scalars"].append((c, step, float("nan"), float(r[i])))
        model["runs"][run["key"]] = run
    return model


# ------------------------------------------------------------------- HF
def read_hf(path):
    data = open(path, "rb").read()
    st = json.loads(data)
    d = os.path.basename(os.path.dirname(os.path.abspath(path)))
    if d == "last-checkpoint" or d.startswith("checkpoint-"):
        d = os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(path)))) + "/" + d
    run = {"key": "hf:" + hashlib.sha256(data).hexdigest()[:32], "name": d,
           "attrs": {}, "scalars": [], "hists": [], "artifacts": {},
           "checkpoints": [], "deleted": False}
    for k, v in st.items():
        if k == "log_history":
            continue
        if isinstance(v, bool):
            t = ("bool", v)
        elif isinstance(v, int):
            t = ("int", v)
        elif isinstance(v, float):
            t = ("int", int(v)) if v == int(v) and abs(v) < 9e15 else ("float", v)
        elif isinstance(v, str):
            t = ("str", v)
        elif v is None:
            t = ("null", None)
        else:
            t = ("json", json.dumps(v, separators=(",", ":")))
        run["attrs"][("attr", "trainer/" + k)] = t
    best = st.get("best_model_checkpoint")
    if best:
        b = os.path.basename(best)
        m = re.search(r"-([0-9]+)$", b)
        bm = st.get("best_metric")
        run["checkpoints"].append((b, int(m.group(1)) if m else -1, 1,
                                   float(bm) if isinstance(bm, (int, float)) else float("nan")))
    for e in st["log_history"]:
        for k, v in e.items():
            if k == "step" or isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            run["scalars"].append((k, int(e["step"]), float("nan"), float(v)))
    return {"experiments": {}, "runs": {run["key"]: run}, "papers": {}}


# ---------------------------------------------------------------- arXiv
MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec"


def iso(created):
    m = re.match(r"\w+, (\d+) (\w{3}) (\d{4}) (\d\d):(\d\d):(\d\d)", created)
    d, mon, y, hh, mm, ss = m.groups()
    return "%s-%02d-%02dT%s:%s:%sZ" % (y, MONTHS.index(mon) // 3 + 1, int(d), hh, mm, ss)


def read_arxiv(path):
    papers = {}
    for line in open(path, encoding="utf-8"):
        if not line.strip():
            continue
        r = json.loads(line)
        vs = r.get("versions") or []
        authors = [" ".join(x for x in (a[1], a[0], a[2] if len(a) > 2 else "") if x)
                   for a in r.get("authors_parsed") or []]
        papers[r["id"]] = {
            "id": r["id"], "title": r["title"], "abstract": r.get("abstract"),
            "authors": r.get("authors"), "author_list": authors,
            "categories": r.get("categories"),
            "published": iso(vs[0]["created"]) if vs else None,
            "updated": iso(vs[-1]["created"]) if vs else r.get("update_date"),
            "doi": r.get("doi"), "journal_ref": r.get("journal-ref"),
            "comments": r.get("comments"), "license": r.get("license")}
    return {"experiments": {}, "runs": {}, "papers": papers}


# ------------------------------------------------------------ compare
def num(v):
    return float(v) if not isinstance(v, str) else float(v)


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        try:
            x, y = num(a), num(b)
        except (TypeError, ValueError):
            return False
        return (math.isnan(x) and math.isnan(y)) or x == y
    return a == b


def parse_dump(text):
    model = {"experiments": {}, "runs": {}, "papers": {}, "counts": None}
    run = None
    for line in text.splitlines():
        r = json.loads(line)
        t = r["t"]
        if t == "experiment":
            model["experiments"][r["key"]] = {"name": r["name"], "deleted": bool(r["deleted"]),
                                              "description": r["description"]}
        elif t == "run":
            run = dict(r, attrs={}, scalars=[], hists=[], artifacts={}, checkpoints=[])
            run["deleted"] = bool(r["deleted"])
            model["runs"][r["key"]] = run
        elif t == "attr":
            v = r["value"]
            if r["type"] == "float":
                v = num(v)
            run["attrs"][(r["kind"], r["key"])] = (r["type"], v)
        elif t == "scalar":
            run["scalars"].append((r["key"], r["step"], num(r["wall"]), num(r["value"])))
        elif t == "hist":
            h = {k: num(r[k]) for k in ("min", "max", "num", "sum", "sum_squares")}
            h["limits"] = [num(x) for x in r["limits"]]
            h["counts"] = [num(x) for x in r["counts"]]
            run["hists"].append((r["key"], r["step"], num(r["wall"]), h))
        elif t == "artifact":
            run["artifacts"][r["name"]] = r["sha256"]
        elif t == "checkpoint":
            run["checkpoints"].append((r["name"], r["step"], r["best"], num(r["value"])))
        elif t == "paper":
            p = dict(r)
            del p["t"]
            model["papers"][r["id"]] = p
        elif t == "counts":
            model["counts"] = r
    return model


def counts_of(m):
    runs = m["runs"].values()
    return {"experiments": len(m["experiments"]), "runs": len(m["runs"]),
            "deleted_runs": sum(1 for r in runs if r["deleted"]),
            "attrs": sum(len(r["attrs"]) for r in runs),
            "points": sum(len(r["scalars"]) for r in runs),
            "histograms": sum(len(r["hists"]) for r in runs),
            "artifacts": sum(len(r["artifacts"]) for r in runs),
            "checkpoints": sum(len(r["checkpoints"]) for r in runs),
            "papers": len(m["papers"])}


def tuple_same(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, dict):
            if set(x) != set(y) or not all(
                    tuple_same(x[k], y[k]) if isinstance(x[k], list) else same(x[k], y[k]) for k in x):
                return False
        elif isinstance(x, (list, tuple)):
            if not tuple_same(x, y):
                return False
        elif not same(x, y):
            return False
    return True


def compare(exp, got):
    errs = []
    if set(exp["experiments"]) != set(got["experiments"]):
        errs.append("experiments: expected %s, got %s" % (sorted(exp["experiments"]), sorted(got["experiments"])))
    for k, e in exp["experiments"].items():
        g = got["experiments"].get(k)
        if g and e != g:
            errs.append("experiment %s: expected %s, got %s" % (k, e, g))
    if set(exp["runs"]) != set(got["runs"]):
        errs.append("runs: expected %s, got %s" % (sorted(exp["runs"]), sorted(got["runs"])))
    for k, e in exp["runs"].items():
        g = got["runs"].get(k)
        if not g:
            continue
        for f in ("name", "experiment", "deleted", "status", "user", "start_ms", "end_ms"):
            if f in e and e[f] != g.get(f):
                errs.append("run %s: %s expected %r, got %r" % (k, f, e[f], g.get(f)))
        if set(e["attrs"]) != set(g["attrs"]):
            errs.append("run %s: attrs expected %s, got %s" % (k, sorted(e["attrs"]), sorted(g["attrs"])))
        for a, v in e["attrs"].items():
            if a in g["attrs"] and not (v[0] == g["attrs"][a][0] and same(v[1], g["attrs"][a][1])):
                errs.append("run %s: attr %s expected %r, got %r" % (k, a, v, g["attrs"][a]))
        for f in ("scalars", "hists", "checkpoints"):
            if not tuple_same(e[f], g[f]):
                errs.append("run %s: %s differ (expected %d, got %d); first expected %s, got %s" % (
                    k, f, len(e[f]), len(g[f]), e[f][:2], g[f][:2]))
        if e["artifacts"] != g["artifacts"]:
            errs.append("run %s: artifacts expected %s, got %s" % (k, e["artifacts"], g["artifacts"]))
    if set(exp["papers"]) != set(got["papers"]):
        errs.append("papers: expected %d ids, got %d" % (len(exp["papers"]), len(got["papers"])))
    for k, e in exp["papers"].items():
        g = got["papers"].get(k)
        if g and e != g:
            diff = [f for f in e if e[f] != g.get(f)]
            errs.append("paper %s: fields differ: %s (expected %r, got %r)" % (
                k, diff, [e[f] for f in diff], [g.get(f) for f in diff]))
    if got.get("counts") is not None:
        c = counts_of(exp)
        for k, v in c.items():
            if got["counts"].get(k) != v:
                errs.append("count %s: expected %d, reported %s" % (k, v, got["counts"].get(k)))
    return errs


def expected(kind, path, project):
    if kind == "mlflow":
        return read_mlflow(path, project)
    if kind == "tensorboard":
        return read_tb(path)
    if kind == "csv":
        return read_csv_model(path)
    if kind == "hf":
        return read_hf(path)
    if kind == "arxiv":
        return read_arxiv(path)
    raise SystemExit("unknown kind " + kind)


def main(argv):
    if len(argv) >= 4 and argv[1] == "dump":
        kind, path, cmd = argv[2], argv[3], argv[4:]
        if path == "@synth-tb":  # event files written by gen-tb.py
            import tempfile
            tmp = tempfile.mkdtemp(prefix="pmcp-tb-")
            here = os.path.dirname(os.path.abspath(__file__))
            subprocess.run([sys.executable, os.path.join(here, "gen-tb.py"), tmp], check=True)
            path = os.path.join(tmp, "synth")
        project = ""
        if "--project" in cmd:
            project = cmd[cmd.index("--project") + 1]
        out = subprocess.run(cmd[:1] + [kind, path] + cmd[1:], capture_output=True, text=True)
        if out.returncode != 0:
            print("importer failed:", out.stderr.strip())
            return 1
        exp = expected(kind, path, project)
        got = parse_dump(out.stdout)
        errs = compare(exp, got)
        for e in errs[:40]:
            print("MISMATCH:", e)
        c = counts_of(exp)
        print("%s %s: %s" % (kind, path, json.dumps(c)))
        return 1 if errs else 0
    if len(argv) == 4 and argv[1] == "expect":
        print(json.dumps(counts_of(expected(argv[2], argv[3], ""))))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
