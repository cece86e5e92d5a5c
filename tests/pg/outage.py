#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
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
  - no replica dies, and a probe-mcp-stdio session open since before
    answers its call with a tool error too.
The server comes back: the cursor made on A before the outage continues
on B, page for page as A would have, C and the stdio session answer
again, and the revoked key
(revoked after the restart through the CLI) is refused by both. Each
replica exits 0 on SIGTERM (under ASan: no leak). Skips (77) without
PROBE_TEST_PG_URL (no PostgreSQL for tests) unless PMCP_TEST_STRICT is set."""
import json
import re
import subprocess
import sys

from pgtest import Cluster, call, check, finish, need_pg, post, start_http, stop_all

PROBE, HTTP, STDIO, PGCTL = sys.argv[1:5]
need_pg()

# SQL, relations, and where the server is (libpq's connection messages).
LEAKS = re.compile(r'(SELECT|INSERT|UPDATE|relation "|\bFROM\b|metric_chunks|search_docs|'
                   r'/tmp/|\.s\.PGSQL|socket|port \d)')

procs = []
with Cluster(PGCTL) as pg:
    owner, service = pg.owner, pg.service
    r = subprocess.run([PROBE, "--store", owner, "--quiet", "demo"], capture_output=True,
                       text=True)
    check(r.returncode == 0, "probe demo fills the private cluster's store " + r.stderr.strip())
    r = subprocess.run([PROBE, "--store", owner, "--quiet", "key", "create", "--name", "outage",
                        "--json"], capture_output=True, text=True)
    check(r.returncode == 0, "probe key create " + r.stderr.strip())
    made = json.loads(r.stdout)
    key = made["secret"]
    try:
        a, url_a = start_http(HTTP, service)
        b, url_b = start_http(HTTP, service)
        c, url_c = start_http(HTTP, service, "--insecure-no-auth")
        procs = [a, b, c]

        args = {"mode": "runs", "token_budget": 512}
        p1, err = call(url_a, "browse", args, key)
        check(err is False and p1.get("next_cursor"), "A pages the run listing (%s)" % err)
        cur = p1["next_cursor"]
        p2, err = call(url_a, "browse", dict(args, cursor=cur), key)
        check(err is False, "A continues its own cursor")
        c1, err = call(url_c, "browse", args)
        check(err is False and c1.get("next_cursor"), "C (no authentication) pages it too")

        # A probe-mcp-stdio session that lives through the outage.
        sio = subprocess.Popen([STDIO, "--store", service], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(sio)

        def stdio_call(rid, tool, targs):
            sio.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                        "params": {"name": tool, "arguments": targs}}) + "\n")
            sio.stdin.flush()
            o = json.loads(sio.stdout.readline())
            res = o["result"]
            return json.loads(res["content"][0]["text"]), bool(res.get("isError"))

        sio.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "outage.py", "version": "1"}}}) + "\n")
        sio.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
                        + "\n")
        sio.stdin.flush()
        check("result" in json.loads(sio.stdout.readline()), "probe-mcp-stdio initializes")
        s1, err = stdio_call(1, "browse", args)
        check(err is False and s1 == c1, "probe-mcp-stdio answers the same page as C")

        pg.ctl("halt")
        o, err = stdio_call(2, "browse", args)
        text = json.dumps(o)
        check(err is True and "PostgreSQL" in text and not LEAKS.search(text),
              "probe-mcp-stdio, store down: a tool error naming PostgreSQL: %s" % text[:300])
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
            status, hdrs, _ = post(u, "tools/list", {})
            check(status == 401 and "WWW-Authenticate" in hdrs,
                  "replica %s: no key while the store is down is still 401" % name)
        o, err = call(url_c, "browse", args)
        text = json.dumps(o)
        check(err is True and "PostgreSQL" in text and not LEAKS.search(text),
              "replica C: a tool error naming PostgreSQL, no SQL: %s" % text[:300])
        o, err = call(url_c, "query_sql", {"sql": "SELECT count(*) FROM runs"})
        text = json.dumps(o)
        check(err is True and "cannot be reached" in text and not LEAKS.search(text),
              "replica C: query_sql fails clearly: %s" % text[:300])
        r = subprocess.run([STDIO, "--store", service], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 1 and "cannot connect to PostgreSQL" in r.stderr,
              "probe-mcp-stdio started while the server is down: exit 1, says so (%d %s)"
              % (r.returncode, r.stderr.strip()))
        r = subprocess.run([PROBE, "--store", owner, "list", "run"], capture_output=True,
                           text=True, timeout=120)
        check(r.returncode == 1 and "cannot connect to PostgreSQL" in r.stderr,
              "probe while the server is down: exit 1, says so (%d %s)"
              % (r.returncode, r.stderr.strip()))
        check(all(p.poll() is None for p in procs), "every replica is still running")

        pg.ctl("start")
        q2, err = call(url_b, "browse", dict(args, cursor=cur), key)
        check(err is False and q2 == p2,
              "after the restart, A's cursor from before continues on B, the same page")
        o, err = call(url_c, "browse", args)
        check(err is False and o == c1, "replica C answers again (%s)" % json.dumps(o)[:300])
        o, err = stdio_call(3, "browse", args)
        check(err is False and o == s1, "the same probe-mcp-stdio session answers again")
        sio.stdin.close()
        check(sio.wait(60) == 0 and "Sanitizer" not in sio.stderr.read(),
              "probe-mcp-stdio exits 0 at the end of its input")
        procs.remove(sio)
        r = subprocess.run([PROBE, "--store", owner, "--quiet", "key", "revoke", made["id"]],
                           capture_output=True, text=True)
        check(r.returncode == 0, "probe key revoke after the restart " + r.stderr.strip())
        for name, u in (("A", url_a), ("B", url_b)):
            status, _, _ = post(u, "tools/list", {}, key)
            check(status == 401, "replica %s refuses the key revoked after the restart (%d)"
                  % (name, status))
        for name, (rc, errs) in zip("ABC", stop_all(procs)):
            check(rc == 0 and "Sanitizer" not in errs,
                  "replica %s exits 0 on SIGTERM (%s): %s" % (name, rc, errs.strip()[-500:]))
        procs = []
    finally:
        for p in procs:
            p.kill()
            p.wait()

finish("outage")
