#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""probe log's line format against Python's json module as the truth.

usage: cli_log.py PROBE PROBE_MCP_STDIO

Generates JSON lines in every shape probe(1) documents (key/value,
several values, labels that cycle, time as milliseconds and ISO 8601,
NaN/Infinity strings, histograms, scatter sets) written in awkward but
valid JSON (escapes, \\u sequences, surrogate pairs, exponents, 17-digit
floats, -0, whitespace, unknown members holding nested values, repeated
members where the first counts), logs them, and reads every point back
losslessly with metrics mode=points: each must equal what json.loads
made of its line, in order; the same lines again from a file (read in
chunks as it goes, lines cut across them), and a file of numbers that
are hard to convert (subnormals, halfway cases, 17-20 digits, large
exponents, -0, "NaN"/"Infinity" strings) in the shapes of the benchmark,
against Python's float(). Then bad lines, each after good ones: the
error names the line and the problem and nothing of the batch is stored."""
import json
import math
import os
import random
import subprocess
import sys
import tempfile

probe, stdio = sys.argv[1:3]
tmp = tempfile.mkdtemp(prefix="pmcp-log-")
store = os.path.join(tmp, "store.db")
rnd = random.Random(7)
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(*args, stdin=None):
    r = subprocess.run([probe, "--store", store, *args], input=stdin, capture_output=True,
                       text=True)
    return r.returncode, r.stdout, r.stderr


assert run("init")[0] == 0
assert run("run", "create", "r1")[0] == 0


def number_text(v):
    """A JSON spelling of v (valid, not always the shortest)."""
    k = rnd.randrange(6)
    if k == 0:
        return repr(v)
    if k == 1:
        return "%.17g" % v
    if k == 2:
        return "%.6e" % v
    if k == 3:
        return "%.3E" % v
    if k == 4:
        return "%.12f" % v
    return json.dumps(v)


keys = ["loss", "train/acc", "caf\u00e9", "q\"uote", "emoji\U0001F600", "back\\slash"]
lines, truth = [], {}  # truth: (key, labels tuple, scale) -> [(step, value, time)]


def add(key, labels, scale, step, value, t):
    truth.setdefault((key, tuple(sorted(labels.items())), scale), []).append((step, value, t))


for i in range(6000):
    shape = rnd.randrange(5)
    labels = {"rank": str(i % 3)} if rnd.random() < 0.5 else {}
    scale = "step" if rnd.random() < 0.8 else "episode"
    step = i * 3 + rnd.randrange(3)
    parts = []
    t = None
    if rnd.random() < 0.3:
        t = 1700000000000 + i
        parts.append('"time":%d' % t)
    elif rnd.random() < 0.1:
        t = 1700000000000
        parts.append('"time":"2023-11-14T22:13:20Z"')
    if shape <= 1:
        key = rnd.choice(keys)
        r = rnd.random()
        if r < 0.05:
            vt, v = '"NaN"', float("nan")
        elif r < 0.08:
            vt, v = '"-Infinity"', float("-inf")
        elif r < 0.1:
            vt, v = "-0.0", -0.0
        else:
            v = rnd.uniform(-1e3, 1e3) * 10 ** rnd.randrange(-30, 30)
            vt = number_text(v)
            v = json.loads(vt)
        kj = json.dumps(key, ensure_ascii=rnd.random() < 0.5)
        parts += ['"key":%s' % kj, '"step":%d' % step, '"value":%s' % vt]
        if shape == 1:
            parts.append('"extra":{"a":[1,2,{"b":null}],"c":"x\\ty"}')
        add(key, labels, scale, step, v, t)
    elif shape == 2:
        vals = {}
        for k in keys[:4]:
            v = rnd.gauss(0, 1)
            vals[k] = v
        parts += ['"step":%d' % step,
                  '"values":{%s}' % ",".join("%s: %s" % (json.dumps(k), repr(v))
                                             for k, v in vals.items())]
        for k, v in vals.items():
            add(k, labels, scale, step, v, t)
    else:
        # the common line of a training loop, same shape every time
        v = rnd.random()
        parts += ['"key":"steady"', '"step":%d' % step, '"value":%s' % repr(v)]
        labels, scale = {}, "step"
        add("steady", labels, scale, step, v, t)
    if labels:
        parts.append('"labels":%s' % json.dumps(labels))
    if scale != "step":
        parts.append('"scale":"%s"' % scale)
    if shape != 4:
        rnd.shuffle(parts)
    if shape == 1:
        parts.append('"value":123')  # a repeat: the first counts
    sep = rnd.choice([",", ", ", " ,\t"])
    line = "{" + sep.join(parts) + "}"
    if rnd.random() < 0.1:
        line = "  " + line + " \r"
    lines.append(line)
    if i % 500 == 0:
        lines.append('{"key":"w","kind":"histogram","step":%d,"edges":[0,1,2],"counts":[3,4]}'
                     % step)
        lines.append("")

rc, _, err = run("log", "r1", stdin="\n".join(lines))  # no final newline
check(rc == 0, "valid lines are logged: " + err)
# A regular file is read in chunks as it goes (a pipe's batch is held
# whole): the same lines from a file, with lines cut across chunks.
src = os.path.join(tmp, "lines.jsonl")
with open(src, "w") as f:
    f.write("\n".join(lines))
assert run("run", "create", "r2")[0] == 0
rc, _, err = run("log", "r2", "--file", src)
check(rc == 0, "valid lines from a file are logged: " + err)


def awkward():
    """A JSON spelling of a double that is hard to convert."""
    k = rnd.randrange(10)
    if k == 0:  # subnormals
        v = rnd.random() * 2.2250738585072014e-308 * rnd.choice([1, 1e-5, 1e-15])
    elif k == 1:  # large (a series whose sum overflows is not readable yet)
        v = rnd.random() * 1e300
    elif k == 2:  # halfway between neighbours, written out exactly
        return "%d.5e%d" % (rnd.getrandbits(53) | 1, rnd.randrange(-30, 30))
    elif k == 3:
        return rnd.choice(["-0", "-0.0", "0e5", "0.000", "1E+0", "1e-0", "-1.0e-400", "1e300",
                           "2.2250738585072011e-308", "2.2250738585072012e-308", "4.9e-324",
                           "5e-324", "2.4703282292062328e-324", "9007199254740993",
                           "9007199254740992.5", "123456789012345678901234567890", "0.1",
                           "0.30000000000000004", "1.7976931348623157e300"])
    elif k == 4:
        return rnd.choice(['"NaN"', '"Infinity"', '"-Infinity"'])
    else:
        v = rnd.uniform(-1, 1) * 10 ** rnd.randrange(-320, 300)
    return rnd.choice(["%.17g", "%.16g", "%.15g", "%.18g", "%.20e", "%.6g"]) % v


truth_file = {}
with open(os.path.join(tmp, "awkward.jsonl"), "w") as f:
    for i in range(30000):
        if i % 3:
            vt = awkward()
            f.write('{"key":"one","step":%d,"value":%s}\n' % (i, vt))
            truth_file.setdefault(("one", (), "step"), []).append((i, float(vt.strip('"')), None))
        else:
            vals = [awkward() for _ in range(10)]
            f.write('{"step":%d,"values":{%s},"labels":{"rank":"%d"}}\n' % (
                i, ",".join('"k%d":%s' % (k, v) for k, v in enumerate(vals)), i % 4))
            for k, v in enumerate(vals):
                truth_file.setdefault(("k%d" % k, (("rank", str(i % 4)),), "step"),
                                      []).append((i, float(v.strip('"')), None))
assert run("run", "create", "r3")[0] == 0
rc, _, err = run("log", "r3", "--file", os.path.join(tmp, "awkward.jsonl"))
check(rc == 0, "awkward numbers from a file are logged: " + err)

srv = subprocess.Popen([stdio, "--store", store], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, text=True)
nid = [1]


def call(tool, args):
    nid[0] += 1
    srv.stdin.write(json.dumps({"jsonrpc": "2.0", "id": nid[0], "method": "tools/call",
                                "params": {"name": tool, "arguments": args}}) + "\n")
    srv.stdin.flush()
    while True:
        msg = json.loads(srv.stdout.readline())
        if msg.get("id") == nid[0]:
            return json.loads(msg["result"]["content"][0]["text"])


nid[0] += 1
srv.stdin.write(json.dumps({"jsonrpc": "2.0", "id": nid[0], "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"}}}) + "\n")
srv.stdin.flush()
srv.stdout.readline()
srv.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
srv.stdin.flush()


def num(v):
    return float(v.replace("Infinity", "inf")) if isinstance(v, str) else float(v)


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b  # the reader writes -0 as 0


def verify(run_id, truth):
    """Every point of @truth read back from @run_id, in order."""
    for (key, labels, scale), want in sorted(truth.items(), key=str):
        args = {"mode": "points", "run_id": run_id, "key": key, "limit": 10000,
                "token_budget": 8000}
        if labels:
            args["where"] = [{"attr": k, "op": "eq", "value": v} for k, v in labels]
        got, cur = [], None
        while True:
            page = call("metrics", dict(args, **({"cursor": cur} if cur else {})))
            if "series" not in page:
                check(False, f"{run_id} {key} {labels} {scale}: {page}")
                break
            for item in page["series"]:
                if tuple(sorted(item.get("labels", {}).items())) != labels or \
                        item.get("scale", "step") != scale:
                    continue
                got += list(zip(item["step"], [num(v) for v in item["value"]]))
            cur = page.get("next_cursor")
            if not cur:
                break
        check(len(got) == len(want),
              f"{run_id} {key} {labels} {scale}: {len(got)} points, want {len(want)}")
        bad = [(g, w) for g, w in zip(got, want) if g[0] != w[0] or not same(g[1], w[1])]
        check(not bad, f"{run_id} {key} {labels} {scale}: first differences {bad[:3]}")


verify("r1", truth)
verify("r2", truth)  # the same lines from a file
verify("r3", truth_file)
srv.stdin.close()
srv.wait()

# Bad lines: named, with the problem, and nothing of the batch stored.
good = '{"key":"fresh","step":1,"value":1}\n'
cases = [
    ('{"key":"fresh","step":2,"value":1', "line 2", "not valid JSON"),
    ('{"key":"fresh","step":2,"value":1} x', "line 2", "end of the line"),
    ('{"key":"fresh","step":2,"value":01}', "line 2", "not valid JSON"),
    ('{"key":"fresh","step":2.5,"value":1}', "line 2", '"step"'),
    ('{"key":"fresh","step":2,"value":"abc"}', "line 2", '"value"'),
    ('{"key":"fresh","step":2,"value":1,"labels":{"a":1}}', "line 2", 'label "a"'),
    ('{"key":"fresh","step":2,"value":1,"kind":"nope"}', "line 2", "unknown kind"),
    ('{"key":"fresh","step":2,"value":1,"scale":"nope"}', "line 2", "unknown scale"),
    ('{"step":2,"values":{"a":[1]}}', "line 2", 'value of "a"'),
    ('{"key":"h","kind":"histogram","step":2,"edges":[0,1],"counts":[1,2]}', "line 2",
     "one more edge"),
    ('[1,2]', "line 2", "not a JSON object"),
    ('{"key":"fresh\\x","step":2,"value":1}', "line 2", "escape"),
    ('{"key":"fresh","step":2,"value":1,"time":"yesterday"}', "line 2", '"time"'),
    ('{"step":2,"value":1}', "line 2", '"key"'),
]
before = run("list", "series", "--parent", "run:r1")[1]
for bad_line, where, what in cases:
    rc, _, err = run("log", "r1", stdin=good + good.replace('"step":1', '"step":1') + bad_line
                     + "\n" + good)
    # the bad line is line 3 here: two good lines before it
    check(rc == 1 and "line 3" in err and what in err, f"{bad_line!r}: {err.strip()}")
    check(run("list", "series", "--parent", "run:r1")[1] == before,
          f"{bad_line!r}: nothing stored")
    with open(src, "w") as f:
        f.write(good * 2 + bad_line + "\n" + good)
    rc, _, err = run("log", "r1", "--file", src)
    check(rc == 1 and "line 3" in err and what in err, f"file: {bad_line!r}: {err.strip()}")
    check(run("list", "series", "--parent", "run:r1")[1] == before,
          f"file: {bad_line!r}: nothing stored")
_ = where

# A line of over 64 MiB without a newline is refused by its number while it
# arrives (memory stays bounded), and nothing of its batch is stored. On
# stdin the lines before it may be a batch of their own (cut after two
# seconds of input), so there it comes first; in a regular file, whose
# batches are not cut by time, it follows a good line.
huge = '{"key":"fresh","step":2,"value":1,"note":"' + "x" * (65 << 20)
rc, _, err = run("log", "r1", stdin=huge)
check(rc == 1 and "line 1" in err and "longer than 64 MiB" in err, f"huge line: {err.strip()[:300]}")
check(run("list", "series", "--parent", "run:r1")[1] == before, "huge line: nothing stored")
with open(src, "w") as f:
    f.write(good + huge)
rc, _, err = run("log", "r1", "--file", src)
check(rc == 1 and "line 2" in err and "longer than 64 MiB" in err,
      f"file: huge line: {err.strip()[:300]}")
check(run("list", "series", "--parent", "run:r1")[1] == before, "file: huge line: nothing stored")
os.remove(src)

if fails:
    sys.exit(f"{len(fails)} checks failed")
print(f"ok: {sum(len(v) for v in truth.values())} points in {len(truth)} series (twice), "
      f"{sum(len(v) for v in truth_file.values())} awkward ones in {len(truth_file)}, "
      f"{len(cases)} bad lines refused (twice)")
