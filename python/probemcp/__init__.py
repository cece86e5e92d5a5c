# SPDX-License-Identifier: MIT
"""probemcp: MCP servers whose every answer fits a token budget, from Python.

A thin ctypes binding of libprobemcp (standard library only). A server is
made, tools written as Python callables are registered (with modes and
typed, validated arguments), and the engine is served on stdin/stdout or
handed messages in process::

    import probemcp

    srv = probemcp.Server("numbers")

    @srv.tool("count", "Counts up to n, paged under the token budget.",
              args=[probemcp.Arg("n", "integer", required=True, min=1, max=100000)],
              budgeted=True, read_only=True)
    def count(call):
        page = call.page()
        start = int(page.position or b"0")
        page.list("numbers")
        n = call.args["n"]
        for i in range(start, n):
            if not page.add({"i": i}, resume=str(i + 1).encode()):
                break
        page.finish(more=True)   # the page knows whether it was cut

    srv.serve_stdio()

The engine validates every call against the declared arguments before the
callable runs; a callable returns a str (one text item), a dict or list
(JSON text plus structuredContent), or builds a budgeted page with
call.page(). An exception becomes an error result naming it.

The library is found through $PROBEMCP_LIB, else where `meson install` put
it, else by the loader's search path.
"""
import ctypes as C
import ctypes.util
import json
import os
import sys
import threading

__all__ = ["Arg", "Mode", "Server", "Call", "Page", "Error", "library_version",
           "protocol_versions", "protocol_era", "MODERN_META"]

try:
    from . import _config  # written by meson install
except ImportError:  # pragma: no cover - running from the source tree
    _config = None


