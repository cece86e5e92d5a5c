#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Differential check of two builds' tracking answers: every tracking tool
called over the store's workspaces, projects, runs and series (listings
with filters, sorts, windows; series of each kind, bucketed on each axis;
the RL tools on every run), at budgets that cut pages, then once more with
each next_offset the answers handed out, sent to each build's
probe-mcp-stdio on one store and compared byte for byte. Not a test: run by
hand when a change must not alter any answer (the research twin,
tests/bench/research/replies.py, covers few tracking tools).

    python3 tests/bench/tracking/replies.py BEFORE_BUILD AFTER_BUILD STORE
    # e.g. a store filled by `probe demo`; prints the differences, exits 1 on any
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "research"))
from replies import compare, serve, structured  # noqa: E402

BUDGETS = [None, 512, 900, 2000, 8000]


def discover(build, store):
    """Workspaces, projects, runs and series of the store, read through
    @build."""
    a = serve(build, store, [("list_workspaces", {"token_budget": 8000, "limit": 100})])
    wss = [w["workspace"] for w in structured(a[1]).get("workspaces", [])]
    calls = [("list_projects", {"workspace": w, "token_budget": 8000, "limit": 100})
             for w in wss]
    a = serve(build, store, calls)
    projects = []
    for i, w in enumerate(wss, 1):
        for p in structured(a[i]).get("projects", []):
            projects.append((w, p["project"]))
    calls = []
    for w, p in projects:
        calls += [("list_runs", {"workspace": w, "project": p, "limit": 100, "token_budget": 8000}),
                  ("list_metrics", {"workspace": w, "project": p, "limit": 100,
                                    "token_budget": 8000})]
    a = serve(build, store, calls)
    out = []
    for i, (w, p) in enumerate(projects):
        runs = [r.get("run") or r.get("id") or r.get("sys/id")
                for r in structured(a[2 * i + 1]).get("rows", [])]
        mets = structured(a[2 * i + 2]).get("metrics", [])
        out.append((w, p, [r for r in runs if isinstance(r, str)], mets))
    return out


# ---- the fetch tools: windows, ranges, bucketed entries, charts ---------------
def fetch_calls(wp, rs, floats, hists, many):
    """Calls of the fetch tools beyond the plain ones: small windows, step
    and time ranges, series no run has, entries bucketed past max_points,
    histograms read as a statistic (bucketed too), and the charts
    (`render`) of each axis, whose images are compared with the text."""
    c = []
    for k in floats[:2]:
        ks = [k, "zz"] + floats[2:3]
        c += [("fetch_float_series_buckets", dict(wp, runs=rs, series=ks, limit=1, offset=1)),
              ("fetch_float_series_buckets", dict(wp, runs=rs, series=[k], buckets=4,
                                                  step_from=50, step_to=300)),
              ("fetch_float_series_buckets", dict(wp, runs=rs, series=ks, buckets=6,
                                                  render="png")),
              ("fetch_float_series_buckets", dict(wp, runs=rs, series=[k], buckets=9,
                                                  axis="wall_clock", render="png", limit=2,
                                                  offset=1)),
              ("fetch_float_series_buckets", dict(wp, runs=rs, series=[k], buckets=3,
                                                  axis="relative_time", render="png_log")),
              ("fetch_float_series_buckets", dict(wp, runs=rs, series=[k], axis="relative_time",
                                                  time_from=1, time_to=30)),
              ("fetch_float_series_buckets", dict(wp, runs=rs, series=[k], axis="wall_clock",
                                                  time_from="2020-01-01T00:00:00Z",
                                                  time_to=4102444800000)),
              ("fetch_float_series", dict(wp, runs=rs, series=ks, limit=2, offset=1,
                                          max_points=5)),
              ("fetch_float_series", dict(wp, runs=rs[:2], series=[k], render="png",
                                          max_points=30)),
              ("fetch_float_series", dict(wp, runs=rs, series=ks, step_from=0, step_to=5000,
                                          max_points=4)),
              ("fetch_float_series", dict(wp, runs=rs[:3], series=[k], step_from=20,
                                          step_to=200, max_points=6, render="png")),
              ("fetch_float_series", dict(wp, runs=rs[:2], series=[k], step_from=10 ** 9))]
    for k in hists[:1]:
        c += [("fetch_float_series", dict(wp, runs=many, series=[k], step_from=0,
                                          step_to=10 ** 6, max_points=2,
                                          histogram_statistic="median")),
              ("fetch_float_series", dict(wp, runs=many, series=[k], max_points=4, limit=2,
                                          offset=1, histogram_statistic="std", render="png")),
              ("fetch_float_series", dict(wp, runs=many, series=[k] + floats[:1], step_from=0,
                                          step_to=10 ** 6, max_points=3,
                                          histogram_statistic="max", render="png")),
              ("fetch_float_series", dict(wp, runs=many, series=[k] + floats[:1],
                                          max_points=3)),
              ("fetch_float_series", dict(wp, runs=many, series=[k])),
              ("fetch_histogram_series", dict(wp, runs=many, series=[k], limit=1, offset=4))]
    return c
