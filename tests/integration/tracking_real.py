#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tracking toolset on imported real data (tests/data/mlflow-kymatio).

Imports the MLflow sample with the probe CLI, serves it with
probe-mcp-stdio --toolset tracking, and runs seed 001's filter example in
the data's own terms ("scattering_dif runs that either used few samples or
reached a high final accuracy": an eq condition and an any_of group of an
attribute and a series condition). The expected answer is computed here
from the MLflow files themselves (params/, metrics/, meta.yaml), not from
the store. Also checks a series sort, --toolset all and a refusal, and
`matches` (RE2), whose module the server loads only on first use.

usage: tracking_real.py PROBE_CLI PROBE_MCP_STDIO
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

PROBE, STDIO = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
MLRUNS = os.path.join(HERE, "..", "data", "mlflow-kymatio", "mlruns")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def mlflow_runs():
    """Active runs read straight from the MLflow file store."""
    runs = {}
    for exp in sorted(os.listdir(MLRUNS)):
        ed = os.path.join(MLRUNS, exp)
        if not os.path.isdir(ed):
            continue
        for rid in sorted(os.listdir(ed)):
            rd = os.path.join(ed, rid)
            if not os.path.isdir(os.path.join(rd, "params")):
                continue
            meta = open(os.path.join(rd, "meta.yaml")).read()
            if "lifecycle_stage: deleted" in meta:
                continue
            params = {p: open(os.path.join(rd, "params", p)).read().strip()
                      for p in os.listdir(os.path.join(rd, "params"))}
            metrics = {}
            for m in os.listdir(os.path.join(rd, "metrics")):
                rows = [l.split() for l in open(os.path.join(rd, "metrics", m)) if l.strip()]
                # last = the value at the highest step (ties: latest time)
                rows.sort(key=lambda r: (int(r[2]), int(r[0])))
                metrics[m] = float(rows[-1][1])
            runs[rid] = (params, metrics)
    return runs


