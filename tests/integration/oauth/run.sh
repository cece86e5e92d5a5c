#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one node:test file of tests/integration/oauth. Skips (77) when `npm ci`
# has not been run here or Chromium is missing; under CI (PMCP_TEST_STRICT or
# CI=true, as .ci/test sets) either is a failure instead.
here=$(cd "$(dirname "$0")" && pwd)
strict=
if [ -n "${PMCP_TEST_STRICT:-}" ] && [ "$PMCP_TEST_STRICT" != 0 ] || [ "${CI:-}" = true ]; then
  strict=1
fi
missing=
[ -d "$here/node_modules/@modelcontextprotocol/sdk" ] && [ -d "$here/node_modules/playwright-core" ] ||
  missing="npm packages (run 'npm ci' in $here)"
if [ -z "$missing" ] && [ "${OAUTH_NEEDS_CHROMIUM:-0}" = 1 ] && [ ! -x /usr/bin/chromium ]; then
  missing="/usr/bin/chromium (apt-get install chromium)"
fi
if [ -z "$missing" ] && [ "${OAUTH_NEEDS_PG:-0}" = 1 ] && [ -z "${PROBE_TEST_PG_URL:-}" ]; then
  missing="a PostgreSQL test cluster (eval \"\$(tests/pg/pgctl.sh start DIR)\")"
fi
if [ -n "$missing" ]; then
  if [ -n "$strict" ]; then
    echo "error: missing $missing and PMCP_TEST_STRICT/CI forbids skipping" >&2
    exit 1
  fi
  echo "skip: missing $missing"
  exit 77
fi
exec node --test --test-reporter=spec --test-concurrency=1 "$here/$1"
