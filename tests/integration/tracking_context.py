#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the tracking toolset costs an agent before its first call: the
result of tools/list, counted in o200k_base tokens by `probe tokens count`
(the engine's own tokenizer, itself checked against tiktoken's vectors by
the tokens suite), must stay under a budget; and what the schemas say must
hold: these tools page by offset, so no tool takes a cursor and every
token_budget names next_offset; list_runs' filter and sort have their
structure (the condition forms, the 13 operators, the functions). And
fetch_float_series at the default budget returns whole series per page
with an offset to the rest.

The schemas leave out bounds an agent needs not be told (string lengths,
a count's floor, token_budget's range and default, the size of lists
written by hand): the server still refuses values past them, naming the
argument and the bound.

usage: tracking_context.py PROBE_CLI PROBE_MCP_STDIO [--max-tracking N] [--max-all N]
(default: tracking under 5000, the `all` toolset under 7000)
"""
import json
import os
import subprocess
import sys
import tempfile

PROBE, STDIO = sys.argv[1], sys.argv[2]
opts = dict(zip(sys.argv[3::2], sys.argv[4::2]))
MAX_TRACKING = int(opts.get("--max-tracking", 5000))
MAX_ALL = int(opts.get("--max-all", 7000))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def tools_list(store, toolset):
    p = subprocess.Popen([STDIO, "--store", store, "--toolset", toolset],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}]
    out, err = p.communicate("".join(json.dumps(m) + "\n" for m in msgs), timeout=60)
    if p.returncode:
        raise SystemExit("probe-mcp-stdio --toolset %s: %s" % (toolset, err))
    for line in out.splitlines():
        m = json.loads(line)
        if m.get("id") == 2:
            # the result as the server sent it (its own bytes, not re-encoded)
            raw = line[line.index('"result":') + 9:line.rindex("}")]
            return m["result"], raw
    raise SystemExit("no tools/list answer")


def calls(store, todo):
    """[(tool, arguments)] -> their decoded answers, over one session."""
    p = subprocess.Popen([STDIO, "--store", store, "--toolset", "tracking"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    msgs += [{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
              "params": {"name": n, "arguments": a}} for i, (n, a) in enumerate(todo)]
    out, err = p.communicate("".join(json.dumps(m) + "\n" for m in msgs), timeout=120)
    got = {}
    for line in out.splitlines():
        m = json.loads(line)
        if m.get("id"):
            got[m["id"]] = json.loads(m["result"]["content"][0]["text"])
    return [got.get(i + 1) for i in range(len(todo))]


def whole_series_pages(store):
    """fetch_float_series of 3 runs x 3 series at the default budget: each
    page holds whole series (every point the default asks for: the last
    200, or all of a shorter series, as list_series counts them) and
    offsets lead to all of them."""
    proj = "cifar-resnet"
    runs = ["warmup-2000", "warmup-1000", "hpo-search"]
    keys = ["lr", "val/acc", "train/loss"]
    args = {"project": proj, "runs": runs, "series": keys}
    listed = calls(store, [("list_series", dict(args, limit=100))])[0]
    want = {}
    for x in listed["series"]:
        if x["kind"] == "float":
            want[(x["run"], x["series"], json.dumps(x.get("labels", {}), sort_keys=True))] = x["count"]
    seen, offset, pages = {}, 0, 0
    while offset is not None and pages < 50:
        page = calls(store, [("fetch_float_series", dict(args, offset=offset))])[0]
        pages += 1
        check("entries" in page, "fetch_float_series: %s" % page)
        for e in page.get("entries", []):
            k = (e["run"], e["series"], json.dumps(e.get("labels", {}), sort_keys=True))
            seen[k] = len(e["step"]) + e.get("points_before", 0) + e.get("nonfinite_points", 0)
            check(len(e["step"]) == min(200, want.get(k, -1) - e.get("points_before", 0) -
                                        e.get("nonfinite_points", 0)) or e.get("bucketed"),
                  "entry %s is not whole: %d points" % (k, len(e["step"])))
        if page.get("truncated"):
            check("next_offset" in page.get("hint", ""), "hint %s" % page.get("hint"))
            check(page["count"] >= 1, "a page without a whole series")
        offset = page.get("next_offset")
    check(set(seen) == set(want), "series seen %s, listed %s" % (sorted(seen), sorted(want)))
    check(len(want) >= 3, "listed series %s" % want)
    check(pages > 1, "3 x 3 series at the default budget fit one page: nothing checked")
    # a key none of the runs has is named: noted beside the others, refused alone
    got = calls(store, [("fetch_float_series", dict(args, series=keys + ["val/loss"])),
                        ("fetch_float_series", dict(args, series=["val/loss"])),
                        ("fetch_series_summaries", dict(args, series=["val/loss", "nope"]))])
    check(got[0].get("missing_series") == ["val/loss"] and got[0].get("entries"),
          "a missing key beside others: %s" % str(got[0])[:300])
    for g in got[1:]:
        check(g.get("error") == "not_found" and "val/loss" in g.get("message", "") and
              "list_series" in g.get("message", ""), "only missing keys: %s" % g)


def time_spellings(store):
    """fetch_float_series_buckets' time_from / time_to: every spelling of
    one instant (ISO 8601 with Z, with an offset, without a zone, a date
    alone for midnight, epoch milliseconds) gives the same buckets, and
    what is not a time is refused by name."""
    base = {"project": "cifar-resnet", "runs": ["warmup-2000"], "series": ["lr"],
            "axis": "wall_clock", "buckets": 4}
    # 2024-05-04T03:02:00.250Z = 1714791720250 ms; midnight = 1714780800000
    same = [("2024-05-04T03:02:00.250Z", "2024-05-04T03:10:00Z"),
            ("2024-05-04T05:02:00.250+02:00", "2024-05-03T22:10:00-05:00"),
            ("2024-05-04T03:02:00.25", "2024-05-04 03:10:00"),
            (1714791720250, 1714792200000)]
    todo = [("fetch_float_series_buckets", dict(base, time_from=a, time_to=b)) for a, b in same]
    todo += [("fetch_float_series_buckets", dict(base, time_from="2024-05-04", time_to=b))
             for b in ("2024-05-04T03:10:00Z", 1714792200000)]
    todo += [("fetch_float_series_buckets", dict(base, time_from=1714780800000,
                                                 time_to="2024-05-04T03:10:00Z"))]
    bad = ["yesterday", "2024-13-01", "2024-05-04T25:00:00Z", "2024-05-04T03:00:00Zjunk"]
    todo += [("fetch_float_series_buckets", dict(base, time_from=b)) for b in bad]
    got = calls(store, todo)
    first = got[0]
    check("bucket_edges" in first and first["bucket_edges"][0] == "2024-05-04T03:02:00.250Z" and
          first["bucket_edges"][-1] == "2024-05-04T03:10:00.001Z", "edges %s" % first)
    check(sum(sum(e["count"]) for e in first.get("entries", [])) > 0, "no points in range")
    for (a, b), g in zip(same, got[1:len(same)]):
        check(g == first, "time_from=%r time_to=%r: %s, expected %s" % (a, b, g, first))
    check(got[len(same)] == got[len(same) + 1] == got[len(same) + 2],
          "a date alone is not its midnight: %s" % got[len(same):len(same) + 3])
    for b, g in zip(bad, got[len(same) + 3:]):
        check(g.get("error") == "invalid_argument" and "ISO 8601" in g.get("message", ""),
              "time_from=%r: %s" % (b, g))


def unstated_bounds(store):
    """What the schemas no longer state is still refused, by name."""
    cols = ["c%d" % i for i in range(31)]
    bad = [("list_projects", {"limit": 0}, "limit", "between 1 and 100"),
           ("list_projects", {"offset": -1}, "offset", "at least 0"),
           ("list_projects", {"token_budget": 100}, "token_budget", "between 512 and 8000"),
           ("list_projects", {"token_budget": 9000}, "token_budget", "between 512 and 8000"),
           ("get_run_attributes", {"run": ""}, "run", "between 1 and 200"),
           ("list_runs", {"columns": cols}, "columns", "at most 30"),
           ("list_runs", {"filter": [{"attr": "a", "op": "exists"}] * 65}, "filter", "64"),
           ("fetch_float_series", {"runs": [], "series": ["x"]}, "runs", "1"),
           ("list_projects", {"bogus": 1}, "bogus", "unknown argument")]
    for (tool, args, name, words), got in zip(bad, calls(store, [(t, a) for t, a, _, _ in bad])):
        msg = (got or {}).get("message", "")
        check(got and got.get("error") and name in msg and words in msg,
              "%s %s: %s" % (tool, args if len(json.dumps(args)) < 80 else name, got))


def tokens(text):
    r = subprocess.run([PROBE, "tokens", "count"], input=text, capture_output=True,
                       text=True, timeout=60)
    if r.returncode:
        raise SystemExit("probe tokens count: " + r.stderr)
    return int(r.stdout.split()[0])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store.db")
        r = subprocess.run([PROBE, "--store", store, "--quiet", "demo"], capture_output=True)
        check(r.returncode == 0, "probe demo: %s" % r.stderr.decode())
        result, raw = tools_list(store, "tracking")
        # the result member exactly as sent parses to what was decoded
        check(json.loads(raw) == result, "result text cut out of the answer")
        n = tokens(raw)
        print("tools/list, tracking: %d tools, %d tokens (budget %d)"
              % (len(result["tools"]), n, MAX_TRACKING))
        check(n < MAX_TRACKING, "tracking tools/list costs %d tokens, budget %d"
              % (n, MAX_TRACKING))
        # a count that cannot be trivially small: every tool's own entry counts
        check(n >= sum(tokens(json.dumps(t, separators=(",", ":"))) for t in result["tools"][:3]),
              "the count is below the first tools' own")
        check(len(result["tools"]) >= 23, "%d tracking tools" % len(result["tools"]))
        for t in result["tools"]:
            props = t["inputSchema"]["properties"]
            check("cursor" not in props, "%s takes a cursor" % t["name"])
            tb = props.get("token_budget", {})
            check("next_offset" in tb.get("description", ""),
                  "%s: token_budget does not name next_offset" % t["name"])
        lr = next(t for t in result["tools"] if t["name"] == "list_runs")
        forms = lr["inputSchema"]["properties"]["filter"]["items"]["anyOf"]
        attr = next(f for f in forms if "attr" in f.get("properties", {}))
        ser = next(f for f in forms if "series" in f.get("properties", {}))
        check(len(attr["properties"]["op"]["enum"]) == 13, "attr ops %s" % attr)
        check(set(ser["properties"]["function"]["enum"]) ==
              {"last", "first", "min", "max", "avg", "count"}, "series functions")
        check(any("any_of" in f.get("properties", {}) for f in forms), "no any_of form")
        sort = lr["inputSchema"]["properties"]["sort"]
        check(sort["properties"]["direction"]["enum"] == ["asc", "desc"], "sort %s" % sort)
        whole_series_pages(store)
        unstated_bounds(store)
        time_spellings(store)
        result_all, raw_all = tools_list(store, "all")
        n_all = tokens(raw_all)
        print("tools/list, all: %d tools, %d tokens (budget %d)" % (
            len(result_all["tools"]), n_all, MAX_ALL))
        check(n_all < MAX_ALL, "all tools/list costs %d tokens, budget %d" % (n_all, MAX_ALL))
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok")


main()
