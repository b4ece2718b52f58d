#!/usr/bin/env bash
# CPU benchmark: yirage's best kernel vs the unfused graph on the CPU plugin vs numpy/OpenBLAS,
# for the six benchmark graphs in float16 and float32, in one run. Results: README.md here.
# usage: benchmarks/cpu/run.sh [--budget SECONDS] [--only GRAPH]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup.sh build >/dev/null
export YIRAGE_BACKEND_PATH="$PWD/build/backends/cpu"
exec /usr/bin/python3 benchmarks/cpu/run.py build/tools/yirage/yirage examples/graphs \
  build/benchmarks/cpu-work "$@"
