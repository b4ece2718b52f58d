#!/bin/bash
# The GPU benchmark of two builds side by side, in one run on one device: each bundle
# (benchmarks/gpu/bundle.sh) superoptimizes the rows itself (run.sh's searches, its own search
# cache), then bench.py times each bundle's graphs in processes that alternate BEFORE, AFTER,
# BEFORE, AFTER, … (YIRAGE_BENCH_PROCESSES of each, default 2), and both pooled tables are printed:
# a refactoring that should change no kernel shows the same figures within noise.
#
# usage: benchmarks/gpu/compare.sh BEFORE AFTER OUT [search|bench]
#   BEFORE, AFTER: bundles; OUT receives OUT/before and OUT/after (graphs, logs, samples) and
#   compare.md. With a stage named, only that stage runs (each fits one 10-minute command where
#   a whole run would not); the bench stage reads the graphs the search stage left in OUT.
# environment: as run.sh's (YIRAGE_BENCH_BUDGET, YIRAGE_BENCH_ROWS, YIRAGE_BENCH_ROUNDS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
before=$(cd "$1" && pwd)
after=$(cd "$2" && pwd)
out=$3
stage=${4:-all}
processes=${YIRAGE_BENCH_PROCESSES:-2}
rows=${YIRAGE_BENCH_ROWS:-gqa qknorm rmsnorm_linear lora gated_mlp ntrans gqa_b8 qknorm_b8 rmsnorm_linear_b8 ntrans_b8}
mkdir -p "$out/before" "$out/after"
if [ "$stage" != bench ]; then
  for side in before after; do
    bundle=$before
    [ $side = after ] && bundle=$after
    echo "=== searches with the $side bundle"
    YIRAGE_BENCH_STAGE=search YIRAGE_BENCH_ROWS="$rows" "$here/run.sh" "$bundle" "$out/$side"
  done
fi
[ "$stage" = search ] && exit 0
for ((i = 1; i <= processes; i++)); do
  for side in before after; do
    bundle=$before
    [ $side = after ] && bundle=$after
    echo "=== bench.py, $side, process $i of $processes"
    # shellcheck disable=SC2086  # one word per row
    LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} YIRAGE_BENCH_SAMPLES=$out/$side/samples.$i.json \
      python3 "$here/bench.py" "$bundle/lib/libyirage.so.1" "$bundle/libyirage-backend-cuda.so" "$out/$side" $rows \
      >"$out/$side/bench.$i.txt"
  done
done
{
  for side in before after; do
    echo "## $side"
    echo
    python3 "$here/bench.py" --report "$out/$side"/samples.*.json
    echo
  done
} | tee "$out/compare.md"
