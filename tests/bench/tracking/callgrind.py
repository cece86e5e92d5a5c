#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Callgrind instructions per call of a few tracking tools, two builds side
by side: each call sent 10 times to probe-mcp-stdio under callgrind, minus a
run with no call, divided by the calls.

    python3 tests/bench/tracking/callgrind.py BEFORE_BUILD AFTER_BUILD STORE
    # STORE from `probe --store STORE demo`
"""
import json, subprocess, sys, os, re
INIT = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "cg", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]
def ir(build, store, calls):
    msgs = list(INIT)
    for i, (t, a) in enumerate(calls, 1):
        msgs.append({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": t, "arguments": a}})
    data = "".join(json.dumps(m) + "\n" for m in msgs).encode()
    out = "/tmp/callgrind.tracking.%d" % os.getpid()
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                        build + "/frontends/stdio/probe-mcp-stdio", "--store", store, "--toolset", "all", "--memory-tasks"],
                       input=data, capture_output=True)
    m = re.search(rb"Collected : (\d+)", r.stderr)
    os.unlink(out)
    return int(m.group(1))
if len(sys.argv) != 4:
    sys.exit(__doc__)
store = sys.argv[3]
W = {"workspace": "vision", "project": "cifar-resnet"}
runs = ["baseline-seed0", "baseline-seed1", "warmup-2000", "hpo-search"]
cases = [("list_metrics", dict(W)), ("list_attribute_definitions", dict(W)),
         ("list_runs", dict(W, limit=50, token_budget=8000)),
         ("get_run_attributes", dict(W, run="baseline-seed0")),
         ("fetch_series_summaries", dict(W, runs=runs, series=["val/acc", "train/loss"])),
         ("fetch_histogram_series", dict(W, runs=runs, series=["grad/norm"], token_budget=8000)),
         ("get_doc", {"page": "filters", "token_budget": 1000}),
         ("fetch_float_series_buckets", dict(W, runs=runs, series=["val/acc", "train/loss"])),
         ("fetch_float_series", dict(W, runs=runs[:2], series=["train/loss"], token_budget=8000))]
N = 10
for b in sys.argv[1:3]:
    base = ir(b, store, [])
    row = []
    for t, a in cases:
        row.append((ir(b, store, [(t, a)] * N) - base) // N)
    print(b, "startup", base, " ".join("%s=%d" % (t, v) for (t, _), v in zip(cases, row)))
