#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one node:test file of this folder on PostgreSQL (PMCP_TEST_STORE=pg,
# lib.mjs's storeIn): skips (77) without the private test cluster of
# tests/pg (PROBE_TEST_PG_URL), fails instead under PMCP_TEST_STRICT or CI.
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${PROBE_TEST_PG_URL:-}" ]; then
  if [ -n "${PMCP_TEST_STRICT:-}" ] && [ "$PMCP_TEST_STRICT" != 0 ] || [ "${CI:-}" = true ]; then
    echo "error: no PostgreSQL test cluster (PROBE_TEST_PG_URL) and PMCP_TEST_STRICT/CI forbids skipping" >&2
    exit 1
  fi
  echo "skip: no PostgreSQL test cluster (eval \"\$(tests/pg/pgctl.sh start DIR)\")"
  exit 77
fi
cd "$here" && PMCP_TEST_STORE=pg exec node --test "$here/$1"
