// Variants of yirage's weight product (O [m, n] = A [m, k] · B [k, n], float16, the kernel-level
// matmul of rmsnorm_linear and gated_mlp) on random inputs: each checked against a float64 CPU
// reference, then timed as harness.cuh says (twice). Not part of the build;
// benchmarks/gpu/RESULTS.md (nineteenth session) has the numbers. Each NAME_PART.cubin is
// compiled from a generated source (the plugin's cache keeps it, docs/backends/cuda.md) or a
// hand-edited copy, with its typedef, NAN and INFINITY lines removed and <cstdint> included:
//   nvcc -cubin -O3 -arch=sm_90a -o NAME_PART.cubin NAME_PART.cu
//   nvcc -O3 -arch=sm_90 -std=c++17 weight_product.cu -lcuda -o wp
//   ./wp M K N GRID THREADS NAME PART...   (rmsnorm_linear at b = 8: ./wp 16 4096 6144 192 256 rl8 v0 v1)
// Its yirage_cuda_kernel takes (in0 = A, in1 = B, out0 = O), without dynamic shared memory.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "generated_kernels.cuh"
#include "harness.cuh"
int main(int argc, char **argv) {
  const int m = atoi(argv[1]), k = atoi(argv[2]), n = atoi(argv[3]);
  const unsigned grid = atoi(argv[4]), threads = atoi(argv[5]);
  cudaFree(0);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<__half> ha(size_t(m) * k), hb(size_t(k) * n);
  for (auto &x : ha) x = __float2half(u(rng));
  for (auto &x : hb) x = __float2half(u(rng));
  std::vector<double> ref(size_t(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int q = 0; q < k; ++q) {
      const double a = __half2float(ha[size_t(i) * k + q]);
      for (int j = 0; j < n; ++j) ref[size_t(i) * n + j] += a * __half2float(hb[size_t(q) * n + j]);
    }
  void *a, *b, *o;
  cudaMalloc(&a, ha.size() * 2);
  cudaMalloc(&b, hb.size() * 2);
  cudaMalloc(&o, ref.size() * 2);
  cudaMemcpy(a, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice);
  for (int v = 7; v < argc; ++v) {
    const CUfunction f = load_generated(argv[6], argv[v], 0);
    void *args[] = {&a, &b, &o};
    auto run = [&] { CK(cuLaunchKernel(f, grid, 1, 1, threads, 1, 1, 0, 0, args, nullptr)); };
    cudaMemset(o, 0xff, ref.size() * 2);
    run();
    CK(cuCtxSynchronize());
    std::vector<__half> got(ref.size());
    cudaMemcpy(got.data(), o, got.size() * 2, cudaMemcpyDeviceToHost);
    double e2 = 0, r2 = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const double d = __half2float(got[i]) - ref[i];
      e2 += d * d;
      r2 += ref[i] * ref[i];
    }
    const float t1 = time_us(run), t2 = time_us(run);
    printf("%s_%-8s rel. error %.2e  %.2f / %.2f us\n", argv[6], argv[v], std::sqrt(e2 / r2), t1, t2);
  }
}
