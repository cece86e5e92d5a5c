#!/bin/sh
# SPDX-License-Identifier: MIT
# Server CPU per request of probe-mcp-http with an API key, against the
# same requests without authentication (so the difference is what the
# credential check costs) and the everything example's echo (the floor of
# a tool call over the same transport), in paired alternating rounds on
# one fresh SQLite store (or on PostgreSQL: PROBE_BENCH_STORE=postgresql://...).
# Prints each round and the medians. Not a test.
#
#   sh tests/bench/auth/run.sh BUILD_DIR [CALLS] [ROUNDS]   (default 5000, 5)
# PMCP_BENCH_BEFORE=OTHER_BUILD_DIR adds that build's probe-mcp-http (same
# store, same key) to every round, for a before/after ratio.
set -eu
build=$(cd "${1:-build}" && pwd)
calls=${2:-5000}
rounds=${3:-5}
client=$build/tests/bench/auth_cpu
dir=$(mktemp -d /tmp/pmcp-authbench-XXXX)
store=${PROBE_BENCH_STORE:-$dir/store.db}
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT INT TERM

"$build/frontends/cli/probe" --store "$store" init >/dev/null
key=$("$build/frontends/cli/probe" --store "$store" key create --name bench 2>/dev/null)

# start NAME CMD...: runs CMD with stdout in $dir/NAME.out; sets $pid, $port.
start() {
  name=$1; shift
  "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
  pid=$!
  pids="$pids $pid"
  i=0
  while ! port=$(sed -n 's/.*listening on http:\/\/[^ ]*:\([0-9][0-9]*\)\/.*/\1/p' "$dir/$name.out") ||
        [ -z "$port" ]; do
    i=$((i + 1))
    [ $i -lt 200 ] || { cat "$dir/$name.err" >&2; echo "$name did not start" >&2; exit 1; }
    sleep 0.05
  done
}
start auth "$build/frontends/http/probe-mcp-http" --store "$store" --listen 127.0.0.1:0 --toolset all
auth_pid=$pid auth_port=$port
start noauth "$build/frontends/http/probe-mcp-http" --store "$store" --listen 127.0.0.1:0 \
  --toolset all --insecure-no-auth
noauth_pid=$pid noauth_port=$port
before=${PMCP_BENCH_BEFORE:-}
if [ -n "$before" ]; then
  start before "$before/frontends/http/probe-mcp-http" --store "$store" --listen 127.0.0.1:0 \
    --toolset all
  before_pid=$pid before_port=$port
fi
start floor "$build/examples/everything/probe-mcp-everything" --http 127.0.0.1:0
floor_pid=$pid floor_port=$port

cpu() { "$client" --calls "$calls" "$@" | sed 's/server_cpu_us=\([^ ]*\).*/\1/'; }
: >"$dir/rounds"
r=1
while [ $r -le "$rounds" ]; do
  a=$(cpu --port "$auth_port" --pid "$auth_pid" --key "$key")
  n=$(cpu --port "$noauth_port" --pid "$noauth_pid")
  f=$(cpu --port "$floor_port" --pid "$floor_pid")
  e=$(cpu --port "$floor_port" --pid "$floor_pid" --tool echo --args '{"text":"hi"}')
  lw=$(cpu --port "$auth_port" --pid "$auth_pid" --key "$key" --tool list_workspaces)
  lwn=$(cpu --port "$noauth_port" --pid "$noauth_pid" --tool list_workspaces)
  b=0 blw=0
  if [ -n "$before" ]; then
    b=$(cpu --port "$before_port" --pid "$before_pid" --key "$key")
    blw=$(cpu --port "$before_port" --pid "$before_pid" --key "$key" --tool list_workspaces)
    echo "  before: ping+key $b, list_workspaces+key $blw"
  fi
  echo "$a $n $e $lw $lwn $f $b $blw" >>"$dir/rounds"
  echo "round $r (load $(cut -d' ' -f1 /proc/loadavg)): ping+key $a, ping no auth $n," \
       "ping (everything) $f, echo (everything) $e, list_workspaces+key $lw, no auth $lwn  (us of server CPU per call)"
  r=$((r + 1))
done
median() { cut -d' ' -f"$1" "$dir/rounds" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
a=$(median 1) n=$(median 2) e=$(median 3) lw=$(median 4) lwn=$(median 5) f=$(median 6)
echo "median of $rounds rounds x $calls calls, one keep-alive connection, server CPU per call (us):"
echo "  ping, API key:                 $a"
echo "  ping, no authentication:       $n"
echo "  authentication (difference):   $(echo "$a $n" | awk '{printf "%.2f", $1 - $2}')"
echo "  ping, everything example:      $f  (floor of a request)"
echo "  echo, everything example:      $e  (floor of a tool call)"
echo "  ping+key / ping floor:         $(echo "$a $f" | awk '{printf "%.2fx", $1 / $2}')"
echo "  list_workspaces+key / echo:    $(echo "$lw $e" | awk '{printf "%.2fx", $1 / $2}')"
echo "  list_workspaces, API key:      $lw  (no authentication: $lwn)"
if [ -n "$before" ]; then
  b=$(median 7) blw=$(median 8)
  echo "  before ($before): ping+key $b, list_workspaces+key $blw"
  echo "  authentication before (ping+key - ping no auth): $(echo "$b $n" | awk '{printf "%.2f", $1 - $2}')"
  echo "  ping+key before / after:       $(echo "$b $a" | awk '{printf "%.2fx", $1 / $2}')"
fi
