#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tracking toolset's fetch tools against a brute-force reduction of
the raw files.

Imports real data sets of tests/data (Lightning CSV, TensorBoard, HF
Trainer state, two MLflow stores, sparse Lightning CSV) and generated logs
full of awkward series (NaN, +-Inf, a NaN last point, gaps, repeated
steps, points without a time, runs of different lengths, one series of
81,920 points, many runs, TensorBoard histograms read as labelled series)
with the probe CLI, serves the store with probe-mcp-stdio, and asks every
fetch tool for every run of each data set at once (multi-run), without
and with `project` and `workspace`. Every answer is compared with what
this script computes from the raw points, read by check-import.py's
readers (which share no code with the C importers):

- list_series and fetch_series_summaries: every requested run and series,
  counts, steps, first / last (the values at the first and last point;
  NaN and +-Inf as the strings "NaN", "Infinity", "-Infinity", under their
  own key), min / max / avg over the finite values, non-finite counts;
- fetch_float_series: the last max_points finite points, points_before
  (finite points before them), nonfinite_points; a step range exactly or,
  when it holds more than max_points finite points, in exact buckets;
- fetch_float_series_buckets on the step, wall-clock and relative-time
  axes, with and without an explicit step range: one set of edges for the
  whole call (stated once), exact counts of finite points, non-finite
  points apart, mean / min / max over the finite points, points logged
  without a time named.

With PMCP_TEST_STORE=pg the store is a new schema of the test cluster
(PROBE_TEST_PG_URL, tests/pg/pgctl.sh; skipped without one).

