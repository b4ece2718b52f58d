#!/usr/bin/env bash
# CPU benchmark: yirage's best kernel vs the unfused graph on the CPU plugin vs numpy/OpenBLAS,
# for the six benchmark graphs and three everyday ones (graphs/ here) in float16 and float32, in
# one run, warm and cold (caches flushed), each row's goal met or missed. Results: README.md here.
# Idle, then with other processes keeping cores busy (--load PROCS, default 1; 0: idle only).
# usage: benchmarks/cpu/run.sh [--budget SECONDS] [--only GRAPH] [--repeats N] [--load PROCS] [--opencl]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup.sh build >/dev/null
export YIRAGE_BACKEND_PATH="$PWD/build/backends/cpu:$PWD/build/backends/opencl"
# --opencl: PoCL's device alone (the build's copy of its .icd), its code cache in the work folder.
export OCL_ICD_VENDORS="$PWD/build/backends/opencl" POCL_CACHE_DIR="$PWD/build/benchmarks/cpu-work/pocl"
# Set on some processors to keep an old OpenBLAS safe, they slow numpy (docs: ENVIRONMENT).
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
exec /usr/bin/python3 benchmarks/cpu/run.py build/tools/yirage/yirage examples/graphs \
  build/benchmarks/cpu-work "$@"
