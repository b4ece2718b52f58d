#!/usr/bin/env bash
# The main job: set up, build, then build the six benchmark graphs and run them on the
# reference executor, printing shapes and checksums.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
exec build/examples/reference_benchmarks