usage: tracking_diff.py PROBE_CLI PROBE_MCP_STDIO
"""
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile

PROBE, STDIO = sys.argv[1], sys.argv[2]
PG = os.environ.get("PMCP_TEST_STORE") == "pg"
PG_URL = os.environ.get("PROBE_TEST_PG_URL")
if PG and not PG_URL:
    sys.exit(1 if os.environ.get("PMCP_TEST_STRICT", "0") not in ("", "0") else 77)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tracking_server  # noqa: E402
DATA = os.path.join(HERE, "..", "data")
IMPORT = os.path.join(HERE, "..", "import")
spec = importlib.util.spec_from_file_location("ci", os.path.join(IMPORT, "check-import.py"))
ci = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ci)
spec = importlib.util.spec_from_file_location("cs", os.path.join(IMPORT, "check-store.py"))
cs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cs)
run_id = cs.run_id  # the store id the importers give a run
failures = []


def fail(msg):
    failures.append(msg)
    if len(failures) <= 60 or os.environ.get("PMCP_DIFF_ALL"):
        print("FAIL:", msg)


def psql(sql):
    r = subprocess.run(["psql", PG_URL, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c",
                        "SET client_min_messages=warning; " + sql],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise SystemExit("psql: " + r.stderr)
    return r.stdout.strip()


# ------------------------------------------------------------ generated logs
def write_generated(top):
    """Long-form CSV runs (step,key,value,timestamp), one folder each."""
    t0 = 1700000000.0
    runs = {}
    # two runs of different lengths (110 and 130 steps) on one shared axis
    runs["g-len110"] = [(s, "loss", 2.0 / (1 + s), t0 + s * 1.5) for s in range(110)]
    runs["g-len130"] = [(s, "loss", 1.0 / (1 + s), t0 + 7.25 + s * 2.125) for s in range(130)]
    # NaN, +-Inf among the values, a NaN last point, millisecond times
    pts = []
    for s in range(60):
        v = math.sin(s / 5.0)
        if s % 7 == 3:
            v = float("nan")
        elif s == 20:
            v = float("inf")
        elif s == 21:
            v = float("-inf")
        pts.append((s, "loss", v, t0 + s + 0.123))
    pts.append((60, "loss", float("nan"), t0 + 60.456))
    for s in range(0, 40, 3):  # a bucket of non-finite points only (steps 0..9)
        pts.append((s, "acc", float("nan") if s < 10 else s / 40.0, t0 + s + 0.5))
    runs["g-nonfinite"] = pts
    # gaps, repeated steps, points without a time, a NaN first point
    pts = [(0, "loss", float("nan"), t0), (1, "loss", 3.0, t0 + 1)]
    pts += [(s, "loss", 100.0 / s, t0 + s if s % 4 else None) for s in range(50, 70)]
    pts += [(60, "loss", -5.0, t0 + 100), (1000, "loss", 0.25, t0 + 1000)]
    runs["g-gaps"] = pts
    # no times at all
    runs["g-notime"] = [(s * 10, "loss", 1.0 - s / 100.0, None) for s in range(45)] + \
        [(s, "x", float(s), None) for s in range(3)]
    # only non-finite values; one point
    runs["g-allnan"] = [(s, "loss", float("nan"), t0 + s) for s in range(12)] + \
        [(5, "one", 42.0, t0 + 5)]
    # a large series: 81,920 points, many storage blocks
    runs["g-large"] = [(s, "loss", (s % 97) / 97.0 + (float("nan") if s % 10007 == 5 else 0),
                        t0 + s * 0.01) for s in range(81920)]
    # many short runs
    for i in range(14):
        runs["g-many%02d" % i] = [(s * (i + 1), "loss", 1.0 / (1 + s + i), t0 + i * 100 + s)
                                  for s in range(1 + i * 3)]
    for name, pts in runs.items():
        d = os.path.join(top, name)
        os.makedirs(d)
        with open(os.path.join(d, "metrics.csv"), "w") as f:
            f.write("step,key,value,timestamp\n")
            for s, k, v, t in pts:
                f.write("%d,%s,%r,%s\n" % (s, k, v, "" if t is None else "%.3f" % t))
    return top


# ------------------------------------------------------------- the server
class Server(tracking_server.Server):
    def __init__(self, store):
        super().__init__(STDIO, store)

    def pages(self, name, args, items):
        """Every item of an offset-paged answer, and the first page's root."""
        out, root, offset = [], None, 0
        while True:
            a = dict(args, offset=offset, token_budget=8000)
            res, err = self.call(name, a)
            if err:
                return None, res
            root = root or res
            out += res.get(items, [])
            if res.get("count") != len(res.get(items, [])):
                fail("%s: count %s for %d items" % (name, res.get("count"),
                                                    len(res.get(items, []))))
            nxt = res.get("next_offset")
            if nxt is None:
                if len(out) != res.get("total_count"):
                    fail("%s %s: %d items, total_count %s" % (name, json.dumps(args)[:200],
                                                               len(out), res.get("total_count")))
                return out, root
            if nxt <= offset:
                fail("%s: next_offset %s does not advance" % (name, nxt))
                return out, root
            offset = nxt

    def close(self):
        self.p.stdin.close()
        if self.p.wait(timeout=60):
            fail("the server exited with %d: %s" % (self.p.returncode,
                                                   self.p.stderr.read().decode()[-2000:]))


# ------------------------------------------------------------- the truth
def spelled(v):
    """A value as the tools write it: non-finite numbers as strings."""
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    return v


def close(got, want):
    if isinstance(want, str) or isinstance(got, str) or want is None or got is None:
        return got == spelled(want) if not isinstance(want, str) else got == want
    if isinstance(want, float) and not math.isfinite(want):
        return got == spelled(want)
    if not isinstance(got, (int, float)):
        return False
    return got == want or abs(got - want) <= 2e-5 * max(abs(got), abs(want))


# (run, key, "{}") -> steps of the histograms of a histogram series
HISTS = {}