# ---- end of the fetch tools' calls --------------------------------------------


def calls_for(lab):
    c = []
    for b in BUDGETS:
        x = {"token_budget": b} if b else {}
        c += [("list_workspaces", dict(x)), ("list_workspaces", dict(limit=1, offset=1, **x)),
              ("list_docs", dict(x)), ("list_docs", dict(limit=2, offset=1, **x))]
        for page in ("finding-runs", "filters", "series-and-buckets", "rl", "nope"):
            c += [("get_doc", dict(page=page, **x)), ("get_doc", dict(page=page, offset=500, **x))]
        for w, p, runs, mets in lab:
            wp = dict(workspace=w, project=p, **x)
            c += [("list_projects", dict(workspace=w, **x)),
                  ("list_experiments", dict(wp)),
                  ("list_experiments", dict(wp, limit=1, offset=1)),
                  ("list_attribute_definitions", dict(wp)),
                  ("list_attribute_definitions", dict(wp, limit=3, offset=2)),
                  ("list_metrics", dict(wp)),
                  ("list_metrics", dict(wp, limit=2, offset=1)),
                  ("list_runs", dict(wp)),
                  ("list_runs", dict(wp, limit=3, offset=1)),
                  ("list_runs", dict(wp, sort={"attr": "sys/name", "direction": "asc"})),
                  ("list_runs", dict(wp, filter=[{"attr": "sys/state", "op": "eq",
                                                  "value": "finished"}])),
                  ("list_runs", dict(wp, columns=["sys/name", "sys/state", "sys/name", "sys/tags",
                                              "sys/duration_ms"],
                                     summary_columns=[{"series": m["name"], "function": f}
                                                      for m in mets[:3]
                                                      for f in ("last", "avg")])),
                  ("list_runs", dict(wp, limit=5, sort={"series": (mets or [{"name": "x"}])[0]
                                                        ["name"], "function": "max",
                                                        "direction": "desc"}))]
            floats = [m["name"] for m in mets if m.get("kind") == "float"]
            hists = [m["name"] for m in mets if m.get("kind") == "histogram"]
            scats = [m["name"] for m in mets if m.get("kind") == "scatter"]
            rs = runs[:4]
            for r in runs[:6]:
                c += [("get_run_attributes", dict(wp, run=r)),
                      ("get_run_attributes", dict(wp, run=r, limit=3, offset=2)),
                      ("get_rl_info", dict(wp, run=r)),
                      ("list_rl_environments", dict(wp, run=r)),
                      ("list_rl_metrics", dict(wp, run=r)),
                      ("list_rl_attribute_definitions", dict(wp, run=r))]
            if not rs:
                continue
            c += [("list_series", dict(wp, runs=rs)),
                  ("list_series", dict(wp, runs=rs, limit=3, offset=1)),
                  ("list_series_label_values", dict(wp, runs=rs))]
            for k in floats[:3]:
                c += [("fetch_series_summaries", dict(wp, runs=rs, series=[k])),
                      ("fetch_float_series_buckets", dict(wp, runs=rs, series=[k])),
                      ("fetch_float_series_buckets", dict(wp, runs=rs, series=[k], buckets=7,
                                                          axis="wall_clock")),
                      ("fetch_float_series_buckets", dict(wp, runs=rs, series=[k], buckets=5,
                                                          axis="relative_time")),
                      ("fetch_float_series", dict(wp, runs=rs[:2], series=[k])),
                      ("fetch_float_series", dict(wp, runs=rs[:2], series=[k], max_points=20)),
                      ("fetch_float_series", dict(wp, runs=rs[:2], series=[k], step_from=10,
                                                  step_to=60))]
            if floats:
                c.append(("fetch_series_summaries", dict(wp, runs=rs, series=floats[:6] + ["zz"])))
            many = runs[:50]  # histograms and scatter sets are in few runs
            for k in hists[:2]:
                c += [("fetch_histogram_series", dict(wp, runs=many, series=[k])),
                      ("fetch_histogram_series", dict(wp, runs=many, series=[k], density=True,
                                                      limit=3, offset=2)),
                      ("fetch_histogram_series", dict(wp, runs=many, series=[k], step_from=100,
                                                      step_to=4000)),
                      ("fetch_float_series", dict(wp, runs=many, series=[k],
                                                  histogram_statistic="mean")),
                      ("fetch_float_series", dict(wp, runs=many, series=[k], max_points=3,
                                                  histogram_statistic="p90"))]
            for k in scats[:2]:
                c += [("fetch_scatter_series", dict(wp, runs=many, series=[k])),
                      ("fetch_scatter_series", dict(wp, runs=many, series=[k], max_points=7,
                                                    step_from=0, step_to=3000))]
            c += fetch_calls(wp, rs, floats, hists, many)
            rl = [m["name"] for m in mets if m.get("scale") in ("ENVIRONMENT_STEP", "EPISODE")]
            for r in runs[:6]:
                for k in rl[:2]:
                    sc = next(m["scale"] for m in mets if m["name"] == k)
                    c += [("fetch_rl_env_series_buckets", dict(wp, run=r, series=[k], scale=sc)),
                          ("aggregate_rl_env_series", dict(wp, run=r, series=k, scale=sc)),
                          ("aggregate_rl_env_series", dict(wp, run=r, series=k, scale=sc,
                                                           function="median", buckets=4))]
            c += rl_calls(wp, runs, mets)
    return c


