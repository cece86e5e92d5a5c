#!/usr/bin/env python3
"""PostgreSQL stops and comes back in the middle of a run (issue 9):

  outage.py PROBE PROBE_MCP_HTTP PROBE_MCP_STDIO PGCTL

On a private cluster of its own (pgctl.sh, so the other tests' cluster is
left alone): the demo lab, a key, two authenticated replicas A and B and
one replica C without authentication (loopback only), all stateless.
A listing is paged on A; then the server stops. While it is down:
  - A and B answer a request with a valid key 503 + Retry-After with a
    retryable JSON-RPC error saying the store is unavailable -- never 401,
    which would tell the client to throw its credential away; a request
    without a key still gets 401 (nothing to check);
  - C answers a tool call with a tool error naming PostgreSQL, and no
    database internals (SQL text, relation names);
  - a new probe-mcp-stdio or `probe` refuses to start, exit 1, saying it
    cannot connect;
  - no replica dies.
The server comes back: the cursor made on A before the outage continues
on B, page for page as A would have, C answers again, and the revoked key
(revoked after the restart through the CLI) is refused by both. Each
replica exits 0 on SIGTERM (under ASan: no leak). Skips (77) without
PROBE_TEST_PG_URL (no PostgreSQL for tests) unless PMCP_TEST_STRICT is set."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

PROBE, HTTP, STDIO, PGCTL = sys.argv[1:5]
STRICT = os.environ.get("PMCP_TEST_STRICT", "0") not in ("", "0")
if not os.environ.get("PROBE_TEST_PG_URL"):
    if STRICT:
        print("PMCP_TEST_STRICT is set but PROBE_TEST_PG_URL is not")
        sys.exit(1)
    sys.exit(77)

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def pgctl(cmd, d):
    r = subprocess.run(["bash", PGCTL, cmd, d], capture_output=True, text=True, timeout=180)
    if r.returncode:
        raise SystemExit("pgctl.sh %s: %s" % (cmd, r.stderr))
    return r.stdout


def start(url, *extra):
    p = subprocess.Popen([HTTP, "--listen", "127.0.0.1:0", "--store", url, "--stateless",
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
    raise SystemExit("replica did not start: %s %s" % (line, p.stderr.read()))


def post(base, method, params, key):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
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


def call(base, key, tool, args):
    status, _, o = post(base, "tools/call", {"name": tool, "arguments": args}, key)
    if status != 200 or "result" not in (o or {}):
        return None, "HTTP %d %s" % (status, o)
    res = o["result"]
    return json.loads(res["content"][0]["text"]), bool(res.get("isError"))


LEAKS = re.compile(r'(SELECT|INSERT|UPDATE|relation "|\bFROM\b|metric_chunks|search_docs)')

d = tempfile.mkdtemp(prefix="pmcp-pgo-", dir="/tmp")
os.chmod(d, 0o755)
procs = []
try:
    try:
        env = pgctl("start", d)
    except SystemExit as e:
        if STRICT:
            raise
        print("skipped: %s" % e)
        sys.exit(77)
    urls = dict(re.findall(r"export (\w+)='([^']*)'", env))
    owner, service = urls["PROBE_TEST_PG_URL"], urls["PROBE_TEST_PG_SERVICE_URL"]
    r = subprocess.run([PROBE, "--store", owner, "--quiet", "demo"], capture_output=True,
                       text=True)
    check(r.returncode == 0, "probe demo fills the private cluster's store " + r.stderr.strip())
    r = subprocess.run([PROBE, "--store", owner, "--quiet", "key", "create", "--name", "outage",
                        "--json"], capture_output=True, text=True)
    check(r.returncode == 0, "probe key create " + r.stderr.strip())
    made = json.loads(r.stdout)
    key = made["secret"]
    a, url_a = start(service)
    b, url_b = start(service)
    c, url_c = start(service, "--insecure-no-auth")
    procs = [a, b, c]

    args = {"mode": "runs", "token_budget": 512}
    p1, err = call(url_a, key, "browse", args)
    check(err is False and p1.get("next_cursor"), "A pages the run listing (%s)" % err)
    cur = p1["next_cursor"]
    p2, err = call(url_a, key, "browse", dict(args, cursor=cur))
    check(err is False, "A continues its own cursor")
    c1, err = call(url_c, None, "browse", args)
    check(err is False and c1.get("next_cursor"), "C (no authentication) pages it too")

    pgctl("halt", d)
    for name, u in (("A", url_a), ("B", url_b)):
        status, hdrs, o = post(u, "tools/call", {"name": "browse", "arguments": args}, key)
        msg = json.dumps(o)
        check(status == 503, "replica %s: store down -> 503, not 401 (got %d)" % (name, status))
        check(hdrs.get("Retry-After") is not None and "WWW-Authenticate" not in hdrs,
              "replica %s: Retry-After, no authentication challenge" % name)
        err = (o or {}).get("error", {})
        check("unavailable" in err.get("message", "") and
              (err.get("data") or {}).get("retryable") is True,
              "replica %s: a retryable error saying the store is unavailable: %s" % (name, msg))
        status, hdrs, _ = post(u, "tools/list", {}, None)
        check(status == 401 and "WWW-Authenticate" in hdrs,
              "replica %s: no key while the store is down is still 401" % name)
    o, err = call(url_c, None, "browse", args)
    text = json.dumps(o)
    check(err is True and "PostgreSQL" in text and not LEAKS.search(text),
          "replica C: a tool error naming PostgreSQL, no SQL: %s" % text[:300])
    o, err = call(url_c, None, "query_sql", {"sql": "SELECT count(*) FROM runs"})
    text = json.dumps(o)
    check(err is True and "cannot be reached" in text and not LEAKS.search(text),
          "replica C: query_sql fails clearly: %s" % text[:300])
    r = subprocess.run([STDIO, "--store", service], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 1 and "cannot connect to PostgreSQL" in r.stderr,
          "probe-mcp-stdio started while the server is down: exit 1, says so (%d %s)"
          % (r.returncode, r.stderr.strip()))
    r = subprocess.run([PROBE, "--store", owner, "list", "runs"], capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 1 and "cannot connect to PostgreSQL" in r.stderr,
          "probe while the server is down: exit 1, says so (%d %s)"
          % (r.returncode, r.stderr.strip()))
    check(all(p.poll() is None for p in procs), "every replica is still running")

    pgctl("start", d)
    q2, err = call(url_b, key, "browse", dict(args, cursor=cur))
    check(err is False and q2 == p2,
          "after the restart, A's cursor from before continues on B, the same page")
    o, err = call(url_c, None, "browse", args)
    check(err is False and o == c1, "replica C answers again (%s)" % json.dumps(o)[:300])
    r = subprocess.run([PROBE, "--store", owner, "--quiet", "key", "revoke", made["id"]],
                       capture_output=True, text=True)
    check(r.returncode == 0, "probe key revoke after the restart " + r.stderr.strip())
    for name, u in (("A", url_a), ("B", url_b)):
        status, _, _ = post(u, "tools/list", {}, key)
        check(status == 401, "replica %s refuses the key revoked after the restart (%d)"
              % (name, status))
    for name, p in zip("ABC", procs):
        p.terminate()
        try:
            rc = p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        errs = p.stderr.read()
        check(rc == 0 and "Sanitizer" not in errs,
              "replica %s exits 0 on SIGTERM (%s): %s" % (name, rc, errs.strip()[-500:]))
    procs = []
finally:
    for p in procs:
        p.kill()
        p.wait()
    subprocess.run(["bash", PGCTL, "stop", d], capture_output=True)
    shutil.rmtree(d, ignore_errors=True)

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("all outage checks passed")
