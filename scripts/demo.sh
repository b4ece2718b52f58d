#!/usr/bin/env bash
# The main job: set up and build, then superoptimize the RMSNorm + linear benchmark graph for
# this machine's CPU and run the best verified candidate against the original (reference
# executor), then run all six benchmark graphs on the reference executor.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
build/examples/superoptimize rmsnorm_linear
exec build/examples/reference_benchmarks