def rl_calls(wp, runs, mets):
    """The RL tools' other arguments: sorts, columns, filters, chosen
    environments, project-wide listings, attributes as of an episode and
    their history, step ranges, groups, windows."""
    rl = [m for m in mets if m.get("scale") in ("ENVIRONMENT_STEP", "EPISODE")]
    c = [("list_rl_metrics", dict(wp)), ("list_rl_metrics", dict(wp, limit=1, offset=1)),
         ("list_rl_attribute_definitions", dict(wp)),
         ("list_rl_attribute_definitions", dict(wp, limit=2, offset=3))]
    summ = [{"series": m["name"], "function": f, "scale": m["scale"]}
            for m in rl[:2] for f in ("last", "avg")]
    for r in runs[:3]:
        wr = dict(wp, run=r)
        c += [("list_rl_environments", dict(wr, sort={"attr": "physics/gravity",
                                                      "direction": "desc"})),
              ("list_rl_environments", dict(wr, columns=["env/level", "environment",
                                                         "physics/gravity", "env/level",
                                                         "env/wrappers", "nope"],
                                            summary_columns=summ, limit=2, offset=1)),
              ("list_rl_environments", dict(wr, filter=[{"attr": "env/level", "op": "eq",
                                                         "value": "easy"}])),
              ("list_rl_environments", dict(wr, environments=["3", "1", "9"])),
              ("list_rl_environments", dict(wr, environments=["3", "1"], limit=1)),
              ("list_rl_environments", dict(wr, offset=10)),
              ("get_rl_environment_attributes", dict(wr, environment="nope"))]
        if rl:
            c.append(("list_rl_environments", dict(wr, summary_columns=summ[:1],
                                                   sort=dict(summ[0], direction="desc"))))
        for e in ("0", "1"):
            c += [("get_rl_environment_attributes", dict(wr, environment=e)),
                  ("get_rl_environment_attributes", dict(wr, environment=e, episode=100)),
                  ("get_rl_environment_attributes", dict(wr, environment=e, history=True)),
                  ("get_rl_environment_attributes", dict(wr, environment=e, history=True,
                                                         episode=100, paths=["env/"])),
                  ("get_rl_environment_attributes", dict(wr, environment=e, limit=2, offset=1))]
        for m in rl[:2]:
            k, sc = m["name"], m["scale"]
            c += [("fetch_rl_env_series_buckets", dict(wr, series=[x["name"] for x in rl
                                                               if x["scale"] == sc], scale=sc,
                                                       buckets=3)),
                  ("fetch_rl_env_series_buckets", dict(wr, series=[k], scale=sc,
                                                       environments=["2", "0"], step_from=10,
                                                       step_to=120, limit=1, offset=1)),
                  ("fetch_rl_env_series_buckets", dict(wr, series=[k], scale=sc,
                                                       labels={"x": "y"})),
                  ("fetch_rl_env_series_buckets", dict(wr, series=[k], scale=sc,
                                                       step_from=10 ** 9)),
                  ("aggregate_rl_env_series", dict(wr, series=k, scale=sc, group_by="env/level")),
                  ("aggregate_rl_env_series", dict(wr, series=k, scale=sc,
                                                   group_by="physics/gravity", function="max",
                                                   limit=1, offset=1)),
                  ("aggregate_rl_env_series", dict(wr, series=k, scale=sc, group_by="nope",
                                                   environments=["1", "2"], step_from=5,
                                                   step_to=50, buckets=2)),
                  ("aggregate_rl_env_series", dict(wr, series=k, scale=sc, step_from=10 ** 9))]
    return c


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    before, after, store = sys.argv[1:]
    calls = calls_for(discover(before, store))
    a = serve(before, store, calls)
    more = []
    for i, (tool, args) in enumerate(calls, 1):
        nxt = structured(a.get(i, "{}")).get("next_offset") if i in a else None
        if isinstance(nxt, int):
            more.append((tool, dict(args, offset=nxt)))
    calls += more
    a, diffs = compare(before, after, store, calls, width=600)
    errors = sum(1 for v in a.values() if '"isError":true' in v)
    tools = sorted({t for t, _ in calls})
    print("%d calls of %d tools (%d with a next_offset, %d answered with an error); "
          "%d differences" % (len(calls), len(tools), len(more), errors, diffs))
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
