#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The skill research-with-probe, served by probe-mcp-stdio and probe-mcp-http
over the demo store, against the truth.

- Negotiation: capabilities.extensions names io.modelcontextprotocol/skills
  in initialize (2025-11-25) and in server/discover (2026-07-28) with the
  research toolset, and not with the tracking toolset alone (where
  skills/list is method-not-found); modern skills/list and skills/get
  results are complete and carry ttlMs and cacheScope.
- The manifest: every file of skills/research-with-probe/ is served (but
  tracking.md only beside the tracking toolset), each resources/read
  returns the checked-in bytes, and digest and size are theirs (hashlib);
  the frontmatter is the one SKILL.md holds; skills/get answers the listed
  entry and -32602 for anything else.
- What the skill names exists: every backticked call `tool(arg=value, ...)`
  names a tool of tools/list, arguments it has, a mode of its enum and
  only arguments that mode reads, enum values it offers, ref kinds the
  server knows and view_options its description names; every backticked
  name is a tool, an argument, an enum value, a member or value seen in
  real answers of the tools, or a fragment word of pmcp_page(3); every
  file it points to is one of its files; the view table of
  reference/refs.md equals probe://views and the mode table of
  reference/metrics.md lists exactly the arguments each mode reads.

usage: skills.py PROBE_CLI PROBE_MCP_STDIO SOURCE_ROOT [PROBE_MCP_HTTP]
"""
import hashlib
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

PROBE, STDIO, ROOT = sys.argv[1], sys.argv[2], sys.argv[3]
HTTP = sys.argv[4] if len(sys.argv) > 4 else None
SKILL_DIR = os.path.join(ROOT, "skills", "research-with-probe")
EXT = "io.modelcontextprotocol/skills"
SKILL_URI = "skill://research-with-probe/SKILL.md"
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}}
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)
    return cond


# ---- clients ----

class Stdio:
    def __init__(self, store, toolset):
        self.p = subprocess.Popen([STDIO, "--store", store, "--toolset", toolset],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.id = 0

    def rpc(self, method, params=None):
        self.id += 1
        msg = {"jsonrpc": "2.0", "id": self.id, "method": method}
        if params is not None:
            msg["params"] = params
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("server ended: " + self.p.stderr.read().decode())
            m = json.loads(line)
            if m.get("id") == self.id:
                return m

    def notify(self, method):
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        self.p.stdin.flush()

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


class Http:
    """probe-mcp-http on loopback; legacy calls in one session, modern ones
    stateless with the headers the 2026-07-28 transport asks for."""

    def __init__(self, store, toolset):
        self.p = subprocess.Popen([HTTP, "--listen", "127.0.0.1:0", "--store", store,
                                   "--toolset", toolset, "--insecure-no-auth"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.p.stdout.readline().decode()
        m = re.search(r"listening on http://([^:/\s]+):(\d+)", line)
        if not m:
            raise RuntimeError("probe-mcp-http did not start: " + line)
        self.host, self.port = m.group(1), int(m.group(2))
        self.id = 0
        self.session = None

    def post(self, msg, headers):
        c = http.client.HTTPConnection(self.host, self.port, timeout=30)
        h = {"Content-Type": "application/json",
             "Accept": "application/json, text/event-stream"}
        h.update(headers)
        c.request("POST", "/mcp", json.dumps(msg), h)
        r = c.getresponse()
        body = r.read().decode()
        sid = r.getheader("mcp-session-id")
        ctype = r.getheader("content-type") or ""
        c.close()
        if ctype.startswith("text/event-stream"):
            data = [ln[5:].strip() for ln in body.split("\n") if ln.startswith("data:")]
            msgs = [json.loads(d) for d in data if d]
            body = json.dumps([m for m in msgs if m.get("id") == msg.get("id")][-1])
        return (json.loads(body) if body.strip() else None), sid

    def rpc(self, method, params=None):
        self.id += 1
        msg = {"jsonrpc": "2.0", "id": self.id, "method": method}
        if params is not None:
            msg["params"] = params
        modern = params is not None and "_meta" in params
        if modern:
            headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
            if method == "resources/read":
                headers["Mcp-Name"] = params["uri"]
        else:
            headers = {"MCP-Protocol-Version": "2025-11-25"}
            if self.session:
                headers["Mcp-Session-Id"] = self.session
        r, sid = self.post(msg, headers)
        if method == "initialize":
            self.session = sid
        return r

    def notify(self, method):
        self.post({"jsonrpc": "2.0", "method": method},
                  {"Mcp-Session-Id": self.session, "MCP-Protocol-Version": "2025-11-25"})

    def close(self):
        self.p.terminate()
        self.p.wait(timeout=10)


def init(c):
    r = c.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "skills-test", "version": "1"}})
    c.notify("notifications/initialized")
    return r["result"]


def modern(params=None):
    p = dict(params or {})
    p["_meta"] = MODERN
    return p


# ---- what the server offers ----

def tools_of(c):
    tools, cursor = [], None
    while True:
        r = c.rpc("tools/list", {"cursor": cursor} if cursor else {})["result"]
        tools += r["tools"]
        cursor = r.get("nextCursor")
        if not cursor:
            return {t["name"]: t for t in tools}


def read_by(prop):
    """The modes a property is read by (from "Read by mode(s) a, b (required)."),
    or None when every mode reads it."""
    m = re.search(r"Read by modes? ([^.]*)\.", prop.get("description", ""))
    if not m:
        return None
    return {w.split(" ")[0] for w in m.group(1).split(", ")}


def call(c, tool, args):
    r = c.rpc("tools/call", {"name": tool, "arguments": args})["result"]
    return json.loads(r["content"][0]["text"])


def words_of(v, out):
    """Every member name and every identifier-like string value in @v."""
    if isinstance(v, dict):
        for k, x in v.items():
            out.add(k)
            words_of(x, out)
    elif isinstance(v, list):
        for x in v:
            words_of(x, out)
    elif isinstance(v, str) and re.fullmatch(r"[a-z][a-z0-9_-]*", v):
        out.add(v)


def observed_words(c, tools):
    """Members and values of real answers of the research tools."""
    out = set()
    samples = [
        ("browse", {"limit": 1}),
        ("browse", {"mode": "runs", "limit": 1}),
        ("search", {"query": "warmup", "limit": 2}),
        ("entity", {"refs": ["run:warmup-0"]}),
        ("metrics", {"mode": "series", "run_ids": ["run:warmup-0"], "keys": ["train/loss"],
                     "max_points": 5}),
        ("metrics", {"mode": "series", "run_ids": ["run:warmup-0", "run:nope"],
                     "keys": ["train/loss"], "max_points": 5}),
        ("metrics", {"mode": "series", "run_ids": ["run:warmup-0"], "keys": ["train/loss"],
                     "max_points": 1000, "token_budget": 512}),
        ("metrics", {"mode": "points", "run_id": "run:warmup-0", "key": "train/loss",
                     "limit": 2}),
        ("metrics", {"mode": "coordinates", "run_id": "run:baseline-seed0"}),
        ("metrics", {"mode": "series", "run_ids": ["run:warmup-0"], "keys": ["lr"],
                     "by": ["rank"]}),
        ("find_papers", {"mode": "search", "query": "how does warmup help training"}),
    ]
    if "list_runs" in tools:
        samples.append(("list_runs", {"project": "cifar-resnet", "limit": 1}))
    for tool, args in samples:
        words_of(call(c, tool, args), out)
    return out


def ref_kinds(c):
    """The kinds the server knows, from its own refusal of an unknown one."""
    r = call(c, "entity", {"refs": ["nokind:x"]})
    m = re.search(r"kinds are ([a-z, -]+)", r["message"])
    kinds = {k.strip() for k in m.group(1).split(",")}
    return kinds | {"paper"}  # find_papers' own refs


# ---- the markdown ----

def body_of(text):
    """The text after the frontmatter."""
    if text.startswith("---\n"):
        end = text.index("\n---\n", 4)
        return text[end + 5:]
    return text


def spans(text):
    return re.findall(r"`([^`\n]+)`", body_of(text))


def split_args(s):
    """'a=1, b=[1, 2], c={"x": "y, z"}' -> ['a=1', 'b=[1, 2]', ...]"""
    out, depth, quote, cur = [], 0, False, ""
    for i, ch in enumerate(s):
        if quote:
            cur += ch
            if ch == '"' and s[i - 1] != "\\":
                quote = False
            continue
        if ch == '"':
            quote = True
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Checker:
    def __init__(self, tools, kinds, seen, fragment_words, files):
        self.tools = tools
        self.kinds = kinds
        self.seen = seen
        self.fragment_words = fragment_words
        self.files = files
        self.props = {}
        self.enums = set()
        self.described = set()
        for t in tools.values():
            words_of_text(t.get("description", ""), self.described)
            for k, p in t["inputSchema"].get("properties", {}).items():
                self.props.setdefault(k, []).append(p)
                self.enums |= set(p.get("enum", []))
                words_of_text(p.get("description", ""), self.described)

    def check_ref(self, ref, where):
        m = re.fullmatch(r"([a-z-]+):(.+)", ref)
        check(m and m.group(1) in self.kinds, "%s: ref %r has an unknown kind" % (where, ref))

    def check_value(self, tool, name, prop, value, where):
        if "enum" in prop:
            check(value in prop["enum"], "%s: %s=%r is not one of %s" %
                  (where, name, value, prop["enum"]))
        if name in ("refs", "run_ids"):
            for ref in value:
                self.check_ref(ref, where)
        if name == "run_id":
            self.check_ref(value, where)
        if name == "paper":
            self.check_ref(value, where)
        if name == "view_options":
            for k in value:
                check(re.search(r"\b%s\b" % re.escape(k), prop.get("description", "")),
                      "%s: view_options key %r is not one the tool names" % (where, k))

    def check_call(self, tool, args, where):
        t = self.tools.get(tool)
        if not check(t is not None, "%s: no tool %r" % (where, tool)):
            return
        props = t["inputSchema"].get("properties", {})
        parsed = {}
        for a in split_args(args):
            m = re.fullmatch(r"([a-z_]+)=(.+)", a, re.S)
            if not check(m, "%s: %r is not name=value" % (where, a)):
                continue
            name, text = m.group(1), m.group(2)
            try:
                parsed[name] = json.loads(text)
            except ValueError:
                check(False, "%s: the value of %s is not JSON: %s" % (where, name, text))
                continue
            check(name in props, "%s: %s has no argument %r" % (where, tool, name))
        mode = parsed.get("mode")
        for name, value in parsed.items():
            if name not in props:
                continue
            self.check_value(tool, name, props[name], value, where)
            modes = read_by(props[name])
            if mode and modes is not None:
                check(mode in modes, "%s: %s mode %r does not read %r (read by %s)" %
                      (where, tool, mode, name, sorted(modes)))

    def check_assignment(self, name, text, where):
        if not check(name in self.props, "%s: no tool has an argument %r" % (where, name)):
            return
        value = json.loads(text)
        enums = [p["enum"] for p in self.props[name] if "enum" in p]
        if enums:
            check(any(value in e for e in enums), "%s: %s=%r is no enum value" %
                  (where, name, value))

    def check_span(self, s, where):
        m = re.fullmatch(r"([a-z_]+)\((.*)\)", s, re.S)
        if m:
            return self.check_call(m.group(1), m.group(2), where + " " + s)
        m = re.fullmatch(r"([a-z_]+)=(.+)", s)
        if m:
            return self.check_assignment(m.group(1), m.group(2), where + " " + s)
        if re.fullmatch(r"[A-Za-z0-9_./-]+\.md", s):
            return check(s in self.files, "%s: %r is no file of the skill" % (where, s))
        if re.fullmatch(r"[a-z-]+:[A-Za-z0-9._@-]+", s):
            if s != "kind:id":
                self.check_ref(s, where)
            return
        if re.fullmatch(r"[a-z][a-z0-9_-]*", s):
            known = (s in self.tools or s in self.props or s in self.enums or
                     s in self.kinds or s in self.seen or s in self.fragment_words or s in self.described)
            check(known, "%s: %r is no tool, argument, value or answer member" % (where, s))
        # anything else (metric keys such as `val/acc`, `>=2`, punctuation)
        # names data, not the interface


def words_of_text(text, out):
    out.update(re.findall(r"[a-z][a-z0-9_]*", text))


def frontmatter_of(text):
    """The frontmatter of our SKILL.md: key: value lines, one level of nesting."""
    lines = text[4:text.index("\n---\n", 4)].split("\n")
    out, parent = {}, None
    for ln in lines:
        m = re.fullmatch(r"( *)([A-Za-z0-9_-]+):(?: (.*))?", ln)
        if m.group(1) and parent is not None:
            out[parent][m.group(2)] = m.group(3)
        elif m.group(3) is None:
            parent = m.group(2)
            out[parent] = {}
        else:
            parent = None
            out[m.group(2)] = m.group(3)
    return out


def source_files():
    out = {}
    for d, _, names in os.walk(SKILL_DIR):
        for n in names:
            p = os.path.join(d, n)
            out[os.path.relpath(p, SKILL_DIR).replace(os.sep, "/")] = open(p, "rb").read()
    return out


def check_manifest(c, entry, with_tracking, label):
    src = source_files()
    want = {k: v for k, v in src.items() if with_tracking or k != "tracking.md"}
    check(entry["uri"] == SKILL_URI, label + ": the skill's uri")
    check(entry["frontmatter"] == frontmatter_of(src["SKILL.md"].decode()),
          label + ": frontmatter differs from SKILL.md's: %s" % entry["frontmatter"])
    served = {}
    for f in entry["resources"]:
        rel = f["uri"][len("skill://research-with-probe/"):]
        r = c.rpc("resources/read", {"uri": f["uri"]})["result"]["contents"][0]
        data = r["text"].encode()
        served[rel] = data
        check(f["size"] == len(data), "%s: %s size %d, read %d bytes" %
              (label, rel, f["size"], len(data)))
        check(f["digest"] == "sha256:" + hashlib.sha256(data).hexdigest(),
              "%s: %s digest differs from the bytes read" % (label, rel))
        check(r["mimeType"] == "text/markdown", label + ": mime type of " + rel)
    check(len(served) == len(entry["resources"]), label + ": a file listed twice")
    check(served == want, "%s: served files %s, checked in %s" %
          (label, sorted(served), sorted(want)))
    return served


def check_content(c, tools, served, label):
    files = set(served) | {"tracking.md"}  # SKILL.md says when it is there
    page = open(os.path.join(ROOT, "man", "pmcp_page.3.scd")).read()
    fragment_words = {w for w in ("text_fragment", "json_fragment", "format", "text",
                                  "offset", "total_chars", "sha256", "complete",
                                  "document_changed") if w in page}
    ck = Checker(tools, ref_kinds(c), observed_words(c, tools), fragment_words, files)
    n = 0
    for rel, data in served.items():
        for s in spans(data.decode()):
            ck.check_span(s, "%s %s" % (label, rel))
            n += 1
    check(n > 100, "%s: only %d names checked" % (label, n))
    for t in ("browse", "search", "entity", "metrics", "query_sql", "find_papers"):
        check("`%s`" % t in served["SKILL.md"].decode(), label + ": SKILL.md never names " + t)
    if "tracking.md" in served:
        text = served["tracking.md"].decode()
        missing = [t for t in tools if t not in ck_research_tools and "`%s" % t not in text]
        check(not missing, label + ": tracking.md never names %s" % missing)
    # the view matrix against the server's own
    views = json.loads(c.rpc("resources/read", {"uri": "probe://views"})["result"]
                       ["contents"][0]["text"])
    table = {}
    for ln in served["reference/refs.md"].decode().split("\n"):
        m = re.fullmatch(r"\| `([a-z-]+)` \| ((?:`[a-z_]+` ?)+) \|", ln)
        if m:
            table[m.group(1)] = re.findall(r"`([a-z_]+)`", m.group(2))
    check(table == views, "%s: refs.md's view table differs from probe://views" % label)
    # the metrics mode table: exactly the arguments each mode reads
    props = tools["metrics"]["inputSchema"]["properties"]
    rows = 0
    for ln in served["reference/metrics.md"].decode().split("\n"):
        m = re.fullmatch(r"\| `([a-z]+)` \| ([^|]+) \|[^|]+\|", ln)
        if not m:
            continue
        mode, listed = m.group(1), set(re.findall(r"`([a-z_]+)`", m.group(2)))
        if mode == "mode":
            continue  # the header
        reads = {k for k, p in props.items()
                 if read_by(p) is not None and mode in read_by(p)}
        check(listed == reads, "%s: metrics.md lists for %s %s, the tool reads %s" %
              (label, mode, sorted(listed), sorted(reads)))
        rows += 1
    check(rows == len(props["mode"]["enum"]),
          "%s: metrics.md has %d mode rows, the tool %d modes" %
          (label, rows, len(props["mode"]["enum"])))


ck_research_tools = {"browse", "search", "entity", "metrics", "query_sql", "find_papers"}


def negotiation(c, label, served):
    caps = init(c)["capabilities"]
    check((EXT in caps.get("extensions", {})) == served,
          "%s: initialize's extensions %s" % (label, caps.get("extensions")))
    if served:
        check(caps["extensions"][EXT] == {}, label + ": no optional features declared")
        check("resources" in caps, label + ": skills come with the resources capability")
    d = c.rpc("server/discover", modern())["result"]
    check((EXT in d["capabilities"].get("extensions", {})) == served,
          "%s: server/discover's extensions %s" % (label, d["capabilities"]))
    for p in ({}, modern()):
        r = c.rpc("skills/list", p)
        if not served:
            check(r.get("error", {}).get("code") == -32601, label + ": skills/list without skills")
            continue
        res = r["result"]
        if "_meta" in p:
            check(res.get("resultType") == "complete" and "ttlMs" in res and
                  res.get("cacheScope") in ("public", "private"),
                  label + ": modern skills/list is complete and cacheable: %s" % list(res))
        check(len(res["skills"]) == 1 and "nextCursor" not in res, label + ": one skill")


def serve(c, label, with_tracking):
    negotiation(c, label, True)
    entry = c.rpc("skills/list", {})["result"]["skills"][0]
    served = check_manifest(c, entry, with_tracking, label)
    for p in ({"uri": SKILL_URI}, modern({"uri": SKILL_URI})):
        r = c.rpc("skills/get", p)["result"]
        check(r["skill"] == entry, label + ": skills/get answers the listed entry")
        if "_meta" in p:
            check(r.get("resultType") == "complete" and "ttlMs" in r and "cacheScope" in r,
                  label + ": modern skills/get is complete and cacheable")
    for uri in ("skill://research-with-probe/reference/refs.md",
                "skill://research-with-probe", "skill://nope/SKILL.md"):
        for p in ({"uri": uri}, modern({"uri": uri})):
            r = c.rpc("skills/get", p)
            check(r.get("error", {}).get("code") == -32602, "%s: skills/get %s: %s" %
                  (label, uri, r))
    # modern resources/read of a skill file: the same bytes
    r = c.rpc("resources/read", modern({"uri": SKILL_URI}))["result"]
    check(r["contents"][0]["text"].encode() == served["SKILL.md"],
          label + ": modern resources/read of SKILL.md")
    return served


def main():
    d = tempfile.mkdtemp(prefix="pmcp-skills-")
    try:
        store = os.path.join(d, "store.db")
        subprocess.run([PROBE, "--store", store, "--quiet", "demo"], check=True,
                       capture_output=True)
        for toolset, with_tracking in (("research", False), ("all", True)):
            c = Stdio(store, toolset)
            label = "stdio " + toolset
            served = serve(c, label, with_tracking)
            tools = tools_of(c)
            check_content(c, tools, served, label)
            c.close()
        c = Stdio(store, "tracking")
        negotiation(c, "stdio tracking", False)
        c.close()
        if HTTP:
            c = Http(store, "all")
            try:
                serve(c, "http all", True)
            finally:
                c.close()
            c = Http(store, "tracking")
            try:
                negotiation(c, "http tracking", False)
            finally:
                c.close()
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("skills: %s" % ("ok" if not failures else "%d failures" % failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
