// OpenCL C → SPIR-V for Level Zero modules, with clang and llvm-spirv run as child processes
// (util/subprocess.hpp, no shell):
//
//   clang-15 -cl-std=CL2.0 -target spir64 -O2 -Xclang -disable-llvm-passes -emit-llvm -c k.cl -o k.bc
//   llvm-spirv-15 --spirv-max-version=1.0 k.bc -o k.spv
//
// SPIR-V 1.0, the version every Level Zero driver takes (and spirv-val's opencl2.0 environment).
// LLVM's optimizations are left to the driver's compiler, which runs its own: those of clang 15
// emit `freeze` instructions (from 32-bit division and remainder pairs, in every generated
// kernel's index arithmetic) that llvm-spirv 15 cannot translate. -O2 still keeps the functions
// free of optnone, so the driver inlines and optimizes them.
// The tools are $YIRAGE_LEVEL_ZERO_CLANG and $YIRAGE_LEVEL_ZERO_LLVM_SPIRV where set.
//
// Modules are kept in the checksummed kernel cache (util/file_cache.hpp) as <key>.spv with the
// source beside it (<key>.cl), the key a hash of the source, both tools' --version text and the
// flags. The tools work in a private temporary folder, removed afterwards; a cache that cannot be
// written costs a warning, never the module. A source that fails to compile is kept as <key>.cl
// where the cache can be written, and the error says where.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace yirage::level_zero {

// Warnings (a damaged entry rebuilt, a cache that cannot be written).
using SpirvLog = std::function<void(const std::string &)>;

class SpirvCompiler {
 public:
  explicit SpirvCompiler(std::string cache_dir);

  // The SPIR-V module of `source`, from the cache where intact. Throws Error(kNotFound) when a
  // tool cannot be run, Error(kBackend) with the tool's command and output when it fails.
  // Thread-safe.
  std::string compile(const std::string &source, const SpirvLog &log);

  // The two commands for `input` (.cl) to `output` (.spv) through `bitcode` (.bc).
  std::vector<std::string> clang_command(const std::string &input, const std::string &bitcode) const;
  std::vector<std::string> llvm_spirv_command(const std::string &bitcode, const std::string &output) const;

  const std::string &cache_dir() const { return cache_dir_; }

 private:
  const std::string &identity();  // the tools' --version text, run once; throws like compile

  std::string cache_dir_;
  std::string clang_, llvm_spirv_;
  std::once_flag identity_once_;
  std::string identity_, identity_error_;
};

}  // namespace yirage::level_zero
