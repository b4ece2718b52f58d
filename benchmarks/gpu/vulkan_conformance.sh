#!/bin/bash
# The conformance suite on a GPU machine's Vulkan device (docs/backends/vulkan.md), through the
# Vulkan loader the bundle carries (bundle.sh: Debian's libvulkan.so.1 in BUNDLE/lib) and the
# machine's own ICD manifests (NVIDIA's: /usr/share/vulkan/icd.d/nvidia_icd.json). Writes the
# device list, the suite's output and its JSON into OUT.
#
# usage: benchmarks/gpu/vulkan_conformance.sh BUNDLE OUT [DEVICE] [-- conformance options…]
set -euo pipefail
bundle=$(cd "$1" && pwd)
out=$2
device=${3:-0}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = "--" ] && shift
mkdir -p "$out"
export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export YIRAGE_VULKAN_LIBRARY=$bundle/lib/libvulkan.so.1
export YIRAGE_BACKEND_PATH=$bundle
"$bundle/bin/yirage" devices >"$out/devices.txt" 2>&1 || true
cat "$out/devices.txt"
"$bundle/yirage-conformance" --plugin "$bundle/libyirage-backend-vulkan.so" --device "$device" \
  --cache "$out/cache" --jobs "$(nproc)" --json "$out/conformance-vulkan.json" "$@" 2>&1 |
  tee "$out/conformance-vulkan.txt"
