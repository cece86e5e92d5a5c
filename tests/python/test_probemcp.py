# SPDX-License-Identifier: MIT
"""The probemcp Python module against the built libprobemcp: registration
with modes and typed arguments, validation by the engine, results, errors,
budgeted pages whose cursors reach every item exactly once, and serving
stdio from a short host script; in both protocol eras (a 2025-11-25
session opened by initialize, and self-contained 2026-07-28 requests with
their _meta) on one server at once."""
import json
import os
import subprocess
import sys
import unittest

import probemcp

HERE = os.path.dirname(os.path.abspath(__file__))
INIT = {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
META = {PV: "2026-07-28", CAPS: {}}


def make_server():
    srv = probemcp.Server("pytest", version="9.9", instructions="for tests")

    @srv.tool("greet", "Greets someone.", read_only=True,
              args=[probemcp.Arg("name", "string", required=True, max=20),
                    probemcp.Arg("times", "integer", min=1, max=3, default=1),
                    probemcp.Arg("loud", "boolean", default=False),
                    probemcp.Arg("tags", "string[]")])
    def greet(call):
        text = " ".join(["hello " + call.args["name"]] * call.args["times"])
        if call.args["loud"]:
            text = text.upper()
        if "tags" in call.args:
            return {"text": text, "tags": call.args["tags"]}
        return text

    @srv.tool("numbers", "Numbers in two modes.", budgeted=True, read_only=True,
              modes=[probemcp.Mode("list", "0..n-1, paged",
                                   [probemcp.Arg("n", "integer", required=True, min=1,
                                                 max=100000)]),
                     probemcp.Mode("sum", "sum of values",
                                   [probemcp.Arg("values", "number[]", required=True)])])
    def numbers(call):
        page = call.page()
        if call.mode == "sum":
            page.field("sum", sum(call.args["values"]))
            return
        start = int(page.position or b"0")
        page.list("numbers")
        n = call.args["n"]
        i = start
        while i < n and page.add({"i": i, "square": i * i}, resume=str(i + 1).encode()):
            i += 1
        page.finish(more=i < n)

    @srv.tool("boom", "Always fails.")
    def boom(call):
        raise ValueError("no luck")

    srv.request("initialize", INIT)
    srv.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return srv


def call(srv, name, arguments):
    r = srv.request("tools/call", {"name": name, "arguments": arguments})
    return r


class ProbeMcpTest(unittest.TestCase):
    def setUp(self):
        self.srv = make_server()

    def tearDown(self):
        self.srv.close()

    def test_version_and_initialize(self):
        self.assertRegex(probemcp.library_version(), r"^\d+\.\d+")
        r = self.srv.request("initialize", INIT, session="other")
        self.assertEqual(r["result"]["serverInfo"]["name"], "pytest")
        self.assertEqual(r["result"]["serverInfo"]["version"], "9.9")
        self.assertEqual(r["result"]["instructions"], "for tests")

    def test_tools_list_schemas(self):
        tools = {t["name"]: t for t in self.srv.request("tools/list")["result"]["tools"]}
        self.assertEqual(set(tools), {"greet", "numbers", "boom"})
        g = tools["greet"]["inputSchema"]
        self.assertEqual(g["required"], ["name"])
        self.assertEqual(g["properties"]["times"]["maximum"], 3)
        self.assertTrue(tools["greet"]["annotations"]["readOnlyHint"])
        n = tools["numbers"]["inputSchema"]["properties"]
        self.assertEqual(sorted(n["mode"]["enum"]), ["list", "sum"])
        self.assertIn("token_budget", n)
        self.assertIn("cursor", n)

    def test_results_and_defaults(self):
        r = call(self.srv, "greet", {"name": "ada"})["result"]
        self.assertEqual(r["content"], [{"type": "text", "text": "hello ada"}])
        r = call(self.srv, "greet", {"name": "ada", "times": 2, "loud": True})["result"]
        self.assertEqual(r["content"][0]["text"], "HELLO ADA HELLO ADA")
        r = call(self.srv, "greet", {"name": "x", "tags": ["a", "b"]})["result"]
        self.assertEqual(r["structuredContent"], {"text": "hello x", "tags": ["a", "b"]})

    def test_engine_validates_before_the_callable(self):
        for bad in ({}, {"name": 3}, {"name": "a", "times": 9}, {"name": "a", "extra": 1},
                    {"name": "a" * 21}):
            r = call(self.srv, "greet", bad)
            text = json.dumps(r)
            self.assertTrue("error" in r or r["result"].get("isError"), text)
            self.assertNotIn("hello", text)

    def test_exception_is_an_error_result(self):
        r = call(self.srv, "boom", {})["result"]
        self.assertTrue(r["isError"])
        self.assertIn("ValueError: no luck", r["content"][0]["text"])

    def test_modes(self):
        r = call(self.srv, "numbers", {"mode": "sum", "values": [1, 2.5]})["result"]
        self.assertEqual(r["structuredContent"]["sum"], 3.5)
        r = call(self.srv, "numbers", {"mode": "sum", "n": 3})
        self.assertIn("n", json.dumps(r))  # an argument the mode does not read

    def test_pages_reach_every_item_once(self):
        seen, cursor, pages = [], None, 0
        while True:
            args = {"mode": "list", "n": 700, "token_budget": 512}
            if cursor:
                args["cursor"] = cursor
            r = call(self.srv, "numbers", args)["result"]
            self.assertFalse(r.get("isError"), r)
            obj = json.loads(r["content"][0]["text"])
            self.assertEqual(obj, r["structuredContent"])
            self.assertEqual(obj["count"], len(obj["numbers"]))
            seen += [x["i"] for x in obj["numbers"]]
            pages += 1
            cursor = obj.get("next_cursor")
            self.assertEqual(obj["truncated"], cursor is not None)
            if not cursor:
                break
        self.assertEqual(seen, list(range(700)))
        self.assertGreater(pages, 5)
        # a cursor of other arguments is refused, not a page of something else
        r = call(self.srv, "numbers", {"mode": "list", "n": 5, "cursor": "bogus"})["result"]
        self.assertTrue(r["isError"])

    def test_serve_stdio_host(self):
        host = os.path.join(HERE, "..", "..", "examples", "python", "host.py")
        msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "count", "arguments": {"n": 3}}},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}]
        inp = "".join(json.dumps(m) + "\n" for m in msgs).encode()
        p = subprocess.run([sys.executable, host], input=inp, capture_output=True,
                           timeout=60, env=os.environ)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        out = {m["id"]: m for m in map(json.loads, p.stdout.decode().splitlines())}
        self.assertEqual(set(out), {1, 2, 3})
        obj = out[2]["result"]["structuredContent"]
        self.assertEqual([x["i"] for x in obj["numbers"]], [0, 1, 2])
        self.assertEqual(out[3]["result"]["tools"][0]["name"], "count")


