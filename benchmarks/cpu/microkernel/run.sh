#!/usr/bin/env bash
# Builds and runs compare.cpp (the plugin's matmul loop against BLIS and libxsmm, one thread),
# with the CPU plugin's compiler flags. Needs libblis-dev and libxsmm-dev (scripts/install_deps.sh).
set -euo pipefail
cd "$(dirname "$0")"
out=${TMPDIR:-/tmp}/yirage-microkernel-compare
c++ -std=c++17 -O3 -march=native -fno-math-errno -fno-trapping-math -fno-signed-zeros -fassociative-math \
  -I/usr/include/x86_64-linux-gnu compare.cpp -o "$out" /usr/lib/libxsmm.a /usr/lib/libxsmmnoblas.a -lblis -lpthread -ldl -lm
exec "$out"
