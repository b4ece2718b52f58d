#!/bin/bash
# The GPU benchmark, in one run: superoptimize the six benchmark graphs for CUDA device 0 (search
# with the device's properties, profile the top candidates on it, keep the fastest correct one),
# then time yirage's kernels, PyTorch eager and torch.compile on the same inputs and check
# yirage's outputs against PyTorch in float32 (bench.py).
#
# usage: benchmarks/gpu/run.sh BUNDLE OUT
#   BUNDLE holds bin/yirage, lib/libyirage.so.1 and its libraries (libz3.so.4,
#   libflatbuffers.so.2, …) and libyirage-backend-cuda.so, as benchmarks/gpu/bundle.sh makes it;
#   OUT receives the graphs, the logs and results.md.
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
{
  echo "# yirage on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "command: benchmarks/gpu/run.sh (search budget ${budget} s, top-k 8)"
  echo
} >"$out/results.md"
for name in gqa qknorm rmsnorm_linear lora gated_mlp ntrans; do
  echo "== superoptimize $name"
  "$bundle/bin/yirage" superoptimize "$graphs/$name.json" --plugin "$plugin" --backend cuda \
    --budget "$budget" --top-k 8 --quiet -o "$out/$name.yrg" >"$out/$name.search.txt" 2>&1 ||
    echo "superoptimize $name failed: $(tail -n 3 "$out/$name.search.txt")"
  tail -n 12 "$out/$name.search.txt"
done
python3 "$here/bench.py" "$bundle/lib/libyirage.so.1" "$plugin" "$out" | tee -a "$out/results.md"
