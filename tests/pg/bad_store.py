#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bad PostgreSQL stores given to every frontend (issue 9):

  bad_store.py PROBE PROBE_MCP_HTTP PROBE_MCP_STDIO PGCTL

On a private cluster of its own (pgctl.sh; its admin role sets up a role
with a password and a database without CONNECT for others), each of
probe-mcp-stdio, probe-mcp-http and the probe CLI is started on each bad
store, once with --store and once with PROBE_STORE: a closed port, a
server that accepts and never answers, a wrong password, a database the
role may not connect to, a database that does not exist, an unknown role,
a malformed URL, a schema newer than the program's, an empty schema (no
store), a role without the schema's USAGE and one without SELECT on its
tables. Each must exit 1 (the CLI's store errors) within its timeout,
with one message naming the problem, nothing on stdout, no crash, and
under ASan no leak (LeakSanitizer would change the exit status). No
message may echo the password. Skips (77) without PROBE_TEST_PG_URL (no
PostgreSQL for tests) unless PMCP_TEST_STRICT is set."""
import os
import re
import socket
import subprocess
import sys

from pgtest import Cluster, check, finish, need_pg, psql, with_schema

PROBE, HTTP, STDIO, PGCTL = sys.argv[1:5]
need_pg()
SECRET = "pw-" + os.urandom(6).hex()


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# How each frontend is started on a store, and how it says it failed.
def run_stdio(store, env):
    return [STDIO] + (["--store", store] if store else []), "probe-mcp-stdio: cannot open the store"


def run_http(store, env):
    return ([HTTP, "--listen", "127.0.0.1:0"] + (["--store", store] if store else []),
            "probe-mcp-http: cannot open the store")


def run_cli(store, env):
    return [PROBE] + (["--store", store] if store else []) + ["list", "run"], "probe store:"


FRONTENDS = (("probe-mcp-stdio", run_stdio), ("probe-mcp-http", run_http), ("probe", run_cli))


def expect_refused(label, store, why, no_store=False):
    for fname, how in FRONTENDS:
        for via in ("--store", "PROBE_STORE"):
            env = dict(os.environ)
            env.pop("PROBE_STORE", None)
            if via == "PROBE_STORE":
                env["PROBE_STORE"] = store
                argv, prefix = how(None, env)
            else:
                argv, prefix = how(store, env)
            try:
                r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   timeout=120, env=env)
            except subprocess.TimeoutExpired:
                check(False, "%s (%s) on %s: still running after 120 s" % (fname, via, label))
                continue
            err = r.stderr.strip()
            what = "%s (%s) on %s: exit %d, %r" % (fname, via, label, r.returncode, err[:400])
            check(r.returncode == 1, what + " -- exit 1")
            check(err.startswith(prefix) and re.search(why, err) is not None,
                  what + " -- names the problem (/%s/)" % why)
            check(r.stdout == "", what + " -- nothing on stdout")
            check("Sanitizer" not in err and "Segmentation" not in err,
                  what + " -- no crash, no leak")
            check(SECRET not in err, what + " -- the password is not echoed")
            if fname == "probe-mcp-http":
                check(("create it with 'probe init'" in err) == no_store,
                      what + " -- the 'probe init' hint only when there is no store")


with Cluster(PGCTL) as pg:
    d, owner, service, admin = pg.dir, pg.owner, pg.service, pg.admin
    # A role that logs in with a password only (the first pg_hba line that
    # matches wins), and a database nobody else may connect to.
    psql(admin, "CREATE ROLE probe_pw LOGIN PASSWORD '%s'" % SECRET)
    psql(admin, "CREATE DATABASE closed OWNER probe_admin")
    psql(admin, "REVOKE CONNECT ON DATABASE closed FROM PUBLIC")
    hba = os.path.join(d, "data", "pg_hba.conf")
    with open(hba) as f:
        lines = f.read()
    with open(hba, "w") as f:
        f.write("local all probe_pw scram-sha-256\n" + lines)
    pg.ctl("restart")
    # A store whose schema is newer than the program's, an empty schema, and
    # one the service role has no USAGE on.
    psql(owner, "CREATE SCHEMA newer; CREATE SCHEMA empty; CREATE SCHEMA hidden;"
                " CREATE SCHEMA noread; GRANT USAGE ON SCHEMA empty TO probe_service")
    r = subprocess.run([PROBE, "--store", with_schema(owner, "newer"), "--quiet", "init"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "probe init makes a store to age " + r.stderr.strip())
    r = subprocess.run([PROBE, "--store", with_schema(owner, "hidden"), "--quiet", "init"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "probe init makes a store to hide " + r.stderr.strip())
    r = subprocess.run([PROBE, "--store", with_schema(owner, "noread"), "--quiet", "init"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "probe init makes a store not to read " + r.stderr.strip())
    # (the store grants the service role its rights when it is made)
    psql(owner, "REVOKE USAGE ON SCHEMA hidden FROM probe_service;"
                " REVOKE SELECT ON ALL TABLES IN SCHEMA noread FROM probe_service")
    psql(with_schema(owner, "newer"),
         "UPDATE meta SET value = '999' WHERE key = 'schema_version'")

    pw_url = "postgresql://probe_pw:%s@/probe?host=%s" % (SECRET, d)
    expect_refused("a closed port", "postgresql://probe_owner@127.0.0.1:%d/probe" % closed_port(),
                   r"cannot connect to PostgreSQL.*refused")
    # A server that accepts the connection and never answers: the default
    # connect timeout (10 s) ends the wait.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    expect_refused("a server that never answers",
                   "postgresql://probe_owner@127.0.0.1:%d/probe" % silent.getsockname()[1],
                   r"cannot connect to PostgreSQL.*timeout expired")
    silent.close()
    expect_refused("a wrong password", "postgresql://probe_pw:wrong-%s@/probe?host=%s" % (SECRET, d),
                   r"cannot connect to PostgreSQL.*password authentication failed")
    expect_refused("no password", "postgresql://probe_pw@/probe?host=%s&passfile=/nonexistent" % d,
                   r"cannot connect to PostgreSQL.*no password supplied")
    expect_refused("a database without CONNECT", "postgresql:///closed?host=%s&user=probe_owner" % d,
                   r"cannot connect to PostgreSQL.*permission denied for database")
    expect_refused("a missing database", "postgresql:///nodb?host=%s&user=probe_owner" % d,
                   r'cannot connect to PostgreSQL.*database "nodb" does not exist')
    expect_refused("an unknown role", "postgresql:///probe?host=%s&user=nobody_here" % d,
                   r'cannot connect to PostgreSQL.*role "nobody_here" does not exist')
    expect_refused("a malformed URL", "postgresql://probe_owner@[::1/probe",
                   r"cannot connect to PostgreSQL.*IPv6")
    expect_refused("a malformed URL with a password",
                   "postgresql://probe_pw:%s@[::1/probe" % SECRET,
                   r"cannot connect to PostgreSQL.*IPv6")
    expect_refused("an unknown URL parameter", owner + "&no_such_option=1",
                   r'cannot connect to PostgreSQL.*invalid URI query parameter: "no_such_option"')
    expect_refused("a schema newer than the program's", with_schema(service, "newer"),
                   r"schema \(version 999\) is newer than this program's.*upgrade")
    expect_refused("an empty schema", with_schema(service, "empty"),
                   r"no probe store in this database schema.*probe init", no_store=True)
    expect_refused("a schema without USAGE", with_schema(service, "hidden"),
                   r"no current schema \(check search_path\)")
    expect_refused("a store the role may not read", with_schema(service, "noread"),
                   r"permission denied")
    # The password role is fine once it gives the right password: the
    # failures above are the ones named, not any failure.
    r = subprocess.run([PROBE, "--store", pw_url, "list", "run"], capture_output=True, text=True)
    check(r.returncode == 1 and "no probe store" in r.stderr and SECRET not in r.stderr,
          "the right password gets as far as the (missing) store: %r" % r.stderr.strip())
    # Where the store is, as probe init prints it: the password masked, in
    # the authority and as a query parameter (trust login ignores them).
    psql(owner, "CREATE SCHEMA shown")
    for shown in (with_schema("postgresql://probe_owner:%s@/probe?host=%s" % (SECRET, d), "shown"),
                  with_schema(owner, "shown") + "&password=" + SECRET):
        r = subprocess.run([PROBE, "--store", shown, "init"], capture_output=True, text=True)
        check(r.returncode == 0 and "***" in r.stdout and SECRET not in r.stdout + r.stderr,
              "probe init prints the store without its password: %r" % r.stdout.strip())
finish("bad-store")
