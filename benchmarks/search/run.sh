#!/bin/bash
# The search benchmark (issue: the superoptimizer): superoptimizes the six benchmark graphs at
# full size for the host CPU and for the h100 description, one process per graph so that each
# line's peak memory is that search's, then compares pruned and unpruned searches on small
# instances. Usage: bash benchmarks/search/run.sh [build folder]   (default: build)
set -euo pipefail
build=${1:-build}
bin="$build/benchmarks/search/search_benchmark"
[ -x "$bin" ] || { echo "no $bin: build first (bash scripts/setup.sh)" >&2; exit 1; }
echo "# $(uname -n): $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for target in cpu h100; do
  for g in rmsnorm_linear gated_mlp lora ntrans gqa qknorm; do
    case $g in gqa|qknorm) budget=600 ;; *) budget=120 ;; esac
    "$bin" "$g" --target "$target" --budget "$budget"
  done
done
# Small instances (scale 16), with and without abstract-expression pruning: every candidate the
# unpruned search verifies must also be found with pruning ("lost=0"). Only the smallest bound
# lets the unpruned search finish; with 6 block operators it stops at its budget, and what it
# verified by then is compared.
"$bin" rmsnorm_linear --scale 16 --compare-pruning --max-block-ops 4 --max-kernel-ops 1 --budget 300
for g in rmsnorm_linear lora gated_mlp ntrans; do
  "$bin" "$g" --scale 16 --compare-pruning --max-block-ops 6 --budget 120 || true
done
