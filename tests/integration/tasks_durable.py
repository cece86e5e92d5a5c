#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tasks of the research tools in the 2026-07-28 era, durable in the store:

  tasks_durable.py PROBE PROBE_MCP_STDIO PROBE_MCP_HTTP [pg]

On a `probe demo` store, query_sql (a statement), metrics (grouped) and
find_papers, called with a request that declares
io.modelcontextprotocol/tasks, answer with a task; tasks/get ends with the
inlined result, equal to what the same call without the extension answers
synchronously; query_sql cannot read the tasks table. Over probe-mcp-stdio
and probe-mcp-http (SQLite): a task outlives its process (tasks/get after a
restart); --memory-tasks keeps it in memory. With `pg`: two probe-mcp-http
replicas on one PostgreSQL database (API keys on); a task made on A is
read on B, and after A restarts on the new A; another key's caller does
not see it; A killed while a task works (find_papers reading from a
provider that never answers) leaves a task that B reports failed once A's
lease has run out, never working for ever; listeners on B
(subscriptions/listen) hear the status of tasks that run on A, once, and
no other key's listener does. Skips (77) without
PROBE_TEST_PG_URL in pg mode unless PMCP_TEST_STRICT is set."""
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

PROBE, STDIO, HTTP = sys.argv[1], sys.argv[2], sys.argv[3]
PG = len(sys.argv) > 4 and sys.argv[4] == "pg"
V = "2026-07-28"
EXT = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures += 1


def params(p, caps):
    return dict(p, _meta={"io.modelcontextprotocol/protocolVersion": V,
                          "io.modelcontextprotocol/clientCapabilities": caps})


# ---- transports -------------------------------------------------------------

class Stdio:
    def __init__(self, store, *extra):
        self.p = subprocess.Popen([STDIO, "--store", store, *extra], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.err = []
        threading.Thread(target=lambda: self.err.append(self.p.stderr.read()),
                         daemon=True).start()
        self.id = 0

    def rpc(self, method, p, caps, name=None):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method,
                                       "params": params(p, caps)}) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("probe-mcp-stdio ended: %s" % self.err)
            o = json.loads(line)
            if o.get("id") == self.id:
                return o

    def close(self):
        self.p.stdin.close()
        self.p.wait(60)


class Http:
    def __init__(self, store, *extra, env=None):
        self.p = subprocess.Popen([HTTP, "--listen", "127.0.0.1:0", "--store", store, *extra],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env)
        self.key = None
        deadline = time.time() + 60
        self.url = None
        while time.time() < deadline and not self.url:
            line = self.p.stdout.readline()
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                self.url = m.group(1)
            elif self.p.poll() is not None:
                break
        if not self.url:
            self.p.kill()
            raise SystemExit("probe-mcp-http did not start: %s" % self.p.stderr.read())
        threading.Thread(target=self.p.stdout.read, daemon=True).start()
        threading.Thread(target=self.p.stderr.read, daemon=True).start()

    def rpc(self, method, p, caps, name=None, key=None):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                           "params": params(p, caps)})
        h = {"Content-Type": "application/json",
             "Accept": "application/json, text/event-stream",
             "MCP-Protocol-Version": V, "Mcp-Method": method}
        if name is not None:
            h["Mcp-Name"] = name
        k = key or self.key
        if k:
            h["Authorization"] = "Bearer " + k
        req = urllib.request.Request(self.url, data=body.encode(), method="POST", headers=h)
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                text = r.read().decode()
        except urllib.error.HTTPError as e:
            text = e.read().decode()
        if text.startswith("event:") or text.startswith("data:"):
            text = "\n".join(l[5:] for l in text.splitlines() if l.startswith("data:"))
        return json.loads(text)

    def close(self, kill=False):
        if kill:
            self.p.send_signal(signal.SIGKILL)
        else:
            self.p.terminate()
        try:
            self.p.wait(60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


# ---- calls ------------------------------------------------------------------

def sync_call(srv, tool, args):
    o = srv.rpc("tools/call", {"name": tool, "arguments": args}, {}, name=tool)
    return o.get("result")


def task_call(srv, tool, args):
    o = srv.rpc("tools/call", {"name": tool, "arguments": args}, EXT, name=tool)
    return o.get("result") or o


def get(srv, tid, key=None):
    kw = {"key": key} if key else {}
    return srv.rpc("tasks/get", {"taskId": tid}, EXT, name=tid, **kw)


def wait_done(srv, tid, seconds=60):
    deadline = time.time() + seconds
    while True:
        r = get(srv, tid).get("result") or {}
        if r.get("status") not in ("working", None) or time.time() > deadline:
            return r
        time.sleep(0.1)


def strip_meta(res):
    return {k: v for k, v in (res or {}).items() if k not in ("_meta", "resultType")}


def same_as_sync(who, srv, tool, args, reader=None):
    """The task's result (read on @p reader) equals the synchronous one."""
    want = sync_call(srv, tool, args)
    t = task_call(srv, tool, args)
    check(t.get("resultType") == "task" and t.get("status") == "working" and t.get("taskId"),
          "%s: %s %s answers with a working task (%s)" % (who, tool, args.get("mode", ""),
                                                        json.dumps(t)[:200]))
    if not t.get("taskId"):
        return None
    done = wait_done(reader or srv, t["taskId"])
    check(done.get("status") == "completed", "%s: the %s task completes (%s)" %
          (who, tool, json.dumps(done)[:300]))
    check(want is not None and strip_meta(done.get("result")) == strip_meta(want),
          "%s: the %s task's inlined result is the synchronous result" % (who, tool))
    check(not (want or {}).get("isError"), "%s: %s itself succeeds (%s)" %
          (who, tool, json.dumps(want)[:300]))
    return t["taskId"], done


