#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI of the fresh libprobemcp.so against the last release's
# (tests/abi/libprobemcp.abi), with libabigail: abidw describes the build's
# public symbols and the types the public headers declare, abidiff compares
# the two and the test fails on any change libprobemcp(7)'s ABI policy does
# not allow (libprobemcp.abignore lists what it allows). New symbols are
# shown, not failed.
#
#   abi-check.sh check LIB HEADERS_DIR VERSION_H BASELINE SUPPRESSIONS
#   abi-check.sh write LIB HEADERS_DIR VERSION_H BASELINE   (on release)
# Exit 77 (skipped) without abidw/abidiff (Debian: abigail-tools) or
# without debug information in LIB.
set -u
mode=$1 lib=$2 headers=$3 version_h=$4 baseline=$5
if ! command -v abidw >/dev/null 2>&1 || ! command -v abidiff >/dev/null 2>&1; then
  echo "abi: abidw/abidiff not found (Debian package abigail-tools): skipped"
  exit 77
fi
if ! readelf -S "$lib" 2>/dev/null | grep -q '\.debug_info'; then
  echo "abi: $lib has no debug information (build with -Ddebug=true): skipped"
  exit 77
fi
describe() {
  abidw --headers-dir "$headers" --header-file "$version_h" --drop-private-types \
    --no-show-locs --no-corpus-path --no-comp-dir-path --out-file "$1" "$lib"
}
if [ "$mode" = write ]; then
  describe "$baseline" && echo "abi: wrote $baseline"
  exit $?
fi
supp=$6
new=$(mktemp "${TMPDIR:-/tmp}/pmcp-abi-XXXXXX")
trap 'rm -f "$new"' EXIT
if ! describe "$new"; then
  echo "abi: abidw failed on $lib"
  exit 1
fi
# What was added (information only).
abidiff --suppressions "$supp" "$baseline" "$new" | sed -n '/Added function/,$p'
abidiff --suppressions "$supp" --no-added-syms "$baseline" "$new" > "$new.report" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
  cat "$new.report"
  rm -f "$new.report"
  echo "abi: the library's ABI changed in a way the ABI policy (libprobemcp(7))"
  echo "abi: does not allow, against $baseline (abidiff exit $rc)."
  echo "abi: a deliberate break on a new soname: refresh it (tests/abi/README)."
  exit 1
fi
rm -f "$new.report"
echo "abi: compatible with $baseline"
exit 0
