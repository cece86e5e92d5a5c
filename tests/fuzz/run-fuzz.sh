#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one libFuzzer target for a bounded time: it reads the committed
# corpus and writes the new inputs it finds to NEW (a folder in the build
# tree, kept between runs; copy what is worth keeping into
# tests/fuzz/corpus/TARGET). A crash, a leak or a sanitizer report fails
# the test, and libFuzzer leaves the input as crash-* in the build folder.
# With PMCP_FUZZ_KEEP=DIR the new inputs go to DIR/TARGET instead, a folder
# that outlives the build (CI keeps its finds there between runs).
#   run-fuzz.sh TARGET_BINARY CORPUS NEW SECONDS
set -eu
bin=$1 corpus=$2 new=$3 seconds=$4
if [ -n "${PMCP_FUZZ_KEEP:-}" ]; then
  new=$PMCP_FUZZ_KEEP/$(basename "$corpus")
fi
mkdir -p "$new"
before=$(find "$new" -type f | wc -l)
cd "$(dirname "$new")"
"$bin" "$new" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1
after=$(find "$new" -type f | wc -l)
echo "$(basename "$bin"): $((after - before)) new corpus entries in $new"
