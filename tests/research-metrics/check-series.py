#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""metrics series downsampling against an independent computation on real
data (python3 stdlib only).

usage: check-series.py PROBE PROBE_MCP_STDIO DATA_DIR

Imports real logs from tests/data (TensorBoard, MLflow, Lightning CSV, HF
trainer_state) into a fresh store, then for every float series on the step
scale: reads all its points losslessly with mode=points (following every
next_cursor), computes the endpoints and the global extremes here, and
checks that mode=series at several max_points keeps them, keeps at most
max_points points, keeps only real points, in step order. mode=grouped's
bucket means are recomputed here as well."""
import json
import math
import os
import subprocess
import sys
import tempfile

probe, stdio, data = sys.argv[1:4]
tmp = tempfile.mkdtemp(prefix="pmcp-series-")
store = os.path.join(tmp, "store.db")


def run(*args):
    r = subprocess.run([probe, "--store", store, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"probe {' '.join(args)} failed: {r.stderr}")


run("init")
run("import", "tensorboard", os.path.join(data, "tensorboard-reducer", "runs"))
run("import", "mlflow", os.path.join(data, "mlflow-kymatio", "mlruns"))
run("import", "csv", os.path.join(data, "lightning-genrisk", "lightning_logs"))
run("import", "hf", os.path.join(data, "hf-whisper", "trainer_state.json"))

srv = subprocess.Popen([stdio, "--store", store], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, text=True)
next_id = [1]


def rpc(method, params):
    next_id[0] += 1
    srv.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method,
                                "params": params}) + "\n")
    srv.stdin.flush()
    while True:
        msg = json.loads(srv.stdout.readline())
        if msg.get("id") == next_id[0]:
            return msg


def call(tool, args):
    r = rpc("tools/call", {"name": tool, "arguments": args})
    res = r["result"]
    obj = json.loads(res["content"][0]["text"])
    if res.get("isError"):
        raise RuntimeError(f"{tool} {args}: {obj}")
    return obj


rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "check", "version": "1"}})
srv.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")

runs = [r["ref"] for r in call("browse", {"mode": "runs", "limit": 100})["runs"]]
assert runs, "no runs imported"


def num(v):
    return float(v) if not isinstance(v, str) else float(v.replace("Infinity", "inf"))


def close(a, b):
    return abs(a - b) <= 1e-5 * abs(b) + 1e-12


checked = points_total = 0
for run_ref in runs:
    coords = call("metrics", {"mode": "coordinates", "run_id": run_ref, "token_budget": 8000})
    for s in coords["series"]:
        if s["kind"] != "float" or s["scale"] != "step" or s["count"] == 0:
            continue
        labels = s.get("labels", {})
        # all points, losslessly, page after page
        pts = []
        args = {"mode": "points", "run_id": run_ref, "key": s["key"], "limit": 10000,
                "token_budget": 8000}
        if labels:
            args["where"] = [{"label": k, "op": "eq", "value": v} for k, v in labels.items()]
        cur = None
        while True:
            page = call("metrics", dict(args, **({"cursor": cur} if cur else {})))
            for item in page["series"]:
                if item.get("labels", {}) != labels:
                    continue
                pts += [(st, num(v)) for st, v in zip(item["step"], item["value"])]
            cur = page.get("next_cursor")
            if not cur:
                break
        assert len(pts) == s["count"], (run_ref, s["key"], len(pts), s["count"])
        finite = sorted((st, v) for st, v in pts if math.isfinite(v))
        if not finite:
            continue
        points_total += len(pts)
        lo_step, hi_step = finite[0][0], finite[-1][0]
        vmin = min(v for _, v in finite)
        vmax = max(v for _, v in finite)
        by_step = {}
        for st, v in finite:
            by_step.setdefault(st, []).append(v)
        for mp in (4, 10, 100):
            sargs = {"mode": "series", "run_ids": [run_ref], "keys": [s["key"]],
                     "max_points": mp, "token_budget": 8000}
            if labels:
                sargs["where"] = args["where"]
            rows = [r for r in call("metrics", sargs)["series"]
                    if r.get("labels", {}) == labels]
            assert len(rows) == 1, (run_ref, s["key"], rows)
            row = rows[0]
            st, va = row["step"], row["value"]
            where = f"{run_ref} {s['key']} {labels} max_points={mp}"
            assert len(st) == len(va) <= mp, where
            assert st == sorted(st), where
            for a, b in zip(st, va):
                assert any(close(b, v) for v in by_step.get(a, [])), f"{where}: ({a},{b}) is no point"
            assert st[0] == lo_step and st[-1] == hi_step, f"{where}: ends {st[0]},{st[-1]}"
            assert any(close(v, vmin) for v in va), f"{where}: global min {vmin} missing"
            assert any(close(v, vmax) for v in va), f"{where}: global max {vmax} missing"
        # grouped: one bucket grid, means recomputed here
        if not labels and len(finite) > 10:
            g = call("metrics", {"mode": "grouped", "run_id": run_ref, "key": s["key"],
                                 "max_rows": 7, "token_budget": 8000})
            grp = g["groups"][0]
            w = g["bucket"]
            for b0, mean, cnt in zip(grp["step"], grp["mean"], grp["count"]):
                vals = [v for stp, v in finite if b0 <= stp < b0 + w]
                assert len(vals) == cnt, (run_ref, s["key"], b0, len(vals), cnt)
                assert close(mean, sum(vals) / len(vals)), (run_ref, s["key"], b0)
        checked += 1

srv.stdin.close()
srv.wait(timeout=30)
print(f"checked {checked} real series ({points_total} points) across {len(runs)} runs")
assert checked >= 10, "too few series checked"
subprocess.run(["rm", "-rf", tmp])
