#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one node:test file of this folder; skips (77) when `npm ci` has not
# been run here (.ci/test runs it in every folder with a package-lock.json).
here=$(cd "$(dirname "$0")" && pwd)
# Under CI (CI=true, or PMCP_TEST_STRICT=1 as .ci/test sets) a missing SDK is
# a failure: the suite must never pass without having run.
# (the v1 SDK and the v2 client, both of package.json)
if [ ! -d "$here/node_modules/@modelcontextprotocol/sdk" ] ||
   [ ! -d "$here/node_modules/@modelcontextprotocol/client" ]; then
  if [ -n "${PMCP_TEST_STRICT:-}" ] && [ "$PMCP_TEST_STRICT" != 0 ] || [ "${CI:-}" = true ]; then
    echo "error: the SDK clients are not installed in $here (npm ci) and PMCP_TEST_STRICT/CI forbids skipping" >&2
    exit 1
  fi
  echo "skip: run 'npm ci' in $here first"
  exit 77
fi
exec node --test --test-reporter=spec "$here/$1"
