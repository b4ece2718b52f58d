#!/bin/bash
# Collects what benchmarks/gpu/run.sh needs on a GPU machine that has neither Z3 nor flatbuffers:
# the CLI, libyirage and the CUDA, CPU, OpenCL, Vulkan and HIP plugins from BUILD, and the shared
# libraries they use.
# usage: benchmarks/gpu/bundle.sh BUILD BUNDLE
set -euo pipefail
build=$1 bundle=$2
rm -rf "$bundle" && mkdir -p "$bundle/bin" "$bundle/lib"
cp "$build/tools/yirage/yirage" "$bundle/bin/"
cp -L "$build/src/libyirage.so.1" "$bundle/lib/"
cp "$build/backends/cuda/libyirage-backend-cuda.so" "$build/conformance/yirage-conformance" "$bundle/"
# The persistent kernel's watchdog test (YIRAGE_TEST_CUDA_PLUGIN=<bundle>/libyirage-backend-cuda.so).
if [ -f "$build/backends/cuda/cuda_watchdog_test" ]; then
  cp "$build/backends/cuda/cuda_watchdog_test" "$bundle/bin/"
fi
# The OpenCL plugin too, where it was built (benchmarks/gpu/opencl.sh).
# The CPU plugin too (benchmarks/cpu/regions.py on the GPU machine's cores; it needs a C++ compiler there).
if [ -f "$build/backends/cpu/libyirage-backend-cpu.so" ]; then
  cp "$build/backends/cpu/libyirage-backend-cpu.so" "$bundle/"
fi
if [ -f "$build/backends/opencl/libyirage-backend-opencl.so" ]; then
  cp "$build/backends/opencl/libyirage-backend-opencl.so" "$bundle/"
fi
# The Vulkan plugin too, where it was built, with Debian's Vulkan loader: the GPU machine has
# NVIDIA's ICD manifest but no loader (benchmarks/gpu/vulkan_conformance.sh).
if [ -f "$build/backends/vulkan/libyirage-backend-vulkan.so" ]; then
  cp "$build/backends/vulkan/libyirage-backend-vulkan.so" "$bundle/"
  cp -L "$(ldconfig -p | awk '$1 == "libvulkan.so.1" && /x86-64/ {print $NF; exit}')" "$bundle/lib/"
fi
# The HIP plugin and its expectations, where it was built: on NVIDIA it runs its HIP source through
# NVRTC (YIRAGE_HIP_PLATFORM=cuda, docs/backends/hip.md).
if [ -f "$build/backends/hip/libyirage-backend-hip.so" ]; then
  cp "$build/backends/hip/libyirage-backend-hip.so" "$(dirname "$0")/../../conformance/expectations/hip.txt" "$bundle/"
fi
# Not the C++ runtime: the GPU machine's own is newer than Debian 12's (ours needs GLIBCXX_3.4.30),
# and a bundled libstdc++ ahead of it on LD_LIBRARY_PATH kept PoCL 5 there (GLIBCXX_3.4.32) from
# loading.
for lib in libz3.so.4 libflatbuffers.so.2; do
  path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ && !found {print $NF; found = 1}')
  [ -n "$path" ] && cp -L "$path" "$bundle/lib/"
done
strip --strip-debug "$bundle"/bin/* "$bundle"/lib/* "$bundle"/*.so "$bundle/yirage-conformance"
