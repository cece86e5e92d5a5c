#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Remakes tests/data/pg-upgrade/: a PostgreSQL store made by the code of
# COMMIT (default 82581a8^, the last one before metric points moved to
# metric_chunks) and what that code read from it.
#   bash tests/pg/upgrade/make-fixture.sh [COMMIT]
# Builds COMMIT's library in a temporary worktree, starts a private cluster
# (tests/pg/pgctl.sh), fills schema pmcp_upgrade_src with make-fixture.c
# (the series of tests/pg/upgrade_reads.h), dumps it (plain SQL with COPY;
# test-pg-upgrade.c renames the schema when it loads it) and writes the
# reads to expected.txt. Needs git, meson, a C compiler and PostgreSQL.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
commit=${1:-82581a8^}
out=$root/tests/data/pg-upgrade
work=$(mktemp -d /tmp/pmcp-fixture-XXXXXX)
chmod 0755 "$work" # the cluster may run as another user (pgctl.sh)
cleanup() {
  bash "$root/tests/pg/pgctl.sh" stop "$work/pg" >/dev/null 2>&1 || true
  git -C "$root" worktree remove --force "$work/src" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
git -C "$root" worktree add -q --detach "$work/src" "$commit" >/dev/null
(cd "$work/src" && meson setup build -Dhttp=disabled -Dtests=disabled -Dexamples=false \
  -Dpostgres=enabled -Dman=disabled -Dcurl=disabled >/dev/null && meson compile -C build >/dev/null)
cc -std=c11 -O1 -I"$work/src/libprobemcp/include" -I"$work/src/build/libprobemcp/include" \
  -o "$work/make-fixture" "$root/tests/pg/upgrade/make-fixture.c" \
  -L"$work/src/build/libprobemcp" -lprobemcp -Wl,-rpath,"$work/src/build/libprobemcp" -lm
pgenv=$(bash "$root/tests/pg/pgctl.sh" start "$work/pg")
eval "$pgenv"
admin=${PROBE_TEST_PG_URL/user=probe_owner/user=probe_admin}
psql -X -q -v ON_ERROR_STOP=1 "$PROBE_TEST_PG_URL" -c "CREATE SCHEMA pmcp_upgrade_src"
mkdir -p "$out"
"$work/make-fixture" "$PROBE_TEST_PG_URL&options=-csearch_path%3Dpmcp_upgrade_src" \
  "$out/expected.txt"
# As the superuser: the tables' row-level security applies to their owner.
{
  echo "-- A PostgreSQL store made by probe-mcp at $(git -C "$root" rev-parse --short "$commit")"
  echo "-- (tests/pg/upgrade/make-fixture.sh); test-pg-upgrade.c loads it."
  pg_dump --no-owner -n pmcp_upgrade_src -n pmcp_upgrade_src_sql "$admin" |
    grep -v '^\\\(un\)\?restrict '
} >"$out/store.sql"
ls -l "$out"
