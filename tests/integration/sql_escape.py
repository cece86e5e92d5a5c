#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""query_sql's escape battery (tests/data/sql-escape/battery.json, the same
attempts the in-process suite research-sql-escape runs) over the real
frontends:

  sql_escape.py PROBE PROBE_MCP_STDIO PROBE_MCP_HTTP BATTERY_JSON

A store (SQLite, or with PMCP_TEST_STORE=pg a fresh schema of the test
cluster) is filled through the probe CLI as the battery's seed describes:
two labs, two workspaces each (and the first lab's unfiled runs), a marker
in each, and a marker row in every service table. Then the battery runs
  - over stdio: probe-mcp-stdio serving lab "default", and lab "labb";
  - over HTTP: one probe-mcp-http with API keys of lab default's workspaces
    alpha and beta and of lab labb's gamma (made by `probe key create`).
Every answer, refused or not, must hold no marker the caller may not read
(any case, also as hex), no API key's secret or hash, and no path of the
store; each attempt must end as the battery says. Standard library only;
skips (77) on PostgreSQL without the test cluster."""
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

PROBE, STDIO, HTTP, BATTERY = sys.argv[1:5]
PG = os.environ.get("PMCP_TEST_STORE") == "pg"
STRICT = os.environ.get("PMCP_TEST_STRICT", "0") not in ("", "0")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL " + what, flush=True)


if PG and not (os.environ.get("PROBE_TEST_PG_URL") and
               os.environ.get("PROBE_TEST_PG_SERVICE_URL")):
    if STRICT:
        print("PMCP_TEST_STORE=pg under PMCP_TEST_STRICT needs PROBE_TEST_PG_URL")
        sys.exit(1)
    sys.exit(77)

B = json.load(open(BATTERY, encoding="utf-8"))
SEED = B["seed"]
TMP = tempfile.mkdtemp(prefix="pmcp-sqlesc-")
if PG:
    SCHEMA = "sqlesc_%d_%d" % (os.getpid(), int(time.time()) % 100000)
    OWNER = os.environ["PROBE_TEST_PG_URL"]
    SERVICE = os.environ["PROBE_TEST_PG_SERVICE_URL"]

    def with_schema(url):
        return url + ("&" if "?" in url else "?") + "options=-csearch_path%3D" + SCHEMA

    STORE = with_schema(OWNER)
    SERVE = with_schema(SERVICE)
else:
    SCHEMA = "main"
    STORE = SERVE = os.path.join(TMP, "store.db")


def psql(sql):
    r = subprocess.run(["psql", OWNER, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c",
                        "SET client_min_messages=warning", "-c", sql],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise SystemExit("psql: " + r.stderr)
    return r.stdout


def probe(*args, tenant="default", stdin=None):
    r = subprocess.run([PROBE, "--store", STORE, "--tenant", tenant, "--quiet", *args],
                       input=stdin, capture_output=True, text=True, timeout=300)
    if r.returncode:
        raise SystemExit("probe %s: %s" % (" ".join(args), r.stderr))
    return r.stdout


def seed():
    if PG:
        psql("CREATE SCHEMA %s" % SCHEMA)
    for tenant, spaces in SEED["tenants"].items():
        probe("init", tenant=tenant)
        for ws, m in spaces.items():
            run = ["run", "create", m, "--id", "r-" + ws, "--description", m,
                   "--status", "finished"]
            if ws != "default":
                probe("workspace", "create", ws, "--id", ws, "--description", m, tenant=tenant)
                readme = os.path.join(TMP, "readme.md")
                with open(readme, "w") as f:
                    f.write(m)
                probe("project", "create", m, "--id", "p-" + ws, "--workspace", ws,
                      "--description", m, "--readme", readme, tenant=tenant)
                cfg = dict(SEED["config"], marker=m)
                probe("experiment", "create", m, "--project", "p-" + ws, "--id", "e-" + ws,
                      "--description", m, "--config", json.dumps(cfg), tenant=tenant)
                run += ["--experiment", "e-" + ws]
            probe(*run, tenant=tenant)
            probe("note", "run:r-" + ws, m, "--title", m, tenant=tenant)
            lines = "".join(json.dumps({"key": "loss", "step": i, "value": i * 0.25,
                                        "labels": {"split": "train", "marker": m}}) + "\n"
                            for i in range(1, SEED["points"] + 1))
            probe("log", "run:r-" + ws, tenant=tenant, stdin=lines)
    if PG:
        ids = dict(l.split("|") for l in psql("SELECT name, id FROM %s.tenants" % SCHEMA).split())
    else:
        db = sqlite3.connect(STORE)
        ids = {n: str(i) for n, i in db.execute("SELECT name, id FROM tenants")}
    for q in SEED["secret_sql"]:
        q = q.replace("{S}", SCHEMA).replace("{TA}", ids["default"]).replace("{TB}", ids["labb"])
        m = re.search(r"\{BYTES:([^}]*)\}", q)
        if m:
            hx = m.group(1).encode().hex()
            q = q.replace(m.group(0), ("'\\x%s'::bytea" if PG else "X'%s'") % hx)
        if PG:
            psql(q)
        else:
            db.execute(q)
    if not PG:
        db.commit()
        db.close()


# ---- the checks -------------------------------------------------------------

def all_markers():
    out = [m for spaces in SEED["tenants"].values() for m in spaces.values()]
    return out + list(SEED["secrets"].values())


KEY_SECRETS = []  # every API key's secret and its hash: never in an answer


def forbidden(text, own):
    low = text.lower()
    for m in all_markers():
        if m in own:
            continue
        if m.lower() in low or m.encode().hex() in low:
            return m
    for s in KEY_SECRETS:
        if s.lower() in low:
            return "an API key (%s...)" % s[:8]
    return None


def field(a, k):
    ov = a.get("pg" if PG else "sqlite")
    if isinstance(ov, dict) and k in ov:
        return ov[k]
    return a.get(k)


def run_battery(who, call, own, slow):
    n = bad = 0
    for a in B["attempts"]:
        if a.get("pg" if PG else "sqlite") == "skip" or (field(a, "slow") and not slow):
            continue
        n += 1
        sql = field(a, "sql").replace("{S}", SCHEMA)
        t0 = time.time()
        text, err = call(sql)
        secs = time.time() - t0
        low = text.lower()
        exp = field(a, "expect")
        why = None
        leak = forbidden(text, own)
        if leak:
            why = "leaks %s" % leak
        elif TMP.lower() in low:
            why = "names the store's folder"
        elif exp in ("refused", "capped"):
            if not err:
                why = "was not refused"
            elif not any(x.lower() in low for x in field(a, "needles")):
                why = "refused without a clear message"
            elif exp == "capped" and secs > 60:
                why = "stopped only after %.1f s" % secs
        elif exp == "allowed":
            try:
                o = json.loads(text)
            except ValueError:
                o = None
            if err or o is None:
                why = "was refused"
            elif field(a, "own") and not any(m.lower() in low for m in own):
                why = "does not show the caller's own rows"
            elif field(a, "rows") is not None and o.get("rows") != field(a, "rows"):
                why = "rows differ (wanted %s)" % json.dumps(field(a, "rows"))
        if why:
            bad += 1
        check(why is None, "%s: %s: %s: %.300s" % (who, a["id"], why, text))
    print("%s: %d attempts, %d failed" % (who, n, bad), flush=True)
    check(n >= 100, "%s: the battery has %d attempts" % (who, n))


# ---- stdio --------------------------------------------------------------------

class Stdio:
    def __init__(self, tenant):
        self.p = subprocess.Popen([STDIO, "--store", SERVE, "--tenant", tenant],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, encoding="utf-8")
        threading.Thread(target=self.p.stderr.read, daemon=True).start()
        self.id = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "sql_escape.py", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0",
                                       "method": "notifications/initialized"}) + "\n")
        self.p.stdin.flush()

    def rpc(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("probe-mcp-stdio ended")
            o = json.loads(line)
            if o.get("id") == self.id:
                return o

    def query(self, sql):
        o = self.rpc("tools/call", {"name": "query_sql", "arguments": {"sql": sql}})
        if "result" not in o:
            return json.dumps(o), True
        r = o["result"]
        return r["content"][0]["text"], bool(r.get("isError"))

    def close(self):
        self.p.stdin.close()
        self.p.wait(60)


# ---- HTTP ---------------------------------------------------------------------

def start_http(tenant):
    p = subprocess.Popen([HTTP, "--listen", "127.0.0.1:0", "--store", SERVE, "--stateless",
                          "--tenant", tenant],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = p.stdout.readline()
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            threading.Thread(target=p.stdout.read, daemon=True).start()
            threading.Thread(target=p.stderr.read, daemon=True).start()
            return p, m.group(1)
        if p.poll() is not None:
            break
    p.kill()
    raise SystemExit("probe-mcp-http did not start: %s" % p.stderr.read())


def http_query(base, key):
    def q(sql):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "query_sql", "arguments": {"sql": sql}}})
        req = urllib.request.Request(base, data=body.encode(), method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18", "Authorization": "Bearer " + key})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                text = r.read().decode()
        except urllib.error.HTTPError as e:
            return "HTTP %d %s" % (e.code, e.read().decode()), True
        if text.startswith("event:") or text.startswith("data:"):
            text = "\n".join(l[5:] for l in text.splitlines() if l.startswith("data:"))
        o = json.loads(text)
        if "result" not in o:
            return text, True
        r = o["result"]
        return r["content"][0]["text"], bool(r.get("isError"))
    return q


def make_key(tenant, ws):
    made = json.loads(probe("key", "create", "--workspace", ws, "--json", tenant=tenant))
    secret = made["secret"]
    KEY_SECRETS.extend([secret, hashlib.sha256(secret.encode()).hexdigest()])
    return secret


def main():
    seed()
    keys = {("default", "alpha"): make_key("default", "alpha"),
            ("default", "beta"): make_key("default", "beta"),
            ("labb", "gamma"): make_key("labb", "gamma")}
    backend = "PostgreSQL" if PG else "SQLite"
    a = SEED["tenants"]["default"]
    s = Stdio("default")
    run_battery("stdio %s, lab default" % backend, s.query, list(a.values()), True)
    s.close()
    s = Stdio("labb")
    run_battery("stdio %s, lab labb" % backend, s.query, list(SEED["tenants"]["labb"].values()),
                False)
    s.close()
    # one server per lab (--tenant), as deployed
    servers = {}
    try:
        for tenant in SEED["tenants"]:
            servers[tenant] = start_http(tenant)
        for (tenant, ws), key in keys.items():
            own = [SEED["tenants"][tenant][ws]]
            run_battery("HTTP %s, key of %s/%s" % (backend, tenant, ws),
                        http_query(servers[tenant][1], key), own, ws == "alpha")
        # a key of one lab opens nothing on the other lab's server
        text, err = http_query(servers["default"][1], keys[("labb", "gamma")])(
            "SELECT name FROM runs")
        check(err and text.startswith("HTTP 401") and not forbidden(text, []),
              "the other lab's server refuses the key: %.200s" % text)
    finally:
        for p, _ in servers.values():
            p.terminate()
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()


try:
    main()
finally:
    if PG:
        psql("DROP SCHEMA IF EXISTS %s, %s_sql CASCADE" % (SCHEMA, SCHEMA))
    shutil.rmtree(TMP, ignore_errors=True)
if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("all sql_escape checks passed")