def numbers_pages(request, n=700):
    """Every page of numbers/list through @request(params) -> response."""
    seen, cursor, pages = [], None, 0
    while pages < 1000:
        args = {"mode": "list", "n": n, "token_budget": 512}
        if cursor:
            args["cursor"] = cursor
        r = request({"name": "numbers", "arguments": args})
        obj = r["result"]["structuredContent"]
        seen += [x["i"] for x in obj["numbers"]]
        pages += 1
        cursor = obj.get("next_cursor")
        if not cursor:
            return seen, pages
    raise AssertionError("no end of pages")


class ErasTest(unittest.TestCase):
    """The same server answers a legacy session and modern requests."""

    def setUp(self):
        self.srv = make_server()  # its default session is initialized

    def tearDown(self):
        self.srv.close()

    def test_versions(self):
        vs = probemcp.protocol_versions()
        self.assertEqual(vs[0], "2026-07-28")
        self.assertIn("2025-11-25", vs)
        self.assertEqual(probemcp.protocol_era("2026-07-28"), "modern")
        self.assertEqual(probemcp.protocol_era("2025-06-18"), "legacy")
        self.assertIsNone(probemcp.protocol_era("1999-01-01"))
        self.assertEqual(self.srv.session_protocol(), "2025-11-25")
        self.assertIsNone(self.srv.session_protocol("never-opened"))

    def test_discover(self):
        r = self.srv.modern_request("server/discover")["result"]
        # the versions spoken per request (older ones through initialize)
        self.assertEqual(r["supportedVersions"],
                         [v for v in probemcp.protocol_versions()
                          if probemcp.protocol_era(v) == "modern"])
        self.assertIn("2026-07-28", r["supportedVersions"])
        self.assertIn("tools", r["capabilities"])
        self.assertEqual(r["instructions"], "for tests")
        self.assertEqual(r["resultType"], "complete")
        self.assertIn(r["cacheScope"], ("public", "private"))
        self.assertIsInstance(r["ttlMs"], int)
        self.assertEqual(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "pytest")

    def test_modern_calls_without_initialize(self):
        # a fresh server: nothing initialized, every request stands alone
        with probemcp.Server("fresh", version="1") as srv:
            srv.add_tool("hi", "Says hi.", lambda call: "hi", read_only=True)
            tools = srv.modern_request("tools/list")["result"]
            self.assertEqual([t["name"] for t in tools["tools"]], ["hi"])
            self.assertEqual(tools["resultType"], "complete")
            r = srv.modern_request("tools/call", {"name": "hi", "arguments": {}})["result"]
            self.assertEqual(r["content"], [{"type": "text", "text": "hi"}])
            self.assertEqual(r["resultType"], "complete")
            self.assertEqual(r["_meta"]["io.modelcontextprotocol/serverInfo"]["version"], "1")
            # the modern requests opened no session
            self.assertIsNone(srv.session_protocol())

    def test_modern_meta_is_required_and_checked(self):
        r = self.srv.request("tools/call", {"name": "greet", "arguments": {"name": "a"},
                                            "_meta": {PV: "2026-07-28"}})
        self.assertEqual(r["error"]["code"], -32602)
        self.assertIn("clientCapabilities", r["error"]["message"])
        r = self.srv.request("server/discover", {"_meta": {PV: "2031-01-01", CAPS: {}}})
        self.assertEqual(r["error"]["code"], -32022)
        self.assertIn("2026-07-28", json.dumps(r["error"]["data"]))

    def test_same_answers_in_both_eras(self):
        legacy = call(self.srv, "greet", {"name": "ada", "times": 2})["result"]
        modern = self.srv.modern_request("tools/call", {"name": "greet",
                                                        "arguments": {"name": "ada", "times": 2}})
        self.assertEqual(modern["result"]["content"], legacy["content"])
        bad = self.srv.modern_request("tools/call", {"name": "greet", "arguments": {"name": 3}})
        self.assertTrue("error" in bad or bad["result"].get("isError"), bad)
        boom = self.srv.modern_request("tools/call", {"name": "boom", "arguments": {}})["result"]
        self.assertTrue(boom["isError"])
        self.assertIn("ValueError: no luck", boom["content"][0]["text"])

    def test_pages_in_both_eras(self):
        legacy, lp = numbers_pages(lambda p: self.srv.request("tools/call", p))
        modern, mp = numbers_pages(lambda p: self.srv.modern_request("tools/call", p))
        self.assertEqual(legacy, list(range(700)))
        self.assertEqual(modern, list(range(700)))
        self.assertEqual(lp, mp)
        self.assertGreater(mp, 5)
        # a cursor handed out in one era continues in the other: the cursor
        # belongs to the tool's arguments, not to the era
        first = self.srv.modern_request("tools/call", {"name": "numbers", "arguments": {
            "mode": "list", "n": 700, "token_budget": 512}})["result"]["structuredContent"]
        nxt = call(self.srv, "numbers", {"mode": "list", "n": 700, "token_budget": 512,
                                         "cursor": first["next_cursor"]})["result"]
        self.assertEqual(nxt["structuredContent"]["numbers"][0]["i"], len(first["numbers"]))

    def test_serve_stdio_both_eras(self):
        host = os.path.join(HERE, "..", "..", "examples", "python", "host.py")
        msgs = [{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "count", "arguments": {"n": 3}, "_meta": META}},
                {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": INIT},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                 "params": {"name": "count", "arguments": {"n": 3}}},
                {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                 "params": {"name": "count", "arguments": {"n": 2}, "_meta": META}}]
        inp = "".join(json.dumps(m) + "\n" for m in msgs).encode()
        p = subprocess.run([sys.executable, host], input=inp, capture_output=True,
                           timeout=60, env=os.environ)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        out = {m["id"]: m for m in map(json.loads, p.stdout.decode().splitlines())}
        self.assertEqual(set(out), {1, 2, 3, 4, 5})
        self.assertIn("2026-07-28", out[1]["result"]["supportedVersions"])
        self.assertEqual(out[3]["result"]["protocolVersion"], "2025-11-25")
        for k, n in ((2, 3), (4, 3), (5, 2)):
            obj = out[k]["result"]["structuredContent"]
            self.assertEqual([x["i"] for x in obj["numbers"]], list(range(n)), k)
        self.assertEqual(out[2]["result"]["resultType"], "complete")
        self.assertEqual(out[5]["result"]["resultType"], "complete")
        self.assertNotIn("resultType", out[4]["result"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
