#!/bin/bash
# Dims that no power of two divides on the CUDA plugin (issue #53 item 5): each graph of
# benchmarks/cpu/ragged/ superoptimized beside its power-of-two neighbour; every figure is the
# search's own profiling (the input graph measured in the same run). On a GPU machine without Z3
# or flatbuffers, from a bundle made by bundle.sh:
#   bash benchmarks/gpu/bundle.sh build BUNDLE   (here), then (there)
#   bash benchmarks/gpu/ragged.sh BUNDLE [BUDGET]
set -euo pipefail
bundle=$1 budget=${2:-30}
export LD_LIBRARY_PATH=$bundle/lib YIRAGE_BACKEND_PATH=$bundle
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for graph in "$(dirname "$0")"/../cpu/ragged/*.json; do
  echo "== $(basename "$graph" .json)"
  "$bundle/bin/yirage" superoptimize "$graph" --backend cuda --budget "$budget" --quiet 2>&1 | tail -8
done
