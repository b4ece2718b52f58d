#!/usr/bin/env bash
# Saves every measured candidate of the six benchmark graphs' searches on the CPU plugin, and of
# the three everyday graphs of graphs/ here, in float16 and float32, RUNS times each (default 1): OUT/RUN/GRAPH_DTYPE/{N.yrg,candidates.tsv},
# the data benchmarks/models/cost_model.py ranks the CPU cost model against.
# usage: benchmarks/cpu/candidates.sh OUT [RUNS] [--budget SECONDS] [--top-k K]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$1 runs=${2:-1}
shift $(($# < 2 ? $# : 2))
budget=10 topk=12
while [ $# -gt 0 ]; do
  case $1 in
    --budget) budget=$2; shift 2 ;;
    --top-k) topk=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
export YIRAGE_BACKEND_PATH="$PWD/build/backends/cpu"
mkdir -p "$out/graphs"
for run in $(seq 1 "$runs"); do
  for source in examples/graphs/{gqa,qknorm,rmsnorm_linear,lora,gated_mlp,ntrans}.json \
    benchmarks/cpu/graphs/{elementwise,softmax,swiglu_mlp}.json; do
    name=$(basename "$source" .json)
    for dtype in Float16 Float32; do
      graph="$out/graphs/${name}_${dtype,,}.json"
      sed "s/\"Float16\"/\"$dtype\"/g" "$source" >"$graph"
      dir="$out/$run/${name}_${dtype,,}"
      rm -rf "$dir"; mkdir -p "$out/$run"
      build/tools/yirage/yirage superoptimize "$graph" -o "$dir.best.yrg" --budget "$budget" --repeats 20 \
        --top-k "$topk" --quiet --candidates "$dir" >"$dir.search.txt" 2>&1 || echo "search failed: $dir" >&2
      echo "$(date +%T) $run $name $dtype load $(cut -d' ' -f1-3 /proc/loadavg)"
    done
  done
done
