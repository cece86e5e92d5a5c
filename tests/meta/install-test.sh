#!/bin/sh
# SPDX-License-Identifier: MIT
# `meson install` into a DESTDIR puts the library (shared, with its soname
# links, and static), the headers, libprobemcp.pc, the programs and the man
# pages in place; then examples/embed/embed.c is compiled against the
# installed tree through pkg-config alone and run.
#
# usage: install-test.sh BUILD_DIR SOURCE_DIR PREFIX LIBDIR INCLUDEDIR BINDIR
#                        MANDIR "EXTRA_CFLAGS" PROGRAM... -- MANPAGE...
# Besides the files named here, every file `meson introspect --installed`
# lists must be in place.
set -u
build=$1 src=$2 prefix=$3 libdir=$4 includedir=$5 bindir=$6 mandir=$7 extra=$8
shift 8
progs=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do progs="$progs $1"; shift; done
[ $# -gt 0 ] && shift
pages="$*"

case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
case $includedir in /*) ;; *) includedir=$prefix/$includedir ;; esac
case $bindir in /*) ;; *) bindir=$prefix/$bindir ;; esac
case $mandir in /*) ;; *) mandir=$prefix/$mandir ;; esac

dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
passed=0 failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
has() { if [ -e "$dest$2" ]; then ok "$1"; else fail "$1 ($2 missing)"; fi; }

if meson install -C "$build" --destdir "$dest" --no-rebuild >"$dest.log" 2>&1; then
  ok "meson install --destdir"
else
  cat "$dest.log"; fail "meson install --destdir"
fi
rm -f "$dest.log"

has "shared library" "$libdir/libprobemcp.so"
has "soname link" "$libdir/libprobemcp.so.0.1"
has "static library" "$libdir/libprobemcp.a"
has "pkg-config file" "$libdir/pkgconfig/libprobemcp.pc"
has "generated version.h" "$includedir/probemcp/version.h"
for h in "$src"/libprobemcp/include/probemcp/*.h; do
  has "header $(basename "$h")" "$includedir/probemcp/$(basename "$h")"
done
for p in $progs; do has "program $p" "$bindir/$p"; done
for m in $pages; do
  has "man page $m" "$mandir/man${m##*.}/$m"
done
# `man FUNCTION` finds a page for every public function.
nopage=""
for f in $(sed -n 's/^PMCP_API[^(]*[ *]\(pmcp_[a-z0-9_]*\)(.*/\1/p' "$src"/libprobemcp/include/probemcp/*.h | sort -u); do
  [ -e "$dest$mandir/man3/$f.3" ] || nopage="$nopage $f"
done
if [ -z "$nopage" ]; then ok "every public function has a man3 page or link"; else fail "no man page for:$nopage"; fi
# Everything meson says it installs.
missing=$(meson introspect --installed "$build" | python3 -c '
import json, os, sys
dest = sys.argv[1]
for path in json.load(sys.stdin).values():
    if not os.path.lexists(dest + path):
        print(path)
' "$dest")
n=$(meson introspect --installed "$build" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
if [ -z "$missing" ]; then ok "all $n files meson installs are in place"; else fail "not installed: $missing"; fi
soname=$(readelf -d "$dest$libdir/libprobemcp.so" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
if [ "$soname" = "libprobemcp.so.0.1" ]; then ok "soname $soname"; else fail "soname '$soname'"; fi
# RE2 (C++) is a module beside the library, loaded on first use: the
# library itself needs neither libre2 nor libstdc++ at start-up.
has "RE2 module in the library's private folder" "$libdir/probemcp-0.1/libprobemcp-re2.so"
if [ -e "$dest$libdir/libprobemcp-re2.so" ]; then fail "no module in the public libdir"; else ok "no module in the public libdir"; fi
if [ -e "$dest$includedir/probemcp/meson.build" ]; then fail "no build file among the headers"; else ok "no build file among the headers"; fi
has "LICENSE" "$prefix/share/doc/probe-mcp/LICENSE"
has "NOTICE" "$prefix/share/doc/probe-mcp/NOTICE"
needed=$(readelf -d "$dest$libdir/libprobemcp.so" 2>/dev/null | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case $needed in
  *libre2*|*libstdc++*) fail "libprobemcp.so needs no C++ library at start-up (NEEDED: $needed)" ;;
  *) ok "libprobemcp.so needs no C++ library at start-up (NEEDED: $needed)" ;;
esac

# A program built from the installed tree with pkg-config alone.
export PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_PATH="$dest$libdir/pkgconfig"
unset PKG_CONFIG_LIBDIR
if flags=$(pkg-config --cflags --libs libprobemcp); then
  ok "pkg-config --cflags --libs libprobemcp: $flags"
  # shellcheck disable=SC2086
  if cc -std=c11 -Wall -Wextra -Werror $extra -o "$dest/embed" \
      "$src/examples/embed/embed.c" $flags -pthread; then
    ok "embed.c compiles against the installed headers and library"
    if LD_LIBRARY_PATH="$dest$libdir" "$dest/embed" >"$dest/embed.out" 2>&1; then
      ok "embed runs against the installed library"
    else
      cat "$dest/embed.out"; fail "embed runs against the installed library"
    fi
  else
    fail "embed.c compiles against the installed headers and library"
  fi
else
  fail "pkg-config finds libprobemcp"
fi
# An MCP server over stdio, from the installed headers alone: initialize
# and a tools/call answered through the library's stdio transport.
# shellcheck disable=SC2086
# It needs only the engine: libprobemcp-engine, without SQLite or libpq.
has "pkg-config file libprobemcp-engine.pc" "$libdir/pkgconfig/libprobemcp-engine.pc"
if cc -std=c11 -Wall -Wextra -Werror $extra -o "$dest/stdio_host" \
    "$src/examples/embed/stdio_host.c" $(pkg-config --cflags --libs libprobemcp-engine) -pthread; then
  ok "stdio_host.c compiles against the installed engine headers and libprobemcp-engine"
  eneeded=$(readelf -d "$dest/stdio_host" "$dest$libdir/libprobemcp-engine.so" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  case " $eneeded" in
    *libsqlite3*|*libpq*|*" libprobemcp.so"*) fail "the engine-only host needs no store library (NEEDED: $eneeded)" ;;
    *) ok "the engine-only host needs no store library (NEEDED: $eneeded)" ;;
  esac
  init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{}}}'
  out=$(printf '%s\n%s\n' "$init" "$call" | LD_LIBRARY_PATH="$dest$libdir" "$dest/stdio_host")
  case $out in
    *'"id":1,"result":{'*'"protocolVersion":"2025-11-25"'*'"id":2,"result":{'*'hello from C'*)
      ok "stdio_host serves initialize and tools/call over stdio" ;;
    *) printf '%s\n' "$out"; fail "stdio_host serves initialize and tools/call over stdio" ;;
  esac
