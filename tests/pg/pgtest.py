# SPDX-License-Identifier: MIT
"""What the Python tests of tests/pg share: checks, psql, schemas in the
test cluster, private clusters (pgctl.sh), probe-mcp-http replicas and
JSON-RPC over HTTP. Imported by the scripts next to it (python3 puts a
script's folder on sys.path)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import time

STRICT = os.environ.get("PMCP_TEST_STRICT", "0") not in ("", "0")
failures = []


def need_pg():
    """Exits 77 (skip) without the test cluster's environment, or 1 under
    PMCP_TEST_STRICT."""
    if os.environ.get("PROBE_TEST_PG_URL") and os.environ.get("PROBE_TEST_PG_SERVICE_URL"):
        return
    if STRICT:
        print("PMCP_TEST_STRICT is set but PROBE_TEST_PG_URL is not")
        sys.exit(1)
    sys.exit(77)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def finish(what):
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all %s checks passed" % what)


def psql(url, sql):
    """Runs @p sql (statements split on ';', one -c each: CREATE DATABASE
    may not share a transaction) as the role of @p url."""
    args = ["psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
            "SET client_min_messages=warning"]
    for one in sql.split(";"):
        args += ["-c", one]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise SystemExit("psql: " + r.stderr)
    return r.stdout


def with_schema(url, schema):
    return url + ("&" if "?" in url else "?") + "options=-csearch_path%3D" + schema


class Cluster:
    """A private cluster (pgctl.sh start in a fresh folder), for tests that
    stop, restart or reconfigure the server; stopped and removed on exit.
    .owner / .service are its two roles' URLs, .admin the superuser's."""

    def __init__(self, pgctl):
        self.pgctl = pgctl
        self.dir = tempfile.mkdtemp(prefix="pmcp-pgt-", dir="/tmp")
        os.chmod(self.dir, 0o755)

    def ctl(self, cmd):
        r = subprocess.run(["bash", self.pgctl, cmd, self.dir], capture_output=True, text=True,
                           timeout=180)
        if r.returncode:
            raise SystemExit("pgctl.sh %s: %s" % (cmd, r.stderr))
        return r.stdout

    def __enter__(self):
        urls = dict(re.findall(r"export (\w+)='([^']*)'", self.ctl("start")))
        self.owner = urls["PROBE_TEST_PG_URL"]
        self.service = urls["PROBE_TEST_PG_SERVICE_URL"]
        self.admin = "postgresql:///postgres?host=%s&user=probe_admin" % self.dir
        return self

    def __exit__(self, *exc):
        subprocess.run(["bash", self.pgctl, "stop", self.dir], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)
        return False


def start_http(binary, url, *extra):
    """A stateless probe-mcp-http on a free loopback port: (process, URL)."""
    p = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--store", url, "--stateless",
                          *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    line = ""
    while time.time() < deadline:
        line = p.stdout.readline()
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            return p, m.group(1)
        if p.poll() is not None:
            break
    p.kill()
    raise SystemExit("probe-mcp-http did not start: %s %s" % (line, p.stderr.read()))


def stop_all(procs):
    """SIGTERM, then SIGKILL after 60 s: [(exit status, stderr)]."""
    out = []
    for p in procs:
        p.terminate()
        try:
            rc = p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        out.append((rc, p.stderr.read() if p.stderr else ""))
    return out


def post(base, method, params, key=None, rid=1):
    """One JSON-RPC request: (HTTP status, headers, parsed body or None);
    HTTP errors are answers too."""
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-06-18"}
    if key:
        headers["Authorization"] = "Bearer " + key
    req = urllib.request.Request(base, data=body.encode(), method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            status, hdrs, text = r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        status, hdrs, text = e.code, e.headers, e.read().decode()
    if text.startswith("event:") or text.startswith("data:"):
        text = "\n".join(l[5:] for l in text.splitlines() if l.startswith("data:"))
    return status, hdrs, json.loads(text) if text.strip() else None


def call(base, tool, args, key=None):
    """A tools/call: (the result's JSON text parsed, isError), or
    (None, "HTTP ...") when the request itself was refused."""
    status, _, o = post(base, "tools/call", {"name": tool, "arguments": args}, key)
    if status != 200 or "result" not in (o or {}):
        return None, "HTTP %d %s" % (status, o)
    res = o["result"]
    return json.loads(res["content"][0]["text"]), bool(res.get("isError"))
