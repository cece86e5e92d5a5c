#!/bin/sh
# Runs one test in a scratch environment of its own: a fresh HOME with its
# XDG folders, and none of the PROBE_* settings of whoever runs the suite
# (a default store made by `probe demo`, a PROBE_STORE naming another
# file), except the PROBE_TEST_* ones the suite itself sets up and the
# ones meson.build gives tests (the programs under test, PROBE_PG_PIPELINE
# of a pg twin). The scratch folder is removed afterwards.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/pmcp-test-home-XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT INT TERM
for v in $(env | sed -n 's/^\(PROBE_[A-Za-z0-9_]*\)=.*/\1/p'); do
  case "$v" in
    PROBE_TEST_*|PROBE_CLI|PROBE_MCP_HTTP|PROBE_MCP_STDIO|PROBE_PG_PIPELINE) ;;
    *) unset "$v" ;;
  esac
done
unset PUBLIC_BASE_URL APP_BASE_URL PGCONNECT_TIMEOUT
export HOME="$scratch/home"
export XDG_DATA_HOME="$HOME/.local/share" XDG_CONFIG_HOME="$HOME/.config"
export XDG_CACHE_HOME="$HOME/.cache" XDG_STATE_HOME="$HOME/.local/state"
export XDG_RUNTIME_DIR="$scratch/run"
mkdir -p "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$XDG_STATE_HOME"
mkdir -m 700 -p "$XDG_RUNTIME_DIR"
"$@"
rc=$?
exit $rc
