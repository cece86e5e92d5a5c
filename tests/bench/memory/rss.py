#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Memory of a long session: RSS of probe-mcp-stdio and probe-mcp-http
after 1,000, 10,000 and 100,000 real tool calls on the demo store, and the
peak while one oversized request (256 MiB by default) is refused.

    python3 tests/bench/memory/rss.py BUILD_DIR [--calls N] [--big-mib M]

Prints a table per server: RSS (VmRSS) and peak (VmHWM) at each mark, and
the growth from the 1,000-call mark to the last (target: within 2 MB).
Sequential calls answer one at a time; pipelined ones are written ahead
(stdio: 1,000 at a time, HTTP: 50 keep-alive connections), so the server
holds what the client has not read yet. The oversized request must be
answered with an error, the server must stay up, and its peak must not
grow by the request's size: it is refused while it arrives, not held.

Standard library only; the demo store and a read key are made in a
scratch directory with the build's `probe`.
"""
import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading

TOOLS = [
    ("browse", {}),
    ("search", {"query": "loss"}),
    ("browse", {"mode": "runs"}),
    ("find_papers", {"mode": "search", "query": "attention transformers"}),
]


def mem(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = int(v.split()[0])  # kB
    return out


def call(i, name, args):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": name, "arguments": args}}


INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "rss-bench", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def marks_of(n):
    marks = [m for m in (1000, 10000, 100000, 1000000) if m < n]
    return marks + [n]


def stdio_run(exe, store, n, pipelined):
    p = subprocess.Popen([exe, "--store", store], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, bufsize=1 << 16)
    p.stdin.write((json.dumps(INIT) + "\n" + json.dumps(INITIALIZED) + "\n").encode())
    p.stdin.flush()
    json.loads(p.stdout.readline())
    marks = marks_of(n)
    rows = []
    errors = 0
    if pipelined:
        def writer():
            batch = []
            for i in range(1, n + 1):
                name, args = TOOLS[i % len(TOOLS)]
                batch.append(json.dumps(call(i, name, args)) + "\n")
                if len(batch) == 1000:
                    p.stdin.write("".join(batch).encode())
                    batch = []
            p.stdin.write("".join(batch).encode())
            p.stdin.flush()
        t = threading.Thread(target=writer)
        t.start()
    for i in range(1, n + 1):
        if not pipelined:
            name, args = TOOLS[i % len(TOOLS)]
            p.stdin.write((json.dumps(call(i, name, args)) + "\n").encode())
            p.stdin.flush()
        r = json.loads(p.stdout.readline())
        if "error" in r or r.get("result", {}).get("isError"):
            errors += 1
        if i in marks:
            rows.append((i, mem(p.pid)))
    if pipelined:
        t.join()
    p.stdin.close()
    p.wait()
    return rows, errors


def stdio_big(exe, store, big):
    """One line of `big` bytes, then a ping: the line is refused, the
    server answers the ping, and its peak does not grow by the line."""
    p = subprocess.Popen([exe, "--store", store], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, bufsize=0)
    p.stdin.write((json.dumps(INIT) + "\n" + json.dumps(INITIALIZED) + "\n").encode())
    json.loads(p.stdout.readline())
    before = mem(p.pid)
    replies = []
    reader = threading.Thread(target=lambda: replies.extend(
        json.loads(p.stdout.readline()) for _ in range(2)))
    reader.start()
    head = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"query":"'
    chunk = b"x" * (1 << 20)
    p.stdin.write(head)
    sent = len(head)
    while sent < big:
        p.stdin.write(chunk)
        sent += len(chunk)
    p.stdin.write(b'"}}}\n{"jsonrpc":"2.0","id":8,"method":"ping"}\n')
    reader.join(60)
    after = mem(p.pid)
    p.stdin.close()
    p.wait()
    refused = any(r.get("id") in (7, None) and "error" in r for r in replies)
    pinged = any(r.get("id") == 8 and "result" in r for r in replies)
    return before, after, refused and pinged


def start_http(exe, store):
    p = subprocess.Popen([exe, "--listen", "127.0.0.1:0", "--store", store],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stdout:
        if "listening on" in line:
            url = line.split("listening on", 1)[1].split()[0]
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            return p, port
    raise SystemExit("probe-mcp-http did not start: " + p.stderr.read())


def http_session(port, key):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    hdr = {"content-type": "application/json",
           "accept": "application/json, text/event-stream",
           "authorization": "Bearer " + key}
    c.request("POST", "/mcp", json.dumps(INIT), hdr)
    r = c.getresponse()
    r.read()
    hdr["mcp-session-id"] = r.getheader("mcp-session-id")
    hdr["mcp-protocol-version"] = "2025-11-25"
    c.request("POST", "/mcp", json.dumps(INITIALIZED), hdr)
    c.getresponse().read()
    return c, hdr


def http_run(exe, store, key, n, conns):
    p, port = start_http(exe, store)
    marks = marks_of(n)
    rows = []
    errors = [0]
    done = [0]
    lock = threading.Lock()
    next_mark = [0]

    def worker(k):
        c, hdr = http_session(port, key)
        while True:
            with lock:
                if done[0] >= n:
                    break
                done[0] += 1
                me = done[0]
            name, args = TOOLS[me % len(TOOLS)]
            c.request("POST", "/mcp", json.dumps(call(me, name, args)), hdr)
            r = c.getresponse()
            body = r.read()
            if r.status != 200 or b'"isError":true' in body or b'"error":{' in body:
                with lock:
                    errors[0] += 1
            with lock:
                while next_mark[0] < len(marks) and done[0] >= marks[next_mark[0]]:
                    rows.append((marks[next_mark[0]], mem(p.pid)))
                    next_mark[0] += 1
        c.close()

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    p.terminate()
    p.wait()
    return rows, errors[0]


def http_big(exe, store, key, big):
    p, port = start_http(exe, store)
    c, hdr = http_session(port, key)
    before = mem(p.pid)
    s = socket.create_connection(("127.0.0.1", port))
    req = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
           f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
           f"Authorization: Bearer {key}\r\nContent-Length: {big}\r\n\r\n").encode()
    s.sendall(req)
    chunk = b"x" * (1 << 20)
    sent = 0
    status = None
    s.settimeout(30)
    try:
        while sent < big:
            s.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass  # the server closed the connection after refusing: expected
    try:
        status = s.recv(200).split(b" ")[1].decode()
    except (OSError, IndexError):
        status = "closed"
    s.close()
    c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}), hdr)
    ok = c.getresponse().status == 200
    after = mem(p.pid)
    p.terminate()
    p.wait()
    return before, after, status, ok


def table(title, rows, errors):
    print(f"\n{title}")
    print("| calls | RSS MB | peak MB |")
    print("|---:|---:|---:|")
    for n, m in rows:
        print(f"| {n} | {m['VmRSS'] / 1024:.1f} | {m['VmHWM'] / 1024:.1f} |")
    if len(rows) > 1:
        grow = (rows[-1][1]["VmRSS"] - rows[0][1]["VmRSS"]) / 1024
        print(f"growth {rows[0][0]} -> {rows[-1][0]} calls: {grow:+.2f} MB "
              f"(target within 2 MB: {'met' if abs(grow) <= 2 else 'NOT met'}); "
              f"tool errors: {errors}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--calls", type=int, default=100000)
    ap.add_argument("--big-mib", type=int, default=256)
    ap.add_argument("--conns", type=int, default=50)
    a = ap.parse_args()
    probe = os.path.join(a.build, "frontends/cli/probe")
    stdio = os.path.join(a.build, "frontends/stdio/probe-mcp-stdio")
    httpd = os.path.join(a.build, "frontends/http/probe-mcp-http")
    with tempfile.TemporaryDirectory() as d:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROBE_")}
        env["HOME"] = d
        store = os.path.join(d, "store.db")
        subprocess.run([probe, "--quiet", "--store", store, "demo"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        key = json.loads(subprocess.run([probe, "--store", store, "key", "create", "--json"],
                                        check=True, env=env, capture_output=True,
                                        text=True).stdout)["secret"]
        big = a.big_mib << 20
        for pipelined in (False, True):
            rows, err = stdio_run(stdio, store, a.calls, pipelined)
            table(f"probe-mcp-stdio, {'pipelined' if pipelined else 'sequential'}", rows, err)
        b, af, ok = stdio_big(stdio, store, big)
        print(f"\nprobe-mcp-stdio, one {a.big_mib} MiB line: "
              f"{'refused, server up' if ok else 'NOT refused or server down'}; "
              f"peak {b['VmHWM'] / 1024:.1f} -> {af['VmHWM'] / 1024:.1f} MB")
        if os.path.exists(httpd):
            for conns in (1, a.conns):
                rows, err = http_run(httpd, store, key, a.calls, conns)
                table(f"probe-mcp-http, {conns} keep-alive connection(s), pk_ key", rows, err)
            b, af, status, ok = http_big(httpd, store, key, big)
            print(f"\nprobe-mcp-http, one {a.big_mib} MiB body: status {status}, "
                  f"{'server up' if ok else 'server DOWN'}; "
                  f"peak {b['VmHWM'] / 1024:.1f} -> {af['VmHWM'] / 1024:.1f} MB")


if __name__ == "__main__":
    sys.exit(main())