def truth_of(kind, path, project):
    """{run id: {(key, labels json): [(step, time_ms, value), ...]}} of the
    active runs, and the runs' display names."""
    model = ci.expected(kind, path, project)
    runs = {}
    for key, r in model["runs"].items():
        if r.get("deleted"):
            continue
        ser = {}
        for (k, step, wall, value) in r["scalars"]:
            t = int(round(wall * 1000)) if math.isfinite(wall) and wall > 0 else 0
            ser.setdefault((k, "{}"), []).append((step, t, value))
        for (k, step, wall, h) in r["hists"]:
            if not h["limits"]:
                continue
            hs = HISTS.setdefault((run_id(key), k, "{}"), [])
            hs.append((step, h["limits"], h["counts"]))
            t = int(round(wall * 1000)) if math.isfinite(wall) and wall > 0 else 0
            for st in ("min", "max", "num", "sum", "sum_squares"):
                if not math.isnan(h[st]):
                    lab = json.dumps({"stat": st}, separators=(",", ":"))
                    ser.setdefault((k, lab), []).append((step, t, h[st]))
        runs[run_id(key)] = ser
    return runs


def entry_id(e):
    lab = e.get("labels") or {}
    return (e["run"], e["series"], json.dumps(lab, separators=(",", ":"), sort_keys=True))


def finite(pts):
    return [p for p in pts if math.isfinite(p[2])]


def brute_buckets(pts, x_of, lo, width, n):
    """{bucket index: [finite values], nonfinite count} of points on an axis."""
    b = {}
    for p in pts:
        x = x_of(p)
        if x is None or x < lo or x >= lo + width * n:
            continue
        i = (x - lo) // width
        cell = b.setdefault(i, [[], 0])
        if math.isfinite(p[2]):
            cell[0].append(p[2])
        else:
            cell[1] += 1
    return b


