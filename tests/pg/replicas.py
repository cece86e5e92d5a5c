#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two probe-mcp-http replicas on one PostgreSQL database, stateless, as
behind a load balancer:

  replicas.py PROBE PROBE_MCP_HTTP

A fresh schema is filled with `probe demo` (the owner role); both replicas
serve it as the service role (row-level security applies). A listing paged
at a small budget must continue on the other replica with the cursor the
first one made (the cursor key is a store secret, shared), page for page
identical to staying on one replica; a tampered cursor is refused by both;
query_sql answers the same on both; and a replica keeps answering after
its database connection is killed (it reconnects). Authentication and the
audit log live in the database too: an API key made with `probe key
create` works on both replicas, no key gets 401 from both, revoking it
(through the CLI) shuts it out of both at once, and the audit log read back
holds the key's creation and revocation. Skips (77) without
PROBE_TEST_PG_URL unless PMCP_TEST_STRICT is set."""
import json
import os
import re
import secrets
import subprocess
import sys
import urllib.error
import urllib.request

import pgtest
from pgtest import check, finish, need_pg, with_schema

PROBE, HTTP = sys.argv[1], sys.argv[2]
need_pg()
OWNER = os.environ["PROBE_TEST_PG_URL"]
SERVICE = os.environ["PROBE_TEST_PG_SERVICE_URL"]


def psql(sql):
    return pgtest.psql(OWNER, sql)


def start(url):
    return pgtest.start_http(HTTP, url)


KEY = None


def rpc(base, method, params, rid=1, key=True):
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-06-18"}
    if key and KEY:
        headers["Authorization"] = "Bearer " + (KEY if key is True else key)
    req = urllib.request.Request(base, data=body.encode(), method="POST", headers=headers)
    with urllib.request.urlopen(req, timeout=60) as r:
        text = r.read().decode()
    if text.startswith("event:") or text.startswith("data:"):
        text = "\n".join(l[5:] for l in text.splitlines() if l.startswith("data:"))
    return json.loads(text)


def call(base, tool, args):
    r = rpc(base, "tools/call", {"name": tool, "arguments": args})
    res = r["result"]
    return json.loads(res["content"][0]["text"]), bool(res.get("isError"))


schema = "rep_" + secrets.token_hex(4)
psql("CREATE SCHEMA %s" % schema)
procs = []
try:
    owner_url = with_schema(OWNER, schema)
    r = subprocess.run([PROBE, "--store", owner_url, "--quiet", "demo"], capture_output=True,
                       text=True)
    check(r.returncode == 0, "probe demo fills the PostgreSQL store: " + r.stderr.strip())
    r = subprocess.run([PROBE, "--store", owner_url, "--quiet", "key", "create", "--name",
                        "replicas", "--json"], capture_output=True, text=True)
    check(r.returncode == 0, "probe key create: " + r.stderr.strip())
    made = json.loads(r.stdout)
    KEY = made["secret"]
    svc_url = with_schema(SERVICE, schema) + "&application_name=" + schema
    a, url_a = start(svc_url)
    b, url_b = start(svc_url)
    procs = [a, b]
    def status(u, key):
        try:
            rpc(u, "tools/list", {}, key=key)
            return 200
        except urllib.error.HTTPError as e:
            return e.code
    for name, u in (("A", url_a), ("B", url_b)):
        check(status(u, False) == 401, "replica %s refuses a call without a key" % name)
        check(status(u, "pk_" + "x" * 43) == 401, "replica %s refuses an unknown key" % name)
        check(status(u, True) == 200, "replica %s accepts the key made by the CLI" % name)
    for u in (url_a, url_b):
        rpc(u, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "replicas.py", "version": "1"}})

    # The whole listing on A alone, then alternating A, B, A, ...
    args = {"mode": "runs", "token_budget": 512}
    def pages(urls):
        out, cur, i = [], None, 0
        while len(out) < 40:
            o, err = call(urls[i % len(urls)], "browse", dict(args, **({"cursor": cur} if cur else {})))
            if err:
                return out, o
            out.append(o)
            cur = o.get("next_cursor")
            i += 1
            if not cur:
                break
        return out, None
    alone, e1 = pages([url_a])
    mixed, e2 = pages([url_a, url_b])
    check(e1 is None and e2 is None, "paging works (%s %s)" % (e1, e2))
    check(len(alone) > 1, "the listing needs several pages (%d)" % len(alone))
    strip = lambda o: {k: v for k, v in o.items() if k != "next_cursor"}
    check([strip(o) for o in alone] == [strip(o) for o in mixed],
          "a cursor made on one replica continues on the other, page for page")
    # A tampered cursor is refused by both replicas, with a restart hint.
    cur = alone[0]["next_cursor"]
    bad = cur[:-3] + ("AAA" if not cur.endswith("AAA") else "BBB")
    for name, u in (("A", url_a), ("B", url_b)):
        o, err = call(u, "browse", dict(args, cursor=bad))
        check(err and "cursor" in json.dumps(o).lower(), "replica %s refuses a forged cursor" % name)
    # query_sql: the same answer from both, over the key's workspace only
    # (one of the demo's several: fewer runs than the lab has).
    qa, ea = call(url_a, "query_sql", {"sql": "SELECT count(*) FROM runs"})
    qb, eb = call(url_b, "query_sql", {"sql": "SELECT count(*) FROM runs"})
    out = psql("SELECT set_config('probe.tenant', (SELECT min(id) FROM %s.tenants)::text,"
               " false); SELECT count(*) FROM %s.runs" % (schema, schema))
    lab = int(re.findall(r"^\s*(\d+)\s*$", out, re.M)[-1])
    n = qa.get("rows", [[None]])[0][0] if not ea else None
    check(not ea and not eb and qa == qb and isinstance(n, int) and 0 < n < lab,
          "query_sql answers the same on both replicas (%s of %d runs)" % (qa, lab))
    # Kill the replicas' database sessions: the next calls still answer.
    psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
         " WHERE application_name = '%s'" % schema)
    o, err = call(url_a, "browse", args)
    o2, err2 = call(url_b, "browse", args)
    check(not err and not err2 and strip(o) == strip(alone[0]),
          "both replicas reconnect after losing their database connection")
    # Revoked through the CLI: both replicas shut the key out at once.
    r = subprocess.run([PROBE, "--store", owner_url, "--quiet", "key", "revoke", made["id"]],
                       capture_output=True, text=True)
    check(r.returncode == 0, "probe key revoke: " + r.stderr.strip())
    for name, u in (("A", url_a), ("B", url_b)):
        check(status(u, True) == 401, "replica %s refuses the revoked key" % name)
    r = subprocess.run([PROBE, "--store", owner_url, "--quiet", "audit", "--json"],
                       capture_output=True, text=True)
    actions = [e.get("action") for e in json.loads(r.stdout or "[]")] if r.returncode == 0 else []
    check("api_key.create" in actions and "api_key.revoke" in actions,
          "the audit log in the database holds the key's creation and revocation (%s)" % actions)
finally:
    for p in procs:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
    psql("DROP SCHEMA IF EXISTS %s, %s_sql CASCADE" % (schema, schema))

finish("replica")
