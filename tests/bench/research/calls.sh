#!/bin/sh
# SPDX-License-Identifier: MIT
# Server CPU and instructions per tool call on the demo store, in process
# (bench-calls). Fills a fresh store with `probe demo` unless STORE is
# given, runs bench-calls natively (us per call, medians of rounds), then
# under callgrind (instructions per call, every thread, deterministic).
# Not a test.
#
#   sh tests/bench/research/calls.sh BUILD_DIR [STORE] [CALLS]   (default 2000)
# PMCP_BENCH_BEFORE=OTHER_BUILD_DIR counts that build's instructions too
# (its bench-calls, the same store), for a before/after ratio;
# PMCP_BENCH_CG_CALLS calls of each under callgrind (default 40).
set -eu
build=$(cd "${1:-build}" && pwd)
dir=$(mktemp -d /tmp/pmcp-callsbench-XXXX)
trap 'rm -rf "$dir"' EXIT INT TERM
store=${2:-}
if [ -z "$store" ]; then
  store=$dir/demo.db
  "$build/frontends/cli/probe" --store "$store" demo >/dev/null 2>&1
fi
calls=${3:-2000}
"$build/tests/bench/research/bench-calls" "$store" "$calls"

# instructions: one callgrind dump per call name (the bench's client
# requests); the dump's totals over its CALLS calls
count() { # BUILD TAG
  ncalls=${PMCP_BENCH_CG_CALLS:-40}
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg.$2" \
    "$1/tests/bench/research/bench-calls" "$store" "$ncalls" >/dev/null 2>"$dir/vg.$2"
  for f in "$dir/cg.$2".*; do
    [ -e "$f" ] || continue
    name=$(sed -n 's/^desc: Trigger: Client Request: //p' "$f")
    tot=$(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$f")
    [ -n "$name" ] && echo "$name	$((tot / ncalls))"
  done | sort >"$dir/ins.$2"
}
count "$build" after
before=${PMCP_BENCH_BEFORE:-}
if [ -n "$before" ]; then
  count "$(cd "$before" && pwd)" before
  echo "instructions per call (callgrind): before, after, after/before"
  join -t '	' "$dir/ins.before" "$dir/ins.after" |
    awk -F '\t' '{ printf "%-24s %10d %10d %7.3f\n", $1, $2, $3, $3 / $2 }'
else
  echo "instructions per call (callgrind)"
  awk -F '\t' '{ printf "%-24s %10d\n", $1, $2 }' "$dir/ins.after"
fi
