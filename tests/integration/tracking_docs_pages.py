#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The pages list_docs / get_doc serve name only what exists: read through
the tools themselves (every page, every piece), each JSON example must be
a call of a tool of tools/list with arguments its schema has (filter
conditions with the filter schema's keys, operators and functions), and
must answer without an error and with something on the demo lab; each
name in `code` (a tool, an argument, an operator, a scale, an answer's
field, an attribute path or a metric) must be one tools/list, the
examples' answers or the demo lab have. No project-internal vocabulary.

usage: tracking_docs_pages.py PROBE_CLI PROBE_MCP_STDIO
"""
import json
import os
import re
import subprocess
import sys
import tempfile

PROBE, STDIO = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracking_server import Server  # noqa: E402
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def keys_of(o, out):
    if isinstance(o, dict):
        for k, v in o.items():
            out.add(k)
            keys_of(v, out)
    elif isinstance(o, list):
        for v in o:
            keys_of(v, out)


def schema_words(o, names, enums):
    """Property names and enum values anywhere in a schema."""
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "properties":
                names.update(v)
            if k == "enum":
                enums.update(v)
            schema_words(v, names, enums)
    elif isinstance(o, list):
        for v in o:
            schema_words(v, names, enums)


def check_filter(where, filt, forms):
    """Each condition against the filter schema's forms."""
    for c in filt:
        members = c["any_of"] if "any_of" in c else [c]
        if "any_of" in c and set(c) != {"any_of"}:
            fail("%s: any_of with other keys %s" % (where, c))
        for m in members:
            form = next((f for f in forms if ("attr" in m) == ("attr" in f["properties"]) and
                         ("series" in m) == ("series" in f["properties"])), None)
            if not form:
                fail("%s: condition %s has no form" % (where, m))
                continue
            props = form["properties"]
            for k, v in m.items():
                if k not in props:
                    fail("%s: %s is no key of a condition" % (where, k))
                elif "enum" in props[k] and v not in props[k]["enum"]:
                    fail("%s: %s %r is not one of %s" % (where, k, v, props[k]["enum"]))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src_src = open(os.path.join(here, "..", "..", "libprobemcp", "src", "tracking",
                                "fetch.c")).read()
    src_src += "".join(open(os.path.join(here, "..", "..", "libprobemcp", "src", "tracking",
                                         f)).read()
                       for f in ("buckets.c", "hist.c", "rl.c", "rl_env.c", "rl_series.c",
                                 "runs.c", "discovery.c", "docs.c", "tracking.c"))
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store.db")
        subprocess.run([PROBE, "--store", store, "--quiet", "demo"], check=True,
                       capture_output=True)
        srv = Server(STDIO, store)
        tools = {t["name"]: t for t in srv.rpc("tools/list", {})["result"]["tools"]}
        names, enums = set(), set()
        schema_words([t["inputSchema"] for t in tools.values()], names, enums)
        forms = tools["list_runs"]["inputSchema"]["properties"]["filter"]["items"]["anyOf"]
        # the demo lab's attribute paths and metric names
        lab = set()
        projects, _ = srv.call("list_projects", {"limit": 100})
        for p in projects["projects"]:
            for tool, field, key in (("list_attribute_definitions", "attributes", "path"),
                                     ("list_metrics", "metrics", "name"),
                                     ("list_rl_metrics", "metrics", "name"),
                                     ("list_rl_attribute_definitions", "attributes", "path")):
                o, err = srv.call(tool, {"project": p["project"], "limit": 100})
                lab.update(x[key] for x in o.get(field, []))
        docs, err = srv.call("list_docs", {"limit": 100})
        check = docs.get("docs", [])
        if len(check) < 4:
            fail("list_docs: %s" % docs)
        answers = set()
        spans = []
        n_examples = 0
        for d in check:
            text, offset = "", 0
            while offset is not None:
                piece, err = srv.call("get_doc", {"page": d["page"], "offset": offset})
                if err:
                    fail("get_doc %s: %s" % (d["page"], piece))
                    break
                text += piece["markdown"]
                offset = piece.get("next_offset")
            bad = re.findall(r"(?i)\bseed \d+|\bthe seeds?\b|\bissue\b|#\d+|\bhelper\b|pmcp_|"
                             r"libprobemcp|\bman page", text)
            if bad:
                fail("%s names project-internal things: %s" % (d["page"], bad))
            blocks = re.findall(r"```json\n(.*?)```", text, re.S)
            prose = re.sub(r"```.*?```", "", text, flags=re.S)
            spans += [(d["page"], s) for s in re.findall(r"`([^`\n]+)`", prose)]
            for b in blocks:
                n_examples += 1
                where = "%s example %d" % (d["page"], n_examples)
                try:
                    ex = json.loads(b)
                except ValueError as e:
                    fail("%s is not JSON: %s" % (where, e))
                    continue
                tool, args = ex.get("tool"), ex.get("arguments", {})
                if tool not in tools or set(ex) != {"tool", "arguments"}:
                    fail("%s: no tool %r" % (where, tool))
                    continue
                props = tools[tool]["inputSchema"]["properties"]
                for k in args:
                    if k not in props:
                        fail("%s: %s takes no %s" % (where, tool, k))
                if "filter" in args:
                    check_filter(where, args["filter"], forms)
                if "sort" in args:
                    sp = tools["list_runs"]["inputSchema"]["properties"]["sort"]["properties"]
                    for k, v in args["sort"].items():
                        if k not in sp and k not in ("scale", "labels"):
                            fail("%s: sort takes no %s" % (where, k))
                        elif k in sp and "enum" in sp[k] and v not in sp[k]["enum"]:
                            fail("%s: sort %s %r" % (where, k, v))
                out, err = srv.call(tool, args)
                if err or not (out.get("count") or out.get("total_count")):
                    fail("%s: %s answers %s" % (where, tool, json.dumps(out)[:300]))
                keys_of(out, answers)
        if n_examples < 8:
            fail("only %d examples" % n_examples)
        vocab = set(tools) | names | enums | answers
        n_checked = 0
        for page, s in spans:
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s):
                n_checked += 1
                # an answer field the examples did not show: one the tools write
                if s not in vocab and '"%s"' % s not in src_src:
                    fail("%s names `%s`: no tool, argument, operator or answer field" % (page, s))
            elif re.fullmatch(r"[a-z_]+(/[a-z_.]+)+", s):
                n_checked += 1
                if s not in lab and s not in vocab:
                    fail("%s names `%s`: no attribute or metric of the demo lab" % (page, s))
        if n_checked < 80:
            fail("only %d names checked" % n_checked)
        print("%d pages, %d examples, %d names checked" % (len(check), n_examples, n_checked))
        srv.close()
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok")


main()
