#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""search semantic=true ranks by both channels, against the truth.

A deterministic OpenAI-compatible embeddings server runs in this process on
loopback: a bag of words hashed into 256 dimensions over a text's first 12
words, with "instability" counted as "divergence" (so the semantic channel
finds what the keyword channel cannot, and a note whose match lies after
word 12 is found by keywords only). `probe embed --url` caches the vectors,
then probe-mcp-stdio --embed-url serves them. The expected list is computed
here: exact matches first, then reciprocal-rank fusion (1/(60+rank)
summed) of the keyword ranking (search semantic=false) and the cosine
ranking of the vectors stored in the embeddings table, ties by ref; every
page of limit=2 must give that list in order, each entity once, with its
channels and ranks, and a point logged meanwhile must not stale the cursor.

usage: research_hybrid.py PROBE_CLI PROBE_MCP_STDIO
"""
import hashlib
import http.server
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import research_deleted  # noqa: E402

PROBE, STDIO = sys.argv[1], sys.argv[2]
DIM = 256
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def vec(text):
    v = [0.0] * DIM
    words = re.findall(r"[a-z0-9]+", text.lower())[:12]
    for i, w in enumerate(words):
        if w == "instability":
            w = "divergence"
        # weighted by position, so that documents seldom tie
        v[int(hashlib.md5(w.encode()).hexdigest(), 16) % DIM] += 1.0 + 0.01 * i
    return v


class Embed(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = [{"index": i, "embedding": vec(t)} for i, t in enumerate(body["input"])]
        out = json.dumps({"object": "list", "data": data, "model": body.get("model")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *a):
        pass


def cosine(a, b):
    if len(a) != len(b):
        return 0.0
    dot = sum(x * y for x, y in zip(a, b))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


probe = research_deleted.probe


def main():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Embed)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/v1/embeddings" % httpd.server_address[1]
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "s.db")
        probe(store, "init")
        probe(store, "project", "create", "vision")
        R = probe(store, "run", "create", "resnet-train", "--project", "vision")
        R = R.splitlines()[-1].split()[0]
        D = probe(store, "run", "create", "gone-run", "--project", "vision").splitlines()[-1].split()[0]
        notes = [
            "loss divergence at step 400 after the warmup",
            "training instability when the learning rate doubled",
            "we saw instability again with fp16 and a large batch",
            "the eval loss plateaued early in this configuration run with a very "
            "long preamble before the word that matters here which is divergence",
            "divergence divergence divergence in the gradient norm",
            "nothing related at all just a note about the data loader",
            "a quiet run with smooth curves and no surprises at all",
        ]
        for t in notes:
            probe(store, "note", R, t)
        probe(store, "note", D, "divergence on the run that was deleted")
        probe(store, "run", "delete", D)
        n = probe(store, "embed", "--url", url)
        check(int(n.splitlines()[-1]) >= len(notes), "probe embed: %s documents" % n)
        db = sqlite3.connect(store)
        stored = [(r, json.loads(v)) for r, v in db.execute("SELECT ref, vector FROM embeddings")]
        db.close()

        plain = research_deleted.Server(store)
        srv = research_deleted.Server.__new__(research_deleted.Server)
        srv.p = subprocess.Popen([STDIO, "--store", store, "--toolset", "research",
                                  "--embed-url", url],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        srv.id = 0
        srv.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "t", "version": "1"}})
        srv.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        try:
            for q in ["divergence", "resnet-train", "instability"]:
                base = plain.pages("search", {"query": q, "limit": 50}, "results")
                deleted = {h["ref"] for h in plain.pages(
                    "search", {"query": q, "limit": 50, "include_deleted": True}, "results")
                    if h.get("deleted")}
                deleted |= {h["ref"] for h in plain.pages(
                    "browse", {"mode": "notes", "limit": 100, "include_deleted": True}, "notes")
                    if h.get("deleted")}
                check(deleted, "%s: the deleted run's note is known" % q)
                exact = []
                for h in base:
                    if h["channel"] == "exact" and h["ref"] not in exact:
                        exact.append(h["ref"])
                kw = []
                for h in base:
                    if h["channel"] == "keyword" and h["ref"] not in exact and h["ref"] not in kw:
                        kw.append(h["ref"])
                qv = vec(q)
                sem = sorted(((cosine(qv, v), r) for r, v in stored
                              if r not in deleted and r != D),
                             key=lambda x: -x[0])
                sem = [r for s, r in sem if s > 0][:100]
                score = {}
                for i, r in enumerate(kw):
                    score[r] = score.get(r, 0.0) + 1.0 / (60 + i + 1)
                for i, r in enumerate(sem):
                    if r not in exact:
                        score[r] = score.get(r, 0.0) + 1.0 / (60 + i + 1)
                want = exact + [r for _, r in sorted((-s, r) for r, s in score.items())]

                got, cur, pages = [], None, 0
                while True:
                    a = {"query": q, "semantic": True, "limit": 2}
                    if cur:
                        a["cursor"] = cur
                    r, err = srv.call("search", a)
                    check(not err, "%s: page %d is an error: %s" % (q, pages, r))
                    if err:
                        break
                    pages += 1
                    check(isinstance(r["channels"].get("semantic"), int),
                          "%s: semantic channel is on: %s" % (q, r["channels"]))
                    got += r["results"]
                    cur = r.get("next_cursor")
                    if pages == 1 and cur:
                        # the lab goes on training: the cursor stays valid
                        probe(store, "log", R, stdin=b'{"key":"loss","step":1,"value":0.5}\n')
                    if not cur or pages > 50:
                        break
                refs = [h["ref"] for h in got]
                check(refs == want, "%s: fused order\n  got  %s\n  want %s" % (q, refs, want))
                check(len(set(refs)) == len(refs), "%s: an entity twice: %s" % (q, refs))
                check(len(want) <= 2 or pages > 1, "%s: no cursor over %d hits" % (q, len(want)))
                for h in got:
                    ref = h["ref"]
                    if ref in exact:
                        check(h["channel"] == "exact", "%s: %s channel %s" % (q, ref, h))
                        continue
                    chans = [c for c, lst in (("keyword", kw), ("semantic", sem)) if ref in lst]
                    check(h["channel"] == "+".join(chans), "%s: %s channel %s, want %s"
                          % (q, ref, h["channel"], chans))
                    ranks = h.get("ranks", {})
                    if ref in kw:
                        check(ranks.get("keyword") == kw.index(ref) + 1, "%s: %s keyword rank" % (q, h))
                    if ref in sem:
                        check(ranks.get("semantic") == sem.index(ref) + 1, "%s: %s semantic rank" % (q, h))
                    # scores are shown to six significant figures
                    check(abs(h.get("rrf", 0) - score[ref]) <= 1e-5 * score[ref], "%s: %s rrf" % (q, h))
                    check(not h.get("deleted"), "%s: a deleted thing: %s" % (q, h))
                if q == "divergence":
                    kwonly = [h for h in got if h["channel"] == "keyword"]
                    semonly = [h for h in got if h["channel"] == "semantic"]
                    check(kwonly, "divergence: the note only keywords find is kept")
                    check(len(semonly) >= 2, "divergence: the instability notes (semantic only)")
                    # a hit only the embeddings found is told apart by its kind and ref:
                    # notes written by people
                    for h in semonly:
                        check(h.get("provenance") == "person", "divergence: provenance of %s" % h)
        finally:
            plain.close()
            srv.close()
            httpd.shutdown()
    if failures:
        print("%d failure(s)" % failures)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
