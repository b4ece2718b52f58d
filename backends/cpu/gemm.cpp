#include "gemm.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>

#if YIRAGE_CPU_HAVE_LIBXSMM
#include <libxsmm.h>

#include <climits>
#endif

namespace yirage::cpu {
namespace {

#if YIRAGE_CPU_HAVE_LIBXSMM
// A JIT kernel's shape; libxsmm keeps the kernels (its registry is thread-safe), this thread keeps
// the last few it asked for, so a task's call costs no hash lookup.
struct GemmKey {
  int64_t m, n, k, lda, ldb, ldc;
  bool operator==(const GemmKey &o) const { return std::memcmp(this, &o, sizeof o) == 0; }
};

struct CachedKernel {
  GemmKey key{-1, -1, -1, -1, -1, -1};
  libxsmm_smmfunction kernel = nullptr;  // nullptr: libxsmm has none for this shape
};

libxsmm_smmfunction kernel_for(const GemmKey &key) {
  constexpr int kEntries = 8;
  thread_local CachedKernel cache[kEntries];
  thread_local int next = 0;
  for (const CachedKernel &entry : cache)
    if (entry.key == key) return entry.kernel;
  // libxsmm is column-major: row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ, so B comes first.
  const libxsmm_blasint lda = static_cast<libxsmm_blasint>(key.ldb), ldb = static_cast<libxsmm_blasint>(key.lda),
                        ldc = static_cast<libxsmm_blasint>(key.ldc);
  const float alpha = 1, beta = 0;
  const int flags = LIBXSMM_GEMM_FLAG_NONE, prefetch = LIBXSMM_PREFETCH_NONE;
  CachedKernel &entry = cache[next];
  next = (next + 1) % kEntries;
  entry.key = key;
  entry.kernel =
      libxsmm_smmdispatch(static_cast<libxsmm_blasint>(key.n), static_cast<libxsmm_blasint>(key.m),
                          static_cast<libxsmm_blasint>(key.k), &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
  return entry.kernel;
}

int xsmm_gemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
              int64_t ldc) {
  // Broadcast rows (a stride of 0) and sizes past int are the loop's.
  if (m <= 0 || n <= 0 || k <= 0 || lda < k || ldb < n || ldc < n) return 0;
  if (lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX || m > INT_MAX || n > INT_MAX || k > INT_MAX) return 0;
  const libxsmm_smmfunction kernel = kernel_for(GemmKey{m, n, k, lda, ldb, ldc});
  if (kernel == nullptr) return 0;
  kernel(b, a, c);
  return 1;
}
#endif

}  // namespace

GemmFunction gemm_function() {
#if YIRAGE_CPU_HAVE_LIBXSMM
  const char *setting = std::getenv("YIRAGE_CPU_LIBXSMM");
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return nullptr;
  return xsmm_gemm;
#else
  return nullptr;
#endif
}

void *thread_scratch(int64_t bytes) {
  struct Free {
    void operator()(void *p) const { std::free(p); }
  };
  thread_local std::unique_ptr<void, Free> buffer;
  thread_local int64_t capacity = 0;
  if (bytes <= 0) return nullptr;
  if (bytes > capacity) {
    const int64_t rounded = (bytes + 63) / 64 * 64;
    buffer.reset();  // the old one first: the new one may be most of memory
    capacity = 0;
    void *fresh = std::aligned_alloc(64, static_cast<size_t>(rounded));
    if (fresh == nullptr) return nullptr;
    buffer.reset(fresh);
    capacity = rounded;
  }
  return buffer.get();
}

}  // namespace yirage::cpu
