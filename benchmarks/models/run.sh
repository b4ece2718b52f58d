#!/bin/bash
# The real-model suite on CUDA device 0 (README.md here): export the suite's graphs, superoptimize
# each for the device (search, then profile the cheapest candidates and the input graph on it),
# then time yirage's choice, the unfused graph through yirage, PyTorch eager and torch.compile
# (run.py bench: benchmarks/gpu/bench.py's harness), and print the tables (run.py report).
#
# usage: benchmarks/models/run.sh BUNDLE OUT
#   BUNDLE as benchmarks/gpu/bundle.sh makes it; OUT receives the graphs, logs and results.md.
# environment: YIRAGE_BENCH_BUDGET (search seconds per graph, default 10), YIRAGE_BENCH_TOP_K
#   (candidates profiled per search, default 12), YIRAGE_BENCH_GRAPHS (the graphs to run, names
#   as `suite.py list` gives them; default all), YIRAGE_BENCH_STAGE (search, bench or report:
#   only that stage; default all three), YIRAGE_BENCH_ROUNDS (run.py's turning rounds, default 3).
#   A stage may run in a later call on the same OUT: the searches' results and logs stay there.
set -euo pipefail
bundle=$(cd "$1" && pwd)
out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/candidates"
export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export YIRAGE_CACHE_DIR=${YIRAGE_CACHE_DIR:-$out/cache}
plugin=$bundle/libyirage-backend-cuda.so
budget=${YIRAGE_BENCH_BUDGET:-10}
top_k=${YIRAGE_BENCH_TOP_K:-12}
stage=${YIRAGE_BENCH_STAGE:-all}
python3 "$here/suite.py" export "$out/graphs"
graphs=${YIRAGE_BENCH_GRAPHS:-$(python3 "$here/suite.py" list | cut -f1)}
if [ "$stage" = all ] || [ "$stage" = search ]; then
  for name in $graphs; do
    echo "== superoptimize $name"
    "$bundle/bin/yirage" superoptimize "$out/graphs/$name.json" --plugin "$plugin" --backend cuda \
      --budget "$budget" --top-k "$top_k" --quiet -o "$out/$name.yrg" --candidates "$out/candidates/$name" \
      >"$out/$name.search.txt" 2>&1 ||
      echo "superoptimize $name failed: $(tail -n 3 "$out/$name.search.txt")"
    grep '^best:' "$out/$name.search.txt" || true
  done
fi
if [ "$stage" = all ] || [ "$stage" = bench ]; then
  # shellcheck disable=SC2086  # one word per graph
  python3 "$here/run.py" bench "$bundle/lib/libyirage.so.1" "$plugin" "$out" $graphs
fi
if [ "$stage" = all ] || [ "$stage" = report ]; then
  python3 "$here/run.py" report "$out" | tee "$out/results.md"
fi