else
  fail "stdio_host.c compiles against the installed headers and library"
fi
# An MCP server over HTTP, from the installed headers alone (where meson
# built the HTTP transport: PMCP_HAVE_HTTP=1): it answers an initialize
# POSTed over loopback.
if [ "${PMCP_HAVE_HTTP:-0}" = 1 ]; then
  has "HTTP transport library" "$libdir/libprobemcp-http.so"
  has "HTTP soname link" "$libdir/libprobemcp-http.so.0.1"
  has "pkg-config file libprobemcp-http.pc" "$libdir/pkgconfig/libprobemcp-http.pc"
  if readelf -d "$dest$libdir/libprobemcp.so" | grep -q 'libuv'; then
    fail "libprobemcp.so links without libuv"
  else
    ok "libprobemcp.so links without libuv"
  fi
  # shellcheck disable=SC2086
  if hflags=$(pkg-config --cflags --libs libprobemcp-http) &&
     cc -std=c11 -Wall -Wextra -Werror $extra -o "$dest/http_host" \
       "$src/examples/embed/http_host.c" $hflags -pthread; then
    ok "http_host.c compiles with pkg-config libprobemcp-http: $hflags"
    LD_LIBRARY_PATH="$dest$libdir" "$dest/http_host" >"$dest/http_host.out" 2>&1 &
    hpid=$!
    url=""
    for _ in $(seq 1 100); do
      url=$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$dest/http_host.out")
      [ -n "$url" ] && break
      sleep 0.1
    done
    init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
    reply=$(python3 - "$url" "$init" <<'PY'
import sys, urllib.request
req = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), method="POST",
    headers={"Content-Type": "application/json",
             "Accept": "application/json, text/event-stream"})
