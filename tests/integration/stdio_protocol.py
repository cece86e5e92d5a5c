#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Drives probe-mcp-stdio with scripted input: the protocol surface that
exists without a toolset (initialize, ping, tools/list, errors), framing
(partial writes, CRLF, blank lines, a 64 MiB line, a last line without a
newline), the line-length limit, EOF handling and the command-line options. Standard library only.
usage: stdio_protocol.py PATH-TO-probe-mcp-stdio"""
import json
import subprocess
import sys
import threading
import time

BIN = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


class Server:
    def __init__(self, *args):
        self.p = subprocess.Popen([BIN, *args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines = []
        self.cv = threading.Condition()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()
        self.err = b""
        self.te = threading.Thread(target=self._read_err, daemon=True)
        self.te.start()

    def _read(self):
        for line in self.p.stdout:
            with self.cv:
                self.lines.append(line)
                self.cv.notify_all()

    def _read_err(self):
        self.err = self.p.stderr.read()

    def write(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, obj):
        self.write(json.dumps(obj).encode() + b"\n")

    def next(self, timeout=20):
        end = time.time() + timeout
        with self.cv:
            while not self.lines:
                left = end - time.time()
                if left <= 0:
                    raise TimeoutError("no reply")
                self.cv.wait(left)
            line = self.lines.pop(0)
        check(line.endswith(b"\n") and line.count(b"\n") == 1, "one message per line")
        return json.loads(line)

    def close(self, timeout=20):
        self.p.stdin.close()
        rc = self.p.wait(timeout)
        self.t.join(5)
        self.te.join(5)
        return rc


def init(s, version="2025-06-18"):
    s.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "driver", "version": "1"}}})
    r = s.next()
    check(r.get("result", {}).get("protocolVersion") == version, "initialize answers")
    check(r["result"]["serverInfo"]["name"] == "probe-mcp", "serverInfo.name")
    s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def protocol():
    # The 64 MiB line below is over the default limit (16 MiB).
    s = Server("--max-line", "80M")
    # before initialize: ping works, tools/list is refused
    s.send({"jsonrpc": "2.0", "id": "p0", "method": "ping"})
    check(s.next() == {"jsonrpc": "2.0", "id": "p0", "result": {}}, "ping before init")
    s.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    check(s.next()["error"]["code"] == -32600, "tools/list before init refused")
    init(s)
    s.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    check(s.next() == {"jsonrpc": "2.0", "id": 3, "result": {"tools": []}},
          "no toolset: no tools")
    s.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "browse", "arguments": {}}})
    r = s.next()
    check(r["error"]["code"] == -32602 and "browse" in r["error"]["message"],
          "unknown tool named")
    # malformed lines get an error and the server stays up
    s.write(b"{not json\n")
    check(s.next()["error"]["code"] == -32700, "parse error")
    s.write(b"\xff\xfe\n")
    check(s.next()["error"]["code"] == -32700, "invalid UTF-8")
    s.write(b"[1,2]\n")
    check(s.next()["error"]["code"] == -32600, "batch refused on 2025-06-18")
    s.write(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"nope\"}\r\n")
    check(s.next() == {"jsonrpc": "2.0", "id": 5,
                       "error": {"code": -32601, "message": "Method not found: nope"}},
          "CRLF line, unknown method")
    s.write(b"\n   \n")  # blank lines: no reply
    # a message split over many writes
    msg = b'{"jsonrpc":"2.0","id":6,"method":"ping"}\n'
    for i in range(len(msg)):
        s.write(msg[i:i + 1])
        if i % 7 == 0:
            time.sleep(0.002)
    check(s.next() == {"jsonrpc": "2.0", "id": 6, "result": {}}, "partial reads")
    # two messages in one write
    s.write(b'{"jsonrpc":"2.0","id":7,"method":"ping"}\n{"jsonrpc":"2.0","id":8,"method":"ping"}\n')
    check([s.next()["id"], s.next()["id"]] == [7, 8], "two messages in one write")
    # a 64 MiB line
    pad = "x" * (64 * 1024 * 1024)
    big = ('{"jsonrpc":"2.0","id":"big","method":"ping","params":{"_meta":{},"pad":"%s"}}\n'
           % pad).encode()
    check(len(big) > 64 * 1024 * 1024, "the big line is over 64 MiB")
    t0 = time.time()
    s.write(big)
    check(s.next(timeout=120) == {"jsonrpc": "2.0", "id": "big", "result": {}},
          "64 MiB message answered")
    print("64 MiB line: %.2f s" % (time.time() - t0), file=sys.stderr)
    s.send({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    check(s.next()["id"] == 9, "alive after the big line")
    # last line without newline, then EOF: answered, exit 0
    s.write(b'{"jsonrpc":"2.0","id":10,"method":"ping"}')
    rc = s.close()
    check(rc == 0, "EOF exits 0 (got %r)" % rc)
    check(s.lines and json.loads(s.lines[-1])["id"] == 10, "unterminated last line answered")
    # without a store: one line says where it looked and how to make one
    check(s.err.count(b"\n") == 1 and b"no store at " in s.err and b"probe init" in s.err,
          "only the no-store notice on stderr: %r" % s.err[:300])


MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}}


def both_eras():
    """2026-07-28 requests (per-request _meta) beside a 2025-11-25 session
    in the same process."""
    s = Server()
    s.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
            "params": {"_meta": MODERN}})
    r = s.next()["result"]
    check(r.get("resultType") == "complete" and r["supportedVersions"] == ["2026-07-28"],
          "server/discover before any initialize: %r" % r)
    check(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "probe-mcp",
          "serverInfo in the result's _meta")
    check(r["capabilities"] == {} and "ttlMs" in r and r["cacheScope"] in ("public", "private"),
          "no toolset: nothing declared; cache hints: %r" % r)
    s.send({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {}})
    check(s.next()["error"]["code"] == -32602, "discover without _meta: -32602")
    s.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": MODERN}})
    check(s.next()["error"]["code"] == -32601, "modern tools/list with no tools: -32601")
    s.send({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"_meta": MODERN}})
    check(s.next()["error"]["code"] == -32601, "ping is gone in 2026-07-28")
    init(s, "2025-11-25")
    s.send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    check(s.next() == {"jsonrpc": "2.0", "id": 5, "result": {"tools": []}},
          "the session still speaks 2025-11-25")
    s.send({"jsonrpc": "2.0", "id": 6, "method": "server/discover",
            "params": {"_meta": MODERN}})
    check(s.next()["result"]["resultType"] == "complete", "modern request beside the session")
    check(s.close() == 0, "EOF exits 0")


def options():
    r = subprocess.run([BIN, "--help"], capture_output=True, timeout=10)
    check(r.returncode == 0 and b"--store" in r.stdout, "--help")
    r = subprocess.run([BIN, "--version"], capture_output=True, timeout=10)
    check(r.returncode == 0 and r.stdout.startswith(b"probe-mcp-stdio "), "--version")
    r = subprocess.run([BIN, "--bogus"], capture_output=True, timeout=10, input=b"")
    check(r.returncode == 2 and b"--bogus" in r.stderr and r.stdout == b"", "bad option")
    r = subprocess.run([BIN, "--toolset", "nope"], capture_output=True, timeout=10, input=b"")
    check(r.returncode == 2 and b"research, tracking or all" in r.stderr, "bad toolset")
    r = subprocess.run([BIN, "--store"], capture_output=True, timeout=10, input=b"")
    check(r.returncode == 2 and b"needs a value" in r.stderr, "missing value")
    r = subprocess.run([BIN, "--store", "x.db"], capture_output=True, timeout=10, input=b"")
    check(r.returncode == 1 and b"cannot open the store" in r.stderr and r.stdout == b"",
          "a missing store is an error, not an empty server")
    # immediate EOF
    r = subprocess.run([BIN], capture_output=True, timeout=10, input=b"")
    check(r.returncode == 0 and r.stdout == b"", "empty input")


def peak_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def long_lines():
    # Default limit 16 MiB: a 17 MiB line is refused with an error, the
    # server reads on.
    s = Server()
    init(s)
    pad = "x" * (17 * 1024 * 1024)
    s.write(('{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"%s"}}\n'
             % pad).encode())
    r = s.next(timeout=60)
    check(r.get("id", "missing") is None and r["error"]["code"] == -32600
          and "16777216" in r["error"]["message"], "17 MiB line refused: %r" % r)
    s.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    check(s.next()["id"] == 2, "alive after the refused line")
    s.close()
    check(b"skipped an input line" in s.err, "the refusal is said on stderr")

    # With --max-line 1M: a 1 MiB message is answered, a longer one is not;
    # 96 MiB without a newline are skipped without being held (the peak
    # memory stays far below them), then the next line is served.
    s = Server("--max-line", "1M")
    init(s)
    head = b'{"jsonrpc":"2.0","id":"edge","method":"ping","params":{"pad":"'
    tail = b'"}}'
    edge = head + b"y" * (1024 * 1024 - len(head) - len(tail)) + tail
    check(len(edge) == 1024 * 1024, "edge line is 1 MiB")
    s.write(edge + b"\r\n")
    check(s.next().get("id") == "edge", "a line of exactly the limit is answered")
    s.write(edge[:-1] + b"  }\n")
    r = s.next()
    check(r.get("id", "missing") is None and r["error"]["code"] == -32600,
          "a line just over the limit is refused")
    chunk = b"z" * (1024 * 1024)
    s.write(b'{"jsonrpc":"2.0","id":"huge","method":"ping","params":{"pad":"')
    for _ in range(96):
        s.write(chunk)
    s.write(b'"}}\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
    r = s.next(timeout=60)
    check(r.get("id", "missing") is None and r["error"]["code"] == -32600,
          "96 MiB line refused")
    check(s.next()["id"] == 3, "the line after it is served")
    hwm = peak_kb(s.p.pid)
    check(hwm < 48 * 1024, "peak memory %d kB while skipping 96 MiB" % hwm)
    # Refused at end of input too, then a clean exit.
    s.write(b"w" * (2 * 1024 * 1024))
    rc = s.close()
    check(rc == 0, "exit 0 after an over-long last line")
    check(s.lines and json.loads(s.lines[-1]).get("error", {}).get("code") == -32600,
          "an over-long unterminated last line is refused")
    # The option's value is checked.
    for bad in ["0", "12", "x", "-5", "1T"]:
        r = subprocess.run([BIN, "--max-line", bad], capture_output=True, timeout=10, input=b"")
        check(r.returncode == 2 and b"--max-line" in r.stderr, "--max-line %s refused" % bad)


protocol()
long_lines()
both_eras()
options()
if failures:
    print("%d failure(s)" % len(failures), file=sys.stderr)
    sys.exit(1)
print("ok")
