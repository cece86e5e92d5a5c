#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one test in a scratch environment of its own: a fresh HOME with its
# XDG folders, and none of the settings the programs read from the
# environment of whoever runs the suite (a default store made by
# `probe demo`, a PROBE_STORE naming another file, an embeddings or papers
# endpoint). Variables the suite itself hands to a test (PROBE_TEST_*, the
# binaries' paths, PROBE_PG_PIPELINE of the -nopipe suites) are kept:
# meson sets them before this runs, so only the programs' own settings are
# cleared here (.ci/test clears every PROBE_* of its caller first). The
# scratch folder is removed afterwards.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/pmcp-test-home-XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT INT TERM
unset PROBE_STORE PROBE_STORE_WAIT PROBE_WORKSPACE PROBE_PROJECT \
  PROBE_EMBED_URL PROBE_EMBED_KEY PROBE_EMBED_MODEL PROBE_PAPERS_URL \
  PROBE_MCP_QUEUE_MAX PROBE_MCP_WEB_CAPACITY PROBE_MCP_SQL_MAX \
  PROBE_MCP_SQL_PER_CALLER PROBE_MCP_WORKERS_PER_CALLER PROBE_PG_QUERY_USER
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
