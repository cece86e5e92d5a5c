#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Embeds libprobemcp in Python through ctypes (standard library only).

It creates a server, registers a tool written in Python, and drives it with
JSON-RPC messages through pmcp_server_handle(); replies come back through the
sink callback. This is the whole FFI surface a host needs.

usage: embed.py [--lib PATH/TO/libprobemcp.so]
       (default: $PROBEMCP_LIB, else "libprobemcp.so.0.1" from the loader path)
Prints the exchange and "N passed, M failed"; exits 0 when all replies are
as expected.
"""
import argparse
import ctypes as C
import json
import os
import sys
import threading

# ---- Declarations mirroring libprobemcp/include/probemcp/*.h ---------------

SINK_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p)      # (const pmcp_out*, ud)
LOG_FN = C.CFUNCTYPE(None, C.c_int, C.c_char_p, C.c_void_p)
TOOL_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p)   # (pmcp_call*, ud)
FREE_FN = C.CFUNCTYPE(None, C.c_void_p)

PMCP_T_STRING = 1
PMCP_T_INTEGER = 2
PMCP_HINT_TRUE = 2


class Out(C.Structure):
    _fields_ = [("session", C.c_char_p), ("related_id", C.c_char_p),
                ("kind", C.c_int), ("data", C.c_void_p), ("len", C.c_size_t),
                ("final", C.c_int)]


class ServerOptions(C.Structure):
    _fields_ = [("version", C.c_uint), ("name", C.c_char_p),
                ("title", C.c_char_p), ("server_version", C.c_char_p),
                ("instructions", C.c_char_p), ("allocator", C.c_void_p),
                ("log", LOG_FN), ("log_ud", C.c_void_p),
                ("log_level", C.c_int), ("workers", C.c_uint),
                ("sink", SINK_FN), ("sink_ud", C.c_void_p),
                ("max_message", C.c_size_t)]


class ArgSpec(C.Structure):
    _fields_ = [("name", C.c_char_p), ("type", C.c_int), ("required", C.c_int),
                ("description", C.c_char_p), ("has_min", C.c_int),
                ("has_max", C.c_int), ("min", C.c_double), ("max", C.c_double),
                ("enum_values", C.POINTER(C.c_char_p)),
                ("default_json", C.c_char_p)]


class ModeSpec(C.Structure):
    _fields_ = [("name", C.c_char_p), ("description", C.c_char_p),
                ("args", C.POINTER(ArgSpec)), ("n_args", C.c_size_t)]


class ToolDef(C.Structure):
    _fields_ = [("version", C.c_uint), ("name", C.c_char_p),
                ("title", C.c_char_p), ("description", C.c_char_p),
                ("modes", C.POINTER(ModeSpec)), ("n_modes", C.c_size_t),
                ("default_mode", C.c_char_p),
                ("args", C.POINTER(ArgSpec)), ("n_args", C.c_size_t),
                ("input_schema_json", C.c_char_p),
                ("output_schema_json", C.c_char_p),
                ("read_only", C.c_int), ("destructive", C.c_int),
                ("idempotent", C.c_int), ("open_world", C.c_int),
                ("flags", C.c_uint), ("handler", TOOL_FN), ("ud", C.c_void_p),
                ("ud_free", FREE_FN)]


def load(path):
    lib = C.CDLL(path)
    lib.pmcp_version.restype = C.c_char_p
    lib.pmcp_strerror.restype = C.c_char_p
    lib.pmcp_strerror.argtypes = [C.c_int]
    lib.pmcp_server_options_init.argtypes = [C.POINTER(ServerOptions), C.c_uint]
    lib.pmcp_server_new.argtypes = [C.POINTER(C.c_void_p), C.POINTER(ServerOptions)]
    lib.pmcp_server_free.argtypes = [C.c_void_p]
    lib.pmcp_server_handle.argtypes = [C.c_void_p, C.c_char_p, C.c_char_p, C.c_size_t]
    lib.pmcp_server_drain.argtypes = [C.c_void_p]
    lib.pmcp_server_errmsg.restype = C.c_char_p
    lib.pmcp_server_errmsg.argtypes = [C.c_void_p]
    lib.pmcp_server_add_tool.argtypes = [C.c_void_p, C.POINTER(ToolDef)]
    lib.pmcp_arg_string.argtypes = [C.c_void_p, C.c_char_p,
                                    C.POINTER(C.c_char_p), C.POINTER(C.c_size_t)]
    lib.pmcp_arg_int.argtypes = [C.c_void_p, C.c_char_p, C.POINTER(C.c_int64)]
    lib.pmcp_result_text.argtypes = [C.c_void_p, C.c_char_p, C.c_size_t]
    lib.pmcp_result_structured.argtypes = [C.c_void_p, C.c_char_p, C.c_size_t]
    return lib


class Server:
    """A pmcp_server whose outgoing messages are collected as JSON objects."""

    def __init__(self, lib, name):
        self.lib = lib
        self.messages = []
        self.lock = threading.Lock()
        self._keep = []  # ctypes objects the library points at
        self._sink = SINK_FN(self._on_message)
        opts = ServerOptions()
        rc = lib.pmcp_server_options_init(C.byref(opts), 1)
        if rc:
            raise RuntimeError(lib.pmcp_strerror(rc).decode())
        opts.name = name.encode()
        opts.sink = self._sink
        self.handle = C.c_void_p()
        rc = lib.pmcp_server_new(C.byref(self.handle), C.byref(opts))
        if rc:
            raise RuntimeError(lib.pmcp_strerror(rc).decode())

    def _on_message(self, out_ptr, _ud):
        out = Out.from_address(out_ptr)
        if not out.data:  # control messages (HTTP stream ends) carry no JSON
            return
        text = C.string_at(out.data, out.len).decode()
        with self.lock:
            self.messages.append(json.loads(text))

    def add_tool(self, name, description, args, fn):
        """args: list of (name, PMCP_T_*, required, description)."""
        specs = (ArgSpec * len(args))()
        for i, (an, at, req, desc) in enumerate(args):
            specs[i].name = an.encode()
            specs[i].type = at
            specs[i].required = 1 if req else 0
            specs[i].description = desc.encode()
        handler = TOOL_FN(lambda call, ud: fn(self.lib, call))
        self._keep += [specs, handler]
        d = ToolDef()
        d.version = 1
        d.name = name.encode()
        d.description = description.encode()
        d.args = specs
        d.n_args = len(args)
        d.read_only = PMCP_HINT_TRUE
        d.handler = handler
        rc = self.lib.pmcp_server_add_tool(self.handle, C.byref(d))
        if rc:
            raise RuntimeError("%s: %s" % (self.lib.pmcp_strerror(rc).decode(),
                                           self.lib.pmcp_server_errmsg(self.handle).decode()))

    def request(self, msg):
        """Hands one message to the engine; returns what it sent back."""
        with self.lock:
            start = len(self.messages)
        data = json.dumps(msg).encode()
        rc = self.lib.pmcp_server_handle(self.handle, None, data, len(data))
        if rc:
            raise RuntimeError(self.lib.pmcp_strerror(rc).decode())
        self.lib.pmcp_server_drain(self.handle)
        with self.lock:
            return self.messages[start:]

    def close(self):
        self.lib.pmcp_server_free(self.handle)
        self.handle = None


def repeat_tool(lib, call):
    """The Python tool: repeats `text` `times` times."""
    text = C.c_char_p()
    n = C.c_size_t()
    rc = lib.pmcp_arg_string(call, b"text", C.byref(text), C.byref(n))
    if rc:
        return rc
    times = C.c_int64()
    rc = lib.pmcp_arg_int(call, b"times", C.byref(times))
    if rc:
        return rc
    out = (C.string_at(text, n.value).decode() * times.value).encode()
    rc = lib.pmcp_result_text(call, out, len(out))
    if rc:
        return rc
    structured = json.dumps({"length": len(out)}).encode()
    return lib.pmcp_result_structured(call, structured, len(structured))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", default=os.environ.get("PROBEMCP_LIB", "libprobemcp.so.0.1"))
    a = ap.parse_args()
    lib = load(a.lib)
    print("libprobemcp", lib.pmcp_version().decode())

    srv = Server(lib, "python-embed-example")
    srv.add_tool("repeat", "Repeats a text", [
        ("text", PMCP_T_STRING, True, "The text"),
        ("times", PMCP_T_INTEGER, True, "How many times"),
    ], repeat_tool)

    checks = []

    def check(what, cond):
        checks.append(cond)
        print(("ok   " if cond else "FAIL ") + what)

    def exchange(msg):
        print("->", json.dumps(msg))
        got = srv.request(msg)
        for m in got:
            print("<-", json.dumps(m))
        return got

    r = exchange({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "python", "version": "1"}}})
    check("initialize answered", len(r) == 1 and r[0].get("id") == 1 and
          r[0]["result"]["serverInfo"]["name"] == "python-embed-example")
    r = exchange({"jsonrpc": "2.0", "method": "notifications/initialized"})
    check("initialized notification gets no reply", r == [])
    r = exchange({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
    tools = r[0]["result"]["tools"] if r and "result" in r[0] else []
    check("tools/list names the Python tool and its required arguments",
          [t["name"] for t in tools] == ["repeat"] and
          sorted(tools[0]["inputSchema"].get("required", [])) == ["text", "times"])
    r = exchange({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "repeat", "arguments": {"text": "ab", "times": 3}}})
    res = r[0].get("result", {}) if r else {}
    check("tools/call runs the Python handler",
          res.get("content") == [{"type": "text", "text": "ababab"}] and
          res.get("structuredContent") == {"length": 6} and not res.get("isError"))
    r = exchange({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "repeat", "arguments": {"text": "ab", "times": "3"}}})
    bad = json.dumps(r[0]) if r else ""
    check("a wrong argument type is refused, naming the argument",
          r and r[0].get("id") == 3 and "times" in bad and
          ("error" in r[0] or r[0].get("result", {}).get("isError")))
    srv.close()
    failed = checks.count(False)
    print("%d passed, %d failed" % (len(checks) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
