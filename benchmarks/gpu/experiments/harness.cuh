// What the experiments share (lora_one_kernel.cu, ntrans_one_kernel.cu and decode_gemv.cu all
// of it, gated_one_kernel.cu the loads): the timing the way benchmarks/gpu/bench.py times kernels
// (CUDA events around each launch after a 256 MB memset that flushes L2 and leaves it dirty, as
// triton.testing.do_bench does; FLUSH=kernel: a fill kernel instead of cudaMemsetAsync, as
// PyTorch's zero_; median of REPS, default 200), streamed 16-byte loads, and sm_90 bulk copies
// (the TMA unit) counted on an mbarrier.
#pragma once
#include <cuda_fp16.h>
#include <stdint.h>
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

// A 16-byte load that bypasses L1 (weights streamed once).
__device__ __forceinline__ uint4 ld_stream(const void *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
// One thread's bulk copy of `bytes` from global to shared memory, counted on the mbarrier `bar`.
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, unsigned bytes, uint64_t *bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}
__device__ __forceinline__ void bar_init(uint64_t *bar) {
  asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void bar_expect(uint64_t *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_wait(uint64_t *bar) {
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" ::"r"(smem_addr(bar))
               : "memory");
}

// The flush as PyTorch's `zero_` does it (do_bench's cache.zero_()): a kernel of 128-thread
// blocks storing 16 bytes 4 times per thread, instead of cudaMemsetAsync (FLUSH=kernel).
__global__ void __launch_bounds__(128) flush_fill(uint4 *p, int value) {
  const size_t i = (static_cast<size_t>(blockIdx.x) * 128 * 4) + threadIdx.x;
  const uint4 v = make_uint4(value, value, value, value);
  for (int u = 0; u < 4; ++u) p[i + u * 128] = v;
}

// Median µs of launch() over REPS runs, each after the flush.
template <typename F>
static float time_us(F launch) {
  static void *flush_buf = nullptr;
  if (flush_buf == nullptr) cudaMalloc(&flush_buf, 256 << 20);
  static const bool flush_kernel = getenv("FLUSH") && std::string(getenv("FLUSH")) == "kernel";
  static int reps = getenv("REPS") ? atoi(getenv("REPS")) : 200;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ts;
  for (int r = 0; r < reps; ++r) {
    if (flush_kernel) {
      flush_fill<<<(256 << 20) / (16 * 128 * 4), 128>>>(static_cast<uint4 *>(flush_buf), r & 0xff);
    } else {
      cudaMemsetAsync(flush_buf, r & 0xff, 256 << 20);
    }
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    ts.push_back(ms * 1000);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}