def axis_of(lo, hi, nb):
    span = hi - lo + 1
    w = max(1, -(-span // nb))
    return w, -(-span // w)


def compare_buckets(what, e, xname, x_at, cells, lo, width, n):
    idx = sorted(i for i, c in cells.items() if c[0] or c[1])
    xs = e.get(xname, [])
    if xs != [x_at(lo + i * width) for i in idx]:
        fail("%s: %s %s, expected %s" % (what, xname, xs[:8],
                                         [x_at(lo + i * width) for i in idx][:8]))
        return
    nf_any = any(cells[i][1] for i in idx)
    for k, i in enumerate(idx):
        vals, nf = cells[i]
        cnt = e["count"][k]
        if cnt != len(vals):
            fail("%s bucket %d: count %s, expected %d finite points" % (what, i, cnt, len(vals)))
        if nf_any and (e.get("nonfinite") or [None] * len(idx))[k] != nf:
            fail("%s bucket %d: nonfinite %s, expected %d" % (what, i,
                                                           (e.get("nonfinite") or [None])[k % 1], nf))
        if not nf_any and "nonfinite" in e:
            fail("%s: a nonfinite array without non-finite points" % what)
        if vals:
            for name, want in (("mean", math.fsum(vals) / len(vals)), ("min", min(vals)),
                               ("max", max(vals))):
                if not close(e[name][k], want):
                    fail("%s bucket %d: %s %s, expected %r" % (what, i, name, e[name][k], want))
        elif any(e[name][k] is not None for name in ("mean", "min", "max")):
            fail("%s bucket %d: statistics of no finite point" % (what, i))


def iso_ms(ms):
    import datetime
    d = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (ms % 1000)


# ------------------------------------------------------------- the checks
def check_set(srv, name, truth, scope):
    runs = sorted(truth)
    tag = "%s%s" % (name, "".join(" %s=%s" % kv for kv in sorted(scope.items())))
    want = {}
    start = {}
    for rid, ser in truth.items():
        times = [p[1] for pts in ser.values() for p in pts if p[1] > 0]
        start[rid] = min(times) if times else None
        for (k, lab), pts in ser.items():
            want[(rid, k, lab)] = pts
    keys = sorted({k for (_, k, _) in want})
    for r0 in range(0, len(runs), 50):
        rs = runs[r0:r0 + 50]
        sub = {i: p for i, p in want.items() if i[0] in rs}
        base = dict(scope, runs=rs)
        # list_series: every series of every run
        items, root = srv.pages("list_series", dict(base, limit=100), "series")
        if items is None:
            fail("%s list_series refused: %s" % (tag, root))
        else:
            got = {entry_id(e): e["count"] for e in items}
            exp = {i: len(p) for i, p in sub.items()}
            exp.update({i: len(h) for i, h in HISTS.items() if i[0] in rs})
            if got != exp:
                missing = sorted(set(exp) - set(got))[:5]
                fail("%s list_series: %d series, expected %d; missing %s; differing %s" % (
                    tag, len(got), len(exp), missing,
                    [(i, got[i], exp[i]) for i in got if i in exp and got[i] != exp[i]][:3]))
        for k0 in range(0, len(keys), 20):
            ks = keys[k0:k0 + 20]
            kw = {i: p for i, p in sub.items() if i[1] in ks}
            check_summaries(srv, tag, dict(base, series=ks), kw)
            check_points(srv, tag, dict(base, series=ks), kw)
            check_buckets(srv, tag, dict(base, series=ks), kw, start)
        hk = sorted({i[1] for i in HISTS if i[0] in rs})
        if hk:
            # the runs in reverse: the first one holds no histograms
            check_histograms(srv, tag, dict(base, series=hk, runs=rs[::-1]), rs)


def check_histograms(srv, tag, args, rs):
    """fetch_histogram_series: every histogram of every run, bins as logged."""
    items, root = srv.pages("fetch_histogram_series", dict(args, limit=100), "histograms")
    if items is None:
        fail("%s fetch_histogram_series refused: %s" % (tag, root))
        return
    got = sorted((e["run"], e["series"], e["step"], e["edges"][1:], e["counts"]) for e in items)
    want = sorted((i[0], i[1], st, lim, cnt) for i, hs in HISTS.items() if i[0] in rs
                  for st, lim, cnt in hs)
    if len(got) != len(want) or not all(
            g[:3] == w[:3] and all(close(a, b) for a, b in zip(g[3], w[3])) and
            all(close(a, b) for a, b in zip(g[4], w[4])) for g, w in zip(got, want)):
        fail("%s fetch_histogram_series: %d histograms %s, expected %d %s" % (
            tag, len(got), [g[:3] for g in got][:4], len(want), [w[:3] for w in want][:4]))


def check_summaries(srv, tag, args, want):
    items, root = srv.pages("fetch_series_summaries", dict(args, limit=100), "summaries")
    if items is None:
        fail("%s fetch_series_summaries refused: %s" % (tag, root))
        return
    got = {entry_id(e): e for e in items if e.get("kind") == "float"}
    hist = {entry_id(e): e["count"] for e in items if e.get("kind") == "histogram"}
    want_hist = {i: len(h) for i, h in HISTS.items() if i[0] in {w[0] for w in want}
                 and i[1] in {w[1] for w in want}}
    if hist != want_hist:
        fail("%s fetch_series_summaries: histogram series %s, expected %s" % (tag, hist, want_hist))
    if set(got) != set(want):
        fail("%s fetch_series_summaries: entries %d, expected %d; missing %s" % (
            tag, len(got), len(want), sorted(set(want) - set(got))[:4]))
    for i, pts in want.items():
        e = got.get(i)
        if not e:
            continue
        if "" in e:
            fail("%s %s: a summary under an empty key: %s" % (tag, i, e))
        fin = [p[2] for p in finite(pts)]
        exp = {"count": len(pts), "step_min": min(p[0] for p in pts),
               "step_max": max(p[0] for p in pts)}
        if len(pts) - len(fin):
            exp["nonfinite"] = len(pts) - len(fin)
        if fin:
            exp.update(first=pts[0][2], last=pts[-1][2], min=min(fin), max=max(fin),
                       avg=math.fsum(fin) / len(fin))
        for k, v in exp.items():
            if not close(e.get(k), v):
                fail("%s %s: %s %s, expected %s" % (tag, i, k, e.get(k), spelled(v)))


def check_points(srv, tag, args, want):
    mp = 50
    items, root = srv.pages("fetch_float_series", dict(args, limit=100, max_points=mp),
                            "entries")
    if items is None:
        fail("%s fetch_float_series refused: %s" % (tag, root))
        return
    got = {entry_id(e): e for e in items}
    if set(got) != set(want):
        fail("%s fetch_float_series: entries %d, expected %d; missing %s" % (
            tag, len(got), len(want), sorted(set(want) - set(got))[:4]))
    for i, pts in want.items():
        e = got.get(i)
        if not e:
            continue
        fin = finite(pts)
        last = fin[-mp:]
        if e.get("step") != [p[0] for p in last] or \
                not all(close(a, p[2]) for a, p in zip(e.get("value", []), last)):
            fail("%s %s: points %s..., expected %s..." % (tag, i, e.get("step", [])[:5],
                                                         [p[0] for p in last][:5]))
        if e.get("points_before", 0) != max(0, len(fin) - mp):
            fail("%s %s: points_before %s, expected %d" % (tag, i, e.get("points_before"),
                                                           max(0, len(fin) - mp)))
        if e.get("nonfinite_points", 0) != len(pts) - len(fin):
            fail("%s %s: nonfinite_points %s, expected %d" % (
                tag, i, e.get("nonfinite_points"), len(pts) - len(fin)))
    # a step range: exact points, or exact buckets when it holds more
    steps = sorted({p[0] for pts in want.values() for p in pts})
    if not steps:
        return
    a, b = steps[len(steps) // 4], steps[(3 * len(steps)) // 4]
    mp = 30
    items, root = srv.pages("fetch_float_series", dict(args, limit=100, max_points=mp,
                                                       step_from=a, step_to=b), "entries")
    if items is None:
        fail("%s fetch_float_series range refused: %s" % (tag, root))
        return
    got = {entry_id(e): e for e in items}
    for i, pts in want.items():
        inr = [p for p in pts if a <= p[0] <= b]
        e = got.get(i)
        if not inr:
            if e and e.get("step"):
                fail("%s %s: points outside the range" % (tag, i))
            continue
        if not e:
            fail("%s %s: no entry for a range holding %d points" % (tag, i, len(inr)))
            continue
        fin = finite(inr)
        what = "%s %s steps %d..%d" % (tag, i, a, b)
        if e.get("nonfinite_points", 0) != len(inr) - len(fin):
            fail("%s: nonfinite_points %s, expected %d" % (what, e.get("nonfinite_points"),
                                                          len(inr) - len(fin)))
        if len(fin) <= mp:
            if e.get("bucketed") or e.get("step") != [p[0] for p in fin]:
                fail("%s: exact points expected, got %s" % (what, json.dumps(e)[:200]))
            continue
        if not e.get("bucketed") or e.get("points_in_range") != len(fin):
            fail("%s: bucketed with points_in_range %d expected: %s" % (
                what, len(fin), json.dumps(e)[:200]))
            continue
        lo, hi = min(p[0] for p in inr), max(p[0] for p in inr)
        lo, hi = max(lo, min(p[0] for p in pts)), min(hi, max(p[0] for p in pts))
        lo, hi = max(a, min(p[0] for p in pts)), min(b, max(p[0] for p in pts))
        w, n = axis_of(lo, hi, mp)
        compare_buckets(what, e, "step", lambda x: x, brute_buckets(inr, lambda p: p[0], lo, w, n),
                        lo, w, n)


def check_buckets(srv, tag, args, want, start):
    for axis in ("step", "wall_clock", "relative_time"):
        ranges = [(None, 7)]
        if axis == "step":
            # 2 buckets over many storage blocks: block-sized approximations show
            ranges.append((None, 2))
            steps = sorted({p[0] for pts in want.values() for p in pts})
            if steps:
                ranges.append(((steps[len(steps) // 3], steps[-1] + 17), 7))
        else:
            ranges.append(("time", 7))  # an explicit range on the time axis
        for rng, nb in ranges:
            a = dict(args, axis=axis, buckets=nb, limit=100)
            trng = None  # a time range, in the axis' milliseconds
            if rng == "time":
                rng = None
                ts = sorted(p[1] - (start[i[0]] if axis == "relative_time" else 0)
                            for i, pts in want.items() for p in pts if p[1] > 0)
                if not ts:
                    continue
                trng = (ts[len(ts) // 3], ts[-1] + 1234)
                if axis == "wall_clock":  # both spellings: ISO 8601 and epoch ms
                    a.update(time_from=iso_ms(trng[0]), time_to=trng[1])
                else:
                    a.update(time_from=trng[0] / 1000.0, time_to=trng[1] / 1000.0)
            if rng:
                a.update(step_from=rng[0], step_to=rng[1])
            items, root = srv.pages("fetch_float_series_buckets", a, "entries")
            what = "%s buckets=%d axis=%s%s" % (tag, nb, axis, " %s..%s" % (rng or trng)
                                                if rng or trng else "")
            if items is None:
                fail("%s refused: %s" % (what, root))
                continue
            got = {entry_id(e): e for e in items}
            if set(got) != set(want):
                fail("%s: entries %d, expected %d; missing %s" % (
                    what, len(got), len(want), sorted(set(want) - set(got))[:4]))

            def x_of(p, rid):
                if axis == "step":
                    return p[0]
                if p[1] <= 0:
                    return None
                return p[1] - (start[rid] if axis == "relative_time" else 0)
            xs = [x_of(p, i[0]) for i, pts in want.items() for p in pts
                  if (not rng or rng[0] <= p[0] <= rng[1])]
            xs = [x for x in xs if x is not None]
            if not xs:
                continue
            lo, hi = (rng or trng or (min(xs), max(xs)))
            w, n = axis_of(lo, hi, nb)
            if axis == "step":
                x_at = lambda x: x
                edges = [lo + k * w for k in range(n)] + [hi + 1]
            elif axis == "relative_time":
                x_at = lambda x: x / 1000.0
                edges = [x_at(lo + k * w) for k in range(n)] + [x_at(hi + 1)]
            else:
                x_at = iso_ms
                edges = [iso_ms(lo + k * w) for k in range(n)] + [iso_ms(hi + 1)]
            if root.get("bucket_edges") != edges and not (
                    axis == "relative_time" and
                    all(close(g, x) for g, x in zip(root.get("bucket_edges") or [], edges))
                    and len(root.get("bucket_edges") or []) == len(edges)):
                fail("%s: bucket_edges %s, expected %s" % (what, root.get("bucket_edges"), edges))
            for i, pts in want.items():
                e = got.get(i)
                if not e:
                    continue
                sel = [p for p in pts if not rng or rng[0] <= p[0] <= rng[1]]
                no_time = sum(1 for p in sel if p[1] <= 0) if axis != "step" else 0
                if e.get("points_without_time", 0) != no_time:
                    fail("%s %s: points_without_time %s, expected %d" % (
                        what, i, e.get("points_without_time"), no_time))
                xname = {"step": "step", "wall_clock": "wall_time",
                         "relative_time": "relative_time_s"}[axis]
                on_axis = [p for p in sel if not trng or (x_of(p, i[0]) is not None and
                                                          lo <= x_of(p, i[0]) <= hi)]
                cells = brute_buckets(on_axis, lambda p: x_of(p, i[0]), lo, w, n)
                if axis == "relative_time":
                    got_x = e.get(xname, [])
                    exp_x = [x_at(lo + k * w) for k in sorted(c for c in cells)]
                    if len(got_x) == len(exp_x) and all(close(g, x) for g, x in zip(got_x, exp_x)):
                        e = dict(e, **{xname: exp_x})
                compare_buckets("%s %s" % (what, i), e, xname, x_at, cells, lo, w, n)


def check_timeless(srv, gen):
    """A run whose points carry no time, alone on a time axis: every point
    is counted as without a time and the answer says so (no silent empty
    buckets)."""
    n = sum(1 for line in open(os.path.join(gen, "g-notime", "metrics.csv"))
            if line.startswith(tuple("0123456789")) and ",loss," in line)
    for axis in ("wall_clock", "relative_time"):
        res, err = srv.call("fetch_float_series_buckets", {
            "runs": ["g-notime"], "series": ["loss"], "axis": axis, "buckets": 4,
            "project": "gen"})
        e = (res.get("entries") or [{}])[0]
        if err or e.get("points_without_time") != n or sum(e.get("count", [])) != 0 or \
                "without a time" not in res.get("note", ""):
            fail("a run without times on %s: %s" % (axis, json.dumps(res)[:300]))


def check_run_names(srv, truths):
    """Runs are found by what an agent has: name, MLflow run uuid, ref, id."""
    def summaries(runs, **kw):
        return srv.call("fetch_series_summaries", dict(kw, runs=runs, series=["train_gen_loss",
                                                                             "val/loss"]))
    for rid in sorted(truths["genrisk"]):
        res, err = summaries(["run:" + rid])
        if err or {e["run"] for e in res.get("summaries", [])} != {rid}:
            fail("by ref run:%s: %s" % (rid, json.dumps(res)[:200]))
    # Lightning's version_N names: version_3 once, version_0 in two projects
    res, err = summaries(["version_3"])
    if err or len({e["run"] for e in res.get("summaries", [])}) != 1:
        fail("by name version_3: %s" % json.dumps(res)[:300])
    res, err = summaries(["version_0"])
    if not err or "shared by 2 runs" not in res.get("message", ""):
        fail("an ambiguous name is named: %s" % json.dumps(res)[:300])
    res, err = summaries(["version_0"], project="genrisk")
    if err or len({e["run"] for e in res.get("summaries", [])}) != 1:
        fail("a name within a project: %s" % json.dumps(res)[:300])
    # an MLflow run uuid, as MLflow shows it
    uuid = "5a1c0d9e2b7f4e06a3c1d2e3f4a5b602"
    res, err = summaries([uuid, "mlflow-" + uuid[:-1] + "1"], project="adamw")
    if err or {e["run"] for e in res.get("summaries", [])} != {"mlflow-" + uuid,
                                                               "mlflow-" + uuid[:-1] + "1"}:
        fail("by MLflow run uuid: %s" % json.dumps(res)[:300])
    res, err = srv.call("get_run_attributes", {"run": uuid})
    if err:
        fail("get_run_attributes by uuid: %s" % json.dumps(res)[:300])
    res, err = summaries(["no-such-run"])
    if not err or "list_runs" not in res.get("message", "") or \
            "no-such-run" not in res.get("message", ""):
        fail("a missing run names list_runs: %s" % json.dumps(res)[:300])


def check_attributes(srv, proj, path):
    """System attributes shown by get_run_attributes filter and sort, and
    list_attribute_definitions lists them, with mixed types said."""
    model = ci.read_mlflow(path, proj)
    runs = {run_id(k): r for k, r in model["runs"].items() if not r["deleted"]}
    dur = {rid: r["end_ms"] - r["start_ms"] for rid, r in runs.items()
           if r["start_ms"] > 0 and r["end_ms"] >= r["start_ms"]}
    cut = sorted(dur.values())[len(dur) // 2]
    res, err = srv.call("list_runs", {"project": proj, "limit": 100, "columns": ["sys/id"],
                                      "filter": [{"attr": "sys/duration_ms", "op": "gte",
                                                  "value": cut}]})
    got = sorted(r["sys/id"] for r in res.get("rows", []))
    want = sorted(rid for rid, d in dur.items() if d >= cut)
    if err or got != want or not want:
        fail("%s: sys/duration_ms >= %d: %s, expected %s" % (proj, cut, got, want))
    res, err = srv.call("list_runs", {"project": proj, "limit": 100, "columns": ["sys/id"],
                                      "sort": {"attr": "sys/duration_ms", "direction": "asc"}})
    got = [r["sys/id"] for r in res.get("rows", [])][:len(dur)]
    if err or got != sorted(dur, key=lambda r: (dur[r], r)) and \
            [dur[r] for r in got] != sorted(dur.values()):
        fail("%s: sort by sys/duration_ms: %s" % (proj, got))
    res, err = srv.call("list_runs", {"project": proj, "limit": 100, "columns": ["sys/id"],
                                      "filter": [{"attr": "sys/project", "op": "eq",
                                                  "value": proj}]})
    if err or res.get("total_count") != len(runs):
        fail("%s: sys/project eq: %s" % (proj, json.dumps(res)[:200]))
    defs, root = srv.pages("list_attribute_definitions", {"project": proj}, "attributes")
    defs = {d["path"]: d for d in defs or []}
    for p in ("sys/duration_ms", "sys/project"):
        if p not in defs:
            fail("%s: list_attribute_definitions lacks %s" % (proj, p))
    # parameter types as the importer types them, mixed ones said so
    for (kind, key), _ in next(iter(runs.values()))["attrs"].items():
        if kind != "param":
            continue
        types = {}
        for r in runs.values():
            t = r["attrs"].get(("param", key))
            if t:
                n = {"str": "string", "null": "string", "json": "string"}.get(t[0], t[0])
                types[n] = types.get(n, 0) + 1
        d = defs.get("params/" + key)
        want_type = next(iter(types)) if len(types) == 1 else "mixed"
        if not d or d["type"] != want_type or (len(types) > 1 and d.get("types") != types):
            fail("%s: params/%s defined as %s, expected %s %s" % (proj, key, d, want_type,
                                                                  types))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        gen = write_generated(os.path.join(tmp, "gen"))
        subprocess.run([sys.executable, os.path.join(IMPORT, "gen-tb.py"), tmp], check=True)
        sets = [
            ("genrisk", "csv", os.path.join(DATA, "lightning-genrisk", "lightning_logs")),
            ("tbred", "tensorboard", os.path.join(DATA, "tensorboard-reducer", "runs")),
            ("whisper", "hf", os.path.join(DATA, "hf-whisper", "trainer_state.json")),
            ("adamw", "mlflow", os.path.join(DATA, "mlflow-adamw", "mlruns")),
            ("kymatio", "mlflow", os.path.join(DATA, "mlflow-kymatio", "mlruns")),
            ("sparse", "csv", os.path.join(DATA, "csv-synthetic", "lightning_logs")),
            ("tbsynth", "tensorboard", os.path.join(tmp, "synth")),
            ("gen", "csv", gen),
        ]
        store = os.path.join(tmp, "store.db")
        schema = None
        if PG:
            import secrets
            schema = "diff_%s" % secrets.token_hex(4)
            psql("CREATE SCHEMA " + schema)
            store = PG_URL + ("&" if "?" in PG_URL else "?") + \
                "options=-csearch_path%3D" + schema
        r = subprocess.run([PROBE, "--store", store, "--quiet", "init"], capture_output=True)
        if r.returncode:
            raise SystemExit("probe init: " + r.stderr.decode())
        truths = {}
        for proj, kind, path in sets:
            r = subprocess.run([PROBE, "--store", store, "--quiet", "import", kind, path,
                                "--project", proj], capture_output=True)
            if r.returncode:
                raise SystemExit("probe import %s: %s" % (kind, r.stderr.decode()))
            truths[proj] = truth_of(kind, path, proj)
        srv = Server(store)
        ws, err = srv.call("list_workspaces", {})
        wsid = None
        if not err and ws.get("workspaces"):
            w0 = ws["workspaces"][0]
            wsid = w0.get("workspace") or w0.get("id")
        for proj, truth in truths.items():
            scopes = [{}, {"project": proj}]
            if wsid:
                scopes.append({"project": proj, "workspace": wsid})
            for scope in scopes:
                check_set(srv, proj, truth, scope)
        # a run of another project is named, not dropped or read
        other = sorted(truths["adamw"])[0]
        res, err = srv.call("fetch_series_summaries", {
            "runs": sorted(truths["gen"])[:2] + [other], "series": ["loss"], "project": "gen"})
        if not err or other not in res.get("message", ""):
            fail("a run of another project among several: %s" % json.dumps(res)[:300])
        check_run_names(srv, truths)
        check_timeless(srv, gen)
        for proj, path in (("kymatio", os.path.join(DATA, "mlflow-kymatio", "mlruns")),
                           ("adamw", os.path.join(DATA, "mlflow-adamw", "mlruns"))):
            check_attributes(srv, proj, path)
        srv.close()
        if schema:
            psql("DROP SCHEMA %s CASCADE" % schema)
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("ok")


main()
