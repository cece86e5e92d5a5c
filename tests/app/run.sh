#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one node:test file of tests/app. Skips (77) when `npm ci` has not
# been run here or Chromium is missing; under CI (PMCP_TEST_STRICT or
# CI=true, as .ci/test sets) either is a failure instead.
here=$(cd "$(dirname "$0")" && pwd)
strict=
if [ -n "${PMCP_TEST_STRICT:-}" ] && [ "$PMCP_TEST_STRICT" != 0 ] || [ "${CI:-}" = true ]; then
  strict=1
fi
missing=
for p in @modelcontextprotocol/ext-apps @modelcontextprotocol/sdk playwright-core zod; do
  [ -d "$here/node_modules/$p" ] || missing="npm packages (run 'npm ci' in $here)"
done
if [ -z "$missing" ] && [ ! -x "${PMCP_CHROMIUM:-/usr/bin/chromium}" ]; then
  missing="${PMCP_CHROMIUM:-/usr/bin/chromium} (apt-get install chromium)"
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
