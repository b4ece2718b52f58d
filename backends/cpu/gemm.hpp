// The float32 small-GEMM that the generated kernels' matmuls call through KernelRuntime::gemm:
// libxsmm's JIT kernels (Debian's libxsmm-dev) where the plugin was built with them. A kernel
// whose runtime has no gemm, or whose call returns 0, runs its own loop (codegen/cpu_printer.cpp).
#pragma once

#include <cstdint>

namespace yirage::cpu {

// Row-major C[m,n] = A[m,k] · B[k,n], C overwritten; rows lda, ldb, ldc elements apart. Returns 1
// when done, 0 when it cannot take the shape (sizes or strides out of range, no JIT kernel), C
// then untouched. Thread-safe: the plugin's threads call it at once.
using GemmFunction = int (*)(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                             float *c, int64_t ldc);

// The gemm to give the kernels: nullptr where the plugin was built without libxsmm or
// $YIRAGE_CPU_LIBXSMM is 0 (read on each call; "0" turns it off, anything else leaves it on).
GemmFunction gemm_function();

// A buffer of at least `bytes` (64-byte aligned) that belongs to the calling thread, kept for its
// next call (each thread's largest request stays allocated until the thread ends): where the
// kernels convert 16-bit operands to float32 (for gemm, or a decode product's A for the loop).
// nullptr when it cannot be had; the caller then runs its own loop. Its contents are the caller's
// until the same thread asks again: a kernel asks once per chunk of a loop.
void *thread_scratch(int64_t bytes);

}  // namespace yirage::cpu
