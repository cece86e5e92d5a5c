#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""find_papers search on the local papers index, against a brute-force BM25.

gen-arxiv writes 3,000 arXiv-format records and question-shaped queries
with their relevant papers (one topic's); `probe papers import` loads them.
This test computes BM25 itself, as FTS5 defines it (k1 1.2, b 0.75, column
weights title 2, abstract 1, authors 0.5, IDF floored at 1e-6), over the
records as written, and checks on SQLite: every page's papers are the
brute-force top papers in order (scores equal; ties by import order), the
total is the number of papers holding a query word (stopwords dropped), the
pages at limit 1, 3 and 7 (with small token budgets) concatenate to the
same list with no paper twice, categories keep exactly the papers that
have them, similar never lists the paper itself. On both backends: recall@10
and MRR@10 against the generated truth are at least those of the previous
ranking (every word of the question OR-ed, stopwords included), computed
by brute force too.

usage: papers_ranking.py PROBE_CLI PROBE_MCP_STDIO GEN_ARXIV
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

GEN = sys.argv.pop(3)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import research_deleted as rd  # noqa: E402
from research_deleted import Server, check, probe  # noqa: E402

# the documented stopword list (papers_words.c)
STOP = set("""a about above after again against all am an and any are as at be because
been before being below between both but by can could did do does doing down during each
few for from further had has have having he her here hers herself him himself his how i if
in into is it its itself just me more most my myself no nor not of off on once only or
other our ours ourselves out over own same she should so some such than that the their
theirs them themselves then there these they this those through to too under until up very
was we were what when where which while who whom why will with would you your yours
yourself yourselves""".split())
WEIGHTS = (2.0, 1.0, 0.5)
N_PAPERS = 3000


def tokens(s):
    return [t.lower() for t in re.findall(r"[A-Za-z0-9\x80-\U0010ffff]+", s or "")]


class Corpus:
    def __init__(self, path):
        self.docs = []  # (id, [tf dict per column], length, categories)
        for line in open(path):
            o = json.loads(line)
            cols = [tokens(o["title"]), tokens(o["abstract"]), tokens(o["authors"])]
            tfs = []
            for c in cols:
                d = {}
                for t in c:
                    d[t] = d.get(t, 0) + 1
                tfs.append(d)
            self.docs.append((o["id"], tfs, sum(len(c) for c in cols), o["categories"]))
        self.n = len(self.docs)
        self.avgdl = sum(d[2] for d in self.docs) / self.n
        self.df = {}

    def dfreq(self, t):
        if t not in self.df:
            self.df[t] = sum(1 for d in self.docs if any(t in c for c in d[1]))
        return self.df[t]

    def rank(self, words, cats=()):
        """[(bm25, index, id)] best first over the papers holding a word"""
        idf = {}
        for w in words:
            v = math.log((self.n - self.dfreq(w) + 0.5) / (self.dfreq(w) + 0.5))
            idf[w] = v if v > 0 else 1e-6
        out = []
        for i, (pid, tfs, dl, dc) in enumerate(self.docs):
            if cats and not all(any(c == w or c.startswith(w + ".") for c in dc.split())
                                for w in cats):
                continue
            s, hit = 0.0, False
            for w in words:
                f = sum(WEIGHTS[k] * tfs[k].get(w, 0) for k in range(3))
                if f:
                    hit = True
                    s += idf[w] * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * dl / self.avgdl))
            if hit:
                out.append((-s, i, pid))
        out.sort()
        return out


def words_new(q):
    seen = []
    for t in tokens(q):
        if t not in seen:
            seen.append(t)
    content = [t for t in seen if t not in STOP]
    return content or seen


def words_old(q):
    return [t for t in tokens(q)]


def pages(srv, args, limit, budget=None):
    out, cur, total = [], None, None
    for _ in range(400):
        a = dict(args, limit=limit)
        if budget:
            a["token_budget"] = budget
        if cur:
            a["cursor"] = cur
        r, err = srv.call("find_papers", a)
        if err:
            check(False, "find_papers %s: %s" % (a, r))
            return out, total
        total = r.get("total")
        out += [p["ref"][6:] for p in r["papers"]]
        cur = r.get("next_cursor")
        if not cur or len(out) >= 40:
            return out, total
    check(False, "no end of pages")
    return out, total


def judge(ids, rel):
    top = ids[:10]
    hit = sum(1 for x in top if x in rel)
    rr = next((1.0 / (i + 1) for i, x in enumerate(top) if x in rel), 0.0)
    return hit / min(10, len(rel)), rr


