#!/usr/bin/env bash
# The real-model suite on the CPU backend against numpy (run_cpu.py); results in RESULTS.md.
# usage: benchmarks/models/run_cpu.sh [--budget SECONDS] [--max-mb MB] [--only GRAPH]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup.sh build >/dev/null
export YIRAGE_BACKEND_PATH="$PWD/build/backends/cpu"
exec /usr/bin/python3 benchmarks/models/run_cpu.py build/tools/yirage/yirage build/benchmarks/models-cpu-work "$@"
