#!/bin/sh
# examples/graphs/ must equal what export_graphs writes now (regenerate with
# `build/benchmarks/graphs/export_graphs examples/graphs`).
set -eu
exporter="$1"; checked_in="$2"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$exporter" "$out"
diff -r "$out" "$checked_in" && echo "examples/graphs is up to date"
