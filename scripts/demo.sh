#!/usr/bin/env bash
# The main job: set up and build, then superoptimize the RMSNorm + linear benchmark graph for
# this machine's CPU through the CPU backend plugin (candidates profiled on it), run the best
# one, check it against the reference executor and time it against the unfused graph; then run
# all six benchmark graphs on the reference executor.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
YIRAGE_BACKEND_PATH="$PWD/build/backends/cpu" build/examples/superoptimize rmsnorm_linear
exec build/examples/reference_benchmarks
