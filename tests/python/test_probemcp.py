"""The probemcp Python module against the built libprobemcp: registration
with modes and typed arguments, validation by the engine, results, errors,
budgeted pages whose cursors reach every item exactly once, and serving
stdio from a short host script."""
import json
import os
import subprocess
import sys
import unittest

import probemcp

HERE = os.path.dirname(os.path.abspath(__file__))
INIT = {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}


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


if __name__ == "__main__":
    unittest.main(verbosity=2)