def probe(store, *args):
    r = subprocess.run([PROBE, "--store", store, "--quiet", *args], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise SystemExit("probe %s: %s" % (" ".join(args), r.stderr))
    return r.stdout


def demo_args(srv):
    """A run and a metric of the demo lab for metrics grouped, read through
    query_sql itself."""
    r = sync_call(srv, "query_sql", {"sql": "SELECT r.slug, s.key FROM series s JOIN runs r "
                                            "ON r.id = s.run_id WHERE s.kind = 'float' "
                                            "ORDER BY s.count DESC, r.slug, s.key LIMIT 1"})
    o = json.loads(r["content"][0]["text"])
    if r.get("isError") or not o.get("rows"):
        raise SystemExit("no series in the demo store: %s" % o)
    run, key = o["rows"][0]
    return {"mode": "grouped", "run_id": "run:%s" % run, "key": key, "by": []}


SQL = {"sql": "SELECT count(*) AS n, min(step) AS lo, max(step) AS hi FROM metric_points"}
PAPERS = {"mode": "search", "query": "learning rate warmup"}


def battery(who, srv, reader=None):
    ids = []
    for tool, args in (("query_sql", SQL), ("metrics", demo_args(srv)),
                       ("find_papers", PAPERS)):
        got = same_as_sync(who, srv, tool, args, reader)
        if got:
            ids.append((tool, got[0], got[1]))
    # Synchronous as before: the table list (query_sql without a statement)
    # and metrics' other modes are not tasks even for a declaring client.
    t = task_call(srv, "query_sql", {})
    check(t.get("resultType") == "complete", "%s: query_sql's table list stays synchronous"
          % who)
    # The tasks table (every caller's arguments and results) is no table
    # query_sql reads.
    r = sync_call(srv, "query_sql", {"sql": "SELECT count(*) FROM tasks"})
    text = json.dumps(r)
    check(r.get("isError") and "tasks" in text and "43394" not in text and
          '"rows"' not in r["content"][0]["text"],
          "%s: query_sql cannot read the tasks table (%s)" % (who, text[:200]))
    return ids


def sqlite_part():
    d = tempfile.mkdtemp(prefix="pmcp-tasks-")
    try:
        store = os.path.join(d, "store.db")
        probe(store, "demo")
        probe(store, "papers", "import", os.path.join(os.environ["PMCP_TEST_DATA"],
                                                       "arxiv-sample", "arxiv-metadata-sample-200.jsonl"))
        s = Stdio(store)
        ids = battery("stdio", s)
        s.close()
        s = Stdio(store)
        for tool, tid, done in ids:
            r = get(s, tid).get("result") or {}
            check(r.get("status") == "completed" and r.get("result") == done.get("result"),
                  "stdio: the %s task is there after a restart (%s %s)" %
                  (tool, r.get("status"), json.dumps(r.get("error"))[:200]))
        s.close()
        # --memory-tasks: nothing is written, the task ends with the process.
        s = Stdio(store, "--memory-tasks")
        t = task_call(s, "query_sql", SQL)
        s.close()
        s = Stdio(store)
        r = get(s, t.get("taskId", "x"))
        check(r.get("error", {}).get("code") == -32602,
              "stdio --memory-tasks: the task ended with its process")
        s.close()

        h = Http(store, "--insecure-no-auth", "--stateless")
        ids = battery("http", h)
        h.close()
        h = Http(store, "--insecure-no-auth", "--stateless")
        for tool, tid, done in ids:
            r = get(h, tid).get("result") or {}
            check(r.get("status") == "completed" and r.get("result") == done.get("result"),
                  "http: the %s task is there after a restart (%s %s)" %
                  (tool, r.get("status"), json.dumps(r.get("error"))[:200]))
        h.close()
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---- PostgreSQL replicas ---------------------------------------------------------

class Listen:
    """subscriptions/listen for @p tids on @p srv as @p key: the stream's
    messages collect in .events (with the time each came) as they come."""
    def __init__(self, srv, tids, key):
        import http.client
        import urllib.parse
        u = urllib.parse.urlparse(srv.url)
        self.c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        body = json.dumps({"jsonrpc": "2.0", "id": 77, "method": "subscriptions/listen",
                           "params": params({"notifications": {"taskIds": tids}}, EXT)})
        self.c.request("POST", u.path, body, {
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": V, "Mcp-Method": "subscriptions/listen",
            "Authorization": "Bearer " + key})
        self.r = self.c.getresponse()
        self.events = []
        threading.Thread(target=self.pump, daemon=True).start()

    def pump(self):
        try:
            for line in self.r:
                line = line.decode().strip()
                if line.startswith("data:") and line[5:].strip():
                    self.events.append((time.time(), json.loads(line[5:])))
        except Exception:
            pass

    def tasks(self, tid):
        return [(t, e["params"]) for t, e in self.events
                if e.get("method") == "notifications/tasks" and e["params"].get("taskId") == tid]

    def close(self):
        self.c.close()


def notifications_across(a, b, key, other):
    """A task runs on A; listeners on B hear of its status through the store."""
    t = task_call(a, "query_sql", {"sql": "SELECT pg_sleep(2) AS s, 42 AS x"})
    tid = t.get("taskId")
    check(t.get("status") == "working", "pg: a 2 s statement on A is a working task")
    on_b = Listen(b, [tid], key)
    on_a = Listen(a, [tid], key)
    stranger = Listen(b, [tid], other)
    done = wait_done(b, tid)
    finished = time.time()
    deadline = time.time() + 10
    while time.time() < deadline and not (on_b.tasks(tid) and on_a.tasks(tid)):
        time.sleep(0.05)
    time.sleep(2.5)  # two more watch intervals: nothing said twice
    acks = [e for _, e in on_b.events if e.get("method") ==
            "notifications/subscriptions/acknowledged"]
    check(len(acks) == 1 and acks[0]["params"]["notifications"].get("taskIds") == [tid],
          "pg: B acknowledges the listener for the task (%s)" % json.dumps(acks)[:200])
    got = on_b.tasks(tid)
    check(len(got) == 1 and got[0][1]["status"] == "completed"
          and got[0][1].get("result") == done.get("result")
          and got[0][1]["_meta"].get("io.modelcontextprotocol/subscriptionId") == 77,
          "pg: a listener on B gets the completed status of A's task once, result inlined "
          "(%s)" % json.dumps([g[1] for g in got])[:400])
    if got:
        late = got[0][0] - finished
        check(late < 1.0 + 1.5, "pg: within the watch interval (1 s) of the end: %.2f s after "
              "B's tasks/get saw it" % late)
    got_a = on_a.tasks(tid)
    check(len(got_a) == 1 and got_a[0][1]["status"] == "completed",
          "pg: the listener on A (the runner) hears it once, not again from the store (%d)"
          % len(got_a))
    check(stranger.tasks(tid) == [], "pg: another key's listener on B hears nothing of it")
    for l in (on_a, on_b, stranger):
        l.close()
    return tid


class BlackHole:
    """A papers provider that accepts connections and never answers."""
    def __init__(self):
        self.s = socket.socket()
        self.s.bind(("127.0.0.1", 0))
        self.s.listen(16)
        self.port = self.s.getsockname()[1]
        self.conns = []
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            try:
                c, _ = self.s.accept()
            except OSError:
                return
            self.conns.append(c)


def pg_part():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pg"))
    import pgtest
    pgtest.need_pg()
    owner, service = os.environ["PROBE_TEST_PG_URL"], os.environ["PROBE_TEST_PG_SERVICE_URL"]
    schema = "tasks_" + secrets.token_hex(4)
    pgtest.psql(owner, "CREATE SCHEMA %s" % schema)
    procs = []
    try:
        owner_url = pgtest.with_schema(owner, schema)
        probe(owner_url, "demo")
        probe(owner_url, "papers", "import", os.path.join(os.environ["PMCP_TEST_DATA"],
                                                           "arxiv-sample", "arxiv-metadata-sample-200.jsonl"))
        key = json.loads(probe(owner_url, "key", "create", "--name", "a", "--json"))["secret"]
        other = json.loads(probe(owner_url, "key", "create", "--name", "b", "--json"))["secret"]
        svc = pgtest.with_schema(service, schema)
        a, b = Http(svc, "--stateless"), Http(svc, "--stateless")
        procs += [a, b]
        a.key = b.key = key
        ids = battery("pg replicas", a, reader=b)
        notifications_across(a, b, key, other)
        for tool, tid, done in ids:
            r = get(b, tid, key=other)
            check(r.get("error", {}).get("code") == -32602,
                  "pg: another key's caller does not see the %s task" % tool)
        # A restarted: its tasks are still there, on it and on B.
        a.close()
        procs.remove(a)
        a = Http(svc, "--stateless")
        procs.append(a)
        a.key = key
        for tool, tid, done in ids:
            r = get(a, tid).get("result") or {}
            check(r.get("status") == "completed" and r.get("result") == done.get("result"),
                  "pg: the %s task made before A's restart is there on the new A" % tool)
        # A replica killed while its task works.
        hole = BlackHole()
        env = dict(os.environ, PROBE_TASK_LEASE_MS="1500")
        c = Http(svc, "--stateless", "--papers-url", "http://127.0.0.1:%d" % hole.port, env=env)
        procs.append(c)
        c.key = key
        t = task_call(c, "find_papers", PAPERS)
        tid = t.get("taskId")
        check(t.get("status") == "working", "pg: a find_papers task on a provider that "
              "never answers is working")
        time.sleep(2.5)
        r = get(b, tid).get("result") or {}
        check(r.get("status") == "working", "pg: it stays working while its replica renews "
              "its lease (%s)" % r.get("status"))
        on_b = Listen(b, [tid], key)
        c.close(kill=True)
        deadline = time.time() + 20
        while time.time() < deadline:
            r = get(b, tid).get("result") or {}
            if r.get("status") != "working":
                break
            time.sleep(0.2)
        check(r.get("status") == "failed" and "lease" in json.dumps(r.get("error")),
              "pg: once the killed replica's lease has run out the task is failed, saying "
              "why (%s)" % json.dumps(r)[:300])
        r2 = get(a, tid).get("result") or {}
        check(r2.get("status") == "failed", "pg: and failed on the other replica too")
        deadline = time.time() + 5
        while time.time() < deadline and not on_b.tasks(tid):
            time.sleep(0.1)
        got = on_b.tasks(tid)
        check(len(got) == 1 and got[0][1]["status"] == "failed",
              "pg: a listener on B hears that the killed replica's task failed (%s)"
              % json.dumps([g[1] for g in got])[:300])
        on_b.close()
    finally:
        for p in procs:
            p.close()
        pgtest.psql(owner, "DROP SCHEMA IF EXISTS %s, %s_sql CASCADE" % (schema, schema))


if PG:
    pg_part()
else:
    sqlite_part()
print("%d failure(s)" % failures)
sys.exit(1 if failures else 0)
