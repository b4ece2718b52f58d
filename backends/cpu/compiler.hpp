// The CPU backend's compiler: C++ source → shared object, with the system C++ compiler, cached
// on disk and loaded with dlopen.
//
// The cache key is a 128-bit hash of the source, the compiler's identity (its --version text)
// and the flags. Every object exports its key; a cached file that fails to load, or whose key is
// not the expected one (truncated, overwritten, corrupt), is rebuilt. Files are written under a
// temporary name and renamed into place, so concurrent processes sharing a cache never see half
// a file.
#pragma once

#include <memory>
#include <mutex>
#include <string>

namespace yirage::cpu {

using KernelFunction = int (*)(const void *const *inputs, void *const *outputs, int threads);

// A loaded object; dlclose on destruction.
class LoadedKernel {
 public:
  LoadedKernel(void *handle, KernelFunction function) : handle_(handle), function_(function) {}
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel &) = delete;
  LoadedKernel &operator=(const LoadedKernel &) = delete;
  KernelFunction function() const { return function_; }

 private:
  void *handle_;
  KernelFunction function_;
};

struct CompileOutcome {
  std::unique_ptr<LoadedKernel> kernel;
  bool cache_hit = false;
};

class Compiler {
 public:
  // `cache_dir` is created when missing. The compiler is $YIRAGE_CPU_CXX, else $CXX, else c++.
  explicit Compiler(std::string cache_dir);

  // Throws Error(kBackend) with the build log when compilation fails, Error(kNotFound) when no
  // compiler can be run.
  CompileOutcome compile(const std::string &source, const std::string &symbol, int optimization_level);

  const std::string &compiler() const { return compiler_; }
  const std::string &cache_dir() const { return cache_dir_; }

 private:
  const std::string &identity();  // the compiler's --version text, run once

  std::string cache_dir_;
  std::string compiler_;
  std::once_flag identity_once_;
  std::string identity_;
  std::string identity_error_;
};

// Default cache folder: $YIRAGE_CACHE_DIR/cpu, else $XDG_CACHE_HOME/yirage/cpu, else
// $HOME/.cache/yirage/cpu, else /tmp/yirage-cache/cpu.
std::string default_cache_dir();

}  // namespace yirage::cpu
