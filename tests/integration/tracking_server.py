# SPDX-License-Identifier: MIT
"""What the tracking tests share: probe-mcp-stdio as a session (Server)
and a store on a new schema of the PostgreSQL test cluster (pg_store)."""
import json
import os
import secrets
import subprocess
import sys


class Server:
    """One probe-mcp-stdio session on @store serving @toolset."""

    def __init__(self, stdio, store, toolset="tracking"):
        self.p = subprocess.Popen([stdio, "--store", store, "--toolset", toolset],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.id = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "t", "version": "1"}})
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def rpc(self, method, params):
        self.id += 1
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method,
                                        "params": params}) + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("server ended: " + self.p.stderr.read().decode())
            m = json.loads(line)
            if m.get("id") == self.id:
                return m

    def call(self, name, args):
        """(the answer's JSON text decoded, whether it is an error)"""
        m = self.rpc("tools/call", {"name": name, "arguments": args})
        if "result" not in m:
            return {"message": json.dumps(m.get("error"))}, True
        r = m["result"]
        text = next(c["text"] for c in r["content"] if c["type"] == "text")
        return json.loads(text), r.get("isError", False)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def pg_store(prefix):
    """With PMCP_TEST_STORE=pg: (store URL, schema) of a new schema of the
    test cluster (exits 77, skipped, without one); else (None, None)."""
    if os.environ.get("PMCP_TEST_STORE") != "pg":
        return None, None
    url = os.environ.get("PROBE_TEST_PG_URL")
    if not url:
        sys.exit(1 if os.environ.get("PMCP_TEST_STRICT", "0") not in ("", "0") else 77)
    schema = "%s_%s" % (prefix, secrets.token_hex(4))
    subprocess.run(["psql", url, "-X", "-q", "-c", "CREATE SCHEMA " + schema], check=True,
                   capture_output=True)
    return url + ("&" if "?" in url else "?") + "options=-csearch_path%3D" + schema, schema


def pg_drop(schema):
    subprocess.run(["psql", os.environ["PROBE_TEST_PG_URL"], "-X", "-q", "-c",
                    "DROP SCHEMA %s CASCADE" % schema], capture_output=True)
