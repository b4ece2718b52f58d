#!/usr/bin/env bash
# Draws docs/pictures/<name>.svg, the picture of each benchmark graph's fused form
# (examples/graphs/<name>_fused.json), with `yirage show --format svg` (Graphviz's `dot` on PATH).
# usage: scripts/draw_graphs.sh [YIRAGE]   (default: build/tools/yirage/yirage)
set -euo pipefail
cd "$(dirname "$0")/.."
yirage=${1:-build/tools/yirage/yirage}
mkdir -p docs/pictures
for name in gqa qknorm rmsnorm_linear lora gated_mlp ntrans; do
  "$yirage" show "examples/graphs/${name}_fused.json" --format svg -o "docs/pictures/$name.svg"
  echo "docs/pictures/$name.svg"
done