def main():
    rd.pg_skip()
    tmp = tempfile.mkdtemp(prefix="papers-rank-")
    data, qf = os.path.join(tmp, "p.jsonl"), os.path.join(tmp, "q.tsv")
    subprocess.run([GEN, str(N_PAPERS), data, qf], check=True)
    corpus = Corpus(data)
    store = rd.new_store(tmp, "papers")
    probe(store, "papers", "import", data)
    queries = [l.rstrip("\n").split("\t") for l in open(qf)][:40]
    srv = Server(store)
    by_id = {d[0]: i for i, d in enumerate(corpus.docs)}
    rec_new = mrr_new = rec_old = mrr_old = 0.0
    for qi, (q, rel) in enumerate(queries):
        rel = set(rel.split())
        want = corpus.rank(words_new(q))
        got, total = pages(srv, {"mode": "search", "query": q}, 10)
        check(len(got) == len(set(got)), "%r: a paper twice: %s" % (q, got))
        check(total == len(want), "%r: total %s, brute force %d" % (q, total, len(want)))
        if not rd.PG:
            score = {w[2]: w[0] for w in want}
            for i, pid in enumerate(got):
                ok = i < len(want) and abs(score.get(pid, 1e9) - want[i][0]) <= 1e-9 * (
                    1 + abs(want[i][0]))
                check(ok, "%r: place %d is %s (bm25 %s), brute force %s (%s)" % (
                    q, i, pid, score.get(pid), want[i][2] if i < len(want) else None,
                    want[i][0] if i < len(want) else None))
                if not ok:
                    break
        if qi < 6:
            # other page sizes and budgets give the same list
            for lim, budget in ((1, None), (3, 600), (7, 900)):
                g2, _ = pages(srv, {"mode": "search", "query": q}, lim, budget)
                n = min(len(g2), len(got))
                check(len(g2) == len(set(g2)), "%r limit %d: a paper twice" % (q, lim))
                check(g2[:n] == got[:n] and n >= 10,
                      "%r limit %d: %s, limit 10: %s" % (q, lim, g2[:n], got[:n]))
        if qi < 4:
            cats = [corpus.docs[by_id[got[0]]][3].split()[0].split(".")[0]]
            wc = corpus.rank(words_new(q), cats)
            gc, tc = pages(srv, {"mode": "search", "query": q, "categories": cats}, 10)
            check(tc == len(wc), "%r in %s: total %s, brute force %d" % (q, cats, tc, len(wc)))
            wset = {w[2] for w in wc}
            check(gc and all(x in wset for x in gc), "%r in %s: %s" % (q, cats, gc))
            if not rd.PG:
                check(gc == [w[2] for w in wc[:len(gc)]], "%r in %s: order" % (q, cats))
            sim, st = pages(srv, {"mode": "similar", "paper": "paper:" + got[0]}, 10)
            check(got[0] not in sim and len(sim) >= 10, "similar to %s: %s" % (got[0], sim))
        r, n = judge(got, rel)
        rec_new += r
        mrr_new += n
        r, n = judge([w[2] for w in corpus.rank(words_old(q))], rel)
        rec_old += r
        mrr_old += n
    nq = len(queries)
    print("recall@10 %.3f (previous ranking %.3f), MRR@10 %.3f (previous %.3f) over %d queries"
          % (rec_new / nq, rec_old / nq, mrr_new / nq, mrr_old / nq, nq))
    check(rec_new >= rec_old - 1e-9 and mrr_new >= mrr_old - 1e-9,
          "relevance below the previous ranking's")
    # a question of stopwords alone searches for them (PostgreSQL's english
    # configuration indexes none: nothing matches there); no words at all is
    # an error
    r, err = srv.call("find_papers", {"mode": "search", "query": "what is the", "limit": 3})
    check(not err and r.get("total") == (0 if rd.PG else len(corpus.rank(["what", "is", "the"]))),
          "stopwords alone: %s" % r)
    r, err = srv.call("find_papers", {"mode": "search", "query": "?? --", "limit": 3})
    check(err and "no words" in r.get("message", ""), "no words: %s" % r)
    r, err = srv.call("find_papers", {"mode": "search", "query": "gigomak",
                                      "categories": ["cs LG"]})
    check(err and "category" in r.get("message", ""), "a category with a space: %s" % r)
    srv.close()
    rd.drop_store(store)
    rd.finish()


main()
