#!/usr/bin/env bash
# Builds and runs region_bench.cpp against the CPU plugin's pool and region (backends/cpu):
# a chain of 4 loops, then one loop with a 400 µs chunk, on 2 threads (or $1).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../../backends/cpu
out=${TMPDIR:-/tmp}/yirage-region-bench
c++ -std=c++20 -O2 -march=native -I"$src" -I"$here/../../../include" "$here/region_bench.cpp" \
  "$src/parallel_region.cpp" "$src/thread_pool.cpp" -o "$out" -pthread
echo "== a chain of 4 loops"
"$out" "${1:-2}" 4
echo "== one loop, a 400 µs chunk"
"$out" "${1:-2}" 1 slow
