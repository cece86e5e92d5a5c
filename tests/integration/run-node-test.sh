#!/bin/sh
# Runs one node:test file of this folder; skips (77) when `npm ci` has not
# been run here (.ci/test runs it in every folder with a package-lock.json).
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$here/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "skip: run 'npm ci' in $here first"
  exit 77
fi
exec node --test --test-reporter=spec "$here/$1"
