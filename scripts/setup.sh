#!/usr/bin/env bash
# Installs the Debian packages yirage needs (only those missing; see docs/building.md), then
# configures and builds it in ./build. Safe to run again. Usage: scripts/setup.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  meson ninja-build pkg-config libz3-dev z3 libflatbuffers-dev flatbuffers-compiler
  libgtest-dev libgmock-dev libbenchmark-dev
  hipcc libamdhip64-dev libhiprtc-builtins5 rocminfo
  pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo
  libvulkan-dev mesa-vulkan-drivers vulkan-tools glslc glslang-tools libshaderc-dev spirv-tools vulkan-validationlayers
  libze-dev libze1 llvm-spirv-15 clang-15 intel-opencl-icd
  swig python3-dev python3-numpy python3-pytest default-jdk junit5
  bindgen libopenmpi-dev openmpi-bin
  libclang-rt-14-dev libomp-14-dev hyperfine libdlpack-dev libopenblas0 python3-venv clang-format graphviz
  python3-mesonpy
  libblis-dev libxsmm-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${#missing[@]} missing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

build_dir="${1:-build}"
if [ ! -f "$build_dir/build.ninja" ]; then
  # -O2 without debug info: a third less compile time than the default -O2 -g (docs/building.md);
  # the sanitized trees of scripts/test.sh keep line tables for their reports.
  meson setup "$build_dir" --werror -Ddebug=false >/dev/null
fi
ninja -C "$build_dir" >/dev/null
echo "setup: built $build_dir"
