#!/bin/sh
# Runs a libFuzzer binary for a bounded time over the checked-in seed corpus; new inputs go to a
# scratch folder in the build tree. Usage: run_fuzzer.sh FUZZER SEED_CORPUS SCRATCH SECONDS
set -eu
fuzzer="$1"; seeds="$2"; scratch="$3"; seconds="$4"
mkdir -p "$scratch"
# -error_exitcode=1: libFuzzer's default, 77, would read as "skipped" to meson.
exec "$fuzzer" "$scratch" "$seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
  -error_exitcode=1 \
  -print_final_stats=1