with urllib.request.urlopen(req, timeout=10) as r:
    print(r.headers.get("Mcp-Session-Id", ""))
    print(r.read().decode())
PY
)
    case $reply in
      *'"id":1,"result":{'*'"protocolVersion":"2025-11-25"'*'"name":"http-host"'*)
        ok "http_host answers initialize over loopback ($url)" ;;
      *) cat "$dest/http_host.out"; printf '%s\n' "$reply"
         fail "http_host answers initialize over loopback ($url)" ;;
    esac
    kill -TERM "$hpid" 2>/dev/null
    wait "$hpid"
    hrc=$?
    if [ "$hrc" -eq 0 ]; then ok "http_host shuts down on SIGTERM"; else fail "http_host shuts down on SIGTERM (status $hrc)"; fi
  else
    fail "http_host.c compiles with pkg-config libprobemcp-http"
  fi
fi
# probe-mcp-http links the shared libraries it is built on, like every
# frontend, instead of carrying its own copy of them.
case " $progs " in
  *" probe-mcp-http "*)
    pneeded=$(readelf -d "$dest$bindir/probe-mcp-http" 2>/dev/null |
              sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    for lib in libprobemcp.so.0 libprobemcp-http.so.0; do
      case " $pneeded" in
        *" $lib"*) ok "probe-mcp-http links the shared $lib (NEEDED: $pneeded)" ;;
        *) fail "probe-mcp-http links the shared $lib (NEEDED: $pneeded)" ;;
      esac
    done ;;
esac
# The .pc asks only for what the library links (libpq and libcurl are
# loaded at run time), and --static links a program against the archive.
if grep -Eq 'libpq|libcurl' "$dest$libdir/pkgconfig/libprobemcp.pc"; then
  fail "libprobemcp.pc requires neither libpq nor libcurl"
else
  ok "libprobemcp.pc requires neither libpq nor libcurl"
fi
if sflags=$(pkg-config --static --libs libprobemcp); then
  # shellcheck disable=SC2086
  if cc -std=c11 $extra -o "$dest/embed-static" "$src/examples/embed/embed.c" \
      $(pkg-config --cflags libprobemcp) "$dest$libdir/libprobemcp.a" \
      $(printf '%s\n' $sflags | grep -v '^-lprobemcp$') -pthread &&
     "$dest/embed-static" >"$dest/embed-static.out" 2>&1; then
    ok "embed.c links with pkg-config --static and runs"
  else
    cat "$dest/embed-static.out" 2>/dev/null; fail "embed.c links with pkg-config --static and runs"
  fi
else
  fail "pkg-config --static --libs libprobemcp"
fi
# The Python module, installed into the Python path, serving a host script.
pyinit=$(meson introspect --installed "$build" | python3 -c '
import json, sys
print(next((p for p in json.load(sys.stdin).values() if p.endswith("probemcp/__init__.py")), ""))')
if [ -n "$pyinit" ] && [ -e "$dest$pyinit" ] && [ -e "$(dirname "$dest$pyinit")/_config.py" ]; then
  ok "python module probemcp installed ($pyinit)"
  init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{"n":2}}}'
  # a library built with ASan loads into python only with its runtime first
  preload=""
  case $needed in *libasan*) preload=$(cc -print-file-name=libasan.so) ;; esac
  if printf '%s\n%s\n' "$init" "$call" | PYTHONPATH="$(dirname "$(dirname "$dest$pyinit")")" \
       LD_PRELOAD="$preload" ASAN_OPTIONS="${ASAN_OPTIONS:-}${preload:+:detect_leaks=0}" \
       PROBEMCP_LIB="$dest$libdir/libprobemcp.so.0.1" python3 "$src/examples/python/host.py" \
       | grep -q '"numbers":\[{"i":0},{"i":1}\]'; then
    ok "an installed probemcp serves examples/python/host.py"
  else
    fail "an installed probemcp serves examples/python/host.py"
  fi
else
  fail "python module probemcp installed"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
