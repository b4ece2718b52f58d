// The CPU backend's compiler: C++ source → shared object, with the system C++ compiler, cached
// on disk and loaded with dlopen.
//
// The cache key is a 128-bit hash of the source, the compiler's identity (its --version text)
// and the flags. Every object exports its key; a cached file that fails to load, or whose key is
// not the expected one (truncated, overwritten, corrupt, not a regular file), is rebuilt. Files
// are written under a temporary name and renamed into place, so concurrent processes sharing a
// cache never see half a file.
//
// A cache that cannot be written (read-only, another user's, a path that cannot be created)
// still serves its hits; a miss is built in a private folder (mkdtemp) that the compiler removes
// when destroyed, and says so once per compiler with a warning. A failed write into the cache is
// the same warning, never an error: the kernel just built is loaded all the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "yirage_backend.h"

namespace yirage::cpu {

// What a generated kernel is given besides its tensors: the plugin's threads (thread_pool.hpp),
// its float32 small-GEMM, nullptr when there is none, each thread's scratch (gemm.hpp), and for
// programs of several operators the one parallel region they run in (parallel_region.hpp; null:
// the body runs on the calling thread). Inside a region `in_region` is 1: every loop, small ones
// too, goes through parallel_for, which gives each chunk to one of the threads running the body.
// The prelude's yr_runtime (codegen/cpu_prelude.cpp) has the same layout; both assert it.
struct KernelRuntime {
  void (*parallel_for)(void *pool, int64_t count, int64_t grain,
                       void (*task)(void *context, int64_t begin, int64_t end), void *context);
  void *pool;
  int (*gemm)(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
              int64_t ldc);
  void *(*scratch)(int64_t bytes);
  int (*region)(const KernelRuntime *runtime, int (*body)(void *context, const KernelRuntime *runtime), void *context);
  int64_t in_region;
};
static_assert(sizeof(KernelRuntime) == 48 && offsetof(KernelRuntime, scratch) == 24 &&
                  offsetof(KernelRuntime, in_region) == 40,
              "KernelRuntime must keep the layout of the kernels' yr_runtime (codegen/cpu_prelude.cpp)");

using KernelFunction = int (*)(const void *const *inputs, void *const *outputs, const KernelRuntime *runtime);

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
  bool cache_hit = false;  // loaded from the cache, or from the private folder of this compiler
};

// Where the compiler's log lines go (the host's log callback; may be empty). Called from any
// thread that compiles.
using CompilerLog = std::function<void(yirage_backend_log_level level, const std::string &message)>;

class Compiler {
 public:
  // `cache_dir` is created when missing (and used read-only when it cannot be written). The
  // compiler is $YIRAGE_CPU_CXX, else $CXX, else c++.
  explicit Compiler(std::string cache_dir, CompilerLog log = nullptr);
  // Removes the private folder's objects (loaded kernels stay valid); a failed build's kept
  // source stays.
  ~Compiler();
  Compiler(const Compiler &) = delete;
  Compiler &operator=(const Compiler &) = delete;

  // Throws Error(kBackend) with the build log when compilation fails, Error(kNotFound) when no
  // compiler can be run. Thread-safe.
  CompileOutcome compile(const std::string &source, const std::string &symbol, int optimization_level);

  // The flags every kernel is compiled with (the host's ISA, the float rules the kernels assume).
  static std::vector<std::string> kernel_flags(int optimization_level);

  const std::string &compiler() const { return compiler_; }
  const std::string &cache_dir() const { return cache_dir_; }

 private:
  const std::string &identity();  // the compiler's --version text, run once
  // A new source file for `key` ("<folder>/<key>.<pid>.<n>.cpp", opened exclusively) in the
  // cache, else in the private folder; returns its stem. Throws Error(kBackend) when neither
  // can be written.
  std::string create_source(const std::string &key, const std::string &text, std::string &out_folder);
  // The private folder, made on first use; "" and `why` when it cannot be.
  std::string private_dir(std::string &why);
  // Warns once per compiler that the cache cannot be written.
  void warn_unwritable(const std::string &why);

  std::string cache_dir_;
  std::string compiler_;
  CompilerLog log_;
  std::once_flag identity_once_;
  std::string identity_;
  std::string identity_error_;
  std::mutex private_mutex_;  // guards the two below
  std::string private_dir_;
  bool warned_ = false;
};

// Default cache folder: $YIRAGE_CACHE_DIR/cpu, else $XDG_CACHE_HOME/yirage/cpu, else
// $HOME/.cache/yirage/cpu, else /tmp/yirage-cache/cpu.
std::string default_cache_dir();

}  // namespace yirage::cpu
