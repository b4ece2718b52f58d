#!/bin/bash
# The GPU benchmark, in one run: superoptimize the benchmark graphs for CUDA device 0 (the six at
# b = 1, and gqa, qknorm, rmsnorm_linear and ntrans at b = 8 too: examples/graphs/<row>.json;
# search with the device's properties, profile the top candidates on it, keep the fastest correct one),
# then time yirage's kernels, PyTorch eager and torch.compile on the same inputs and check
# yirage's outputs against PyTorch in float32 (bench.py).
#
# usage: benchmarks/gpu/run.sh BUNDLE OUT
#   BUNDLE holds bin/yirage, lib/libyirage.so.1 and its libraries (libz3.so.4,
#   libflatbuffers.so.2, …) and libyirage-backend-cuda.so, as benchmarks/gpu/bundle.sh makes it;
#   OUT receives the graphs, the logs and results.md.
# environment: YIRAGE_BENCH_BUDGET (search seconds per graph, default 60), YIRAGE_BENCH_ROWS
#   (the rows to run, e.g. "gqa gqa_b8"; default all), YIRAGE_BENCH_STAGE ("search": only the
#   searches; default both), YIRAGE_BENCH_ROUNDS (bench.py's
#   alternating timing rounds, default 8), YIRAGE_BENCH_PROCESSES (bench.py runs in that many
#   processes, one after another, and the tables pool them all: a kernel's do_bench figure moves
#   with the process it runs in; default 3).
set -euo pipefail
bundle=$(cd "$1" && pwd)
out=$2
here=$(cd "$(dirname "$0")" && pwd)
graphs=$here/../../examples/graphs
mkdir -p "$out"
export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export YIRAGE_CACHE_DIR=${YIRAGE_CACHE_DIR:-$out/cache}
plugin=$bundle/libyirage-backend-cuda.so
budget=${YIRAGE_BENCH_BUDGET:-60}
processes=${YIRAGE_BENCH_PROCESSES:-3}
if [[ ! $processes =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: YIRAGE_BENCH_PROCESSES must be a whole number of at least 1, not '$processes'" >&2
  exit 2
fi
{
  echo "# yirage on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "command: benchmarks/gpu/run.sh (search budget ${budget} s, top-k 8)"
  echo
} >"$out/results.md"
rows=${YIRAGE_BENCH_ROWS:-gqa qknorm rmsnorm_linear lora gated_mlp ntrans gqa_b8 qknorm_b8 rmsnorm_linear_b8 ntrans_b8}
for name in $rows; do
  echo "== superoptimize $name"
  "$bundle/bin/yirage" superoptimize "$graphs/$name.json" --plugin "$plugin" --backend cuda \
    --budget "$budget" --top-k 8 --quiet -o "$out/$name.yrg" >"$out/$name.search.txt" 2>&1 ||
    echo "superoptimize $name failed: $(tail -n 3 "$out/$name.search.txt")"
  tail -n 12 "$out/$name.search.txt"
done
[ "${YIRAGE_BENCH_STAGE:-}" = search ] && exit 0
samples=()
for ((i = 1; i <= processes; i++)); do
  echo "== bench.py, process $i of $processes"
  # shellcheck disable=SC2086  # one word per row
  YIRAGE_BENCH_SAMPLES=$out/samples.$i.json python3 "$here/bench.py" "$bundle/lib/libyirage.so.1" "$plugin" \
    "$out" $rows >"$out/bench.$i.txt"
  samples+=("$out/samples.$i.json")
done
python3 "$here/bench.py" --report "${samples[@]}" | tee -a "$out/results.md"
