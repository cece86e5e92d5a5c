#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tracking toolset's RL and histogram tools on the demo lab.

Fills a store with `probe demo` (the PPO runs: four environments, returns
on EPISODE, losses on ENVIRONMENT_STEP, environment attributes versioned by
episode), adds an environment attribute with `probe put env-attribute`,
serves it with probe-mcp-stdio --toolset all and checks the RL tools
against other paths to the same numbers: bucket means of
fetch_rl_env_series_buckets against exact points from fetch_float_series;
aggregate_rl_env_series against the research `metrics` tool's grouped
mode with across; fetch_histogram_series' statistics against the bins and
against fetch_float_series' histogram_statistic. Also the versions by
episode and a refusal.

usage: tracking_rl_demo.py PROBE_CLI PROBE_MCP_STDIO
"""
import json
import os
import subprocess
import sys
import tempfile

PROBE, STDIO = sys.argv[1], sys.argv[2]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def close(a, b):
    return abs(a - b) <= 1e-5 * max(1.0, abs(b))


class Server:
    def __init__(self, store, toolset):
        self.p = subprocess.Popen([STDIO, "--store", store, "--toolset", toolset],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
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

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store.db")
        r = subprocess.run([PROBE, "--store", store, "--quiet", "demo"], capture_output=True)
        check(r.returncode == 0, "probe demo: %s" % r.stderr.decode())
        rec = json.dumps({"run": "ppo-seed1", "env": "2", "path": "env/level",
                          "value": "expert", "episode": 250})
        r = subprocess.run([PROBE, "--store", store, "put", "env-attribute", rec],
                           capture_output=True)
        check(r.returncode == 0, "probe put env-attribute: %s" % r.stderr.decode())
        bad = json.dumps({"run": "ppo-seed1", "env": "2", "path": "sys/id", "value": "x"})
        r = subprocess.run([PROBE, "--store", store, "put", "env-attribute", bad],
                           capture_output=True)
        check(r.returncode != 0 and b"reserved" in r.stderr, "sys/ paths refused by probe put")
        srv = Server(store, "all")

        out, err = srv.call("get_rl_info", {"run": "ppo-seed0"})
        check(not err and out["environment_count"] == 4, "get_rl_info: %s" % out)
        check(out.get("latest_episode") == 299 and out.get("latest_rl_step") == 399 * 512,
              "latest episode and step: %s" % out)

        # versions by episode: the demo moves env 1 to "hard" at episode 200
        levels = []
        for ep in (199, 200):
            out, err = srv.call("get_rl_environment_attributes",
                                {"run": "ppo-seed0", "environment": "1", "episode": ep,
                                 "paths": ["env/level"]})
            levels.append(out["attributes"][0]["value"] if not err else out)
        check(levels == ["easy", "hard"], "env/level as of 199 and 200: %s" % levels)
        out, err = srv.call("get_rl_environment_attributes",
                            {"run": "ppo-seed1", "environment": "2", "history": True,
                             "paths": ["env/level"]})
        got = [(v["episode"], v["value"]) for v in out.get("versions", [])]
        check(got == [(0, "hard"), (250, "expert")], "history with the CLI's version: %s" % got)

        # bucket means against exact points
        out, err = srv.call("fetch_rl_env_series_buckets",
                            {"run": "ppo-seed0", "series": ["episode/return"],
                             "scale": "EPISODE", "buckets": 6})
        check(not err and out["total_count"] == 4, "buckets: %s" % out)
        for entry in out.get("entries", []):
            env = entry["environment"]
            pts, err = srv.call("fetch_float_series",
                                {"runs": ["ppo-seed0"], "series": ["episode/return"],
                                 "scale": "EPISODE", "labels": {"env": env},
                                 "step_from": 0, "step_to": 299, "max_points": 1000,
                                 "token_budget": 8000})
            e = pts["entries"][0] if not err and pts["entries"] else {}
            steps, vals = e.get("step", []), e.get("value", [])
            check(len(steps) == 300, "300 exact points of env %s" % env)
            for b, start in enumerate(entry["episode"]):
                inb = [v for s, v in zip(steps, vals) if start <= s < start + 50]
                check(close(entry["mean"][b], sum(inb) / len(inb)),
                      "env %s bucket %d mean %s vs %s" % (env, start, entry["mean"][b],
                                                           sum(inb) / len(inb)))
                check(entry["max"][b] == max(inb) and entry["count"][b] == len(inb),
                      "env %s bucket %d max/count" % (env, start))

        # across-environment reductions agree with the research metrics tool
        for fn in ("avg", "median", "std"):
            agg, err = srv.call("aggregate_rl_env_series",
                                {"run": "ppo-seed0", "series": "episode/return",
                                 "scale": "EPISODE", "buckets": 6, "function": fn})
            check(not err and agg.get("bucket_width") == 50, "aggregate %s: %s" % (fn, agg))
            res, err = srv.call("metrics", {"mode": "grouped", "run_id": "ppo-seed0",
                                            "key": "episode/return", "scale": "episode",
                                            "step_bucket": 50, "across": fn})
            check(not err, "metrics grouped: %s" % res)
            g1 = agg["groups"][0] if not err and agg.get("groups") else {}
            g2 = res["groups"][0] if not err and res.get("groups") else {}
            check(g1.get("episode") == g2.get("step"), "same buckets")
            check(len(g1.get(fn, [])) == 6 and
                  all(close(a, b) for a, b in zip(g1.get(fn, []), g2.get(fn, []))),
                  "%s: %s vs %s" % (fn, g1.get(fn), g2.get(fn)))

        # grouped by an attribute: env/level splits easy {0} from hard {1, 2, 3}
        agg, err = srv.call("aggregate_rl_env_series",
                            {"run": "ppo-seed0", "series": "episode/return", "scale": "EPISODE",
                             "group_by": "env/level", "buckets": 3})
        got = {json.dumps(g["group"]): g["environments"] for g in agg.get("groups", [])}
        check(got == {'{"env/level": "easy"}': ["0"], '{"env/level": "hard"}': ["1", "2", "3"]},
              "groups: %s" % got)

        # histograms: statistics from the bins, and as fetch_float_series reads them
        out, err = srv.call("fetch_histogram_series",
                            {"runs": ["baseline-seed0"], "series": ["grad/norm"], "limit": 100,
                             "token_budget": 8000})
        check(not err and out["total_count"] == 8 and out["count"] == 8, "histograms: %s" % out)
        means = []
        for h in out.get("histograms", []):
            e, c = h["edges"], h["counts"]
            tot = sum(c)
            mean = sum(ci * (e[i] + e[i + 1]) / 2 for i, ci in enumerate(c)) / tot
            check(close(h["stats"]["mean"], mean) and close(h["stats"]["total"], tot),
                  "histogram at %s: %s vs %s" % (h["step"], h["stats"], mean))
            means.append(mean)
        out, err = srv.call("fetch_float_series",
                            {"runs": ["baseline-seed0"], "series": ["grad/norm"],
                             "histogram_statistic": "mean"})
        vals = out["entries"][0]["value"] if not err and out.get("entries") else []
        check(len(vals) == len(means) and all(close(a, b) for a, b in zip(vals, means)),
              "histogram_statistic mean: %s vs %s" % (vals, means))

        out, err = srv.call("aggregate_rl_env_series",
                            {"run": "ppo-seed0", "series": "loss/value", "scale": "EPISODE"})
        check(err and "ENVIRONMENT_STEP" in out.get("message", ""), "wrong scale named: %s" % out)
        out, err = srv.call("fetch_float_series", {"runs": ["ppo-seed0"],
                                                   "series": ["episode/return"]})
        check(err and "need their scale" in out.get("message", ""), "scale required: %s" % out)
        srv.close()
    if failures:
        print("%d failure(s)" % failures)
        sys.exit(1)
    print("ok")


main()
