#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""query_sql's readers on PostgreSQL do not stop the others:

  reader.py PROBE PROBE_MCP_HTTP PGCTL

On a private cluster of its own (pgctl.sh): the demo lab, two keys (two
principals A and B) and one authenticated probe-mcp-http.
  - A session advisory lock taken by a statement (the key writers of the
    tenant took before) neither blocks a writer while it runs nor outlives
    the call; settings and prepared statements do not outlive it either;
  - a result of 1,500 values of 1 MB is streamed: the page stops at the
    budget and the server's peak memory stays far below the result's size;
    a value over 1 MiB is still an error; 5,000 rows paged back are
    exactly the rows asked for;
  - A looping runaway statements on 4 clients: A's extra calls are
    refused as busy at once, and B's browse and SELECT 1 keep answering
    quickly;
  - after a server restart the next statement succeeds (reconnected);
    while the server is down it fails as `store_error`, saying the
    connection was lost, never as `invalid_sql`;
  - with CREATEROLE (the owner is not a superuser) each query connection
    logs in as a login role of its own, one connection each, across
    replicas: A cannot read B's statement in pg_stat_activity nor cancel
    or terminate it; the roles' passwords work when pg_hba.conf asks for
    them; a store made without CREATEROLE gets them from `probe init`;
  - a store migrated by a superuser leaves the reader role no signalling
    function and no view of other sessions.
Skips (77) without PROBE_TEST_PG_URL unless PMCP_TEST_STRICT is set."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from pgtest import Cluster, call, check, finish, need_pg, psql, stop_all, start_http, \
    with_schema

PROBE, HTTP, PGCTL = sys.argv[1:4]
need_pg()


def hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def key(owner, name):
    r = subprocess.run([PROBE, "--store", owner, "--quiet", "key", "create", "--name", name,
                        "--json"], capture_output=True, text=True)
    check(r.returncode == 0, "probe key create %s %s" % (name, r.stderr.strip()))
    return json.loads(r.stdout)["secret"]


def scalar(out):
    """The one value of psql's aligned output (header, rule, value, count)."""
    lines = [l.strip() for l in out.splitlines() if l.strip()]
    return lines[2] if len(lines) > 2 else None


def sql(url, k, text, **extra):
    return call(url, "query_sql", dict({"sql": text}, **extra), k)