class Error(Exception):
    """A libprobemcp call failed; .code is the PMCP_E* code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


# ---- the C declarations (libprobemcp/include/probemcp/*.h) ----------------

_SINK_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p)
_TOOL_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p)
_LOG_FN = C.CFUNCTYPE(None, C.c_int, C.c_char_p, C.c_void_p)
_FREE_FN = C.CFUNCTYPE(None, C.c_void_p)

_TYPES = {"string": 1, "integer": 2, "number": 3, "boolean": 4, "object": 5,
          "string[]": 6, "number[]": 7, "array": 8, "string|string[]": 9, "any": 10}
_HINT = {None: 0, False: 1, True: 2}
_TOOL_BLOCKING, _TOOL_BUDGETED = 1, 2
_OUT_RESPONSE, _OUT_NOTIFICATION, _OUT_REQUEST = 1, 2, 3
_EBUDGET = -9
_ENOTFOUND = -5


class _Out(C.Structure):
    _fields_ = [("session", C.c_char_p), ("related_id", C.c_char_p),
                ("kind", C.c_int), ("data", C.c_void_p), ("len", C.c_size_t),
                ("final", C.c_int)]


class _ServerOptions(C.Structure):
    _fields_ = [("version", C.c_uint), ("name", C.c_char_p),
                ("title", C.c_char_p), ("server_version", C.c_char_p),
                ("instructions", C.c_char_p), ("allocator", C.c_void_p),
                ("log", _LOG_FN), ("log_ud", C.c_void_p),
                ("log_level", C.c_int), ("workers", C.c_uint),
                ("sink", _SINK_FN), ("sink_ud", C.c_void_p),
                ("max_message", C.c_size_t)]


class _ArgSpec(C.Structure):
    _fields_ = [("name", C.c_char_p), ("type", C.c_int), ("required", C.c_int),
                ("description", C.c_char_p), ("has_min", C.c_int),
                ("has_max", C.c_int), ("min", C.c_double), ("max", C.c_double),
                ("enum_values", C.POINTER(C.c_char_p)),
                ("default_json", C.c_char_p)]


class _ModeSpec(C.Structure):
    _fields_ = [("name", C.c_char_p), ("description", C.c_char_p),
                ("args", C.POINTER(_ArgSpec)), ("n_args", C.c_size_t)]


class _ToolDef(C.Structure):
    _fields_ = [("version", C.c_uint), ("name", C.c_char_p),
                ("title", C.c_char_p), ("description", C.c_char_p),
                ("modes", C.POINTER(_ModeSpec)), ("n_modes", C.c_size_t),
                ("default_mode", C.c_char_p),
                ("args", C.POINTER(_ArgSpec)), ("n_args", C.c_size_t),
                ("input_schema_json", C.c_char_p),
                ("output_schema_json", C.c_char_p),
                ("read_only", C.c_int), ("destructive", C.c_int),
                ("idempotent", C.c_int), ("open_world", C.c_int),
                ("flags", C.c_uint), ("handler", _TOOL_FN), ("ud", C.c_void_p),
                ("ud_free", _FREE_FN)]


def _declare(lib):
    vp, cp, sz = C.c_void_p, C.c_char_p, C.c_size_t
    sigs = {
        "pmcp_version": (cp, []),
        "pmcp_strerror": (cp, [C.c_int]),
        "pmcp_server_options_init": (C.c_int, [C.POINTER(_ServerOptions), C.c_uint]),
        "pmcp_server_new": (C.c_int, [C.POINTER(vp), C.POINTER(_ServerOptions)]),
        "pmcp_server_free": (None, [vp]),
        "pmcp_server_handle": (C.c_int, [vp, cp, cp, sz]),
        "pmcp_server_drain": (C.c_int, [vp]),
        "pmcp_server_session_end_input": (C.c_int, [vp, cp]),
        "pmcp_server_errmsg": (cp, [vp]),
        "pmcp_server_add_tool": (C.c_int, [vp, C.POINTER(_ToolDef)]),
        "pmcp_call_mode": (cp, [vp]),
        "pmcp_call_name": (cp, [vp]),
        "pmcp_call_cancelled": (C.c_int, [vp]),
        "pmcp_call_token_budget": (C.c_int, [vp]),
        "pmcp_arg_has": (C.c_int, [vp, cp]),
        "pmcp_arg_string": (C.c_int, [vp, cp, C.POINTER(C.c_void_p), C.POINTER(sz)]),
        "pmcp_arg_int": (C.c_int, [vp, cp, C.POINTER(C.c_int64)]),
        "pmcp_arg_number": (C.c_int, [vp, cp, C.POINTER(C.c_double)]),
        "pmcp_arg_bool": (C.c_int, [vp, cp, C.POINTER(C.c_int)]),
        "pmcp_arg_json": (C.c_int, [vp, cp, C.POINTER(C.c_char_p)]),
        "pmcp_result_text": (C.c_int, [vp, cp, sz]),
        "pmcp_result_structured": (C.c_int, [vp, cp, sz]),
        "pmcp_result_set_error": (None, [vp, C.c_int]),
        "pmcp_page_begin": (C.c_int, [C.POINTER(vp), vp, C.c_uint64]),
        "pmcp_page_free": (None, [vp]),
        "pmcp_page_position": (C.c_int, [vp, C.POINTER(vp), C.POINTER(sz)]),
        "pmcp_page_budget": (C.c_int, [vp]),
        "pmcp_page_count": (sz, [vp]),
        "pmcp_page_field_json": (C.c_int, [vp, cp, cp, sz]),
        "pmcp_page_list": (C.c_int, [vp, cp]),
        "pmcp_page_add": (C.c_int, [vp, cp, sz, cp, sz]),
        "pmcp_page_finish": (C.c_int, [vp, C.c_int]),
        "pmcp_protocol_versions": (C.POINTER(cp), []),
        "pmcp_protocol_version_era": (C.c_int, [cp, sz]),
        "pmcp_server_session_protocol": (C.c_int, [vp, cp, cp, sz]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    # variadic: declared per call
    lib.pmcp_page_fail.restype = C.c_int
    return lib


_lib = None
_lib_lock = threading.Lock()


def _library():
    global _lib
    with _lib_lock:
        if _lib is None:
            candidates = []
            if os.environ.get("PROBEMCP_LIB"):
                candidates.append(os.environ["PROBEMCP_LIB"])
            if _config is not None:
                candidates.append(os.path.join(_config.LIBDIR, _config.SONAME))
            candidates.append(ctypes.util.find_library("probemcp") or "libprobemcp.so.0.1")
            errors = []
            for path in candidates:
                try:
                    _lib = _declare(C.CDLL(path))
                    break
                except OSError as e:
                    errors.append("%s: %s" % (path, e))
            if _lib is None:
                raise OSError("libprobemcp cannot be loaded (set PROBEMCP_LIB): " +
                              "; ".join(errors))
        return _lib


def library_version():
    """The version string of the loaded libprobemcp."""
    return _library().pmcp_version().decode()


def protocol_versions():
    """The MCP protocol versions the engine speaks, newest first: the
    modern era's (2026-07-28: per-request _meta, no session) first, then
    those an initialize may negotiate."""
    arr = _library().pmcp_protocol_versions()
    out, i = [], 0
    while arr[i]:
        out.append(arr[i].decode())
        i += 1
    return out


def protocol_era(version):
    """"modern", "legacy", or None when the engine does not speak
    @version."""
    v = version.encode()
    return {2: "modern", 1: "legacy"}.get(_library().pmcp_protocol_version_era(v, len(v)))


# What a modern-era (2026-07-28) request carries in params._meta; a client
# adds its own clientCapabilities (and may add clientInfo, logLevel).
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}


def _check(rc, server=None):
    if rc < 0:
        lib = _library()
        msg = lib.pmcp_strerror(rc).decode()
        if server:
            detail = lib.pmcp_server_errmsg(server)
            if detail:
                msg = "%s: %s" % (msg, detail.decode())
        raise Error(rc, msg)
    return rc


def _b(s):
    return None if s is None else s.encode()


# ---- declarations ------------------------------------------------------------

class Arg:
    """One argument: name, type (string, integer, number, boolean, object,
    string[], number[], array, string|string[], any), and its checks. The
    engine refuses a call whose arguments do not match before the callable
    runs; min/max bound numbers, string lengths or item counts."""

    def __init__(self, name, type="string", required=False, description=None,
                 min=None, max=None, enum=None, default=None):
        if type not in _TYPES:
            raise ValueError("type %r is not one of %s" % (type, ", ".join(_TYPES)))
        self.name, self.type, self.required = name, type, required
        self.description, self.min, self.max = description, min, max
        self.enum, self.default = enum, default


class Mode:
    """One mode of a tool: its name, description and the arguments it reads."""

    def __init__(self, name, description=None, args=()):
        self.name, self.description, self.args = name, description, list(args)


class _Keep:
    """What a registration keeps alive until the engine has copied it."""

    def __init__(self):
        self.refs = []

    def arg_array(self, args):
        arr = (_ArgSpec * max(len(args), 1))()
        for i, a in enumerate(args):
            enum = None
            if a.enum is not None:
                enum = (C.c_char_p * (len(a.enum) + 1))(*[_b(v) for v in a.enum], None)
                self.refs.append(enum)
            arr[i] = _ArgSpec(_b(a.name), _TYPES[a.type], int(bool(a.required)),
                              _b(a.description), a.min is not None, a.max is not None,
                              float(a.min or 0), float(a.max or 0), enum,
                              None if a.default is None else json.dumps(a.default).encode())
        self.refs.append(arr)
        return arr


# ---- a call and its page ---------------------------------------------------

class Page:
    """The budgeted result of one call (see pmcp_page(3)): fields and one
    list of items, each kept only if it fits the token budget together
    with the envelope and a next_cursor; position is the resume state the
    incoming cursor carries (bytes), None on a first page."""

    def __init__(self, call, source_version=0):
        self._lib = call._lib
        self._pg = C.c_void_p()
        _check(self._lib.pmcp_page_begin(C.byref(self._pg), call._ptr, source_version))
        self.cut = False
        data, n = C.c_void_p(), C.c_size_t()
        rc = self._lib.pmcp_page_position(self._pg, C.byref(data), C.byref(n))
        self.refused = rc < 0  # a stale or foreign cursor: finish() answers
        self.position = C.string_at(data, n.value) if rc == 0 and data.value else None

    @property
    def budget(self):
        return self._lib.pmcp_page_budget(self._pg)

    def field(self, key, value):
        text = json.dumps(value, allow_nan=False).encode()
        _check(self._lib.pmcp_page_field_json(self._pg, key.encode(), text, len(text)))

    def list(self, name):
        if not self.refused:
            _check(self._lib.pmcp_page_list(self._pg, name.encode()))

    def add(self, item, resume=b""):
        """Adds one item; False when the page is full (stop adding: the
        next_cursor comes back to this item)."""
        if self.refused or self.cut:
            return False
        text = json.dumps(item, allow_nan=False).encode()
        rc = self._lib.pmcp_page_add(self._pg, text, len(text), resume, len(resume))
        if rc == _EBUDGET:
            self.cut = True
            return False
        _check(rc)
        return True

    def fail(self, message):
        self._lib.pmcp_page_fail.argtypes = [C.c_void_p, C.c_char_p, C.c_char_p, C.c_char_p]
        _check(self._lib.pmcp_page_fail(self._pg, None, b"%s", message.encode()))

    def finish(self, more=False):
        """Makes the page the call's result; @more: items remain after the
        last one added."""
        try:
            _check(self._lib.pmcp_page_finish(self._pg, int(bool(more))))
        finally:
            self._lib.pmcp_page_free(self._pg)
            self._pg = None


class Call:
    """One tool call: .name, .mode, .args (the declared arguments given or
    defaulted, typed), .token_budget, .cancelled, and page() for a budgeted
    result."""

    def __init__(self, lib, ptr, specs):
        self._lib, self._ptr = lib, ptr
        self.name = lib.pmcp_call_name(ptr).decode()
        self.mode = (lib.pmcp_call_mode(ptr) or b"").decode()
        self.args = {}
        for a in specs.get(self.mode, specs.get("", [])):
            v = self._arg(a)
            if v is not None:
                self.args[a.name] = v
        self._page = None

    def _arg(self, a):
        lib, p, name = self._lib, self._ptr, a.name.encode()
        if a.type == "string":
            s, n = C.c_void_p(), C.c_size_t()
            rc = lib.pmcp_arg_string(p, name, C.byref(s), C.byref(n))
            return C.string_at(s, n.value).decode() if rc == 0 else None
        if a.type == "integer":
            v = C.c_int64()
            return v.value if lib.pmcp_arg_int(p, name, C.byref(v)) == 0 else None
        if a.type == "number":
            v = C.c_double()
            return v.value if lib.pmcp_arg_number(p, name, C.byref(v)) == 0 else None
        if a.type == "boolean":
            v = C.c_int()
            return bool(v.value) if lib.pmcp_arg_bool(p, name, C.byref(v)) == 0 else None
        if not lib.pmcp_arg_has(p, name) and a.default is None:
            return None
        text = C.c_char_p()
        if lib.pmcp_arg_json(p, name, C.byref(text)) != 0 or text.value is None:
            return a.default
        v = json.loads(text.value)
        if a.type == "string|string[]" and isinstance(v, str):
            v = [v]
        return v

    @property
    def token_budget(self):
        return self._lib.pmcp_call_token_budget(self._ptr)

    @property
    def cancelled(self):
        return bool(self._lib.pmcp_call_cancelled(self._ptr))

    def page(self, source_version=0):
        """Starts the budgeted page of this call (tools registered with
        budgeted=True); @source_version binds its cursors to a version of
        the data, so a changed source refuses them."""
        if self._page is None:
            self._page = Page(self, source_version)
        return self._page


# ---- the server --------------------------------------------------------------

class Server:
    """A libprobemcp server. Outgoing messages (responses, notifications,
    server requests) go to on_message(bytes) — by default collected so
    that request() can return responses — or to the output of
    serve_stdio()."""

    def __init__(self, name, version=None, title=None, instructions=None, workers=0):
        self._lib = _library()
        self._cb = []  # ctypes callbacks the engine holds
        self._lock = threading.Condition()
        self._responses = {}
        self.on_message = None
        opts = _ServerOptions()
        _check(self._lib.pmcp_server_options_init(C.byref(opts), 1))
        opts.name, opts.title = _b(name), _b(title)
        opts.server_version, opts.instructions = _b(version), _b(instructions)
        opts.workers = workers
        sink = _SINK_FN(self._sink)
        self._cb.append(sink)
        opts.sink = sink
        self._handle = C.c_void_p()
        _check(self._lib.pmcp_server_new(C.byref(self._handle), C.byref(opts)))

    def _sink(self, out_ptr, _ud):
        out = C.cast(out_ptr, C.POINTER(_Out)).contents
        if not out.data:
            return
        data = C.string_at(out.data, out.len)
        if self.on_message is not None:
            self.on_message(data)
            return
        if out.kind == _OUT_RESPONSE:
            msg = json.loads(data)
            with self._lock:
                self._responses[json.dumps(msg.get("id"))] = msg
                self._lock.notify_all()

    def tool(self, name, description, **kw):
        """Decorator form of add_tool()."""
        def register(fn):
            self.add_tool(name, description, fn, **kw)
            return fn
        return register

    def add_tool(self, name, description, fn, args=(), modes=(), default_mode=None,
                 title=None, budgeted=False, blocking=False, read_only=None,
                 destructive=None, idempotent=None, open_world=None):
        """Registers @fn(call) as tool @name. @args: arguments of every mode
        (or of a mode-less tool); @modes: Mode objects, making `mode` a
        required argument unless @default_mode names one. @budgeted: the
        tool takes token_budget and cursor and answers with call.page()."""
        keep = _Keep()
        specs = {}
        d = _ToolDef()
        d.version = 1
        d.name, d.title, d.description = _b(name), _b(title), _b(description)
        args = list(args)
        if args:
            d.args, d.n_args = keep.arg_array(args), len(args)
        if modes:
            marr = (_ModeSpec * len(modes))()
            for i, m in enumerate(modes):
                marr[i] = _ModeSpec(_b(m.name), _b(m.description),
                                    keep.arg_array(m.args) if m.args else None, len(m.args))
                specs[m.name] = args + list(m.args)
            keep.refs.append(marr)
            d.modes, d.n_modes = marr, len(modes)
        else:
            specs[""] = args
        d.default_mode = _b(default_mode)
        d.read_only, d.destructive = _HINT[read_only], _HINT[destructive]
        d.idempotent, d.open_world = _HINT[idempotent], _HINT[open_world]
        d.flags = (_TOOL_BUDGETED if budgeted else 0) | (_TOOL_BLOCKING if blocking else 0)

        def handler(call_ptr, _ud):
            call = None
            try:
                call = Call(self._lib, call_ptr, specs)
                result = fn(call)
                if budgeted:
                    page = call.page()
                    if page._pg is not None:  # the callable did not finish it
                        page.finish(more=page.cut)
                    return 0
                self._result(call_ptr, result)
            except Exception as e:  # an error result naming it, not a crash
                msg = "%s: %s" % (type(e).__name__, e)
                if budgeted and call is not None:
                    page = call.page()
                    if page._pg is not None:
                        page.fail(msg)
                        page.finish()
                    return 0
                text = msg.encode()
                self._lib.pmcp_result_text(call_ptr, text, len(text))
                self._lib.pmcp_result_set_error(call_ptr, 1)
            return 0

        cb = _TOOL_FN(handler)
        self._cb.append(cb)
        d.handler = cb
        _check(self._lib.pmcp_server_add_tool(self._handle, C.byref(d)), self._handle)

    def _result(self, call_ptr, result):
        if result is None:
            return
        if isinstance(result, str):
            text = result.encode()
            _check(self._lib.pmcp_result_text(call_ptr, text, len(text)))
            return
        text = json.dumps(result, allow_nan=False).encode()
        _check(self._lib.pmcp_result_text(call_ptr, text, len(text)))
        if isinstance(result, dict):
            _check(self._lib.pmcp_result_structured(call_ptr, text, len(text)))

    def handle(self, message, session=None):
        """Hands one JSON-RPC message (bytes, str or dict) to the engine;
        what it answers leaves through on_message (or is kept for
        request())."""
        if isinstance(message, dict):
            message = json.dumps(message)
        if isinstance(message, str):
            message = message.encode()
        _check(self._lib.pmcp_server_handle(self._handle, _b(session), message, len(message)))

    def request(self, method, params=None, id=None, session=None, timeout=30):
        """Sends a request and returns its response (a dict), for hosts and
        tests that use the server in process."""
        with self._lock:
            self._next_id = getattr(self, "_next_id", 0) + 1
            rid = id if id is not None else "py-%d" % self._next_id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.handle(msg, session)
        key = json.dumps(rid)
        with self._lock:
            if not self._lock.wait_for(lambda: key in self._responses, timeout):
                raise TimeoutError("no response to %s within %s s" % (method, timeout))
            return self._responses.pop(key)

    def modern_request(self, method, params=None, capabilities=None, timeout=30):
        """A self-contained modern-era (2026-07-28) request: params._meta
        says the protocol version and the client's capabilities, and no
        initialize comes first. Returns the response (a dict)."""
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        meta.update(MODERN_META)
        if capabilities is not None:
            meta["io.modelcontextprotocol/clientCapabilities"] = capabilities
        params["_meta"] = meta
        return self.request(method, params, timeout=timeout)

    def session_protocol(self, session=None):
        """The protocol version @session negotiated with initialize (None:
        the default session), or None before initialize."""
        buf = C.create_string_buffer(32)
        if self._lib.pmcp_server_session_protocol(self._handle, _b(session), buf, 32) != 0:
            return None
        return buf.value.decode()

    def serve_stdio(self, infile=None, outfile=None):
        """Serves MCP on newline-delimited JSON-RPC (stdin/stdout by default)
        until end of input; calls still running answer before it returns.
        Both protocol eras are served at once: the engine tells each
        request's era (initialize opens a 2025-11-25 session; a request
        with the modern _meta is handled on its own)."""
        infile = infile or sys.stdin.buffer
        outfile = outfile or sys.stdout.buffer
        wlock = threading.Lock()

        def write(data):
            with wlock:
                outfile.write(data + b"\n")
                outfile.flush()

        self.on_message = write
        try:
            for line in infile:
                line = line.rstrip(b"\r\n")
                if line.strip():
                    self.handle(line)
        finally:
            self._lib.pmcp_server_session_end_input(self._handle, None)
            self._lib.pmcp_server_drain(self._handle)
            self.on_message = None

    def close(self):
        """Cancels running calls and frees the server."""
        if self._handle:
            self._lib.pmcp_server_free(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