class Server:
    def __init__(self, store, toolset, env=None):
        self.p = subprocess.Popen([STDIO, "--store", store, "--toolset", toolset],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env)
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
        return json.loads(r["content"][0]["text"]), r.get("isError", False)

    def mapped(self, name):
        """The path of a mapped file whose name contains @name, or None."""
        with open("/proc/%d/maps" % self.p.pid) as f:
            for line in f:
                if name in line and "/" in line:
                    return line[line.index("/"):].strip()
        return None

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def main():
    truth = mlflow_runs()
    check(len(truth) == 4, "the sample holds 4 active runs")
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store.db")
        for cmd in (["init"], ["import", "mlflow", MLRUNS]):
            r = subprocess.run([PROBE, "--store", store, "--quiet", *cmd], capture_output=True)
            check(r.returncode == 0, "probe %s: %s" % (cmd, r.stderr.decode()))
        srv = Server(store, "tracking")
        filt = [
            {"attr": "params/mode", "op": "eq", "value": "scattering_dif"},
            {"any_of": [
                {"attr": "params/num_samples", "op": "lt", "value": 20},
                {"series": "Final Accuracy", "function": "last", "op": "gt", "value": 50},
            ]},
        ]
        out, err = srv.call("list_runs", {"filter": filt, "limit": 100,
                                          "columns": ["sys/name", "params/mode"]})
        check(not err, "list_runs failed: %s" % out)
        got = sorted(r["sys/name"] for r in out.get("rows", []))
        want = sorted(rid for rid, (p, m) in truth.items()
                      if p["mode"] == "scattering_dif" and
                      (int(p["num_samples"]) < 20 or m.get("Final Accuracy", -1) > 50))
        check(got == want, "seed example: got %s, want %s" % (got, want))
        seed_want = want
        check(0 < len(want) < len(truth), "the example selects a proper subset")
        check(out.get("total_count") == len(want), "total_count")

        out, err = srv.call("list_runs", {"limit": 100, "sort": {
            "series": "Final Accuracy", "function": "last", "direction": "desc"}})
        order = [r["sys/name"] for r in out.get("rows", [])]
        want_order = sorted(truth, key=lambda rid: -truth[rid][1]["Final Accuracy"])
        check(order == want_order, "sort by last(Final Accuracy): %s" % order)
        vals = [r.get("last(Final Accuracy)") for r in out.get("rows", [])]
        check(vals == [truth[r][1]["Final Accuracy"] for r in want_order], "summary values")

        # A parameter of numbers with MLflow's "None" among them: numbers
        # first in either direction (ordered by the direction), then strings.
        def num(v):
            try:
                return float(v)
            except ValueError:
                return None
        for direction in ("asc", "desc"):
            out, err = srv.call("list_runs", {"limit": 100, "columns": ["params/lr_scattering"],
                                              "sort": {"attr": "params/lr_scattering",
                                                       "direction": direction}})
            got = [r.get("params/lr_scattering") for r in out.get("rows", [])]
            nums = sorted((num(p["lr_scattering"]) for p, _ in truth.values()
                           if num(p["lr_scattering"]) is not None), reverse=direction == "desc")
            strs = sorted((p["lr_scattering"] for p, _ in truth.values()
                           if num(p["lr_scattering"]) is None), reverse=direction == "desc")
            check(strs and nums, "the sample mixes numbers and strings in lr_scattering")
            check(got == nums + strs, "sort %s by params/lr_scattering: %s, want %s"
                  % (direction, got, nums + strs))

        # matches: RE2, unanchored; the module comes in on first use only.
        check(not srv.mapped("libre2") and not srv.mapped("libprobemcp-re2"),
              "RE2 is not loaded before a pattern is used")
        pat = "^scat+ering_(d|x)"
        out, err = srv.call("list_runs", {"filter": [
            {"attr": "params/mode", "op": "matches", "value": pat}], "limit": 100})
        check(not err, "matches failed: %s" % out)
        got = sorted(r["sys/name"] for r in out.get("rows", []))
        want = sorted(rid for rid, (p, m) in truth.items() if re.search(pat, p["mode"]))
        check(got == want and 0 < len(want) < len(truth), "matches: got %s, want %s" % (got, want))
        check(srv.mapped("libprobemcp-re2"), "the RE2 module is loaded once used")
        out, err = srv.call("list_runs", {"filter": [
            {"attr": "params/mode", "op": "matches", "value": "(unclosed"}]})
        check(err and "invalid RE2 pattern" in out.get("message", ""), "bad pattern: %s" % out)
        lib = srv.mapped("libprobemcp.so")
        if lib:
            # The library alone, without the module beside it: matches is
            # refused with a message saying why, the rest works.
            with tempfile.TemporaryDirectory() as alone:
                # Under every name the loader may ask for (the soname).
                name = os.path.basename(lib)
                while ".so" in name:
                    shutil.copy(lib, os.path.join(alone, name))
                    if name.endswith(".so"):
                        break
                    name = name.rsplit(".", 1)[0]
                env = dict(os.environ, LD_LIBRARY_PATH=alone)
                bare = Server(store, "tracking", env)
                check(bare.mapped(alone), "the copied library is the one in use")
                out, err = bare.call("list_runs", {"filter": [
                    {"attr": "params/mode", "op": "matches", "value": "x"}]})
                check(err and "matches is unavailable" in out.get("message", "")
                      and alone not in out.get("message", ""),
                      "no module: matches refused, no path leaked: %s" % out)
                out, err = bare.call("list_runs", {"filter": filt, "limit": 100})
                check(not err and out.get("total_count") == len(seed_want),
                      "no module: the rest works: %s" % out)
                bare.close()

        out, err = srv.call("list_runs", {"filter": [{"any_of": [{"any_of": []}]}]})
        check(err and "do not nest" in out.get("message", ""), "nesting refused: %s" % out)
        out, err = srv.call("list_runs", {"project": "nope"})
        check(err and "project 'nope' not found" in out.get("message", ""), "missing project")
        tools = [t["name"] for t in srv.rpc("tools/list", {})["result"]["tools"]]
        check("browse" not in tools and "list_runs" in tools, "tracking only: %s" % tools)
        srv.close()

        srv = Server(store, "all")
        tools = [t["name"] for t in srv.rpc("tools/list", {})["result"]["tools"]]
        check("browse" in tools and "list_runs" in tools, "all: %s" % tools)
        srv.close()
        srv = Server(store, "research")
        tools = [t["name"] for t in srv.rpc("tools/list", {})["result"]["tools"]]
        check("browse" in tools and "list_runs" not in tools, "research: %s" % tools)
        srv.close()
    if failures:
        sys.exit(1)
    print("ok")


main()
