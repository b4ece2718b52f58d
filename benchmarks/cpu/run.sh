#!/usr/bin/env bash
# CPU benchmark: yirage's best kernel vs the unfused graph on the CPU plugin vs numpy/OpenBLAS,
# for the six benchmark graphs in float16 and float32, in one run. Results: README.md here.
# Idle, then with other processes keeping cores busy (--load PROCS, default 1; 0: idle only).
# usage: benchmarks/cpu/run.sh [--budget SECONDS] [--only GRAPH] [--repeats N] [--load PROCS]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup.sh build >/dev/null
export YIRAGE_BACKEND_PATH="$PWD/build/backends/cpu"
# Set on some processors to keep an old OpenBLAS safe, they slow numpy (docs: ENVIRONMENT).
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
exec /usr/bin/python3 benchmarks/cpu/run.py build/tools/yirage/yirage examples/graphs \
  build/benchmarks/cpu-work "$@"