def fairness(url, ka, kb, runaway, label, sql_each=True):
    """Principal A loops runaway statements on 4 clients for 12 s while B
    browses and runs SELECT 1 (at once when @p sql_each, else after at most
    one of A's statements)."""
    stop = time.time() + 12
    a_codes, a_took = [], []

    def loop_a():
        while time.time() < stop:
            t0 = time.time()
            g, e = sql(url, ka, runaway)
            a_codes.append(g.get("error") if g else e)
            if g and g.get("error") != "busy":
                a_took.append(time.time() - t0)
            if g and g.get("error") == "busy":
                time.sleep(0.2)
    threads = [threading.Thread(target=loop_a) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(1)
    lat, failed, sql_lat, sql_bad = [], 0, [], 0
    while time.time() < stop - 1:
        t0 = time.time()
        g, e = call(url, "browse", {"mode": "runs", "token_budget": 512}, kb)
        lat.append(time.time() - t0)
        failed += e is not False
        t0 = time.time()
        g, e = sql(url, kb, "SELECT 1 AS one")
        sql_lat.append(time.time() - t0)
        sql_bad += not (e is False and g["rows"] == [[1]])
        time.sleep(0.3)
    for t in threads:
        t.join()
    check(failed == 0, "%s: B's browse answers while A loops runaway statements (%d failed)"
          % (label, failed))
    lat.sort()
    p50 = lat[len(lat) // 2] if lat else 99
    check(lat and p50 < 1.0 and lat[-1] < 4.0,
          "%s: B's browse keeps its latency: p50 %.3f s, max %.3f s over %d calls"
          % (label, p50, lat[-1] if lat else -1, len(lat)))
    sql_lat.sort()
    p50 = sql_lat[len(sql_lat) // 2] if sql_lat else 99
    what = "%s: B's query_sql SELECT 1: p50 %.3f s, max %.3f s, %d failed" % (
        label, p50, sql_lat[-1] if sql_lat else -1, sql_bad)
    if sql_each:
        check(sql_bad == 0 and p50 < 1.0 and sql_lat[-1] < 4.0, what)
    else:
        # one connection: B waits for A's statement running, never for more
        longest = max(a_took) if a_took else 0
        check(sql_bad == 0 and sql_lat and sql_lat[-1] < longest + 1.5,
              what + ", A's statements up to %.3f s: B waits for one at most" % longest)
    check("busy" in a_codes and "sql_error" in a_codes,
          "%s: A's extra runaway calls are refused as busy, the others stopped at 5 s (%s)"
          % (label, sorted(set(map(str, a_codes)))))
    busy = [c for c in a_codes if c == "busy"]
    check(len(busy) > 0, "%s: busy answers: %d of %d" % (label, len(busy), len(a_codes)))


procs = []
def group_of(url):
    """The store's reader group, computed here from its query key (the
    name pg_readers.c derives)."""
    return scalar(psql(url, "SELECT 'probe_q_' || left(encode(sha256(value ||"
                       " convert_to('probe-reader-role', 'UTF8')), 'hex'), 12) AS g"
                       " FROM secrets WHERE name = 'query_key'"))


def readers_of(admin, group):
    """(login roles that are members of @p group, their connection limits)."""
    out = psql(admin, "SELECT count(*) || '/' || coalesce(string_agg(DISTINCT u.rolconnlimit::text,"
               " ','), '') || '/' || coalesce(bool_or(u.rolsuper OR u.rolcreaterole OR"
               " u.rolcreatedb OR u.rolbypassrls)::text, '') AS x FROM pg_auth_members m JOIN pg_roles u ON"
               " u.oid = m.member JOIN pg_roles g ON g.oid = m.roleid WHERE g.rolname = '%s'"
               " AND u.rolcanlogin" % group)
    return scalar(out)


with Cluster(PGCTL) as pg:
    owner = pg.owner
    # A store made while the owner may not create roles: query_sql shares
    # probe_reader. Then the owner (not a superuser) gets CREATEROLE, and
    # every store made or initialised since has login roles of its own.
    nocr = with_schema(owner, "nocr")
    psql(owner, "CREATE SCHEMA nocr")
    r = subprocess.run([PROBE, "--store", nocr, "--quiet", "init"], capture_output=True,
                       text=True)
    check(r.returncode == 0, "probe init without CREATEROLE " + r.stderr.strip())
    g_nocr = group_of(nocr)
    check(readers_of(pg.admin, g_nocr) == "0//", "without CREATEROLE no reader roles are made"
          " (%s)" % readers_of(pg.admin, g_nocr))
    psql(pg.admin, "ALTER ROLE probe_owner CREATEROLE")
    r = subprocess.run([PROBE, "--store", nocr, "--quiet", "init"], capture_output=True,
                       text=True)
    check(r.returncode == 0 and readers_of(pg.admin, g_nocr) == "48/1/false",
          "probe init again with CREATEROLE makes the 48 login roles, one connection each, no"
          " other right (%s) %s" % (readers_of(pg.admin, g_nocr), r.stderr.strip()))
    r = subprocess.run([PROBE, "--store", owner, "--quiet", "demo"], capture_output=True,
                       text=True)
    check(r.returncode == 0, "probe demo fills the store " + r.stderr.strip())
    ka, kb = key(owner, "reader-a"), key(owner, "reader-b")
    try:
        h, url = start_http(HTTP, pg.service)
        o, url_open = start_http(HTTP, pg.service, "--insecure-no-auth")
        procs = [h, o]

        # ---- advisory locks and session state -----------------------------------
        tid = scalar(psql(owner, "SELECT id FROM tenants ORDER BY id LIMIT 1")) or "1"
        done = {}

        def writer():
            t0 = time.time()
            try:
                w = subprocess.run([PROBE, "--store", owner, "--quiet", "project", "create",
                                    "lockprobe"], capture_output=True, text=True, timeout=20)
                done["rc"], done["err"] = w.returncode, w.stderr
            except subprocess.TimeoutExpired:
                done["rc"], done["err"] = -1, "still waiting after 20 s"
            done["s"] = time.time() - t0
        # the statement holds its lock for 3 s; a writer started meanwhile
        th = threading.Thread(target=sql, args=(url, ka, "SELECT pg_advisory_lock(1, 1),"
                                                " pg_advisory_lock(hashtext('public'), %s),"
                                                " pg_sleep(4)" % tid))
        th.start()
        time.sleep(1)
        writer()
        th.join()
        check(done.get("rc") == 0 and done["s"] < 2.5,
              "a writer is not held up by a reader's advisory lock (%.2f s) %s"
              % (done.get("s", -1), done.get("err", "")))
        held = psql(pg.admin, "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a"
                    " ON a.pid = l.pid WHERE l.locktype = 'advisory'"
                    " AND a.application_name = 'probe-mcp query_sql'")
        held = scalar(held)
        check(held == "0", "no advisory lock of the reader outlives its call (%s)"
              % held)
        # ---- readers of roles of their own: no watching, no signalling ---------
        group = group_of(owner)
        check(readers_of(pg.admin, group) == "48/1/false", "the store has its 48 login roles"
              " (%s)" % readers_of(pg.admin, group))
        b_out = {}

        def b_long():
            b_out["r"] = sql(url, kb, "SELECT pg_sleep(3), 'mark' || 'er-of-b' AS m")
        th = threading.Thread(target=b_long)
        th.start()
        time.sleep(1.0)
        # the truth, as the superuser sees it: B's statement runs as its own role
        seen = psql(pg.admin, "SELECT usename || ' ' || pid FROM pg_stat_activity WHERE"
                    " query LIKE '%%''mark'' || ''er-of-b''%%' AND usename LIKE '%s\\_%%'"
                    % group)
        b_role = [l.strip() for l in seen.splitlines()[2:] if l.strip().startswith(group)]
        check(len(b_role) == 1, "B's statement runs as one of the store's login roles (%s)"
              % seen)
        b_pid = b_role[0].split()[1] if b_role else "0"
        got, err = sql(url, ka, "SELECT count(*) FILTER (WHERE pid <> pg_backend_pid() AND query LIKE"
                       " '%%er-of-b%%') AS text,"
                       " count(*) FILTER (WHERE pid = %s) AS listed,"
                       " count(*) FILTER (WHERE pid = %s AND (query IS NULL OR query ="
                       " '<insufficient privilege>')) AS hidden FROM pg_stat_activity"
                       % (b_pid, b_pid))
        check(err is False and got["rows"][0][0] == 0 and got["rows"][0][2] >= 1,
              "A cannot read B's statement in pg_stat_activity (%s)" % got)
        for fn in ("pg_cancel_backend(%s)" % b_pid, "pg_terminate_backend(%s)" % b_pid):
            got, err = sql(url, ka, "SELECT %s AS x" % fn)
            check(err is True and got.get("error") == "denied",
                  "A cannot %s B's session (%s)" % (fn.split("(")[0], got))
        th.join()
        got, err = b_out.get("r", (None, True))
        check(err is False and got["rows"][0][1] == "marker-of-b",
              "B's statement ran to its end, untouched (%s)" % got)
        # every query connection of the server is a role of its own
        conns = scalar(psql(pg.admin, "SELECT count(*) || '/' || count(DISTINCT usename) AS x"
                            " FROM pg_stat_activity WHERE application_name ="
                            " 'probe-mcp query_sql'"))
        n_all, n_roles = (conns or "0/0").split("/")
        check(int(n_all) >= 2 and n_all == n_roles, "each query connection logs in as a role"
              " of its own (%s connections, %s roles)" % (n_all, n_roles))
        # the roles' passwords: with pg_hba.conf asking the group's members
        # for one, a new replica logs in (it computes them from the store)
        hba = os.path.join(pg.dir, "data", "pg_hba.conf")
        with open(hba) as f:
            lines = f.read()
        with open(hba, "w") as f:
            f.write("local all +%s scram-sha-256\n" % group + lines)
        psql(pg.admin, "SELECT pg_reload_conf()")
        time.sleep(0.5)
        r = subprocess.run(["psql", "postgresql:///probe?host=%s&user=%s_1" % (pg.dir, group),
                            "-X", "-w", "-c", "SELECT 1"], capture_output=True, text=True)
        check(r.returncode != 0 and "password" in r.stderr,
              "the login roles need their password (%s)" % r.stderr.strip())
        h2, url2 = start_http(HTTP, pg.service)
        procs.append(h2)
        got, err = sql(url2, kb, "SELECT 6 * 7 AS x")
        check(err is False and got["rows"] == [[42]],
              "a second replica logs in with the roles' passwords (%s)" % got)
        conns = scalar(psql(pg.admin, "SELECT count(*) || '/' || count(DISTINCT usename) AS x"
                            " FROM pg_stat_activity WHERE application_name ="
                            " 'probe-mcp query_sql'"))
        n_all, n_roles = (conns or "0/0").split("/")
        check(n_all == n_roles, "two replicas never share a role (%s)" % conns)

        got, err = sql(url, ka, "SELECT set_config('statement_timeout', '0', false) AS t")
        got, err = sql(url, ka, "SELECT current_setting('statement_timeout') AS t,"
                       " current_setting('default_transaction_read_only') AS ro,"
                       " current_schema() AS s")
        check(err is False and got["rows"][0][0] == "5s" and got["rows"][0][1] == "on"
              and got["rows"][0][2].endswith("_sql"),
              "a statement finds the session as opened: timeout, read-only, schema (%s)" % got)
        got, err = sql(url, ka, "PREPARE p AS SELECT 1")
        got, err = sql(url, ka, "SELECT count(*) AS n FROM pg_prepared_statements")
        check(err is False and got["rows"] == [[0]], "no prepared statement outlives a call %s"
              % got)

        # ---- streaming -----------------------------------------------------------
        base = hwm_kb(h.pid)
        got, err = sql(url, ka, "SELECT repeat('x', 1000000) AS v FROM generate_series(1, 1500)",
                       token_budget=4000)
        peak = hwm_kb(h.pid)
        check(got is not None and (err is True or got.get("next_cursor")),
              "a 1.5 GB result answers a page or a budget error (%s)"
              % (str(got)[:200]))
        check(peak - base < 200 * 1024, "the server's peak memory grew %d MB, not by the "
              "result's 1.5 GB" % ((peak - base) // 1024))
        # a long result of small rows: one page, at once, with a cursor (the
        # set function in the select list yields row by row; in FROM it
        # would be made whole first)
        # (a second try when the first ran into the 5 s limit: a sanitizer
        # build on a loaded machine can be that slow once; a statement
        # that runs to its limit fails both)
        tries = []
        for _ in range(2):
            t0 = time.time()
            got, err = sql(url, ka, "SELECT generate_series(1, 200000000) AS g,"
                           " repeat('x', 100) AS v", token_budget=2000)
            took = time.time() - t0
            ok = (err is False and got.get("next_cursor") and got["rows"][0] == [1, "x" * 100]
                  and took < 3.0)
            tries.append("%.2f s, %d rows" % (took, len(got.get("rows", [])) if got else -1))
            if ok:
                break
        check(ok, "the statement stopped at the page, not at its time limit (%s)"
              % "; ".join(tries))
        got, err = sql(url, ka, "SELECT 1 AS a, repeat('y', 2000000) AS b")
        check(err is True and got.get("error") == "sql_error" and "1 MiB" in got.get("message", ""),
              "a value over 1 MiB is an error (%s)" % str(got)[:200])
        rows, cur, pages = [], None, 0
        while pages < 200:
            args = {"sql": "SELECT g, g * 0.5 AS h, 'r' || g AS t FROM generate_series(1, 5000) g",
                    "token_budget": 8000}
            if cur:
                args["cursor"] = cur
            got, err = call(url, "query_sql", args, ka)
            if err is not False:
                break
            rows += got["rows"]
            pages += 1
            cur = got.get("next_cursor")
            if not cur:
                break
        check(pages > 1 and rows == [[g, g * 0.5, "r%d" % g] for g in range(1, 5001)],
              "5,000 rows paged back over %d pages are exactly the rows" % pages)
        got, err = sql(url, ka, "SELECT 1 AS a WHERE false")
        check(err is False and got["rows"] == [] and got["columns"] == ["a"],
              "no rows: the columns and an empty list")
        got, err = sql(url, ka, "SELECT 1/(g - 3) AS x FROM generate_series(1, 5) g")
        check(err is True and "division by zero" in got.get("message", ""),
              "an error after some rows is the statement's error (%s)" % got)

        # ---- fairness ------------------------------------------------------------
        fairness(url, ka, kb, "SELECT count(*) FROM generate_series(1, 2000000000) a",
                 "PostgreSQL")

        # ---- restart -------------------------------------------------------------
        # The roles the query connections log in as, taken by others while
        # the server restarts (as another replica would): the connections
        # log in again as free ones.
        taken = psql(pg.admin, "SELECT DISTINCT usename FROM pg_stat_activity WHERE"
                     " application_name = 'probe-mcp query_sql'")
        taken = [l.strip() for l in taken.splitlines()[2:] if l.strip().startswith(group)]
        pg.ctl("restart")
        holders = []
        for role in taken:
            pw = scalar(psql(owner, "SELECT encode(sha256(value || convert_to('reader-password/"
                             "%s', 'UTF8') || value), 'hex') AS p FROM secrets WHERE"
                             " name = 'query_key'" % role))
            holders.append(subprocess.Popen(
                ["psql", "postgresql:///probe?host=%s&user=%s" % (pg.dir, role), "-X", "-q",
                 "-c", "SELECT pg_sleep(30)"], env=dict(os.environ, PGPASSWORD=pw),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.time() + 20
        n_held = "0"
        while time.time() < deadline and n_held != str(len(taken)):
            n_held = scalar(psql(pg.admin, "SELECT count(*) FROM pg_stat_activity WHERE"
                                 " application_name = 'psql' AND usename LIKE '%s\\_%%'"
                                 % group))
            time.sleep(0.2)
        check(len(taken) >= 2 and n_held == str(len(taken)), "the %d roles of the query"
              " connections are held by others after the restart (%s)" % (len(taken), n_held))
        got, err = sql(url, ka, "SELECT 41 + 1 AS x")
        check(err is False and got["rows"] == [[42]],
              "the first statement after a restart succeeds, as a free role (%s)" % got)
        for p in holders:
            p.terminate()
            p.wait()
        # with the server down, keys cannot be checked (503): a server
        # without authentication answers the tool call
        got, err = call(url_open, "query_sql", {"sql": "SELECT 1 AS x"})
        check(err is False, "the server without authentication reads too (%s)" % got)
        pg.ctl("halt")
        got, err = call(url_open, "query_sql", {"sql": "SELECT 1 AS x"})
        check(got is not None and err is True and got.get("error") == "store_error"
              and "connection to PostgreSQL was lost" in got.get("message", ""),
              "with the server down: store_error, the connection lost (%s)" % got)
        pg.ctl("start")
        got, err = call(url_open, "query_sql", {"sql": "SELECT 1 AS x"})
        check(err is False and got["rows"] == [[1]], "back: the statement succeeds (%s)" % got)

        # ---- a superuser's migration: no signalling, no other sessions ------------
        sup = "postgresql:///probe?host=%s&user=probe_admin" % pg.dir
        psql(sup, "CREATE SCHEMA IF NOT EXISTS adm")
        r = subprocess.run([PROBE, "--store", with_schema(sup, "adm"), "--quiet", "init"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "probe init as a superuser " + r.stderr.strip())
        reader = "postgresql:///probe?host=%s&user=probe_reader" % pg.dir
        out = scalar(psql(reader, "SELECT has_function_privilege('pg_terminate_backend(integer,"
                   " bigint)', 'EXECUTE')::int::text || has_function_privilege('pg_cancel_backend("
                   "integer)', 'EXECUTE')::int::text || has_table_privilege('pg_stat_activity',"
                   " 'SELECT')::int::text || has_function_privilege("
                   "'pg_stat_get_backend_activity(integer)', 'EXECUTE')::int::text"))
        check(out == "0000", "the reader may not signal or list sessions (%s)" % out)
        got, err = sql(url, ka, "SELECT pg_terminate_backend(pg_backend_pid()) AS x")
        check(err is True and got.get("error") == "denied",
              "query_sql cannot signal a backend (%s)" % got)
        got, err = sql(url, ka, "SELECT 1 AS x")
        check(err is False, "the reader's connection is still there")
    finally:
        for rc, errtext in stop_all(procs):
            check(rc == 0, "probe-mcp-http exits 0 (%s)" % errtext[-300:])

# The same bounds on SQLite (statements there take turns on the workspace's
# query connection: B's SELECT 1 waits for the one statement of A's running,
# whose limit is CPU time, and no more).
lite_dir = tempfile.mkdtemp(prefix="pmcp-lite-", dir="/tmp")
try:
    lite = os.path.join(lite_dir, "lab.db")
    r = subprocess.run([PROBE, "--store", lite, "--quiet", "demo"], capture_output=True,
                       text=True)
    check(r.returncode == 0, "probe demo fills a SQLite store " + r.stderr.strip())
    la, lb = key(lite, "lite-a"), key(lite, "lite-b")
    for bad in ("0", "x", "-1"):
        r = subprocess.run([HTTP, "--store", lite, "--workers-per-caller", bad],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and "--workers-per-caller" in r.stderr,
              "--workers-per-caller %s is refused, naming the flag (%s)" % (bad, r.stderr.strip()))
    h, url = start_http(HTTP, lite)
    try:
        fairness(url, la, lb, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
                 " SELECT count(*) FROM c", "SQLite", sql_each=False)
    finally:
        for rc, errtext in stop_all([h]):
            check(rc == 0, "probe-mcp-http on SQLite exits 0 (%s)" % errtext[-300:])
finally:
    shutil.rmtree(lite_dir, ignore_errors=True)

finish("reader")
